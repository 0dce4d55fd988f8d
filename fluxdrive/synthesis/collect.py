"""Find the agent reports in an output directory, validate them, collect findings.

PROTOCOL.md 5.1-5.3. With a ``run.json``, the launched agents are exactly
the ones expected: a launched agent with no ``.md`` falls back to its
``.md.partial`` per the section 7 table (read, never rewritten), else it is
missing. Without one, every top-level ``*.md`` that is not a known
synthesis artifact is an agent report. Valid outputs are read index first;
malformed ones with no usable index go through the prose fallback.
"""

from __future__ import annotations

import hashlib
import re
import stat
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from fluxdrive.contracts import OutputStatus, classify_text, is_partial_recovery, output_path, partial_path
from fluxdrive.contracts.completion import FROZEN_DIR, frozen_path
from fluxdrive.contracts.fields import read_fields
from fluxdrive.contracts.outputs import read_head_and_tail
from fluxdrive.contracts.run_manifest import AgentRecord, RunManifest
from fluxdrive.core.clock import parse_timestamp
from fluxdrive.core.confine import is_inside, read_confined
from fluxdrive.core.masking import scrub
from fluxdrive.errors import FluxdriveError
from fluxdrive.synthesis.model import UNKNOWN_PROVENANCE, AgentOutput, RawFinding
from fluxdrive.synthesis.prose import mine_prose

NOT_AGENT_REPORTS = {
    "summary.md",
    "synthesis.md",
    "findings.md",
    "readme.md",
    "triage-table.md",
    "input.md",
    "input-profile.md",
}
_UUID_SEGMENT = re.compile(r"^(?P<agent>.+?)\.(?:[0-9a-f]{8}(?:-[0-9a-f]{4}){3}-[0-9a-f]{12}|[0-9a-f]{8,32})$", re.I)
_RUN_UUID = re.compile(r"<!--\s*run-uuid:\s*([\w-]+)\s*-->")
MAX_REPORT_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class Discovered:
    """Agent name -> report file, plus notes on anything odd."""

    files: dict[str, Path]
    notes: tuple[str, ...]


def _agent_name(path: Path) -> str | None:
    name = path.name
    lower = name.lower()
    if lower in NOT_AGENT_REPORTS or lower.endswith((".reactions.md", ".reactions.error.md", ".refused.md")):
        return None
    stem = name[: -len(".md")]
    match = _UUID_SEGMENT.match(stem)
    return match.group("agent") if match else stem


def discover(output_dir: Path, manifest: RunManifest | None) -> Discovered:
    """Map agent names to their report files (one per agent)."""
    notes: list[str] = []
    claims: dict[str, list[Path]] = {}
    for path in sorted(Path(output_dir).glob("*.md")):
        agent = _agent_name(path)
        if agent is not None and path.is_file():
            claims.setdefault(agent, []).append(path)
    files: dict[str, Path] = {}
    for agent, paths in sorted(claims.items()):
        if len(paths) > 1:
            exact = [p for p in paths if p.name == f"{agent}.md"]
            chosen = exact[0] if exact else max(paths, key=lambda p: (p.stat().st_mtime, p.name))
            others = ", ".join(p.name for p in paths if p != chosen)
            notes.append(f"{len(paths)} files claim agent {agent}; using {chosen.name}, ignoring {others}")
            files[agent] = chosen
        else:
            files[agent] = paths[0]
    if manifest is not None and manifest.launched:
        launched = set(manifest.launched)
        extra = sorted(set(files) - launched)
        if extra:
            notes.append(f"ignored reports of agents run.json does not list as launched: {', '.join(extra)}")
        files = {a: p for a, p in files.items() if a in launched}
    return Discovered(files, tuple(notes))


def _from_index(agent: str, text: str, partial: bool) -> tuple[OutputStatus, str, bool, list[RawFinding], list[str]]:
    """Status, reason, partial, findings, and notes (what the prose fallback left out)."""
    classified = classify_text(text)
    status, reason, partial = classified.status, classified.reason, partial or classified.partial
    findings: list[RawFinding] = []
    notes: list[str] = []
    if classified.usable_index:
        for entry in classified.index.entries:
            fields = read_fields(entry.extra)
            location = normalize_location(entry.location)
            also = (normalize_location(place) for place in fields.also)
            findings.append(
                RawFinding(
                    agent=agent,
                    severity=entry.severity,
                    local_id=entry.id,
                    section=entry.section,
                    title=entry.title,
                    location=location,
                    improvement=entry.improvement,
                    partial=partial,
                    rule=fields.rule,
                    cwe=fields.cwe,
                    evidence=fields.evidence,
                    also=tuple(dict.fromkeys(p for p in also if p and p != location)),
                )
            )
    elif status is OutputStatus.MALFORMED:
        mined = mine_prose(agent, text, partial=partial)
        findings = list(mined.findings)
        reason = f"{reason}; {mined.summary()}"
        if mined.ignored or mined.dropped:
            notes.append(f"{agent}: prose fallback: {mined.summary()}")
    return status, reason, partial, findings, notes


def normalize_location(location: str | None) -> str | None:
    """``./shop/db.py:15`` / ``shop/db.py:15-20`` -> ``shop/db.py:15``; non-locations -> None."""
    if not location:
        return None
    text = location.strip().strip("`'\"()[]")
    match = re.match(r"^(?:\./)?(.+?):(\d+)(?:[-:,]\d+)*$", text)
    return f"{match.group(1)}:{match.group(2)}" if match else None


