"""The peer-findings channel: agents share critical findings while they run.

PROTOCOL.md section 10, seeds 000 and 001. ``OUTPUT_DIR/peer-findings.jsonl``
is append-only, one JSON object per line::

    {"severity": "blocking", "agent": "fd-correctness", "category": "api-conflict",
     "summary": "...", "file_refs": ["internal/http/handlers.go:34"],
     "timestamp": "2026-02-22T10:23:00.000Z", "schema_version": 1}

Why it is safe without locks: each finding is encoded in memory and written
with a single ``write()`` on a descriptor opened with ``O_APPEND``, and every
line is kept under ``PIPE_BUF`` (4096 bytes), so concurrent writers never
interleave inside a line. Readers skip anything that is not a complete, valid
object - a torn trailing line is normal while agents are still writing - and
report how many lines they skipped.

Across machines (config ``channel.url``), the run's channel is a Redis
stream: a marker next to the file binds it, and :func:`append_finding` and
:func:`read` use the stream instead, with the same lines and the same
validation; a Redis outage falls back to this file (see
:mod:`fluxdrive.exchange.stream`).
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from fluxdrive.core.clock import parse_timestamp, utc_timestamp
from fluxdrive.core.masking import scrub
from fluxdrive.core.paths import AGENT_NAME, read_regular, require_file
from fluxdrive.errors import ChannelError, InputError

CHANNEL_FILE = "peer-findings.jsonl"
SCHEMA_VERSION = 1
PIPE_BUF = 4096
MAX_FILE_REFS = 20
MIN_SUMMARY = 40
SEVERITIES = ("blocking", "notable")
SEVERITY_FILTERS = ("blocking", "notable", "all")
ELLIPSIS = "\u2026"
MAX_CHANNEL_BYTES = 256 * 1024 * 1024  # ~60,000 findings of the largest size: a channel, not a disk image

ChannelSeverity = Literal["blocking", "notable"]

_CATEGORY = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
_AGENT = AGENT_NAME


@dataclass(frozen=True, slots=True)
class PeerFinding:
    """One line of the channel."""

    severity: ChannelSeverity
    agent: str
    category: str
    summary: str
    file_refs: tuple[str, ...]
    timestamp: str

    def to_dict(self) -> dict[str, Any]:
        """The JSON object written to, and read back from, the channel."""
        return {
            "severity": self.severity,
            "agent": self.agent,
            "category": self.category,
            "summary": self.summary,
            "file_refs": list(self.file_refs),
            "timestamp": self.timestamp,
            "schema_version": SCHEMA_VERSION,
        }

    @property
    def moment(self) -> datetime:
        """The timestamp as an aware datetime, for ordering."""
        return parse_timestamp(self.timestamp)


@dataclass(frozen=True, slots=True)
class AppendResult:
    """What was written, and any adjustment made to fit one atomic line."""

    finding: PeerFinding
    adjustments: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class ChannelRead:
    """The valid findings of a channel, in file order, and the lines skipped."""

    findings: tuple[PeerFinding, ...]
    skipped: int = 0


def make_finding(
    severity: str,
    agent: str,
    category: str,
    summary: str,
    file_refs: Iterable[str] = (),
    *,
    timestamp: str | None = None,
) -> PeerFinding:
    """Validate the parts of a finding; raise ChannelError naming the problem."""
    level = severity.strip().lower()
    if level not in SEVERITIES:
        raise ChannelError(
            f"unknown severity {severity!r}",
            hint="use 'blocking' (others must acknowledge it) or 'notable'",
        )
    name = agent.strip()
    if not _AGENT.match(name):
        raise ChannelError(
            f"invalid agent name {agent!r}", hint="letters, digits, '.', '_' and '-', starting with a letter or digit"
        )
    if not _CATEGORY.match(category):
        raise ChannelError(
            f"category {category!r} is not kebab-case",
            hint="use lowercase words joined by hyphens, e.g. auth-bypass",
        )
    text = " ".join(scrub(summary).split())
    if not text:
        raise ChannelError("summary is empty", hint="describe the finding in 1-2 sentences")
    refs = tuple(scrub(ref).strip() for ref in file_refs if ref.strip())
    return PeerFinding(
        severity=level,  # type: ignore[arg-type]
        agent=name,
        category=category,
        summary=text,
        file_refs=refs,
        timestamp=timestamp or utc_timestamp(),
    )


def _encode(finding: PeerFinding) -> bytes:
    return (json.dumps(finding.to_dict(), ensure_ascii=False) + "\n").encode("utf-8")


def _shorten(finding: PeerFinding, max_bytes: int) -> PeerFinding | None:
    """The finding with the longest summary prefix (plus an ellipsis) that fits."""
    summary, best = finding.summary, None
    low, high = 0, len(summary)
    while low <= high:
        middle = (low + high) // 2
        trial = _replace(finding, summary=summary[:middle].rstrip() + ELLIPSIS)
        if len(_encode(trial)) <= max_bytes:
            best, low = trial, middle + 1
        else:
            high = middle - 1
    return best


def fit_line(finding: PeerFinding, max_bytes: int = PIPE_BUF) -> tuple[bytes, PeerFinding, list[str]]:
    """Encode ``finding`` as one line of at most ``max_bytes`` bytes.

    Caps ``file_refs`` at MAX_FILE_REFS, then shortens the summary with an
    ellipsis (keeping at least MIN_SUMMARY characters while references can
    still be dropped), then drops references from the end. Every adjustment
    is reported so the caller can say so.
    """
    notes: list[str] = []
    refs = list(finding.file_refs)
    if len(refs) > MAX_FILE_REFS:
        notes.append(f"kept the first {MAX_FILE_REFS} file_refs, dropped {len(refs) - MAX_FILE_REFS}")
        refs = refs[:MAX_FILE_REFS]
    while True:
        candidate = _replace(finding, file_refs=tuple(refs))
        line = _encode(candidate)
        if len(line) <= max_bytes:
            break
        shortened = _shorten(candidate, max_bytes)
        if shortened is not None and (len(shortened.summary) > MIN_SUMMARY or not refs):
            notes.append(
                f"summary truncated from {len(finding.summary)} to "
                f"{len(shortened.summary) - 1} characters to fit {max_bytes} bytes"
            )
            candidate, line = shortened, _encode(shortened)
            break
        if not refs:
            raise ChannelError(
                f"finding cannot fit in one {max_bytes}-byte line",
                hint="shorten the agent name, category or file references",
            )
        refs.pop()
    if len(candidate.file_refs) < min(len(finding.file_refs), MAX_FILE_REFS):
        notes.append(f"dropped file_refs to fit {max_bytes} bytes, kept {len(candidate.file_refs)}")
    return line, candidate, notes


def _replace(finding: PeerFinding, **changes: Any) -> PeerFinding:
    return dataclasses.replace(finding, **changes)


def _check_target(path: Path) -> None:
    if path.is_dir():
        raise InputError(f"channel path is a directory: {path}", hint="pass the .jsonl file path")
    if not path.parent.is_dir():
        raise InputError(
            f"directory for the channel does not exist: {path.parent}",
            hint="create the run's output directory first",
        )


def append_finding(path: Path, finding: PeerFinding, *, max_bytes: int = PIPE_BUF) -> AppendResult:
    """Append one finding as a single atomic ``write()``."""
    path = Path(path)
    _check_target(path)
    line, written, notes = fit_line(finding, min(max_bytes, PIPE_BUF))
    from fluxdrive.exchange import stream as channel_stream  # late: it builds on this module

    binding = channel_stream.binding_for(path)
    # Shared through Redis, the line is still kept in the local file: a Redis that dies before the run ends
    # takes its copy with it, and the mirror then rebuilds peer-findings.jsonl from this one (readers and
    # the mirror drop the lines the stream and the file both hold).
    shared = binding is not None and channel_stream.add(binding, line)
    try:
        _append_line(path, line)
    except (InputError, ChannelError):
        if not shared:
            raise
    return AppendResult(written, tuple(notes))


def adopt(path: Path, data: bytes) -> None:
    """Take in the channel lines another node kept (``data``): each goes into the local file, and into the
    run's stream too unless the stream holds it already (the node wrote it there while Redis was away)."""
    from fluxdrive.exchange import stream as channel_stream  # late: it builds on this module

    binding = channel_stream.binding_for(path)
    held = {line.rstrip(b"\n") for line in channel_stream.stream_lines(binding)[0]} if binding else set()
    for finding in parse_lines(data).findings:
        line = fit_line(finding, PIPE_BUF)[0]
        if line.rstrip(b"\n") in held:
            _append_line(path, line)
        else:
            append_finding(path, finding)


