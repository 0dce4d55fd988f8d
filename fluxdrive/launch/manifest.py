"""``run.json`` from the typed results of a launch: the plan, each phase's record, the runtimes.

Built whole, then validated into :class:`~fluxdrive.contracts.run_manifest.RunManifest`;
after synthesis a copy with the synthesis timing and the knowledge record
replaces it (``finish``) - nothing is patched in place.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fluxdrive.contracts.run_manifest import RUN_FILE, SCHEMA_VERSION, RunManifest
from fluxdrive.core.atomic import atomic_write_text
from fluxdrive.core.clock import utc_timestamp
from fluxdrive.core.masking import scrub_json
from fluxdrive.launch.dropout import Dropout
from fluxdrive.launch.expansion import Decision
from fluxdrive.launch.stages import Launcher


@dataclass(frozen=True)
class RunFacts:
    """What the manifest needs beyond the launch: identity, timing, other model calls, notes."""

    run_id: str
    started_at: str
    interrupted: bool
    phases: Mapping[str, float]
    model_calls: Sequence[Mapping[str, Any]] = ()
    notes: Sequence[str] = ()


def build_manifest(launcher: Launcher, facts: RunFacts) -> RunManifest:
    """run.json (PROTOCOL section 5 reads it; ``fluxdrive schema run`` prints its schema)."""
    plan, record, target = launcher.plan, launcher.record, launcher.target
    launched2 = [n for n in record.chosen if record.launched.get(n) == 2]
    stages: list[dict[str, Any]] = [{"stage": 1, "agents": list(plan.stage1)}]
    if launched2:
        stages.append({"stage": 2, "agents": launched2, "launched": True})
    not_launched = [n for n in plan.stage2 if n not in launched2]
    if not_launched:
        stages.append({"stage": 2, "agents": not_launched, "launched": False})
    dropout = record.expansion.dropout if record.expansion else None
    decision = record.expansion.decision if record.expansion else None
    data: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "run_id": facts.run_id,
        "input": {
            "path": target.label,
            "type": target.kind,
            "stem": target.stem,
            "project_root": str(target.root),
        },
        "started_at": facts.started_at,
        "finished_at": utc_timestamp(),
        "runtime": launcher.deps.runtimes.provenance_label(),
        "stages": stages,
        "early_stop": bool(plan.stage2) and not launched2 and not facts.interrupted,
        "content_routing_active": plan.content.active,
        "content_routing": list(plan.content.log),
        "agents": _agents(launcher, set(dropout.dropped) if dropout else set()),
        "research": [
            {k: v for k, v in r.record().items() if k not in ("seconds", "finding_id")} for r in record.research
        ],
        "model_calls": list(facts.model_calls),
        "knowledge": launcher.deps.knowledge.record(),
        "dropout": _dropout_json(dropout),
        "expansion": _decision_json(decision, record.chosen),
        "phases": dict(facts.phases),
        "interrupted": facts.interrupted,
        "files": {"reviewed": len(launcher.content.files), "skipped": launcher.skipped_files()},
        "notes": list(facts.notes),
    }
    return RunManifest.model_validate(data)


def finish(manifest: RunManifest, launcher: Launcher, phases: Mapping[str, float]) -> RunManifest:
    """The manifest after synthesis: the knowledge record as the lifecycle left it, and every phase's time."""
    return manifest.model_copy(update={"knowledge": launcher.deps.knowledge.record(), "phases": dict(phases)})


def write_manifest(output_dir: Path, manifest: RunManifest) -> None:
    """run.json, scrubbed: agents' error messages may quote a provider's answer (and the key it echoed)."""
    text = json.dumps(manifest.model_dump(mode="json", exclude_unset=True), indent=2, ensure_ascii=False)
    atomic_write_text(output_dir / RUN_FILE, scrub_json(text) + "\n")


def _agents(launcher: Launcher, dropped: set[str]) -> dict[str, Any]:
    plan, record = launcher.plan, launcher.record
    agents: dict[str, Any] = {}
    for score in launcher.triage.agents:
        name = score.name
        if name not in record.launched and name not in plan.stage2 and name not in plan.pool:
            continue
        result = record.results.get(name)
        piece = plan.content.slices.get(name)
        entry: dict[str, Any] = {
            "stage": record.launched.get(name, 2 if name in plan.stage2 else None),
            "category": score.category,
            "outcome": result.outcome.value if result else _unfinished(name, record.launched, dropped),
            "slice": piece.record().model_dump() if piece else {"mode": "full", "files": [], "sections": []},
        }
        if result is not None:
            entry["provenance"] = result.provenance.record()
            entry["usage"] = result.usage.record()
            if result.report_sha256:
                entry["report_sha256"] = result.report_sha256
            if result.error:
                entry["error"] = result.error
        agents[name] = entry
    return dict(sorted(agents.items()))


def _unfinished(name: str, launched: Mapping[str, int], dropped: set[str]) -> str:
    """The outcome of an agent without a result: launched and then interrupted, dropped, or never launched."""
    if name in launched:
        return "cancelled"
    return "dropped" if name in dropped else "not-launched"


def _dropout_json(dropout: Dropout | None) -> dict[str, Any] | None:
    if dropout is None:
        return None
    return {
        "skipped": dropout.skipped,
        "rows": [
            {"agent": r.agent, "score": r.score, "dropped": r.dropped, "exempt": r.exempt, "reasons": list(r.reasons)}
            for r in dropout.rows
        ],
        "tokens_saved": dropout.tokens_saved,
    }


def _decision_json(decision: Decision | None, chosen: Sequence[str]) -> dict[str, Any] | None:
    if decision is None:
        return None
    return {
        "kind": decision.kind,
        "recommended": list(decision.recommended),
        "candidates": [
            {"agent": c.agent, "score": c.score, "reasons": list(c.reasons), "dropped": c.dropped, "planned": c.planned}
            for c in decision.candidates
        ],
        "chosen": list(chosen),
        "message": decision.message,
    }
