"""What the wire-level fakes of REST services (GitHub, GitLab) share: the record of a request, a scripted failure."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Recorded:
    """One request as a fake saw it (the credential header reduced to whether it was right)."""

    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: Any
    raw_body: str
    status: int
    authorized: bool


@dataclass
class Failure:
    """A failure a test scripts: answer ``method path`` with ``status`` the next ``times`` times."""

    method: str
    path: re.Pattern[str]
    status: int
    headers: dict[str, str]
    body: dict[str, Any]
    times: int
