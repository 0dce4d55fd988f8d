"""Warehouse loader for normalised contacts."""
import logging
import os
from typing import Dict, Iterable

import psycopg2
import psycopg2.extras

log = logging.getLogger(__name__)

Row = Dict[str, object]

UPSERT = """
INSERT INTO crm_contacts (email, first_name, last_name, country, updated_at)
VALUES %s
ON CONFLICT (email) DO UPDATE SET
    first_name = EXCLUDED.first_name,
    last_name = EXCLUDED.last_name,
    country = EXCLUDED.country,
    updated_at = EXCLUDED.updated_at
WHERE crm_contacts.updated_at < EXCLUDED.updated_at
"""


def load_contacts(rows: Iterable[Row], batch_size: int = 1000) -> int:
    conn = psycopg2.connect(os.environ["WAREHOUSE_DSN"])
    total = 0
    try:
        with conn, conn.cursor() as cur:
            batch = []
            for row in rows:
                batch.append(
                    (row["email"], row["first_name"], row["last_name"], row["country"], row["updated_at"])
                )
                if len(batch) >= batch_size:
                    psycopg2.extras.execute_values(cur, UPSERT, batch)
                    total += len(batch)
                    batch = []
            if batch:
                psycopg2.extras.execute_values(cur, UPSERT, batch)
                total += len(batch)
    finally:
        conn.close()
    log.info("loaded %d contacts", total)
    return total
