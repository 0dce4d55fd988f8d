"""Invoices and invoice lines."""
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal
from typing import List

from .customers import Customer

OPEN = "open"
PAID = "paid"
VOID = "void"

VAT_BY_COUNTRY = {"DE": Decimal("0.19"), "FR": Decimal("0.20"), "NL": Decimal("0.21")}


@dataclass
class InvoiceLine:
    description: str
    quantity: int
    unit_price: Decimal

    def net(self) -> Decimal:
        return self.unit_price * self.quantity


@dataclass
class Invoice:
    id: int
    customer_id: int
    issued_on: date
    vat_rate: Decimal
    lines: List[InvoiceLine] = field(default_factory=list)
    paid: Decimal = Decimal("0")
    status: str = OPEN

    def total(self) -> Decimal:
        net = sum((line.net() for line in self.lines), Decimal("0"))
        return (net * (1 + self.vat_rate)).quantize(Decimal("0.01"))

    def amount_due(self) -> Decimal:
        return self.total() - self.paid


def issue_invoice(invoice_id: int, customer: Customer, lines: List[InvoiceLine]) -> Invoice:
    rate = Decimal("0") if customer.tax_exempt else VAT_BY_COUNTRY.get(customer.country, Decimal("0.19"))
    invoice = Invoice(invoice_id, customer.id, date.today(), rate, list(lines))
    customer.invoice_ids.append(invoice_id)
    return invoice
