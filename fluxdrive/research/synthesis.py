"""One answer from several research agents: ``synthesis.md`` and ``research.json``.

Deterministic, no model: the answer comes first, built from the points of
the agents in the order of their affinity score for the question (primary
agents first; every agent's best point before any agent's second), each
point keeping its citation (``path:line``, a commit id, a URL). Then the
evidence per agent, the disagreements, the overall confidence and what
could not be answered.

**Disagreements** are found, not invented: two agents disagree when one
says it found nothing where another cites something (a "no recorded
lesson" beside code that handles the topic is a gap in the lessons, worth
saying), or when their confidences are two levels apart (high vs low).

**Confidence** is the primary agents' confidence, lowered one level when no
primary agent answered, and "low" when no agent answered at all.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from fluxdrive.launch.research.model import ResearchAnswer
from fluxdrive.research.query import AgentChoice

LEVELS = ("low", "medium", "high")
ANSWER_POINTS = 6
_NOTHING = re.compile(r"^(?:no |nothing |none\b)", re.I)
_URL = re.compile(r"https?://[^\s)>\]`'\"]+")
_ANCHOR = re.compile(r"\b([\w./-]+\.[A-Za-z0-9]+):(\d+)\b")
_COMMIT = re.compile(r"\b(?:commit )?([0-9a-f]{12,40})\b")


@dataclass(frozen=True, slots=True)
class AgentRun:
    """How one chosen research agent ended."""

    agent: str
    score: int
    status: str  # completed / error / timeout / cancelled / skipped
    note: str
    output: str | None = None
    answer: ResearchAnswer | None = None


@dataclass(frozen=True, slots=True)
class Synthesis:
    """The merged answer."""

    answer: tuple[str, ...]
    confidence: str
    confidence_note: str
    disagreements: tuple[str, ...]
    gaps: tuple[str, ...]
    citations: Mapping[str, tuple[str, ...]] = field(default_factory=dict)


def _found_nothing(answer: ResearchAnswer) -> bool:
    return all(_NOTHING.match(p.text) for p in answer.points)


def citations(answers: Sequence[ResearchAnswer]) -> dict[str, tuple[str, ...]]:
    """Every file anchor, commit and URL the answers cite, deduplicated, in order of appearance."""
    found: dict[str, dict[str, None]] = {"files": {}, "commits": {}, "urls": {}}
    for answer in answers:
        texts = [*answer.sources, *(p.text for p in answer.points), *(d for p in answer.points for d in p.details)]
        for text in texts:
            for url in _URL.findall(text):
                found["urls"].setdefault(url.rstrip(".,;"), None)
            for path, line in _ANCHOR.findall(_URL.sub(" ", text)):
                found["files"].setdefault(f"{path}:{line}", None)
            for sha in _COMMIT.findall(text) if "commit" in text or re.match(r"^[0-9a-f]{12}\b", text) else ():
                found["commits"].setdefault(sha[:12], None)
    return {kind: tuple(items) for kind, items in found.items()}


def _disagreements(answered: Sequence[AgentRun], useful: Sequence[AgentRun]) -> list[str]:
    """An agent that found nothing beside one that cites sources; confidences two levels apart."""
    found: list[str] = []
    for empty in (r for r in answered if r not in useful):
        other = next(iter(useful), None)
        if other is not None and other.answer is not None:
            found.append(
                f"{empty.agent} found nothing while {other.agent} cites {len(other.answer.sources)} source(s): "
                f"the topic exists in the project but not in what {empty.agent} searches"
            )
    levels = {r.agent: LEVELS.index(r.answer.confidence) for r in answered if r.answer is not None}
    found.extend(
        f"{a.agent} answers with {LEVELS[levels[a.agent]]} confidence, {b.agent} with {LEVELS[levels[b.agent]]}: "
        "weigh the evidence below, not the count of agents"
        for a in answered
        for b in answered
        if a.agent < b.agent and abs(levels[a.agent] - levels[b.agent]) == 2
    )
    return found


def synthesize(runs: Sequence[AgentRun]) -> Synthesis:
    """Merge the answers of ``runs`` (already in affinity order)."""
    answered = [r for r in runs if r.status == "completed" and r.answer is not None]
    useful = [r for r in answered if r.answer is not None and not _found_nothing(r.answer)]
    answer: list[str] = []
    depth = max((len(r.answer.points) for r in useful if r.answer is not None), default=0)
    for index in range(depth):  # round-robin: each agent's best point before anyone's second
        for run in useful:
            if run.answer is not None and index < len(run.answer.points) and len(answer) < ANSWER_POINTS:
                answer.append(f"{run.answer.points[index].text} ({run.agent})")
    if not answer:
        answer = [
            f"{r.answer.points[0].text} ({r.agent})" for r in answered if r.answer is not None and r.answer.points
        ] or ["No research agent could answer this question."]
    disagreements = _disagreements(answered, useful)
    levels = {r.agent: LEVELS.index(r.answer.confidence) for r in answered if r.answer is not None}
    primary = [r for r in answered if r.score >= 3 and r in useful]
    if primary:
        level = max(levels[r.agent] for r in primary)
        note = f"from the primary agent(s) {', '.join(r.agent for r in primary)}"
    elif useful:
        level = max(0, max(levels[r.agent] for r in useful) - 1)
        note = "no primary agent answered; one level below the best secondary answer"
    else:
        level, note = 0, "no agent found anything"
    gaps: list[str] = []
    for run in runs:
        if run.status != "completed":
            gaps.append(f"{run.agent} {run.status}: {run.note}")
        elif run.answer is not None:
            gaps.extend(f"{run.agent}: {gap}" for gap in run.answer.gaps[:2])
    return Synthesis(
        tuple(answer),
        LEVELS[level],
        note,
        tuple(disagreements),
        tuple(gaps),
        citations([r.answer for r in answered if r.answer is not None]),
    )


def render_markdown(question: str, kind: str, runs: Sequence[AgentRun], synthesis: Synthesis) -> str:
    """``synthesis.md``: answer first, then evidence, disagreements, confidence and gaps."""
    lines = [f"# Research: {question}", "", f"Question type: {kind}. Agents: "
             + ", ".join(f"{r.agent} ({r.status})" for r in runs) + ".", "", "## Answer", ""]  # fmt: skip
    lines += [f"{n}. {text}" for n, text in enumerate(synthesis.answer, 1)]
    lines += ["", "## Evidence", ""]
    for run in runs:
        if run.answer is None:
            continue
        lines.append(f"### {run.agent} ({run.answer.confidence} confidence) - {run.output or 'no report'}")
        lines.append("")
        lines += [f"- {source}" for source in run.answer.sources]
        for point in run.answer.points:
            lines.append(f"- {point.text}")
            lines += [f"  - {detail}" for detail in point.details]
        lines.append("")
    cited = synthesis.citations
    if any(cited.values()):
        lines += ["### Citations", ""]
        for kind_name in ("files", "commits", "urls"):
            if cited.get(kind_name):
                lines.append(f"- {kind_name}: " + ", ".join(cited[kind_name][:20]))
        lines.append("")
    lines += ["## Disagreements", ""]
    lines += [f"- {d}" for d in synthesis.disagreements] or ["- None found between the answers."]
    lines += ["", "## Confidence", "", f"{synthesis.confidence} - {synthesis.confidence_note}", "", "## Gaps", ""]
    lines += [f"- {g}" for g in synthesis.gaps] or ["- None known."]
    return "\n".join(lines) + "\n"


def research_record(
    question: str, kind: str, choices: Sequence[AgentChoice], runs: Sequence[AgentRun], synthesis: Synthesis,
    extra: Mapping[str, Any],
) -> dict[str, Any]:  # fmt: skip
    """``research.json``: the question, every agent's score and outcome, the merged answer."""
    return {
        "schema_version": 1,
        "question": question,
        "query_type": kind,
        **extra,
        "agents": [
            {
                "agent": c.agent,
                "score": c.score,
                "reason": c.reason,
                **next(
                    (
                        {
                            "status": r.status,
                            "note": r.note,
                            "output": r.output,
                            "confidence": r.answer.confidence if r.answer else None,
                            "sources": list(r.answer.sources) if r.answer else [],
                        }
                        for r in runs
                        if r.agent == c.agent
                    ),
                    {"status": "not launched", "note": "scored below 2 for this question"},
                ),
            }
            for c in choices
        ],
        "answer": list(synthesis.answer),
        "confidence": synthesis.confidence,
        "confidence_note": synthesis.confidence_note,
        "disagreements": list(synthesis.disagreements),
        "gaps": list(synthesis.gaps),
        "citations": {k: list(v) for k, v in synthesis.citations.items()},
    }
