"""Write-behind verdicts: callers read one line per agent, not its prose.

Seed 003, PROTOCOL.md section 11. Every multi-agent dispatch writes full
agent output to files and one small JSON record per agent under
``OUTPUT_DIR/verdicts/<agent>.json``::

    {"schema_version": 1, "agent": "fd-safety", "status": "NEEDS_ATTENTION",
     "summary": "1 P0: SQL built by concatenation in app/db.py:41",
     "detail_path": "fd-safety.md", "tokens": 18234,
     "timestamp": "2026-11-21T21:06:27.000Z"}

A caller (a person, CI, a coding assistant) reads the table and the count,
and opens ``detail_path`` only for agents that need attention.

Statuses. fluxdrive's own agents only ever produce ``STATUSES`` (CLEAN,
NEEDS_ATTENTION, ERROR), and :func:`make_record` accepts only those unless a
caller asks for more, so a typo in library code still fails fast. Clavain
(``fluxdrive.reports.clavain``) writes the same kind of record with a wider
vocabulary, ``ALL_STATUSES``: BLOCKED (could not complete: missing
dependencies or access), and COMPLETE / PARTIAL / FAILED for implementation
agents. Those are real values of :data:`Status` rather than a side field, so
that a Clavain directory lists, counts (in Clavain's own order, which keeps
ours: CLEAN, NEEDS_ATTENTION, ERROR) and filters like ours; reading accepts
all of them, and ``fluxdrive verdicts write`` accepts them too.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

from fluxdrive.core.atomic import atomic_write_json
from fluxdrive.core.clock import utc_timestamp
from fluxdrive.core.columns import format_columns
from fluxdrive.core.confine import read_confined
from fluxdrive.core.masking import scrub
from fluxdrive.core.paths import AGENT_NAME, require_directory
from fluxdrive.core.project import find_project_root
from fluxdrive.errors import FluxdriveError, VerdictError

SCHEMA_VERSION = 1
VERDICTS_DIR = "verdicts"
STATUSES = ("CLEAN", "NEEDS_ATTENTION", "ERROR")  # what fluxdrive's own agents produce
# Clavain's vocabulary (hooks/lib-verdict.sh verdict_count_by_status), in its counting order.
ALL_STATUSES = ("CLEAN", "NEEDS_ATTENTION", "BLOCKED", "ERROR", "COMPLETE", "PARTIAL", "FAILED")
OK_STATUSES = frozenset({"CLEAN", "COMPLETE"})  # nothing to look at; every other status needs attention
SUMMARY_MAX = 200

Status = Literal["CLEAN", "NEEDS_ATTENTION", "BLOCKED", "ERROR", "COMPLETE", "PARTIAL", "FAILED"]

# Review verdicts (section 5.6) map onto verdict statuses explicitly; the
# reference left this mapping implied, and three vocabularies drifted.
STATUS_FOR_VERDICT: dict[str, Status] = {
    "safe": "CLEAN",
    "needs-changes": "NEEDS_ATTENTION",
    "risky": "NEEDS_ATTENTION",
    "incomplete": "NEEDS_ATTENTION",  # not CLEAN: an agent did not finish, so nothing was shown safe
    "error": "ERROR",
}

_AGENT = AGENT_NAME
MAX_RECORD_BYTES = 1_000_000


@dataclass(frozen=True, slots=True)
class VerdictRecord:
    """One agent's verdict: status, a one-line summary, where the detail is."""

    agent: str
    status: Status
    summary: str
    detail_path: str | None
    tokens: int
    timestamp: str
    schema_version: int = SCHEMA_VERSION
    cost_usd: float = 0.0  # from llm.prices for model-backed agents; 0 for the static analyzers
    # Where the record came from. A Clavain record (fluxdrive.reports.clavain) also carries its model and
    # findings count; none of these three is written to a fluxdrive record on disk.
    source: Literal["fluxdrive", "clavain"] = "fluxdrive"
    model: str | None = None
    findings_count: int | None = None

    @property
    def needs_attention(self) -> bool:
        """True for anything but CLEAN (or Clavain's COMPLETE): a person or caller should look."""
        return self.status not in OK_STATUSES


