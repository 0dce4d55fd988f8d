"""HTTP endpoints of the inventory service."""

from flask import Blueprint, abort, jsonify, request

from .db import get_db
from .sync import search_items, sync

bp = Blueprint("items", __name__, url_prefix="/items")


@bp.get("/<int:item_id>")
def show(item_id):
    """Return one item."""
    row = get_db().execute("SELECT id, sku, name, qty FROM items WHERE id = ?", (item_id,)).fetchone()
    if row is None:
        abort(404)
    return jsonify(dict(row))


@bp.get("/search")
def search():
    """Search items by name."""
    return jsonify([dict(row) for row in search_items(request.args.get("q", ""))])


@bp.post("/sync")
def trigger_sync():
    """Pull the supplier feed now."""
    updated = sync(request.json["feed_url"])
    return jsonify({"updated": updated})
