"""AgentDropout: skip Stage 2 agents whose ground Stage 1 already covered (PROTOCOL.md 4.8).

After Stage 1, each Stage 2 or pool candidate gets a redundancy score:

- +0.4 its own domain already produced P0/P1: a Stage 1 P0/P1 finding by
  another agent falls within the candidate's concerns;
- +0.3 every neighbour it lists as ``adjacent`` ran in Stage 1;
- +0.2 its neighbours produced at least ``density_min_findings`` P0/P1;
- +0.1 its trust multiplier is below ``low_trust_below``.

At ``threshold`` (0.6) or more it is dropped, with the reasons and the tokens
that saves. Agents marked ``exempt_from_dropout`` and the configured exempt
list (fd-safety, fd-correctness) are never dropped, nor is an agent whose
lane has direct evidence in the input (its paths or routing keywords):
what the input shows is not made redundant by what Stage 1 said. Nothing is dropped when
dropout is disabled, when there is only one candidate, or when Stage 1 found
nothing. Choosing "launch all" at the expansion decision restores dropped agents.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass

from fluxdrive.agents import Roster
from fluxdrive.config.model import DropoutConfig
from fluxdrive.core.match import word_pattern
from fluxdrive.synthesis import Finding

SERIOUS = ("P0", "P1")


@dataclass(frozen=True, slots=True)
class DropoutRow:
    """One candidate's redundancy score and what happened to it."""

    agent: str
    score: float
    reasons: tuple[str, ...]
    exempt: bool
    dropped: bool
    tokens_saved: int


@dataclass(frozen=True, slots=True)
class Dropout:
    """The dropout table, or why dropout did not run."""

    rows: tuple[DropoutRow, ...]
    skipped: str | None = None

    @property
    def dropped(self) -> list[str]:
        """Agents dropped, by name."""
        return sorted(r.agent for r in self.rows if r.dropped)

    @property
    def tokens_saved(self) -> int:
        """Estimated tokens the dropped agents would have used."""
        return sum(r.tokens_saved for r in self.rows if r.dropped)


def finding_text(finding: Finding) -> str:
    """Everything a finding says, for matching against an agent's concerns."""
    return " ".join([finding.section, finding.title, *sorted(finding.descriptions.values())])


def in_lane(finding: Finding, concerns: Sequence[str]) -> bool:
    """True when the finding falls within these concerns."""
    pattern = word_pattern(concerns)
    return pattern is not None and pattern.search(finding_text(finding)) is not None


def assess_dropout(
    candidates: Sequence[str],
    stage1: Sequence[str],
    findings: Sequence[Finding],
    roster: Roster,
    trust: Mapping[str, float],
    config: DropoutConfig,
    *,
    tokens_for: Callable[[str], int],
    evidence: Collection[str] = (),
) -> Dropout:
    """Score every candidate; drop the redundant ones (never the exempt, nor one whose lane the input shows)."""
    if not config.enabled:
        return Dropout((), "dropout is disabled")
    if not candidates:
        return Dropout((), "no Stage 2 candidates")
    if len(candidates) <= 1:
        return Dropout((), "only one candidate")
    serious = [f for f in findings if f.severity in SERIOUS and not f.improvement]
    if not findings:
        return Dropout((), "Stage 1 found nothing")
    ran = set(stage1)
    rows = []
    for name in sorted(candidates):
        agent = roster.agents.get(name)
        if agent is None:
            continue
        neighbours = set(agent.adjacent)
        score = 0.0
        reasons = []
        own = [f for f in serious if name not in f.agents and in_lane(f, agent.concerns)]
        if own:
            score += config.weight_domain
            reasons.append(f"its domain already has {len(own)} P0/P1 ({own[0].id} by {', '.join(own[0].agents)})")
        if neighbours and neighbours <= ran:
            score += config.weight_adjacency
            reasons.append(f"all neighbours ran in Stage 1 ({', '.join(sorted(neighbours))})")
        from_neighbours = [f for f in serious if neighbours & set(f.agents)]
        if len(from_neighbours) >= config.density_min_findings:
            score += config.weight_density
            reasons.append(f"{len(from_neighbours)} P0/P1 from its neighbours")
        trusted = trust.get(name, 1.0)
        if trusted < config.low_trust_below:
            score += config.weight_low_trust
            reasons.append(f"low trust ({trusted:.2f})")
        score = round(score, 2)
        exempt = name in config.exempt or agent.exempt_from_dropout or name in evidence
        dropped = score >= config.threshold and not exempt
        rows.append(DropoutRow(name, score, tuple(reasons), exempt, dropped, tokens_for(name) if dropped else 0))
    return Dropout(tuple(rows))


def render_dropout(dropout: Dropout) -> str:
    """The logged table: agent, score, kept/dropped/exempt, why."""
    if dropout.skipped:
        return f"Dropout: skipped ({dropout.skipped})"
    lines = ["Dropout (redundancy after Stage 1):", "  agent               score  decision  why"]
    for row in dropout.rows:
        decision = "dropped" if row.dropped else "exempt" if row.exempt and row.score else "kept"
        lines.append(f"  {row.agent:<19} {row.score:>5.2f}  {decision:<8}  {'; '.join(row.reasons) or '-'}")
    if dropout.dropped:
        lines.append(f"  dropped {len(dropout.dropped)}, about {dropout.tokens_saved:,} tokens saved")
    return "\n".join(lines)
