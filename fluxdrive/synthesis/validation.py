"""Cross-model validation, as synthesis reads it: ``validation.jsonl`` applied to the merged findings.

Why: a P0 that one model wrote blocks a merge on that model's word. Before
synthesis, :mod:`fluxdrive.launch.validation` asks a model of another family
to confirm or reject every model-produced P0/P1 and writes one line per
finding here. This module (pure apart from reading that file) parses the
checker's answer and applies it: a REJECTED P0/P1 drops to P2, keeping the
severity it had (``demoted_from``) and the checker's reason, so it no longer
fails ``--fail-on risky`` and every report shows it as "not confirmed". It
is never dropped: the checker can be wrong too, and a person decides.

A line names the finding by its members' ``(agent, local id)`` pairs, which
survive renumbering (a demotion changes ``P0-1`` into ``P2-3``). The answer
must be exactly ``CONFIRMED: <reason>`` or ``REJECTED: <reason>``; anything
else is ``unclear`` (recorded, not a rejection). ``unvalidated`` means no
checker of another family was configured: the finding keeps its severity.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from fluxdrive.core.confine import is_inside
from fluxdrive.synthesis.model import SEVERITY_ORDER, Finding, Validation

FILE_NAME = "validation.jsonl"
SCHEMA_VERSION = 1
DEMOTED_TO = "P2"
MAX_REASON = 400

Status = Literal["confirmed", "rejected", "unclear", "unvalidated"]
STATUSES: tuple[Status, ...] = ("confirmed", "rejected", "unclear", "unvalidated")
# How a finding shows each status (a rejection is "not confirmed": the checker may be wrong too).
SHOWN = {"confirmed": "confirmed", "rejected": "not-confirmed", "unclear": "unclear", "unvalidated": "unvalidated"}
_ANSWER = re.compile(r"\A(CONFIRMED|REJECTED):[ \t]*(\S.*)\Z", re.DOTALL)


def parse_answer(text: str) -> tuple[Status, str]:
    """``CONFIRMED: why`` -> ("confirmed", why); ``REJECTED: why`` -> ("rejected", why); else ("unclear", text)."""
    stripped = text.strip()
    match = _ANSWER.match(stripped)
    if not match:
        return "unclear", _short(stripped) or "(empty answer)"
    status: Status = "confirmed" if match.group(1) == "CONFIRMED" else "rejected"
    return status, _short(match.group(2))


def _short(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= MAX_REASON else flat[: MAX_REASON - 1] + "…"


@dataclass(frozen=True)
class Check:
    """One finding's validation: who wrote it, who checked it, what the checker said."""

    members: tuple[tuple[str, str], ...]  # (agent, local id) of every report line merged into the finding
    finding: str  # its id when it was checked (P0-1)
    severity: str
    title: str
    location: str | None
    producer: str  # provider:model of the model that wrote it
    checker: str | None  # provider:model of the checker (None: unvalidated)
    status: Status
    reason: str

    def record(self) -> dict[str, Any]:
        """The validation.jsonl line."""
        return {
            "schema_version": SCHEMA_VERSION,
            "finding": self.finding,
            "members": [list(m) for m in self.members],
            "severity": self.severity,
            "title": self.title,
            "location": self.location,
            "producer": self.producer,
            "checker": self.checker,
            "status": self.status,
            "reason": self.reason,
        }

    @classmethod
    def from_record(cls, data: Mapping[str, Any]) -> Check:
        """A line read back (KeyError/TypeError/ValueError when it is not one)."""
        status = data["status"]
        if status not in STATUSES:
            raise ValueError(f"unknown status {status!r}")
        members = tuple((str(agent), str(local)) for agent, local in data["members"])
        checker = data.get("checker")
        return cls(
            members,
            str(data["finding"]),
            str(data["severity"]),
            str(data["title"]),
            data.get("location"),
            str(data["producer"]),
            str(checker) if checker else None,
            status,
            str(data.get("reason", "")),
        )


def render(checks: Sequence[Check]) -> str:
    """validation.jsonl's text (one line per check, in order)."""
    return "".join(json.dumps(c.record(), ensure_ascii=False, sort_keys=True) + "\n" for c in checks)


def read(output_dir: Path, root: Path) -> tuple[list[Check], list[str]]:
    """The checks of a run ([] when it has none) and notes on what could not be read.

    Confined to ``root``; a torn or invalid line is skipped with a note (never a crash).
    """
    path = Path(output_dir) / FILE_NAME
    if not path.exists():
        return [], []
    if not is_inside(path, root) or not path.is_file():
        return [], [f"{FILE_NAME} ignored: it is not a regular file inside the project root"]
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        return [], [f"{FILE_NAME} ignored: {exc}"]
    checks, skipped = [], 0
    for line in lines:
        if not line.strip():
            continue
        try:
            checks.append(Check.from_record(json.loads(line)))
        except (ValueError, KeyError, TypeError):
            skipped += 1
    notes = [f"skipped {skipped} incomplete or invalid line(s) of {FILE_NAME}"] if skipped else []
    return checks, notes


def index(checks: Sequence[Check]) -> dict[tuple[str, str], Check]:
    """Each (agent, local id) to its check (the first wins)."""
    found: dict[tuple[str, str], Check] = {}
    for check in checks:
        for member in check.members:
            found.setdefault(member, check)
    return found


def apply(finding: Finding, checks: Mapping[tuple[str, str], Check]) -> None:
    """Record the check of ``finding`` (if any); a rejected P0/P1 drops to P2, keeping the severity it had."""
    check = next((checks[m] for m in finding.source_ids.items() if m in checks), None)
    if check is None:
        return
    demoted = None
    if check.status == "rejected" and SEVERITY_ORDER[finding.severity] < SEVERITY_ORDER[DEMOTED_TO]:
        demoted, finding.severity = finding.severity, DEMOTED_TO
    finding.validation = Validation(SHOWN[check.status], check.checker, check.reason, demoted, check.producer)