@dataclass(frozen=True, slots=True)
class VerdictSet:
    """The records of one directory, sorted by agent, plus unreadable files."""

    records: tuple[VerdictRecord, ...]
    problems: tuple[str, ...] = ()
    directory: Path | None = None


# The keys of a fluxdrive record on disk, in order (source, model and findings_count stay in memory).
RECORD_KEYS = ("agent", "status", "summary", "detail_path", "tokens", "timestamp", "schema_version", "cost_usd")


def verdicts_dir(output_dir: Path) -> Path:
    """``OUTPUT_DIR/verdicts``."""
    return Path(output_dir) / VERDICTS_DIR


def _one_line(text: str) -> str:
    line = " ".join(scrub(text).split())
    if len(line) > SUMMARY_MAX:
        line = line[: SUMMARY_MAX - 1].rstrip() + "\u2026"
    return line


def make_record(
    agent: str,
    status: str,
    summary: str,
    *,
    detail_path: str | None = None,
    tokens: int = 0,
    timestamp: str | None = None,
    cost_usd: float = 0.0,
    statuses: Sequence[str] = STATUSES,
) -> VerdictRecord:
    """Validate the parts of a verdict record; raise VerdictError otherwise.

    ``statuses`` is the vocabulary accepted: fluxdrive's own by default,
    ``ALL_STATUSES`` to accept Clavain's as well.
    """
    if not _AGENT.match(agent):
        raise VerdictError(
            f"invalid agent name {agent!r}",
            hint="letters, digits, '.', '_' and '-' only (it becomes a file name)",
        )
    level = status.strip().upper().replace("-", "_")
    if level not in statuses or level not in ALL_STATUSES:
        raise VerdictError(f"unknown status {status!r}", hint=f"use {_spoken(statuses)}")
    line = _one_line(summary)
    if not line:
        raise VerdictError("summary is empty", hint="give a one-line summary")
    if isinstance(tokens, bool) or not isinstance(tokens, int) or tokens < 0:
        raise VerdictError(f"tokens must be a non-negative integer, got {tokens!r}")
    if isinstance(cost_usd, bool) or not isinstance(cost_usd, int | float) or cost_usd < 0:
        raise VerdictError(f"cost_usd must be a non-negative number, got {cost_usd!r}")
    return VerdictRecord(
        agent=agent,
        status=level,  # type: ignore[arg-type]
        summary=line,
        detail_path=detail_path,
        tokens=tokens,
        timestamp=timestamp or utc_timestamp(),
        cost_usd=round(float(cost_usd), 6),
    )


def _spoken(words: Sequence[str]) -> str:
    """'A, B or C'."""
    return f"{', '.join(words[:-1])} or {words[-1]}" if len(words) > 1 else "".join(words)


def _portable(detail: str | None, output_dir: Path) -> str | None:
    """Store detail paths relative to OUTPUT_DIR when they live inside it."""
    if detail is None:
        return None
    path = Path(detail)
    if not path.is_absolute():
        return detail
    try:
        return str(path.resolve().relative_to(output_dir.resolve()))
    except ValueError:
        return str(path)


