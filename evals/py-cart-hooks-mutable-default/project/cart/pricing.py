"""Cart pricing: line items, discount hooks and per-region adjustments."""
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Callable, Dict, List, Optional


@dataclass
class LineItem:
    sku: str
    quantity: int
    unit_price: Decimal
    tags: List[str] = field(default_factory=list)


@dataclass
class Cart:
    customer_id: str
    region: str
    items: List[LineItem] = field(default_factory=list)


def collect_tags(items, seen=[]):
    """Return the distinct tags across the given items, in first-seen order."""
    for item in items:
        for tag in item.tags:
            if tag not in seen:
                seen.append(tag)
    return seen


def format_summary(cart: Cart, currency: str = "EUR", extra_lines: Optional[List[str]] = None) -> str:
    lines = [f"Cart for {cart.customer_id} ({cart.region})"]
    for item in cart.items:
        lines.append(f"  {item.quantity} x {item.sku} @ {item.unit_price} {currency}")
    if extra_lines is None:
        extra_lines = []
    lines.extend(extra_lines)
    return "\n".join(lines)


REGION_RATES: Dict[str, Decimal] = {
    "de": Decimal("0.19"),
    "fr": Decimal("0.20"),
    "nl": Decimal("0.21"),
}


def build_tax_hooks(regions: List[str]) -> Dict[str, Callable[[Decimal], Decimal]]:
    """One callable per region that adds that region's VAT to a net amount."""
    hooks = {}
    for region in regions:
        rate = REGION_RATES[region]
        hooks[region] = lambda net: (net * (1 + rate)).quantize(Decimal("0.01"))
    return hooks


def build_discount_hooks(percentages: Dict[str, int]) -> List[Callable[[Decimal], Decimal]]:
    """One callable per promotion code; each takes its percentage off."""
    hooks = []
    for code, pct in percentages.items():
        hooks.append(lambda amount, pct=pct: amount * (100 - pct) / 100)
    return hooks


def subtotal(cart: Cart) -> Decimal:
    return sum((i.unit_price * i.quantity for i in cart.items), Decimal("0"))


def price_cart(cart: Cart, promo_codes: List[str], tax_hooks, discounts: Dict[str, int]) -> Dict[str, object]:
    amount = subtotal(cart)
    for code, hook in zip(discounts, build_discount_hooks(discounts)):
        if code in promo_codes:
            amount = hook(amount)
    gross = tax_hooks[cart.region](amount)
    return {
        "net": amount.quantize(Decimal("0.01")),
        "gross": gross,
        "tags": collect_tags(cart.items),
    }
