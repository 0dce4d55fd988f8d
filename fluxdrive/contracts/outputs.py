"""Classify one agent output file: valid, error, malformed or missing.

PROTOCOL.md section 5.2. The classification carries a human reason so that
synthesis can report "5/6 agents returned a valid Findings Index, 1 failed"
and explain each failure. Large files are read from the head (where the index
lives) and the tail (where the sentinel lives), never whole.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass
from pathlib import Path

from fluxdrive.contracts.completion import has_sentinel, is_partial_recovery
from fluxdrive.contracts.findings_index import ParsedIndex, parse_index

HEAD_BYTES = 1 << 20  # 1 MiB: far more than any index; bounds huge reports
TAIL_BYTES = 4096


class OutputStatus(enum.Enum):
    """The four classes of section 5.2."""

    VALID = "valid"
    ERROR = "error"
    MALFORMED = "malformed"
    MISSING = "missing"


@dataclass(frozen=True, slots=True)
class OutputClassification:
    """An agent output's class, why, and what could be recovered from it.

    ``usable_index`` is True when synthesis can take findings from the index
    even though the output is malformed (e.g. a missing Verdict line); when
    False, a malformed output needs the prose fallback.
    """

    status: OutputStatus
    reason: str
    index: ParsedIndex
    usable_index: bool
    partial: bool = False
    has_sentinel: bool = False
    truncated_read: bool = False

    @property
    def verdict(self) -> str:
        """The output's verdict: ``error`` for failed agents, else derived from the index."""
        return "error" if self.status is OutputStatus.ERROR else self.index.verdict


def read_head_and_tail(path: Path) -> tuple[str, bool, bool]:
    """(head text, sentinel present, whether the head was cut short)."""
    with path.open("rb") as handle:
        head = handle.read(HEAD_BYTES)
        more = handle.read(1)
        cut = bool(more)
        tail = b""
        if cut:
            handle.seek(0, 2)
            size = handle.tell()
            handle.seek(max(size - TAIL_BYTES, 0))
            tail = handle.read()
    text = head.decode("utf-8", errors="replace")
    sentinel = has_sentinel(text) or has_sentinel(tail.decode("utf-8", errors="replace"))
    return text, sentinel, cut


_FAILURE = re.compile(
    r"(?i)^(?:.*\b(?:failed|crashed|aborted|killed)\b.*\(?exit(?: code| status)?:?\s*\d+\)?.*"
    r"|traceback \(most recent call last\):.*)$"
)


def _failure_line(body: str) -> str | None:
    """A tool's failure banner (``Oracle failed (exit 124)``) in a report with no index."""
    for line in reversed(body.strip().splitlines()[-30:]):
        if _FAILURE.match(line.strip()):
            return " ".join(line.split())[:200]
    return None


def classify_text(text: str, *, sentinel: bool | None = None) -> OutputClassification:
    """Classify an output given its text (see :func:`classify_output`)."""
    signed = has_sentinel(text) if sentinel is None else sentinel
    partial = is_partial_recovery(text)
    body = "\n".join(line for line in text.splitlines() if not line.strip().startswith("<!-- flux-drive:"))
    index = parse_index(text)
    if not body.strip():
        return OutputClassification(OutputStatus.MISSING, "empty output", index, False, partial, signed)
    if index.is_error:
        reason = f"agent error: {index.error_message or 'no message'}"
        return OutputClassification(OutputStatus.ERROR, reason, index, False, partial, signed)
    failure = _failure_line(body) if not index.found else None
    if failure is not None:
        return OutputClassification(OutputStatus.ERROR, f"agent failed: {failure}", index, False, partial, signed)
    if not index.found:
        return OutputClassification(
            OutputStatus.MALFORMED,
            "no Findings Index found (prose fallback needed)",
            index,
            False,
            partial,
            signed,
        )
    problems = list(index.violations)
    if partial:
        problems.insert(0, "report was cut off at the timeout")
    if problems:
        usable = bool(index.entries) or (index.declared_verdict is not None and not index.unparsed)
        return OutputClassification(OutputStatus.MALFORMED, "; ".join(problems), index, usable, partial, signed)
    count = len(index.entries)
    reason = f"{count} finding{'s' if count != 1 else ''}, verdict {index.verdict}"
    return OutputClassification(OutputStatus.VALID, reason, index, True, partial, signed)


def classify_output(path: Path) -> OutputClassification:
    """Classify the agent output at ``path`` (a missing file is MISSING)."""
    path = Path(path)
    if not path.is_file():
        return OutputClassification(OutputStatus.MISSING, f"{path.name} does not exist", ParsedIndex(), False)
    text, sentinel, cut = read_head_and_tail(path)
    result = classify_text(text, sentinel=sentinel)
    if cut:
        return OutputClassification(
            result.status,
            result.reason,
            result.index,
            result.usable_index,
            result.partial,
            result.has_sentinel,
            truncated_read=True,
        )
    return result
