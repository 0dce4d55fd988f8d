"""An answer rendered in the research-contract shape: Sources, Findings, Confidence, Gaps, under 60 lines.

Apart from the executors so that every answer, built in or plugged in, gets
the same shape, the same length caps and the same credential masking.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from fluxdrive.core.masking import mask_text
from fluxdrive.launch.research.model import OFFLINE_NOTE, Point, ResearchAnswer
from fluxdrive.launch.research.triggers import Trigger

MAX_LINES = 59  # the contract says "under 60 lines"
MAX_SOURCES = 8
MAX_GAPS = 6
_LINE_LIMIT = 240


def clean_line(text: str) -> str:
    text = mask_text(re.sub(r"[\r\n\t]+", " ", text))
    return text if len(text) <= _LINE_LIMIT else text[: _LINE_LIMIT - 1] + "…"


def bullets(items: Sequence[str], cap: int, empty: str) -> list[str]:
    if not items:
        return [f"- {empty}"]
    if len(items) > cap:
        return [f"- {clean_line(i)}" for i in items[: cap - 1]] + [f"- … {len(items) - cap + 1} more"]
    return [f"- {clean_line(i)}" for i in items]


def numbered(points: Sequence[Point], budget: int) -> list[str]:
    lines: list[str] = []
    for number, point in enumerate(points, 1):
        lines.append(f"{number}. {clean_line(point.text)}")
        lines.extend(f"   - {clean_line(d)}" for d in point.details)
    if not lines:
        return ["1. Nothing found."]
    if len(lines) > budget:
        cut = len(lines) - budget + 1
        lines = [*lines[: budget - 1], f"   - … {cut} more line(s) cut to keep the answer short."]
    return lines


def render_answer(trigger: Trigger, agent: str, answer: ResearchAnswer, *, stand_in_for: str | None = None) -> str:
    """The research-contract file: a short header, then Sources, Findings, Confidence, Gaps (under 60 lines)."""
    how = f"{agent} standing in for {stand_in_for} ({OFFLINE_NOTE})" if stand_in_for else "answered from the repository"
    if answer.how and not stand_in_for:
        how = clean_line(answer.how)
    header = [
        f"# Research: {agent}",
        "",
        f"Question: {clean_line(trigger.question)}",
        f'Finding: {clean_line(trigger.finding_id)} ({trigger.severity}), matched "{trigger.matched}"; {how}.',
        "",
    ]
    sources = bullets(answer.sources, MAX_SOURCES, "none: nothing could be read")
    gaps = bullets(answer.gaps, MAX_GAPS, "none known")
    confidence = f"{answer.confidence} - {clean_line(answer.confidence_note)}"
    fixed = len(header) + len(sources) + len(gaps) + 8  # four headings, three blank lines, the confidence line
    findings = numbered(answer.points, MAX_LINES - fixed)
    lines = [
        *header,
        "### Sources", *sources, "",
        "### Findings", *findings, "",
        "### Confidence", confidence, "",
        "### Gaps", *gaps,
    ]  # fmt: skip
    return "\n".join(lines) + "\n"