def _finished(path: Path | None, recorded: str | None) -> datetime | None:
    if recorded:
        try:
            return parse_timestamp(recorded)
        except ValueError:
            pass
    if path is not None and path.exists():
        return datetime.fromtimestamp(path.stat().st_mtime, UTC)
    return None


def _output(
    agent: str,
    path: Path | None,
    status: OutputStatus,
    reason: str,
    record: AgentRecord | None,
    *,
    partial: bool = False,
    findings: list[RawFinding] | None = None,
    text: str = "",
    finished: datetime | None = None,
    notes: list[str] | None = None,
) -> AgentOutput:
    return AgentOutput(
        agent=agent,
        path=path,
        status=status,
        reason=reason,
        partial=partial,
        findings=tuple(findings or ()),
        text=text,
        provenance=record.provenance if record and record.provenance else UNKNOWN_PROVENANCE,
        category=record.category if record else "builtin",
        stage=record.stage if record else None,
        finished_at=finished,
        notes=tuple(notes or ()),
    )


def _refused(path: Path, root: Path | None) -> str | None:
    """Why a report file may not be read: a symlink out of the project, a loop, a FIFO or a device."""
    if root is not None and not is_inside(path, root):
        return f"refused: {path.name} resolves outside the project root"
    try:
        regular = stat.S_ISREG(path.stat().st_mode)
    except OSError as exc:
        return f"unreadable: {exc.strerror}"
    return None if regular else f"refused: {path.name} is not a regular file"


def _read(path: Path) -> tuple[str, bool, bool]:
    """A report's head (scrubbed: it may come from anywhere), whether it holds the sentinel, whether it was cut."""
    text, sentinel, cut = read_head_and_tail(path)
    return scrub(text, detect=True), sentinel, cut


def frozen_report(
    output_dir: Path, agent: str, record: AgentRecord | None, root: Path | None = None
) -> tuple[Path | None, str | None]:
    """The private copy of ``agent``'s report to read instead of ``<agent>.md``, and a note when they differ.

    The copy counts only when run.json recorded its sha256 at completion and
    it still matches; a ``<agent>.md`` changed after that (a late writer)
    does not change the verdict.
    """
    if record is None or not record.report_sha256:
        return None, None
    copy = frozen_path(output_dir, agent)
    try:
        data = read_confined(copy, root or Path(output_dir), "report copy", limit=MAX_REPORT_BYTES)
    except (OSError, FluxdriveError):
        return None, None
    if hashlib.sha256(data).hexdigest() != record.report_sha256:
        return None, f"{FROZEN_DIR}/{agent}.md does not match run.json; reading {agent}.md"
    try:
        public = read_confined(output_path(output_dir, agent), root or Path(output_dir), limit=MAX_REPORT_BYTES)
    except (OSError, FluxdriveError):
        public = b""
    note = None
    if public != data:
        note = f"{agent}.md changed after the agent finished; the report as finished ({FROZEN_DIR}/{agent}.md) is used"
    return copy, note


def collect_agent(
    output_dir: Path,
    agent: str,
    path: Path | None,
    manifest: RunManifest | None,
    run_id: str,
    root: Path | None = None,
) -> AgentOutput:
    """Validate one agent's report and collect its findings (reading only inside ``root``)."""
    record = manifest.agents.get(agent) if manifest else None
    if path is None:
        candidate = partial_path(output_dir, agent)
        if not candidate.is_file():
            outcome = record.outcome if record else "never started"
            return _output(agent, None, OutputStatus.MISSING, f"no report ({outcome})", record)
        refused = _refused(candidate, root)
        if refused:
            return _output(agent, None, OutputStatus.MISSING, refused, record)
        text, sentinel, _cut = _read(candidate)
        if not text.strip():
            return _output(agent, candidate, OutputStatus.ERROR, "timed out before writing any output", record)
        status, reason, partial, findings, notes = _from_index(agent, text, not sentinel)
        if not sentinel:
            status, reason = OutputStatus.MALFORMED, f"report cut off at the timeout (.partial); {reason}"
        finished = _finished(candidate, None)
        return _output(
            agent,
            candidate,
            status,
            reason,
            record,
            partial=partial,
            findings=findings,
            text=text,
            finished=finished,
            notes=notes,
        )
    refused = _refused(path, root)
    if refused:
        return _output(agent, None, OutputStatus.MISSING, refused, record)
    frozen, _note = frozen_report(output_dir, agent, record, root)
    text, sentinel, _cut = _read(frozen or path)
    uuid = _RUN_UUID.search(text[:500])
    if run_id and uuid and uuid.group(1) != run_id:
        return _output(agent, path, OutputStatus.MISSING, f"foreign report from run {uuid.group(1)}", record)
    status, reason, partial, findings, notes = _from_index(agent, text, is_partial_recovery(text))
    if status is OutputStatus.VALID and not sentinel:
        reason += " (no completion sentinel; accepted)"
    finished = _finished(path, record.finished_at if record else None)
    return _output(
        agent,
        path,
        status,
        reason,
        record,
        partial=partial,
        findings=findings,
        text=text,
        finished=finished,
        notes=notes,
    )
