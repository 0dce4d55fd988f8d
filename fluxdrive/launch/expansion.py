"""Whether to launch Stage 2, and whom: expansion scoring and the decision (PROTOCOL.md 4.9).

Each candidate (Stage 2 and pool agents) scores from what Stage 1 found:
+3 per P0 and +2 per P1 found by one of its neighbours (the agents its
definition lists as ``adjacent``), +2 when Stage 1 agents disagree on a
finding in its lane or involving a neighbour (same place, different severity
or fix), +1 when a detected domain has criteria for it and Stage 1 found
something in its lane. Findings are not the only evidence: +``direct_evidence``
(3) when the input itself holds direct signals for the candidate's lane (its
paths or routing keywords: ``subprocess``, ``auth/session.py``), and +1 when its
own triage base score was core (3). So ``--yes`` never recommends stopping
before an agent whose lane the input shows. The highest score decides: at ``recommend_at`` (3)
fluxdrive recommends launching the agents that reach it, at ``offer_at`` (2)
it offers without a default, below that it recommends stopping. Every
recommendation cites the findings and the adjacency behind it.

Edge cases: no Stage 1 findings and no direct evidence -> recommend
stopping, still allow expansion; every Stage 1 agent failed -> Stage 2 is offered as fallback
coverage (and is what "recommended" launches); the choice is made once.
The person (or a flag) always decides; fluxdrive never expands on its own.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from fluxdrive.agents import Roster
from fluxdrive.config.model import ExpansionConfig
from fluxdrive.launch.dropout import in_lane
from fluxdrive.synthesis import Finding

Kind = Literal["recommend", "offer", "stop", "fallback"]
Mode = Literal["recommended", "all", "none"]


@dataclass(frozen=True, slots=True)
class Candidate:
    """One possible Stage 2 agent: its expansion score and the evidence for it."""

    agent: str
    score: int
    reasons: tuple[str, ...]
    dropped: bool = False
    planned: bool = True  # in Stage 2 (False: from the expansion pool)


@dataclass(frozen=True, slots=True)
class Decision:
    """The recommendation shown to the person, and what each choice launches."""

    kind: Kind
    candidates: tuple[Candidate, ...]
    recommended: tuple[str, ...]
    message: str

    @property
    def names(self) -> list[str]:
        """Every candidate, best first."""
        return [c.agent for c in self.candidates]


def _disagreement(finding: Finding) -> bool:
    severities = set((finding.severity_conflict or {}).values())
    fixes = set((finding.recommendations or {}).values())
    return len(severities) > 1 or len(fixes) > 1


def score_candidate(
    name: str,
    findings: Sequence[Finding],
    roster: Roster,
    boosted: set[str],
    config: ExpansionConfig,
    *,
    evidence: Sequence[str] = (),
    base_score: int = 0,
) -> tuple[int, tuple[str, ...]]:
    """A candidate's expansion score and the citations behind it."""
    agent = roster.agents.get(name)
    if agent is None:
        return 0, ()
    neighbours = set(agent.adjacent)
    score = 0
    reasons: list[str] = []
    if evidence:
        score += config.direct_evidence
        reasons.append(f"the input shows its lane ({', '.join(evidence[:3])})")
    if base_score >= 3:
        score += config.core_triage
        reasons.append("its triage score is core (3)")
    for finding in findings:
        if finding.improvement:
            continue
        by = sorted(neighbours & set(finding.agents))
        if not by:
            continue
        points = {"P0": config.per_adjacent_p0, "P1": config.per_adjacent_p1}.get(finding.severity, 0)
        if points:
            score += points
            reasons.append(f"{finding.severity} {finding.title!r} by {', '.join(by)} (adjacent)")
    disputed = [f for f in findings if _disagreement(f) and (neighbours & set(f.agents) or in_lane(f, agent.concerns))]
    if disputed:
        score += config.disagreement
        reasons.append(f"Stage 1 agents disagree on {disputed[0].id} ({', '.join(disputed[0].agents)})")
    if name in boosted and any(in_lane(f, agent.concerns) for f in findings):
        score += config.domain_criteria
        reasons.append("its domain criteria apply to what Stage 1 found")
    return score, tuple(reasons)


