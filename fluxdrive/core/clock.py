"""Timestamps in the one format every fluxdrive file uses.

UTC, ISO-8601, millisecond precision, ``Z`` suffix: sortable as text and
unambiguous across machines (PROTOCOL.md section 10).
"""

from __future__ import annotations

from datetime import UTC, datetime


def utc_timestamp(now: datetime | None = None) -> str:
    """``2026-11-21T21:06:27.123Z`` for ``now`` (default: the current time)."""
    moment = (now or datetime.now(UTC)).astimezone(UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def parse_timestamp(value: str) -> datetime:
    """Parse an ISO-8601 timestamp (``Z`` or offset); naive values are UTC."""
    moment = datetime.fromisoformat(value)  # Python 3.11+ accepts the Z suffix
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment
