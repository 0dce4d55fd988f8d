"""Invoice storage (asyncpg)."""

import asyncpg


class InvoiceStore:
    """Reads and writes invoices."""

    def __init__(self, pool: asyncpg.Pool) -> None:
        self._pool = pool

    async def get(self, invoice_id: str) -> asyncpg.Record | None:
        """One invoice, or None."""
        async with self._pool.acquire() as conn:
            return await conn.fetchrow("SELECT * FROM invoices WHERE id = $1", invoice_id)

    async def mark_paid(self, invoice_id: str, psp_reference: str) -> None:
        """Record a successful payment."""
        async with self._pool.acquire() as conn:
            await conn.execute(
                "UPDATE invoices SET status = 'paid', psp_reference = $2 WHERE id = $1",
                invoice_id,
                psp_reference,
            )
