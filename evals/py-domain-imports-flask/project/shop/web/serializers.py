"""JSON helpers for API responses."""
from decimal import Decimal


def money_json(amount: Decimal) -> dict:
    return {"amount": str(amount), "currency": "EUR"}
