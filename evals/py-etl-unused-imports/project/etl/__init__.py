"""Nightly ETL: pull CRM contacts, normalise them, load into the warehouse."""
from .load import load_contacts
from .transform import normalise_contact

__all__ = ["load_contacts", "normalise_contact"]
