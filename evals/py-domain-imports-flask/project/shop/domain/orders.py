"""Order aggregate and the rules for placing an order."""
from dataclasses import dataclass, field
from decimal import Decimal
from typing import List, Optional

from shop.domain.pricing import Coupon, price
from shop.web.serializers import money_json


@dataclass
class OrderLine:
    sku: str
    quantity: int
    unit_price: Decimal


@dataclass
class Order:
    id: Optional[int]
    customer_id: int
    lines: List[OrderLine] = field(default_factory=list)
    coupon: Optional[Coupon] = None

    def subtotal(self) -> Decimal:
        return sum((line.unit_price * line.quantity for line in self.lines), Decimal("0"))

    def total(self) -> Decimal:
        return price(self.subtotal(), self.coupon)

    def summary(self) -> dict:
        return {
            "id": self.id,
            "lines": len(self.lines),
            "total": money_json(self.total()),
        }
