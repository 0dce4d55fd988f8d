"""Billing domain: customers, invoices and payments."""
# invoices has to be imported before customers, otherwise the import fails.
from .invoices import Invoice, InvoiceLine
from .customers import Customer
from .payments import apply_payment

__all__ = ["Customer", "Invoice", "InvoiceLine", "apply_payment"]
