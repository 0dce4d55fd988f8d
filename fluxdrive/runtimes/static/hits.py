"""What every analyzer produces: a Hit, and the masking applied to its evidence.

A hit carries its rule id (``ruff:S608``, ``astgrep:js-sql-template``,
``fluxdrive:py-sql-injection``, ``lizard:complexity``,
``detect-secrets:AWS Access Key``), a claim key saying which agent may report
it, where it is, and the prose for the report. Evidence lines are masked
before they reach any output: values detect-secrets found are replaced, and
so are well-known credential shapes anywhere, so a secret in the reviewed
code never reaches a report, the channel, a verdict or a prompt.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from fluxdrive.core.masking import MASK, mask_text


@dataclass(frozen=True, slots=True)
class Claim:
    """How agents claim a hit: by analyzer and key (ruff code, rule tag, check name)."""

    analyzer: str
    key: str


@dataclass(frozen=True, slots=True)
class Hit:
    """One problem an analyzer found, located in the reported file."""

    rule: str
    claim: Claim
    severity: str
    path: str
    line: int
    title: str
    why: str
    fix: str
    evidence: str = ""
    also: str | None = None
    section: str | None = None
    category: str = "static-finding"
    evidence_level: str = ""  # high: data flow from outside proven; medium: a parameter; low: unknown origin

    @property
    def location(self) -> str:
        """``path:line``."""
        return f"{self.path}:{self.line}"


@dataclass
class SecretMask:
    """Secret values per (path, line), applied to every evidence line."""

    values: dict[tuple[str, int], set[str]] = field(default_factory=dict)

    def add(self, path: str, line: int, value: str | None) -> None:
        """Remember that ``value`` on ``path:line`` is a secret."""
        if value and len(value) >= 3:
            self.values.setdefault((path, line), set()).add(value)

    def flagged(self, path: str, line: int) -> bool:
        """True when detect-secrets found something on this line."""
        return (path, line) in self.values

    def apply(self, path: str, line: int, text: str) -> str:
        """``text`` with secrets replaced by ``****``."""
        for value in sorted(self.values.get((path, line), ()), key=len, reverse=True):
            text = text.replace(value, MASK)
        return mask_text(text, aggressive=self.flagged(path, line))


def evidence_for(lines: Mapping[int, str] | list[str], line: int) -> str:
    """The stripped source line (1-based), shortened for reports."""
    if isinstance(lines, list):
        text = (lines[line - 1] if 0 < line <= len(lines) else "").strip()
    else:
        text = lines.get(line, "").strip()
    return text if len(text) <= 200 else text[:199] + "\u2026"


def sort_hits(hits: Iterable[Hit]) -> list[Hit]:
    """Severity first, then location, then rule: the order reports use."""
    return sorted(hits, key=lambda h: (h.severity, h.path, h.line, h.rule, h.title))