def write_verdict(
    output_dir: Path,
    agent: str,
    status: str,
    summary: str,
    *,
    detail_path: str | None = None,
    tokens: int = 0,
    cost_usd: float = 0.0,
    statuses: Sequence[str] = STATUSES,
) -> VerdictRecord:
    """Write ``OUTPUT_DIR/verdicts/<agent>.json`` atomically.

    With no ``detail_path``, the agent's report ``<agent>.md`` is used when
    it exists in OUTPUT_DIR. ``statuses``: as for :func:`make_record`.
    """
    output_dir = Path(output_dir)
    if output_dir.exists() and not output_dir.is_dir():
        raise VerdictError(f"output directory is a file: {output_dir}")
    if detail_path is None and (output_dir / f"{agent}.md").is_file():
        detail_path = f"{agent}.md"
    detail = _portable(scrub(detail_path) if detail_path else detail_path, output_dir)
    record = make_record(
        agent, status, summary, detail_path=detail, tokens=tokens, cost_usd=cost_usd, statuses=statuses
    )
    atomic_write_json(verdicts_dir(output_dir) / f"{agent}.json", {k: getattr(record, k) for k in RECORD_KEYS})
    return record


# Clavain records (fluxdrive.reports.clavain writes them; reading is here so load_verdicts reads either shape).
# Keys only a Clavain record has: a fluxdrive record always has schema_version.
_CLAVAIN_KEYS = frozenset({"type", "model", "tokens_spent", "files_changed", "findings_count", "session_id"})


def is_clavain_record(data: Mapping[str, Any]) -> bool:
    """True for a record in Clavain's shape (``.clavain/verdicts/<agent>.json``) rather than fluxdrive's.

    fluxdrive always writes ``schema_version`` and ``agent``; Clavain names the
    agent by the file only and writes ``type``/``model``/``tokens_spent``/...
    (a hand-written one, such as quality-gates' SKIPPED record, may carry an
    ``agent`` key next to ``model`` and ``findings_count``).
    """
    if "schema_version" in data:
        return False
    return "agent" not in data or bool(_CLAVAIN_KEYS & data.keys())


def _field(value: object, limit: int = 500) -> str:
    return " ".join(scrub(str(value)).split())[:limit]


def _count(value: object) -> int:
    """A non-negative integer field (jq --argjson lets anything through; anything else counts as 0)."""
    if isinstance(value, bool):
        return 0
    if isinstance(value, int):
        return max(value, 0)
    if isinstance(value, float) and value.is_integer():
        return max(int(value), 0)
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    return 0


def from_clavain(agent: str, data: Mapping[str, Any]) -> VerdictRecord:
    """A Clavain record (file ``<agent>.json``) as a :class:`VerdictRecord` with ``source="clavain"``.

    Clavain's status is kept as it is (BLOCKED, COMPLETE, ... are values of
    :data:`Status`), and must be spelled exactly as lib-verdict.sh's counter
    compares it. Raises VerdictError for a record without a status or with
    one outside Clavain's vocabulary; a missing summary is replaced by the
    record's ``reason`` (quality-gates' hand-written records) or the status.
    Detail paths are relative to the project root, as Clavain writes them.
    """
    status = data.get("status")
    if not isinstance(status, str) or not status.strip():
        raise VerdictError("Clavain record without a status")
    if status not in ALL_STATUSES:  # exactly, as verdict_count_by_status compares: "clean" counts nowhere
        raise VerdictError(f"Clavain status {_field(status, 60)!r} is not one of {', '.join(ALL_STATUSES)}")
    summary = data.get("summary")
    if not isinstance(summary, str) or not summary.strip():
        reason = data.get("reason")
        summary = reason if isinstance(reason, str) and reason.strip() else f"{status} (no summary)"
    detail = data.get("detail_path")
    model = data.get("model")
    record = make_record(
        agent,
        status,
        summary,
        detail_path=_field(detail) if isinstance(detail, str) and detail.strip() else None,
        tokens=_count(data.get("tokens_spent", data.get("tokens", 0))),
        timestamp=_field(data.get("timestamp") or data.get("ts") or "", 40),
        statuses=ALL_STATUSES,
    )
    return replace(
        record,
        source="clavain",
        model=_field(model, 100) if isinstance(model, str) and model.strip() else None,
        findings_count=_count(data.get("findings_count", 0)),
    )


