"""HTTP API for orders."""
from decimal import Decimal

from flask import Blueprint, abort, jsonify, request

from shop.domain.orders import Order, OrderLine
from shop.domain.pricing import PricingError
from shop.infra.order_repo import OrderRepository

bp = Blueprint("orders", __name__)
repo = OrderRepository()


@bp.post("/orders")
def create_order():
    body = request.get_json(force=True)
    try:
        lines = [OrderLine(l["sku"], int(l["quantity"]), Decimal(str(l["unit_price"]))) for l in body["lines"]]
    except (KeyError, TypeError, ValueError):
        abort(400)
    order = Order(id=None, customer_id=int(body.get("customer_id", 0)), lines=lines)
    try:
        order.id = repo.save(order)
        return jsonify(order.summary()), 201
    except PricingError as exc:
        return jsonify({"error": str(exc)}), 422


@bp.get("/orders/<int:order_id>")
def get_order(order_id):
    order = repo.get(order_id)
    if order is None:
        abort(404)
    return jsonify(order.summary())
