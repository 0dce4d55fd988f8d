"""Phase 1, triage (PROTOCOL.md section 2): profile, domains, scores, ceiling, stages.

``triage()`` reads the input and the project (its edges do file I/O; the
scoring itself is pure), and returns a :class:`Triage` that the approval
gate can edit and that launch consumes. ``write_outputs`` leaves
``input-profile.json``, ``triage.json`` and ``triage-table.md`` in OUTPUT_DIR.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from fluxdrive.agents import AgentDefinition, Roster
from fluxdrive.config.model import Config
from fluxdrive.core.atomic import atomic_write_json, atomic_write_text
from fluxdrive.core.names import shown
from fluxdrive.triage.domains import Detection
from fluxdrive.triage.profile import InputProfile
from fluxdrive.triage.scoring import AgentScore, Ceiling, Overrides, assign, ceiling, lift_to_minimum, score_agent
from fluxdrive.workspace import Target

SCHEMA_VERSION = 1
TEXT_LIMIT = 4_000_000


@dataclass(frozen=True)
class Triage:
    """Everything phase 1 decided: a value. Each later decision (the gate, ``--agents``, the cost model, a
    model's scores) is a step that returns a new Triage, so what triage decided stays inspectable and the
    same steps in the same order give the same plan at every front door."""

    target: Target
    profile: InputProfile
    detection: Detection
    ceiling: Ceiling
    agents: tuple[AgentScore, ...]
    roster: Roster
    config: Config
    overrides: Overrides = field(default_factory=Overrides)
    notes: tuple[str, ...] = ()
    staged: bool = True  # False: the whole roster fits the budget, every candidate is Stage 1
    staging_note: str = ""
    free: frozenset[str] = frozenset()  # agents that cost nothing: unstaged, they run whatever they scored

    @property
    def domains(self) -> list[str]:
        """Detected domains, primary first."""
        return [d.profile for d in self.detection.detected]

    def in_stage(self, stage: int | str) -> list[AgentScore]:
        """Agents assigned to a stage (1, 2 or "pool"), in score order."""
        return [a for a in self.agents if a.stage == stage]

    def with_overrides(self, overrides: Overrides) -> Triage:
        """The plan with ``overrides`` applied: selection and stages redone."""
        return _assigned(replace(self, overrides=overrides))

    def with_scores(self, agents: Sequence[AgentScore]) -> Triage:
        """The plan with new base scores (``--llm-triage``): selection and stages redone."""
        return _assigned(replace(self, agents=tuple(agents)))

    def unstaged(self, why: str, *, free: frozenset[str] = frozenset()) -> Triage:
        """Every candidate in Stage 1 (the cost model found the whole roster affordable), and ``free`` too."""
        return _assigned(replace(self, staged=False, staging_note=why, free=free))

    def with_staging_note(self, why: str) -> Triage:
        """The same stages, with why staging applies."""
        return replace(self, staging_note=why)

    def with_notes(self, notes: Sequence[str], *, first: bool = False) -> Triage:
        """``notes`` added (``first``: before the others)."""
        return replace(self, notes=(*notes, *self.notes) if first else (*self.notes, *notes))

    def to_json(self) -> dict[str, Any]:
        """``triage.json``."""
        profile = self.profile
        return {
            "schema_version": SCHEMA_VERSION,
            "input": {
                "kind": profile.kind,
                "label": profile.label,
                "path": profile.path,
                "root": profile.root,
                "total_lines": profile.total_lines,
                "files": profile.file_count,
                "languages": profile.languages,
                "document_type": profile.document_type,
                "complexity": profile.complexity,
                "thin_sections": [s.title for s in profile.thin_sections()],
                "diff": asdict(profile.diff) if profile.diff else None,
                "divergences": profile.project.divergences,
                "project_docs": profile.project.has_project_docs,
            },
            "domains": [
                {"profile": d.profile, "confidence": d.confidence, "primary": d.primary}
                for d in self.detection.detected
            ],
            "domain_source": self.detection.source,
            "ceiling": asdict(self.ceiling),
            "staging": {"staged": self.staged, "why": self.staging_note},
            "stages": {
                "1": [a.name for a in self.in_stage(1)],
                "2": [a.name for a in self.in_stage(2)],
                "pool": [a.name for a in self.in_stage("pool")],
            },
            "agents": [
                {
                    "name": a.name,
                    "category": a.category,
                    "prefiltered": a.prefiltered,
                    "base_score": a.base_score,
                    "share": a.share,
                    "domain_boost": a.domain_boost,
                    "boost_domain": a.boost_domain,
                    "project_bonus": a.project_bonus,
                    "domain_agent_bonus": a.domain_agent_bonus,
                    "trust_multiplier": a.trust_multiplier,
                    "final_score": a.final_score,
                    "stage": a.stage,
                    "forced_stage1": a.forced_stage1,
                    "reach": a.reach,
                    "evidence": a.evidence,
                    "evidence_units": a.evidence_units,
                    "thin_sections": a.thin_sections,
                    "rationale": a.rationale,
                }
                for a in self.agents
            ],
            "gate": {
                "promoted": sorted(self.overrides.promoted),
                "demoted": sorted(self.overrides.demoted),
                "removed": sorted(self.overrides.removed),
                "added": dict(sorted(self.overrides.added.items())),
            },
            "notes": list(self.notes),
        }


def _assigned(result: Triage) -> Triage:
    """Selection and stages for ``result``'s overrides and staging, on copies of its records (the rules of
    :func:`~fluxdrive.triage.scoring.assign` work in place; no earlier Triage sees the change)."""
    records = [replace(a) for a in result.agents]
    known = {a.name for a in records}
    for name in result.overrides.added:
        if name not in known:
            agent = result.roster.get(name)
            records.append(AgentScore(agent.name, agent.category, base_score=1, rationale="added at the approval gate"))
    overlaps = {a.name: a.overlaps for a in result.roster if a.overlaps}
    assign(records, result.ceiling, result.config, result.overrides, overlaps, staged=result.staged, free=result.free)
    return replace(result, agents=tuple(records))


def _input_text(profile: InputProfile) -> str:
    parts: list[str] = []
    size = 0
    for unit in profile.units:
        parts.append(unit.text)
        size += len(unit.text)
        if size > TEXT_LIMIT:
            break
    return "\n".join(parts)


def triage(
    target: Target,
    profile: InputProfile,
    detection: Detection,
    roster: Roster,
    config: Config,
    trust: dict[str, float] | None = None,
) -> Triage:
    """Score every review agent and assign stages (no I/O: inputs come measured)."""
    domains = [d.profile for d in detection.detected]
    text = _input_text(profile)
    reviewers: list[AgentDefinition] = [a for a in roster if a.kind == "review"]
    records = [score_agent(a, profile, domains, trust or {}, config, text) for a in reviewers]
    if profile.units:
        lift_to_minimum(records, config.selection.min_agents, set())
    limit = ceiling(profile, len(domains), config)
    notes = (*detection.notes, *profile.notes)
    return _assigned(Triage(target, profile, detection, limit, tuple(records), roster, config, notes=notes))


def _cell(value: object) -> str:
    """One table cell: a file name's control characters and undecodable bytes shown escaped, never interpreted."""
    return shown(" ".join(str(value).replace("|", "\\|").split()))