def _decode(path: Path, root: Path) -> VerdictRecord:
    data = json.loads(read_confined(path, root, "verdict record", limit=MAX_RECORD_BYTES).decode("utf-8"))
    if not isinstance(data, dict):
        raise ValueError("not a JSON object")
    if is_clavain_record(data):
        return from_clavain(path.stem, data)
    tokens = data.get("tokens", data.get("tokens_spent", 0))
    return make_record(
        str(data["agent"]),
        str(data["status"]),
        str(data["summary"]),
        detail_path=data.get("detail_path"),
        tokens=int(tokens) if isinstance(tokens, int | str) and str(tokens).isdigit() else 0,
        timestamp=str(data.get("timestamp") or ""),
        cost_usd=cost if isinstance(cost := data.get("cost_usd", 0.0), int | float) and cost >= 0 else 0.0,
        statuses=ALL_STATUSES,
    )


def resolve_directory(path: Path) -> Path:
    """Accept either OUTPUT_DIR or OUTPUT_DIR/verdicts."""
    path = Path(path)
    require_directory(path, "verdicts directory")
    nested = verdicts_dir(path)
    return nested if nested.is_dir() else path


def load_verdicts(path: Path) -> VerdictSet:
    """Read every record in a directory; unreadable files become problems.

    Each file may be a fluxdrive record or a Clavain one (``.clavain/verdicts/``,
    told apart by its shape: see :func:`fluxdrive.reports.clavain.is_clavain_record`).
    """
    directory = resolve_directory(path)
    root = find_project_root(directory)  # a record may link elsewhere in the project, never out of it
    records: list[VerdictRecord] = []
    problems: list[str] = []
    for file in sorted(directory.glob("*.json")):
        try:
            records.append(_decode(file, root))
        except (OSError, ValueError, KeyError, TypeError, RecursionError, FluxdriveError) as exc:
            detail = exc.one_line() if isinstance(exc, FluxdriveError) else str(exc)
            problems.append(f"{file.name}: unreadable verdict record ({detail})")
    records.sort(key=lambda r: r.agent)
    return VerdictSet(tuple(records), tuple(problems), directory)


def count_by_status(records: Sequence[VerdictRecord]) -> str:
    """'3 CLEAN, 1 NEEDS_ATTENTION' (statuses in a fixed order; '0 verdicts' if none).

    The order and wording are lib-verdict.sh's ``verdict_count_by_status``, so
    the same directory gives the same line from either tool.
    """
    parts = []
    for status in ALL_STATUSES:
        count = sum(1 for r in records if r.status == status)
        if count:
            parts.append(f"{count} {status}")
    return ", ".join(parts) if parts else "0 verdicts"


def attention(records: Sequence[VerdictRecord]) -> tuple[VerdictRecord, ...]:
    """Only the records a caller should drill into (every status but CLEAN and COMPLETE)."""
    return tuple(r for r in records if r.needs_attention)


def total_tokens(records: Sequence[VerdictRecord]) -> int:
    """Tokens spent by all agents."""
    return sum(r.tokens for r in records)


def total_cost(records: Sequence[VerdictRecord]) -> float:
    """US dollars spent by all agents (0 when none ran on a priced model)."""
    return round(sum(r.cost_usd for r in records), 6)


def render_table(records: Sequence[VerdictRecord], *, max_summary: int = 100, details: bool = False) -> str:
    """The STATUS AGENT SUMMARY table (with a DETAIL column when asked)."""
    rows: list[tuple[str, ...]]
    if details:
        rows = [(r.status, r.agent, r.detail_path or "-", r.summary) for r in records]
        headers: tuple[str, ...] = ("STATUS", "AGENT", "DETAIL", "SUMMARY")
    else:
        rows = [(r.status, r.agent, r.summary) for r in records]
        headers = ("STATUS", "AGENT", "SUMMARY")
    return format_columns(headers, rows, max_last=max_summary)
