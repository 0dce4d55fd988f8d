"""Pulls stock levels from the supplier feed into the local inventory table."""
import logging
import os

import psycopg2
import requests

log = logging.getLogger("inventory.sync")

FEED_URL = "https://feeds.supplier.example/v2/stock"
DEFAULT_BATCH = 200


def batch_size():
    raw = os.environ.get("SYNC_BATCH_SIZE", "")
    try:
        return int(raw)
    except ValueError:
        return DEFAULT_BATCH


def fetch_feed(session, page, per_page):
    resp = session.get(FEED_URL, params={"page": page, "per_page": per_page}, timeout=10)
    resp.raise_for_status()
    return resp.json()["items"]


def current_level(cur, sku):
    cur.execute("SELECT quantity, reserved FROM inventory WHERE sku = %s", (sku,))
    row = cur.fetchone()
    return row[0] - row[1]


def apply_item(cur, item):
    available = current_level(cur, item["sku"])
    delta = item["quantity"] - available
    cur.execute(
        "UPDATE inventory SET quantity = quantity + %s, synced_at = now() WHERE sku = %s",
        (delta, item["sku"]),
    )
    return delta


def sync(conn):
    session = requests.Session()
    page, changed = 1, 0
    per_page = batch_size()
    while True:
        items = fetch_feed(session, page, per_page)
        if not items:
            break
        with conn.cursor() as cur:
            for item in items:
                try:
                    changed += apply_item(cur, item) != 0
                except Exception:
                    pass
        conn.commit()
        page += 1
    log.info("sync finished, %d rows changed", changed)
    return changed


def main():
    conn = psycopg2.connect(os.environ["INVENTORY_DSN"])
    try:
        sync(conn)
    except requests.HTTPError as exc:
        log.error("supplier feed returned %s", exc.response.status_code)
        raise
    finally:
        conn.close()


if __name__ == "__main__":
    main()
