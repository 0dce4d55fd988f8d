"""The extra fields of a Findings Index line that fluxdrive gives a meaning to.

After the location (the 5th field) an index line may carry more fields
(PROTOCOL.md section 6). Three are read by synthesis, whoever wrote them::

    - P0 | SF-001 | "db.py" | SQL built from input | db.py:12 | rule:ruff:S608 | cwe:CWE-89 | also:db.py:30;api.py:7

- ``rule:<id>`` the analyzer rule behind the finding;
- ``cwe:<ids>`` the CWE weaknesses (``CWE-89``, several separated by commas);
  written by hand it may also read ``cwe: 89``, ``CWE=CWE-79, CWE-80`` or a
  bare ``CWE-89`` field;
- ``also:<path:line>;<path:line>...`` the other places of a finding that
  stands for several (a rule folded into one finding, or every line of one
  function); the 5th field stays the primary place.

Every rendered field passes :func:`~fluxdrive.contracts.findings_index.clean_field`
unchanged, so it survives render -> parse.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from fluxdrive.contracts.findings_index import clean_field

MAX_ALSO = 1000  # places kept in one also: field; more are left to the prose
_RULE = re.compile(r"^rule\s*:\s*(\S+)$", re.IGNORECASE)
_CWE_FIELD = re.compile(r"^cwe\s*[:=]\s*(.+)$", re.IGNORECASE)
_BARE_CWE = re.compile(r"^CWE-\d{1,5}(?:\s*[,;/ ]\s*CWE-\d{1,5})*$", re.IGNORECASE)
_CWE_ID = re.compile(r"(?:CWE[-_ ]?)?0*(\d{1,5})\b", re.IGNORECASE)
_CWE_NAMED = re.compile(r"CWE[-_ ]?0*(\d{1,5})\b", re.IGNORECASE)
_BARE_NUMBER = re.compile(r"(?<![\w.-])0*(\d{1,5})(?![\w.-])")
_ALSO = re.compile(r"^also\s*:\s*(.+)$", re.IGNORECASE)
_EVIDENCE = re.compile(r"^evidence\s*:\s*(low|medium|high)$", re.IGNORECASE)
_PLACE = re.compile(r"^.+:\d+$")


@dataclass(frozen=True, slots=True)
class LineFields:
    """What the extra fields of one index line say."""

    rule: str | None = None
    cwe: tuple[str, ...] = ()
    also: tuple[str, ...] = ()
    evidence: str | None = None  # how strongly the analysis itself shows it (data flow from the request: high)


def normalize_cwe(text: str) -> str | None:
    """``89``, ``cwe-089``, ``CWE 89`` -> ``CWE-89``; anything else -> None."""
    match = _CWE_ID.fullmatch(text.strip())
    if match is None or int(match.group(1)) == 0:
        return None
    return f"CWE-{int(match.group(1))}"


def _cwe_list(text: str) -> list[str]:
    """Every CWE id named in ``text``: ``CWE-n`` forms, else bare numbers."""
    numbers = _CWE_NAMED.findall(text) or _BARE_NUMBER.findall(text)
    return list(dict.fromkeys(f"CWE-{int(n)}" for n in numbers if int(n) > 0))


def rule_field(rule: str) -> str:
    """``rule:<id>``."""
    return clean_field(f"rule:{rule}")


def cwe_field(cwes: Iterable[str]) -> str | None:
    """``cwe:CWE-89,CWE-90`` for the valid ids given (None when there are none)."""
    ids = [c for c in (normalize_cwe(text) for text in cwes) if c]
    return f"cwe:{','.join(dict.fromkeys(ids))}" if ids else None


def also_field(places: Sequence[str]) -> str | None:
    """``also:path:line;path:line`` (at most :data:`MAX_ALSO` places; None when there are none).

    A place whose path holds ``;`` or a field separator cannot be carried and is left out.
    """
    kept = [p for p in places if ";" not in p and clean_field(p) == p and _PLACE.match(p)]
    return f"also:{';'.join(kept[:MAX_ALSO])}" if kept else None


def read_fields(extra: Iterable[str]) -> LineFields:
    """The rule, CWE ids and other places named by an entry's extra fields (unknown fields ignored)."""
    rule: str | None = None
    cwes: list[str] = []
    also: list[str] = []
    evidence: str | None = None
    for field in extra:
        text = field.strip()
        if rule is None and (match := _RULE.match(text)):
            rule = match.group(1)
        elif match := _CWE_FIELD.match(text):
            cwes.extend(c for c in _cwe_list(match.group(1)) if c not in cwes)
        elif _BARE_CWE.match(text):
            cwes.extend(c for c in _cwe_list(text) if c not in cwes)
        elif match := _ALSO.match(text):
            also.extend(p.strip() for p in match.group(1).split(";") if _PLACE.match(p.strip()))
        elif match := _EVIDENCE.match(text):
            evidence = match.group(1).lower()
    return LineFields(rule, tuple(cwes), tuple(dict.fromkeys(also)), evidence)


def evidence_field(level: str) -> str | None:
    """``evidence:high`` - what a deterministic analyzer's own proof is worth (None when it says nothing)."""
    return f"evidence:{level}" if level in {"low", "medium", "high"} else None
