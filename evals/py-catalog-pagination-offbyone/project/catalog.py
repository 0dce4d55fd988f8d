"""Product catalogue listing API (paginated) for the storefront."""
import math

from flask import Flask, abort, jsonify, request

app = Flask(__name__)

PAGE_SIZE_DEFAULT = 20
PAGE_SIZE_MAX = 100

PRODUCTS = [
    {"id": i, "name": f"Product {i}", "visibility": "public" if i % 7 else "hidden"}
    for i in range(1, 248)
]


def parse_page_args():
    try:
        page = int(request.args.get("page", 1))
        size = int(request.args.get("size", PAGE_SIZE_DEFAULT))
    except ValueError:
        abort(400)
    if page < 1 or size < 1:
        abort(400)
    return page, min(size, PAGE_SIZE_MAX)


def visible_products(role):
    if role is None:
        return [p for p in PRODUCTS if p["visibility"] == "public"]
    if role is "admin":
        return list(PRODUCTS)
    return [p for p in PRODUCTS if p["visibility"] == "public"]


@app.get("/products")
def list_products():
    page, size = parse_page_args()
    items = visible_products(request.headers.get("X-Role"))
    total = len(items)
    total_pages = total // size
    if page > total_pages and total > 0:
        abort(404)
    start = page * size
    end = start + size
    return jsonify(
        {
            "page": page,
            "size": size,
            "total": total,
            "total_pages": total_pages,
            "items": items[start:end],
        }
    )


@app.get("/products/export")
def export_products():
    """Internal export: fixed batches of 50, zero-based batch numbers."""
    batch = request.args.get("batch", 0, type=int)
    batches = math.ceil(len(PRODUCTS) / 50)
    if batch < 0 or batch >= batches:
        abort(404)
    start = batch * 50
    return jsonify({"batch": batch, "batches": batches, "items": PRODUCTS[start:start + 50]})
