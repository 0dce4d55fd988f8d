"""Clavain interop: fluxdrive's verdicts as Clavain verdict records, and Clavain's read back.

Why this exists: Clavain (github.com/mistakeknot/Clavain, MIT) is a
coding-assistant plugin whose sprint and quality-gate steps read one small
JSON record per review agent from ``PROJECT_ROOT/.clavain/verdicts/<agent>.json``
through ``hooks/lib-verdict.sh`` (``verdict_parse_all``,
``verdict_count_by_status``, ``verdict_get_attention``, ``verdict_total_tokens``)
and gate shipping on them (``verdict_clean``: no NEEDS_ATTENTION). It is the
same write-behind idea as ours (PROTOCOL.md section 11) with another shape, so
a fluxdrive review that should count in a Clavain sprint writes these records
too (``fluxdrive review --verdicts-format clavain|both``, config
``verdicts.format``), and ``fluxdrive verdicts .clavain/verdicts`` reads them.

The record, exactly as ``verdict_write`` builds it with ``jq`` (key order kept)::

    {"type": "verdict", "status": "NEEDS_ATTENTION", "model": "fluxdrive-static-0.1.0",
     "tokens_spent": 0, "files_changed": [], "findings_count": 3,
     "summary": "1 P0, 2 P1: SQL built from strings", "detail_path": "docs/research/flux-drive/x/fd-safety.md",
     "timestamp": "2026-11-24T13:40:00Z", "session_id": ""}           (+ "phase" when one is set)

- The agent name is the file name only (there is no ``agent`` key); records
  are written whole to a temporary file and renamed, as lib-verdict.sh does.
- ``type`` is ``verdict`` (``implementation`` is for agents that change code);
  Clavain's CXDB sync skips any other type.
- ``timestamp`` is RFC 3339 in whole seconds, UTC (``date -u +%Y-%m-%dT%H:%M:%SZ``).
- ``detail_path`` is relative to the project root (Clavain runs from there);
  it points at the agent's full report in the fluxdrive run directory.
- ``session_id`` is what lib-verdict.sh records: the contents of
  ``/tmp/interstat-session-id``, or empty. ``phase`` comes from
  ``CLAVAIN_PHASE`` / ``CLAVAIN_CURRENT_PHASE`` and is left out when unset.

Status mapping (fluxdrive -> Clavain) is the identity: CLEAN -> CLEAN,
NEEDS_ATTENTION -> NEEDS_ATTENTION, ERROR -> ERROR (Clavain's "Agent failed").
It is the rule of intersynth's synthesize-review agent, which writes these
records for Clavain reviews: "CLEAN if verdict is safe and no P0/P1 findings;
NEEDS_ATTENTION if needs-changes or risky, or has P0/P1; ERROR if verdict is
error or agent failed" - so an agent that said ``safe`` next to a P0/P1 in
its index is written NEEDS_ATTENTION here too. P0 findings are never BLOCKED:
in Clavain BLOCKED means the agent "Cannot complete (missing deps, access)"
(skills/using-clavain/references/agent-contracts.md), and Clavain's gates
(``verdict_clean`` in lib-sprint.sh, the sprint's vetting step) count only
NEEDS_ATTENTION, so a BLOCKED record would let a P0 review pass the gate.

One record per review agent, none for the review as a whole (fluxdrive's own
``synthesis`` record stays in OUTPUT_DIR): intersynth writes none either,
Clavain reads the overall result from the run directory, and lib-sprint.sh
counts ``*.json`` files as agents (``verdict_exists``), so an extra record
would be counted as one more agent.

Reading: ``fluxdrive.exchange.verdicts.load_verdicts`` reads Clavain records as well
as ours, each file told apart by its shape (:func:`is_clavain_record`,
:func:`from_clavain`). Those two live in ``fluxdrive.exchange.verdicts`` and are
re-exported here: the verdicts module sits near the bottom of the import
layering (the runtimes and reports use it) and may not import this one.
A Clavain record read back keeps Clavain's status (BLOCKED, COMPLETE, ...:
real values of ``verdicts.Status``), and carries ``source="clavain"``, its
``model`` and its ``findings_count``.

Writing the same agent again replaces its record (that is how lib-verdict.sh
behaves); records of other agents are never touched or removed, and the
directory must stay inside the project root. The project's ``.gitignore`` is
left alone (Clavain's ``verdict_init`` adds ``.clavain/verdicts/`` itself).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fluxdrive.core.atomic import atomic_write_json
from fluxdrive.core.clock import parse_timestamp
from fluxdrive.core.confine import confine
from fluxdrive.core.masking import scrub
from fluxdrive.core.paths import AGENT_NAME
from fluxdrive.exchange.verdicts import VerdictRecord, load_verdicts
from fluxdrive.exchange.verdicts import from_clavain as from_clavain  # reading lives in verdicts (see above)
from fluxdrive.exchange.verdicts import is_clavain_record as is_clavain_record

if TYPE_CHECKING:
    from fluxdrive.synthesis import Synthesis

CLAVAIN_VERDICTS = Path(".clavain") / "verdicts"
VERDICT_TYPE = "verdict"
SESSION_ID_FILE = Path("/tmp/interstat-session-id")  # noqa: S108 - where lib-verdict.sh reads it from
_MAX_FIELD = 500


@dataclass(frozen=True, slots=True)
class Written:
    """What :func:`write_records` did: the files written and the agents it could not write."""

    paths: tuple[Path, ...]
    problems: tuple[str, ...] = ()


def clavain_dir(project_root: Path) -> Path:
    """``PROJECT_ROOT/.clavain/verdicts``."""
    return Path(project_root) / CLAVAIN_VERDICTS


def _text(value: object, limit: int = _MAX_FIELD) -> str:
    return " ".join(scrub(str(value)).split())[:limit]


def clavain_timestamp(timestamp: str) -> str:
    """``2026-11-24T13:40:00Z`` (lib-verdict.sh's ``date -u +%Y-%m-%dT%H:%M:%SZ``) for one of ours."""
    try:
        moment = parse_timestamp(timestamp)
    except (TypeError, ValueError):
        moment = datetime.now(UTC)
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def session_id() -> str:
    """What lib-verdict.sh records as ``session_id``: ``/tmp/interstat-session-id``, or empty."""
    try:
        if not SESSION_ID_FILE.is_file():
            return ""
        with SESSION_ID_FILE.open("rb") as handle:
            raw = handle.read(200)
    except OSError:
        return ""
    return _text(raw.decode("utf-8", errors="replace"), 200)


def phase() -> str:
    """``CLAVAIN_PHASE`` or ``CLAVAIN_CURRENT_PHASE`` (lib-verdict.sh's default for ``phase``), or empty."""
    return _text(os.environ.get("CLAVAIN_PHASE") or os.environ.get("CLAVAIN_CURRENT_PHASE") or "", 100)


def to_clavain(
    record: VerdictRecord,
    *,
    model: str = "unknown",
    findings_count: int = 0,
    detail_path: str | None = None,
    session: str = "",
    current_phase: str = "",
) -> dict[str, Any]:
    """One fluxdrive record as the JSON object lib-verdict.sh's ``verdict_write`` writes (same keys, order, types).

    The status is carried over unchanged (see the module docstring for why P0
    findings are not BLOCKED); ``detail_path`` defaults to Clavain's own
    default, ``.clavain/verdicts/<agent>.md``.
    """
    data: dict[str, Any] = {
        "type": VERDICT_TYPE,
        "status": record.status,
        "model": _text(model, 100) or "unknown",
        "tokens_spent": record.tokens,
        "files_changed": [],  # reviewers change no files
        "findings_count": max(int(findings_count), 0),
        "summary": _text(record.summary),
        "detail_path": _text(detail_path) if detail_path else (CLAVAIN_VERDICTS / f"{record.agent}.md").as_posix(),
        "timestamp": clavain_timestamp(record.timestamp),
        "session_id": session,
    }
    if current_phase:
        data["phase"] = current_phase
    return data


def _relative_detail(detail: str | None, output_dir: Path, root: Path) -> str | None:
    """A fluxdrive detail path (relative to OUTPUT_DIR) as Clavain reads it: relative to the project root."""
    if not detail:
        return None
    path = Path(detail)
    if not path.is_absolute():
        path = Path(output_dir) / path
    try:
        return path.resolve().relative_to(Path(root).resolve()).as_posix()
    except ValueError:
        return str(path)


def write_records(
    project_root: Path,
    records: Sequence[VerdictRecord],
    *,
    output_dir: Path | None = None,
    models: Mapping[str, str] | None = None,
    findings: Mapping[str, int] | None = None,
) -> Written:
    """Write one Clavain record per fluxdrive record into ``PROJECT_ROOT/.clavain/verdicts/`` atomically.

    ``output_dir`` is where the records' detail paths are relative to (the
    run directory); ``models`` and ``findings`` give each agent's model and
    findings count. Raises OutsideRootError when ``.clavain/verdicts`` leads
    out of the project (a symlink).
    """
    root = Path(project_root).resolve()
    directory = confine(clavain_dir(root), root, "Clavain verdicts directory")  # before creating anything
    directory.mkdir(parents=True, exist_ok=True)
    directory = confine(directory, root, "Clavain verdicts directory")  # and again: a link swapped in meanwhile
    session, current_phase = session_id(), phase()
    paths: list[Path] = []
    problems: list[str] = []
    for record in records:
        if not AGENT_NAME.match(record.agent):
            problems.append(f"{record.agent!r}: invalid agent name for a Clavain record")
            continue
        detail = _relative_detail(record.detail_path, Path(output_dir or root), root)
        data = to_clavain(
            record,
            model=(models or {}).get(record.agent, record.model or "unknown"),
            findings_count=(findings or {}).get(record.agent, record.findings_count or 0),
            detail_path=detail,
            session=session,
            current_phase=current_phase,
        )
        target = directory / f"{record.agent}.json"
        atomic_write_json(target, data)
        paths.append(target)
    return Written(tuple(paths), tuple(problems))


def write_run(output_dir: Path, project_root: Path, synthesis: Synthesis | None = None) -> Written:
    """After a review: a Clavain record for every review agent with a verdict record in ``OUTPUT_DIR/verdicts``.

    The model and findings count come from the synthesis (each agent's
    provenance and collected findings) when one is given; a CLEAN agent with
    a P0/P1 finding is written NEEDS_ATTENTION (intersynth's rule).
    """
    from fluxdrive.reports.write import SYNTHESIS_AGENT

    loaded = load_verdicts(output_dir)
    ours = [r for r in loaded.records if r.source == "fluxdrive" and r.agent != SYNTHESIS_AGENT]
    models: dict[str, str] = {}
    findings: dict[str, int] = {}
    if synthesis is not None:
        ours = [r for r in ours if r.agent in synthesis.outputs]  # review agents only
        for name, output in synthesis.outputs.items():
            models[name] = output.provenance.model_id
            findings[name] = len(output.findings)
        blocking = {f.agent for o in synthesis.outputs.values() for f in o.findings if f.severity in ("P0", "P1")}
        ours = [
            replace(r, status="NEEDS_ATTENTION") if r.status == "CLEAN" and r.agent in blocking else r for r in ours
        ]
    written = write_records(project_root, ours, output_dir=output_dir, models=models, findings=findings)
    return Written(written.paths, (*loaded.problems, *written.problems))
