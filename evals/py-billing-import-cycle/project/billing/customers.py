"""Customer accounts."""
from dataclasses import dataclass, field
from decimal import Decimal
from typing import List

from . import invoices


@dataclass
class Customer:
    id: int
    name: str
    country: str
    tax_exempt: bool = False
    credit_limit: Decimal = Decimal("0")
    invoice_ids: List[int] = field(default_factory=list)

    def open_invoices(self, store) -> List["invoices.Invoice"]:
        return [
            inv
            for inv in (store.get_invoice(i) for i in self.invoice_ids)
            if inv.status == invoices.OPEN
        ]

    def balance(self, store) -> Decimal:
        return sum((inv.amount_due() for inv in self.open_invoices(store)), Decimal("0"))

    def can_order(self, store, amount: Decimal) -> bool:
        return self.balance(store) + amount <= self.credit_limit
