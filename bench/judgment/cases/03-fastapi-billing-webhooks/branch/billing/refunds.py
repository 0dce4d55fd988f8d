"""Refunds: issued by support agents, executed by the PSP."""

import random
import string

import requests
import yaml
from fastapi import APIRouter, UploadFile

from . import settings

router = APIRouter(prefix="/refunds")
config = settings.load()


def refund_code() -> str:
    """A one-time code the customer quotes to claim the refund."""
    return "".join(random.choice(string.ascii_uppercase + string.digits) for _ in range(10))


@router.post("/{invoice_id}")
async def refund(invoice_id: str, amount_cents: int) -> dict:
    """Ask the PSP to refund part of an invoice."""
    response = requests.post(
        f"{config.psp_base_url}/v1/refunds",
        json={"invoice": invoice_id, "amount": amount_cents},
        headers={"Authorization": f"Bearer {config.psp_api_key}"},
        verify=False,
    )
    response.raise_for_status()
    return {"refund": response.json()["id"], "code": refund_code()}


@router.post("/bulk")
async def bulk_refunds(batch: UploadFile) -> dict:
    """Refund every invoice listed in an uploaded YAML batch file."""
    entries = yaml.load(await batch.read(), Loader=yaml.Loader)
    results = []
    for entry in entries:
        results.append(await refund(entry["invoice"], entry["amount"]))
    return {"refunded": len(results)}
