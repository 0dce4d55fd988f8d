"""The reaction round's decisions, as pure functions: whether it runs, who sees what, who fits the budget.

Why pure: each decision is recorded in ``decisions.jsonl`` with its inputs and must come out the
same when replayed (fluxdrive.runs.decisions).

**Gate.** The round is skipped when it cannot add value: it is disabled (``reaction.enabled``),
fewer than two agents can react (their runtime answers ``reacts``; offline, none do), there are no
findings, or ::

    value = share of findings that are P0/P1 + share of cited files that two or more agents cite

is under ``reaction.min_value`` (a run of a few P3 nits in files no two agents share has nothing
worth a second look). ``value`` ranges over 0..2.

**Discourse topology.** Every agent has a role (:data:`ROLES`: ``code`` - what the program does
wrong; ``design`` - how it is built and decided; ``product`` - what people meet). A reacting agent
sees a peer finding in full when one of its reporters has the same role, summarised (id, severity,
title, first place) when a reporter's role is adjacent (:data:`ADJACENT`), and not at all otherwise:
a safety reviewer has evidence to give on a correctness claim, not on a tone-of-voice one. An agent
the table does not name (a project or generated agent) takes the most common role of the agents
its definition lists as ``adjacent`` (ties: the first in :data:`ROLE_ORDER`), else ``general``,
which is adjacent to every role.

**Budget.** The round may spend ``reaction.budget_share`` of the run's token budget. Over it, the
lowest-scoring agents (triage ``final_score``, ties by name) are dropped first until it fits.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from fluxdrive.synthesis.grounding import place
from fluxdrive.synthesis.model import Finding

ROLES: Mapping[str, str] = {
    "fd-safety": "code",
    "fd-correctness": "code",
    "fd-resilience": "code",
    "fd-performance": "code",
    "fd-architecture": "design",
    "fd-quality": "design",
    "fd-systems": "design",
    "fd-decisions": "design",
    "fd-user-product": "product",
    "fd-perception": "product",
    "fd-people": "product",
    "fd-game-design": "product",
}
ROLE_ORDER = ("code", "design", "product")
GENERAL = "general"
ADJACENT: Mapping[str, frozenset[str]] = {
    "code": frozenset({"design", GENERAL}),
    "design": frozenset({"code", "product", GENERAL}),
    "product": frozenset({"design", GENERAL}),
    GENERAL: frozenset(ROLE_ORDER),
}


@dataclass(frozen=True, slots=True)
class GateDecision:
    """Whether the round runs, why, and the numbers it was decided on."""

    run: bool
    reason: str
    value: float = 0.0
    severe_share: float = 0.0
    overlap_share: float = 0.0


def role_of(name: str, adjacent: Sequence[str] = ()) -> str:
    """The agent's discourse role (see the module docstring)."""
    if name in ROLES:
        return ROLES[name]
    counts = Counter(ROLES[a] for a in adjacent if a in ROLES)
    if not counts:
        return GENERAL
    best = max(counts.values())
    return next(r for r in ROLE_ORDER if counts.get(r) == best)


def relation(reader_role: str, reporter_roles: Sequence[str]) -> str:
    """``same`` (shown in full), ``adjacent`` (summarised) or ``none`` (not shown)."""
    if reader_role in reporter_roles:
        return "same"
    if any(r in ADJACENT.get(reader_role, frozenset()) or reader_role in ADJACENT.get(r, frozenset())
           for r in reporter_roles):  # fmt: skip
        return "adjacent"
    return "none"


def value(findings: Sequence[Finding]) -> tuple[float, float, float]:
    """(value, share of P0/P1, share of cited files cited by two or more agents)."""
    if not findings:
        return 0.0, 0.0, 0.0
    severe = sum(1 for f in findings if f.severity in ("P0", "P1")) / len(findings)
    citing: dict[str, set[str]] = {}
    for finding in findings:
        for location in finding.locations:
            path = place(location)[0]
            if path and not path.lower().startswith("section:"):
                citing.setdefault(path, set()).update(finding.agents)
    overlap = sum(1 for agents in citing.values() if len(agents) >= 2) / len(citing) if citing else 0.0
    return round(severe + overlap, 4), round(severe, 4), round(overlap, 4)


def gate(enabled: bool, reacting: Sequence[str], findings: Sequence[Finding], min_value: float) -> GateDecision:
    """Run the round, or skip it with the reason (see the module docstring)."""
    if not enabled:
        return GateDecision(False, "disabled (reaction.enabled = false)")
    if len(reacting) < 2:
        return GateDecision(False, f"{len(reacting)} agent(s) can react; the round needs 2")
    if not findings:
        return GateDecision(False, "no findings to react to")
    total, severe, overlap = value(findings)
    if total < min_value:
        return GateDecision(False, f"value {total:g} under reaction.min_value {min_value:g}", total, severe, overlap)
    return GateDecision(True, f"value {total:g} >= reaction.min_value {min_value:g}", total, severe, overlap)


def fit_budget(costs: Mapping[str, int], scores: Mapping[str, float], cap: int) -> tuple[list[str], list[str]]:
    """(kept, dropped): the lowest-scoring agents dropped first until the estimated costs fit ``cap``."""
    kept = sorted(costs, key=lambda a: (scores.get(a, 0.0), a))
    dropped: list[str] = []
    while kept and sum(costs[a] for a in kept) > cap:
        dropped.append(kept.pop(0))
    return sorted(kept), dropped
