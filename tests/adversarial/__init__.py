"""Attacks and accidents, reproduced for real: one module per surface (see tests/README.md)."""
