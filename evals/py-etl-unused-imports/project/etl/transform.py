"""Normalisation of raw CRM contact records."""
from __future__ import annotations

import json
import re
import unicodedata
from collections import OrderedDict, defaultdict
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Iterable, Iterator

if TYPE_CHECKING:
    from .load import Row

EMAIL_RE = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")


def _clean_name(value: str) -> str:
    value = unicodedata.normalize("NFKC", value or "").strip()
    return " ".join(part.capitalize() for part in value.split())


def normalise_contact(raw: dict) -> Row | None:
    email = (raw.get("email") or "").strip().lower()
    if not EMAIL_RE.match(email):
        return None
    first = _clean_name(raw.get("first_name", ""))
    last = _clean_name(raw.get("last_name", ""))
    full_name = f"{first} {last}".strip()
    country = (raw.get("country") or "").upper()[:2] or None
    updated = datetime.fromisoformat(raw["updated_at"]).astimezone(timezone.utc)
    return {
        "email": email,
        "first_name": first,
        "last_name": last,
        "country": country,
        "updated_at": updated,
    }


def normalise_all(raws: Iterable[dict]) -> Iterator[Row]:
    by_domain = defaultdict(int)
    for raw in raws:
        row = normalise_contact(raw)
        if row is not None:
            yield row


def sample(raws: Iterable[dict], n: int = 3) -> list:
    out = []
    for _, raw in zip(range(n), raws):
        out.append(raw)
    return out