def decide(
    stage2: Sequence[str],
    pool: Sequence[str],
    findings: Sequence[Finding],
    *,
    stage1_failed: bool,
    roster: Roster,
    boosted: set[str],
    dropped: Sequence[str],
    config: ExpansionConfig,
    evidence: Mapping[str, Sequence[str]] | None = None,
    base_scores: Mapping[str, int] | None = None,
) -> Decision:
    """Score the candidates and make the recommendation."""
    evidence, base_scores = evidence or {}, base_scores or {}
    candidates = []
    for name in [*stage2, *pool]:
        shown, base = evidence.get(name, ()), base_scores.get(name, 0)
        score, reasons = score_candidate(name, findings, roster, boosted, config, evidence=shown, base_score=base)
        candidates.append(Candidate(name, score, reasons, name in dropped, name in stage2))
    candidates.sort(key=lambda c: (-c.score, not c.planned, c.agent))
    live = [c for c in candidates if not c.dropped]
    if not candidates:
        return Decision("stop", (), (), "No Stage 2 candidates: the review ends after Stage 1.")
    if stage1_failed:
        names = tuple(c.agent for c in live if c.planned) or tuple(c.agent for c in live)
        message = f"Every Stage 1 agent failed: Stage 2 is offered as fallback coverage ({', '.join(names)})."
        return Decision("fallback", tuple(candidates), names, message)
    top = max((c.score for c in live), default=0)
    if top >= config.recommend_at:
        chosen = tuple(c.agent for c in live if c.score >= config.recommend_at)
        lines = [f"Recommend launching {', '.join(chosen)}:"]
        lines += [f"  {c.agent} ({c.score}): {'; '.join(c.reasons)}" for c in live if c.agent in chosen]
        return Decision("recommend", tuple(candidates), chosen, "\n".join(lines))
    if not any(not f.improvement for f in findings):
        return Decision(
            "stop",
            tuple(candidates),
            (),
            "Stage 1 found nothing: recommend stopping here (Stage 2 can still be launched).",
        )
    if top >= config.offer_at:
        offered = [c for c in live if c.score >= config.offer_at]
        lines = ["Stage 2 is optional (no default):"]
        lines += [f"  {c.agent} ({c.score}): {'; '.join(c.reasons)}" for c in offered]
        return Decision("offer", tuple(candidates), (), "\n".join(lines))
    return Decision(
        "stop",
        tuple(candidates),
        (),
        f"Recommend stopping: no Stage 1 finding points at a Stage 2 reviewer's lane (best reason to go on: {top} "
        "points, below the bar).",
    )


def choose(decision: Decision, mode: Mode) -> list[str]:
    """What a flag launches: the recommendation, every planned agent (dropped ones restored), or nothing."""
    if mode == "none":
        return []
    if mode == "all":
        return sorted({c.agent for c in decision.candidates if c.planned} | set(decision.recommended))
    return list(decision.recommended)


def render_decision(decision: Decision) -> str:
    """The candidates table and the recommendation, for the log and the prompt (with no candidate, the
    recommendation alone: a table header with nothing under it says nothing)."""
    if not decision.candidates:
        return f"Expansion decision: {decision.message}"
    lines = ["Expansion decision: Stage 2 reviewers and how strongly Stage 1 points at each (points):"]
    for c in decision.candidates:
        tag = " (not needed: Stage 1 covered it)" if c.dropped else "" if c.planned else " (extra, not planned)"
        lines.append(f"  {c.agent:<19} {c.score:>3}{tag}")
    lines.append(decision.message)
    return "\n".join(lines)
