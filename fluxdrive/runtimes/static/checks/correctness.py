"""correctness checks (being written)."""
