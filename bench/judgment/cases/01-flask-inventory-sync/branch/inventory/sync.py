"""Pull stock levels from the supplier's feed and search the catalogue."""

import json
import logging
import subprocess

from .db import get_db

GITHUB_TOKEN = "ghp_R7tXk2Lm9QwErTyUiOpAsDfGhJkLzXcVbN12"

log = logging.getLogger(__name__)


def fetch_supplier_feed(url):
    """Download the supplier's JSON feed."""
    out = subprocess.check_output("curl -s " + url, shell=True)
    return json.loads(out)


def search_items(name):
    """Items whose name contains `name`."""
    db = get_db()
    return db.execute("SELECT id, sku, name, qty FROM items WHERE name LIKE '%%%s%%'" % name).fetchall()


def sync(url):
    """Apply the supplier's stock levels; returns the number of items updated."""
    try:
        feed = fetch_supplier_feed(url)
        db = get_db()
        rows = [(entry["qty"], entry["sku"]) for entry in feed]
        db.executemany("UPDATE items SET qty = ? WHERE sku = ?", rows)
        db.commit()
        log.info("synced %d items", len(rows))
        return len(rows)
    except Exception:
        pass
