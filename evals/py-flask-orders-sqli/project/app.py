"""Order lookup service for the warehouse dashboard."""
import sqlite3

from flask import Flask, abort, g, jsonify, request

DATABASE = "orders.db"

app = Flask(__name__)


def get_db():
    db = getattr(g, "_db", None)
    if db is None:
        db = g._db = sqlite3.connect(DATABASE)
        db.row_factory = sqlite3.Row
    return db


@app.teardown_appcontext
def close_db(exc):
    db = getattr(g, "_db", None)
    if db is not None:
        db.close()


@app.route("/orders/<int:order_id>")
def get_order(order_id):
    cur = get_db().execute(
        "SELECT id, customer, status, total_cents FROM orders WHERE id = ?",
        (order_id,),
    )
    row = cur.fetchone()
    if row is None:
        abort(404)
    return jsonify(dict(row))


@app.route("/orders/search")
def search_orders():
    customer = request.args.get("customer", "")
    status = request.args.get("status", "open")
    query = (
        "SELECT id, customer, status, total_cents FROM orders "
        f"WHERE customer LIKE '%{customer}%' AND status = '{status}' "
        "ORDER BY id DESC LIMIT 50"
    )
    rows = get_db().execute(query).fetchall()
    return jsonify([dict(r) for r in rows])


@app.route("/orders/<int:order_id>/summary")
def order_summary(order_id):
    db = get_db()
    order = db.execute(
        "SELECT id, customer, total_cents FROM orders WHERE id = ?", (order_id,)
    ).fetchone()
    customer = db.execute(
        "SELECT name, tier FROM customers WHERE id = ?", (order["customer"],)
    ).fetchone()
    return jsonify(
        {
            "order": order["id"],
            "customer": customer["name"],
            "tier": customer["tier"],
            "total": order["total_cents"] / 100,
        }
    )


@app.route("/orders/<int:order_id>/status", methods=["POST"])
def update_status(order_id):
    new_status = request.json.get("status")
    if new_status not in {"open", "packed", "shipped", "cancelled"}:
        abort(400)
    db = get_db()
    db.execute("UPDATE orders SET status = ? WHERE id = ?", (new_status, order_id))
    db.commit()
    return jsonify({"id": order_id, "status": new_status})


if __name__ == "__main__":
    app.run()
