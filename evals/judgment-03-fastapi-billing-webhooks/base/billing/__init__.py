"""Billing service: invoices, payments and refunds."""
