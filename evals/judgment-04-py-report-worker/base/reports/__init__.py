"""Report generation worker."""
