"""Price rules: customer-group discounts and coupon handling."""
from dataclasses import dataclass
from decimal import Decimal
from typing import Optional

from flask import abort, request

GROUP_DISCOUNT = {"retail": Decimal("0"), "trade": Decimal("0.12"), "staff": Decimal("0.30")}


@dataclass(frozen=True)
class Coupon:
    code: str
    percent: int
    min_subtotal: Decimal


class PricingError(Exception):
    pass


def group_discount(group: str) -> Decimal:
    try:
        return GROUP_DISCOUNT[group]
    except KeyError:
        raise PricingError(f"unknown customer group {group!r}")


def current_group() -> str:
    """The customer group of the caller, as set by the API gateway."""
    return request.headers.get("X-Customer-Group", "retail")


def apply_coupon(subtotal: Decimal, coupon: Optional[Coupon]) -> Decimal:
    if coupon is None:
        return subtotal
    if subtotal < coupon.min_subtotal:
        abort(422, description=f"coupon {coupon.code} needs a subtotal of {coupon.min_subtotal}")
    return subtotal * (100 - coupon.percent) / 100


def price(subtotal: Decimal, coupon: Optional[Coupon] = None) -> Decimal:
    discounted = subtotal * (1 - group_discount(current_group()))
    return apply_coupon(discounted, coupon).quantize(Decimal("0.01"))
