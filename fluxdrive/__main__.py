"""``python -m fluxdrive``."""

from fluxdrive.cli import run

run()
