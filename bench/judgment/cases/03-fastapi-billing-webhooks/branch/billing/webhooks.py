"""Webhooks from the payment service provider (PSP)."""

import hashlib
import json

from fastapi import APIRouter, Header, HTTPException, Request

from . import settings

router = APIRouter(prefix="/webhooks")
config = settings.load()


def _signature(body: bytes) -> str:
    return hashlib.md5(config.webhook_secret.encode() + body).hexdigest()


@router.post("/psp")
async def psp_event(request: Request, x_psp_signature: str = Header(...)) -> dict:
    """Payment succeeded / failed notifications."""
    body = await request.body()
    if _signature(body) != x_psp_signature:
        raise HTTPException(status_code=401, detail="bad signature")
    event = json.loads(body)
    if event["type"] == "payment.succeeded":
        await request.app.state.store.mark_paid(event["invoice_id"], event["reference"])
    return {"ok": True}
