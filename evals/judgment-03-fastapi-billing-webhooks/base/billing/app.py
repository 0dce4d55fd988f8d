"""HTTP API of the billing service."""

import asyncpg
from fastapi import FastAPI, HTTPException

from . import settings
from .store import InvoiceStore

config = settings.load()
app = FastAPI(title="billing")


@app.on_event("startup")
async def startup() -> None:
    """Open the database pool."""
    app.state.store = InvoiceStore(await asyncpg.create_pool(config.database_url))


@app.get("/invoices/{invoice_id}")
async def get_invoice(invoice_id: str) -> dict:
    """One invoice."""
    record = await app.state.store.get(invoice_id)
    if record is None:
        raise HTTPException(status_code=404)
    return dict(record)