def render_table(result: Triage) -> str:
    """The triage table (markdown): what the approval gate shows and triage-table.md holds."""
    profile = result.profile
    domains = (
        ", ".join(
            f"{d.profile} ({d.confidence:.2f}{', primary' if d.primary else ''})" for d in result.detection.detected
        )
        or "none"
    )
    limit = result.ceiling
    lines = [
        f"## Triage: {_cell(profile.label)}",
        "",
        f"- Input: {profile.kind}, {profile.total_lines:,} lines, {profile.file_count} file(s),"
        f" complexity {profile.complexity}" + (f", {profile.document_type}" if profile.document_type else ""),
        f"- Domains: {domains}",
        f"- Slot ceiling: {limit.total} = {limit.base} base + {limit.scope} scope + {limit.domains} domains",
        "- Staging: "
        + ("Stage 1, then Stage 2 on evidence" if result.staged else "none, every candidate runs in Stage 1")
        + (f" ({result.staging_note})" if result.staging_note else ""),
    ]
    if profile.project.divergences:
        lines.append(f"- Project divergences: {_cell('; '.join(profile.project.divergences))}")
    lines += [
        "",
        "| Agent | Base | Domain | Project | Domain agent | Trust | Score | Stage | Rationale |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for a in result.agents:
        stage = (
            {1: "1" if a.base_score else "1 (free)", 2: "2", "pool": "pool"}.get(a.stage, "-")
            if a.stage is not None
            else ("filtered" if a.prefiltered else "-")
        )
        lines.append(
            f"| {a.name} | {a.base_score} | +{a.domain_boost} | +{a.project_bonus} | +{a.domain_agent_bonus} | "
            f"{a.trust_multiplier:.2f} | {a.final_score:g} | {stage} | {_cell(a.rationale)} |"
        )
    return "\n".join(lines) + "\n"


def write_outputs(result: Triage, output_dir: Path, estimate: Mapping[str, Any] | None = None) -> list[Path]:
    """input-profile.json, triage.json (with the launch's cost ``estimate``, when given) and triage-table.md in
    OUTPUT_DIR."""
    output_dir = Path(output_dir)
    paths = [output_dir / "input-profile.json", output_dir / "triage.json", output_dir / "triage-table.md"]
    atomic_write_json(paths[0], result.profile.to_json())
    atomic_write_json(paths[1], result.to_json() | ({"estimate": dict(estimate)} if estimate is not None else {}))
    atomic_write_text(paths[2], render_table(result))
    return paths


def dumps(result: Triage) -> str:
    """triage.json as text (for --json)."""
    return json.dumps(result.to_json(), indent=2, ensure_ascii=False) + "\n"
