"""Which Stage 1 findings need research, and which research agent answers each one.

A P0 or P1 finding whose text refers outward (:data:`OUTWARD_PHRASES`,
:data:`COMPARISON_PHRASES`) becomes a :class:`Trigger`, routed to the research
agent whose concerns match it best (ties: :data:`PREFERENCE`). Pure functions
over findings and the roster: nothing here reads files or runs anything.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from fluxdrive.agents import AgentDefinition, Roster
from fluxdrive.core.masking import mask_text
from fluxdrive.core.match import word_pattern
from fluxdrive.synthesis.model import SEVERITY_ORDER, Finding

# A finding "refers outward" when its text uses one of these, as whole words
# or phrases (plurals included), case-insensitively. The brief of PROTOCOL.md:
# outside knowledge, what is normal elsewhere, and history.
OUTWARD_PHRASES: tuple[str, ...] = (
    "best practice", "framework", "library", "version", "documentation", "docs", "standard",
    "convention", "idiomatic", "recommended", "deprecated",
    "typically", "usually", "commonly",
    "regression", "used to", "previously", "originally",
)  # fmt: skip
# Two approaches compared without a decision. A bare "or" is too common to
# count; "either" stands for "either X or Y".
COMPARISON_PHRASES: tuple[str, ...] = (
    "vs", "versus", "instead of", "rather than", "either", "compared to", "compared with", "whether to",
)  # fmt: skip

# Equal concern scores go to the first of these; project research agents follow, by name.
PREFERENCE: tuple[str, ...] = ("git-history", "repo-research", "framework-docs", "best-practices", "learnings")
FALLBACK_AGENT = "repo-research"

_ASK = {
    "git-history": "what does the repository's history say about how this code came to be?",
    "repo-research": "what do its callers, tests and related code in the repository say?",
    "framework-docs": "what does the documentation of the version in use say?",
    "best-practices": "what does current, widely accepted practice say?",
    "learnings": "has the project met this problem before?",
}
_ASK_DEFAULT = "what does outside knowledge say about it?"


@dataclass(frozen=True, slots=True)
class Trigger:
    """One Stage 1 finding that needs outside knowledge, routed to one research agent."""

    finding_id: str
    severity: str
    agents: tuple[str, ...]
    location: str | None
    matched: str
    research_agent: str
    question: str
    title: str = ""
    locations: tuple[str, ...] = ()


@lru_cache(maxsize=1024)
def _phrase(phrase: str) -> re.Pattern[str]:
    pattern = word_pattern([phrase])
    if pattern is None:
        raise ValueError("empty phrase")
    return pattern


def _finding_text(finding: Finding) -> str:
    parts = [finding.title, *(finding.descriptions[k] for k in sorted(finding.descriptions)), finding.section]
    return "\n".join(p for p in parts if p)


def _outward(text: str) -> str | None:
    """The phrase that makes the text refer outward: the earliest in the text (longest on a tie)."""
    best: tuple[tuple[int, int], str] | None = None
    for phrase in (*OUTWARD_PHRASES, *COMPARISON_PHRASES):
        match = _phrase(phrase).search(text)
        if match is not None and (best is None or (match.start(), -len(phrase)) < best[0]):
            best = ((match.start(), -len(phrase)), phrase)
    return best[1] if best else None


def _score(agent: AgentDefinition, text: str) -> int:
    return sum(1 for concern in agent.concerns if _phrase(concern).search(text))


def _preference(agent: AgentDefinition) -> tuple[int, str]:
    rank = PREFERENCE.index(agent.name) if agent.name in PREFERENCE else len(PREFERENCE)
    return rank, agent.name


def _route(text: str, agents: Sequence[AgentDefinition], used: set[str]) -> str | None:
    """The best-matching unused agent; repo-research when none matches; None when all are taken."""
    ranked = sorted(((_score(a, text), a) for a in agents), key=lambda s: (-s[0], _preference(s[1])))
    for score, agent in ranked:
        if score > 0 and agent.name not in used:
            return agent.name
    names = sorted(agents, key=_preference)
    if any(a.name == FALLBACK_AGENT for a in names):
        return FALLBACK_AGENT if FALLBACK_AGENT not in used else None
    return next((a.name for a in names if a.name not in used), None)


def one_line(text: str, limit: int = 160) -> str:
    text = " ".join(text.split()).rstrip(".")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _question(finding: Finding, agent: str) -> str:
    who = ", ".join(finding.agents) or "a reviewer"
    where = f"at {finding.location}" if finding.location else "(no location)"
    ask = _ASK.get(agent, _ASK_DEFAULT)
    return mask_text(f"{who} {finding.severity.upper()} {where}: {one_line(finding.title)} — {ask}")


def find_triggers(findings: Sequence[Finding], roster: Roster, *, limit: int = 2) -> list[Trigger]:
    """The findings research should look at, highest severity first, each routed to one research agent.

    A finding qualifies when it is P0 or P1, not an improvement, and its
    title, descriptions or section use an :data:`OUTWARD_PHRASES` or
    :data:`COMPARISON_PHRASES` entry. P0 comes before P1, then the order
    given; at most ``limit`` triggers and at most one per research agent.
    The agent is the one whose ``concerns`` match the text most (ties:
    :data:`PREFERENCE`); when none matches, repo-research. A finding whose
    agent is already taken goes to the next one that matches, else to
    repo-research if it is free, else it is left out.
    """
    agents = roster.of_kind("research")
    if limit <= 0 or not agents:
        return []
    eligible: list[tuple[int, int, Finding, str, str]] = []
    for index, finding in enumerate(findings):
        severity = finding.severity.upper()
        if severity not in ("P0", "P1") or finding.improvement:
            continue
        text = _finding_text(finding)
        matched = _outward(text)
        if matched is not None:
            eligible.append((SEVERITY_ORDER[severity], index, finding, text, matched))
    eligible.sort(key=lambda e: (e[0], e[1]))
    triggers: list[Trigger] = []
    used: set[str] = set()
    for _, _, finding, text, matched in eligible:
        if len(triggers) >= limit:
            break
        agent = _route(text, agents, used)
        if agent is None:
            continue
        used.add(agent)
        triggers.append(
            Trigger(
                finding_id=finding.id,
                severity=finding.severity.upper(),
                agents=tuple(finding.agents),
                location=finding.location,
                matched=matched,
                research_agent=agent,
                question=_question(finding, agent),
                title=finding.title,
                locations=tuple(finding.locations),
            )
        )
    return triggers
