"""SQLite persistence for orders."""
import json
import sqlite3
from decimal import Decimal
from typing import Optional

from shop.domain.orders import Order, OrderLine


class OrderRepository:
    def __init__(self, path: str = "shop.db"):
        self.path = path

    def _conn(self):
        conn = sqlite3.connect(self.path)
        conn.execute(
            "CREATE TABLE IF NOT EXISTS orders (id INTEGER PRIMARY KEY, customer_id INTEGER, lines TEXT)"
        )
        return conn

    def save(self, order: Order) -> int:
        payload = json.dumps([[l.sku, l.quantity, str(l.unit_price)] for l in order.lines])
        with self._conn() as conn:
            cur = conn.execute(
                "INSERT INTO orders (customer_id, lines) VALUES (?, ?)", (order.customer_id, payload)
            )
            return cur.lastrowid

    def get(self, order_id: int) -> Optional[Order]:
        with self._conn() as conn:
            row = conn.execute(
                "SELECT id, customer_id, lines FROM orders WHERE id = ?", (order_id,)
            ).fetchone()
        if row is None:
            return None
        lines = [OrderLine(sku, qty, Decimal(price)) for sku, qty, price in json.loads(row[2])]
        return Order(id=row[0], customer_id=row[1], lines=lines)
