"""Convergence, PROTOCOL.md 5.5: how many of the agents that could have found it did.

N counts the completed agents that reported a finding; M counts the
completed agents that could have (error, missing and partial agents are
excluded; with slicing, only agents that received the finding's file or
section in full - plus any that reported it from outside their slice).
Confidence: N >= 3 high, 2 medium, 1 low; findings mined from prose drop one
level, findings a peer acknowledged on the channel gain one. A deterministic
analyzer that proves its finding (``evidence:high``: data flow from the request
to the sink, shown step by step) raises a lone finding to that level and needs
no verification: offline, one static reviewer is the only reporter, and "low"
on a proven SQL injection and on a docs example alike told the reader nothing. Model families:
``cross_family_convergence`` counts distinct families among the reporters and
``weighted = same_family_count + 1.5 x (families - 1)``. A single-source
P0/P1 from a family outside the configured top tier is marked
``verification_recommended``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from fluxdrive.config.model import SynthesisConfig
from fluxdrive.contracts.run_manifest import RunManifest, SliceRecord
from fluxdrive.synthesis.model import AgentOutput, RawFinding, Reactions

LEVELS = ("low", "medium", "high")


@dataclass(frozen=True, slots=True)
class Convergence:
    """The convergence fields of one finding."""

    convergence: int
    population: int
    confidence: str
    families: int
    weighted: float
    verification_recommended: bool
    partial: bool
    beyond_slice: tuple[str, ...]


def _slice(manifest: RunManifest | None, agent: str) -> SliceRecord:
    record = manifest.agents.get(agent) if manifest else None
    return record.slice if record else SliceRecord()


def measure(
    members: Sequence[RawFinding],
    severity: str,
    outputs: Mapping[str, AgentOutput],
    manifest: RunManifest | None,
    settings: SynthesisConfig,
    *,
    acknowledged: bool = False,
    reactions: Reactions | None = None,
) -> Convergence:
    """N/M, confidence and the cross-family fields for one merged finding.

    ``reactions`` (the reaction round, synthesis/reactions.py): each agent that confirmed it with evidence of
    its own counts toward N; a dispute with evidence lowers the confidence one level.
    """
    completed = [a for a, o in outputs.items() if o.completed]
    files = {m.file for m in members if m.file}
    sections = {m.section for m in members}

    def saw(agent: str) -> bool:
        coverage = _slice(manifest, agent)
        if coverage.mode == "full":
            return True
        return any(coverage.covers(f, None) for f in files) or any(coverage.covers(None, s) for s in sections)

    reporters = sorted({m.agent for m in members if outputs.get(m.agent) is not None and outputs[m.agent].completed})
    beyond = tuple(a for a in reporters if not saw(a))
    confirmed = [a for a in (reactions.confirmed_by if reactions else ()) if a not in reporters]
    population = len({a for a in completed if saw(a)} | set(reporters) | set(confirmed))
    count = len(reporters) + len(confirmed)
    level = 2 if count >= settings.confidence_high else 1 if count >= settings.confidence_medium else 0
    if members and all(m.from_prose for m in members):
        level -= 1
    if acknowledged:
        level += 1
    if reactions is not None and reactions.disputed_by:
        level -= 1
    proven = max((LEVELS.index(m.evidence) for m in members if m.evidence in LEVELS), default=-1)
    level = max(level, proven)
    families = Counter(outputs[a].provenance.model_family for a in reporters)
    distinct = max(len(families), 1)
    same_family = max(families.values(), default=0)
    single_family = next(iter(families), None)
    verify = (
        count == 1
        and proven < 2
        and severity in ("P0", "P1")
        and single_family is not None
        and single_family not in settings.top_tier_families
    )
    return Convergence(
        convergence=count,
        population=population,
        confidence=LEVELS[max(0, min(level, 2))],
        families=distinct,
        weighted=same_family + settings.cross_family_weight * (distinct - 1),
        verification_recommended=verify,
        partial=any(m.partial for m in members),
        beyond_slice=beyond,
    )
