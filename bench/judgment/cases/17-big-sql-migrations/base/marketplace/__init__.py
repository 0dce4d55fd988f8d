"""Marketplace backend."""
