"""Applying incoming payments to invoices."""
from decimal import Decimal
from typing import TYPE_CHECKING

from .invoices import PAID, Invoice

if TYPE_CHECKING:
    from .customers import Customer


def apply_payment(invoice: Invoice, amount: Decimal) -> Decimal:
    """Apply a payment; returns the part of the amount that was not needed."""
    if amount <= 0:
        raise ValueError("payment amount must be positive")
    due = invoice.amount_due()
    used = min(due, amount)
    invoice.paid += used
    if invoice.amount_due() == 0:
        invoice.status = PAID
    return amount - used


def payer_label(customer: "Customer", invoice: Invoice) -> str:
    return f"{customer.name} / invoice {invoice.id}"