def _append_line(path: Path, line: bytes) -> None:
    """One ``write()`` with ``O_APPEND``: a line under PIPE_BUF is never torn or interleaved."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o644)
    except OSError as exc:
        raise InputError(f"cannot open channel {path}: {exc.strerror}") from None
    try:
        count = os.write(fd, line)
    except OSError as exc:
        raise InputError(
            f"cannot write to channel {path}: {exc.strerror}", hint="free space or fix permissions"
        ) from None
    finally:
        os.close(fd)
    if count != len(line):  # cannot happen for < PIPE_BUF on a local file system
        raise ChannelError(f"short write to {path}: {count} of {len(line)} bytes")


def append(
    path: Path,
    severity: str,
    agent: str,
    category: str,
    summary: str,
    file_refs: Iterable[str] = (),
    *,
    max_bytes: int = PIPE_BUF,
) -> AppendResult:
    """Validate and append a finding (the ``findings write`` operation)."""
    finding = make_finding(severity, agent, category, summary, file_refs)
    return append_finding(path, finding, max_bytes=max_bytes)


def _decode(obj: Any) -> PeerFinding | None:
    """A finding from one decoded JSON value, or None if it is not a valid one.

    Reading validates but does not rewrite: values are kept as written.
    """
    if type(obj) is not dict:
        return None
    severity, agent, category = obj.get("severity"), obj.get("agent"), obj.get("category")
    summary, timestamp, refs = obj.get("summary"), obj.get("timestamp"), obj.get("file_refs", [])
    if not (
        severity in SEVERITIES
        and type(agent) is str
        and _AGENT.match(agent)
        and type(category) is str
        and _CATEGORY.match(category)
        and type(summary) is str
        and summary.strip()
        and type(timestamp) is str
        and type(refs) is list
        and all(type(ref) is str for ref in refs)
    ):
        return None
    try:
        parse_timestamp(timestamp)
    except ValueError:
        return None
    return PeerFinding(severity, agent, category, summary, tuple(refs), timestamp)


def parse_lines(data: bytes) -> ChannelRead:
    """Parse channel bytes; skip and count lines that are not valid findings.

    The common case - every line intact - is parsed in one ``json.loads``
    call; any failure falls back to line-by-line parsing.
    """
    lines = [line for line in data.split(b"\n") if line.strip()]
    values: list[Any] | None = None
    try:
        values = json.loads(b"[" + b",".join(lines) + b"]")
    except (UnicodeDecodeError, ValueError, RecursionError):
        values = None
    if values is None or len(values) != len(lines):
        values = []
        for raw in lines:
            try:
                values.append(json.loads(raw.decode("utf-8")))
            except (UnicodeDecodeError, ValueError, RecursionError):
                values.append(None)
    findings = [f for f in map(_decode, values) if f is not None]
    return ChannelRead(tuple(findings), len(lines) - len(findings))


def read(
    path: Path,
    *,
    severity: str = "all",
    agent: str | None = None,
) -> ChannelRead:
    """Read the channel safely; a missing file is an empty channel."""
    if severity not in SEVERITY_FILTERS:
        raise ChannelError(f"unknown severity filter {severity!r}", hint="use blocking, notable or all")
    path = Path(path)
    from fluxdrive.exchange import stream as channel_stream  # late: it builds on this module

    binding = channel_stream.binding_for(path)
    if not path.exists() and binding is None:
        return ChannelRead(())
    data = b""
    if path.exists():
        require_file(path, "channel file")
        data = read_regular(path, "channel file", limit=MAX_CHANNEL_BYTES)
    if binding is not None:  # the stream, and what went to the file while Redis was away
        data = channel_stream.merged(channel_stream.stream_lines(binding)[0], data)
    result = parse_lines(data)
    if not result.findings and result.skipped and _not_text(data):
        raise InputError(f"channel file is not UTF-8 text: {path}", hint="pass a peer-findings.jsonl file")
    kept = filter_findings(result.findings, severity=severity, agent=agent)
    return ChannelRead(kept, result.skipped)


def _not_text(data: bytes) -> bool:
    if b"\x00" in data:
        return True
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return True
    return False


def filter_findings(
    findings: Sequence[PeerFinding], *, severity: str = "all", agent: str | None = None
) -> tuple[PeerFinding, ...]:
    """Keep findings of one severity (or all) and, optionally, one agent."""
    return tuple(
        f for f in findings if (severity == "all" or f.severity == severity) and (agent is None or f.agent == agent)
    )


def timeline(findings: Sequence[PeerFinding]) -> tuple[PeerFinding, ...]:
    """Findings in time order; equal timestamps keep their file order."""
    return tuple(sorted(findings, key=lambda f: f.moment))
