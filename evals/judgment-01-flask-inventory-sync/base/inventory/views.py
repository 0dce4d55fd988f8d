"""HTTP endpoints of the inventory service."""

from flask import Blueprint, abort, jsonify

from .db import get_db

bp = Blueprint("items", __name__, url_prefix="/items")


@bp.get("/<int:item_id>")
def show(item_id):
    """Return one item."""
    row = get_db().execute("SELECT id, sku, name, qty FROM items WHERE id = ?", (item_id,)).fetchone()
    if row is None:
        abort(404)
    return jsonify(dict(row))
