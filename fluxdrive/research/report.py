"""One research agent's answer as a report file: the report contract's frame around the research contract.

The frame (``### Findings Index`` with no entries, ``Verdict: safe``, a
Summary) is what the completion contract, the frozen copy and the verdict
record read for every agent; a research answer raises no findings, so its
index is empty and "safe" means "answered". Under it come the research
contract's sections (Sources, Findings, Confidence, Gaps), under 60 lines.
"""

from __future__ import annotations

import re

from fluxdrive.contracts.report import Report, render_report
from fluxdrive.launch.research.model import ResearchAnswer
from fluxdrive.launch.research.render import MAX_GAPS, MAX_SOURCES, bullets, clean_line, numbered

MAX_ANSWER_LINES = 40
_CONFIDENCE = re.compile(r"^### Confidence\s*\n+([a-z]+)\b", re.M)


def summary_line(answer: ResearchAnswer) -> str:
    """The verdict record's one line: how confident, how much, from how many sources."""
    points, sources = len(answer.points), len(answer.sources)
    return f"answered, {answer.confidence} confidence: {points} point(s) from {sources} source(s)"


def render_research_report(agent: str, question: str, kind: str, answer: ResearchAnswer) -> str:
    """The report file of one research agent."""
    frame = render_report(Report((), summary=f"{summary_line(answer)}. Question ({kind}): {clean_line(question)}"))
    how = clean_line(answer.how) if answer.how else "answered from the repository"
    body = [
        f"# Research: {agent}",
        "",
        f"Question: {clean_line(question)}",
        f"Type: {kind}; {how}.",
        "",
        "### Sources", *bullets(answer.sources, MAX_SOURCES, "none: nothing could be read"), "",
        "### Findings", *numbered(answer.points, MAX_ANSWER_LINES), "",
        "### Confidence", f"{answer.confidence} - {clean_line(answer.confidence_note)}", "",
        "### Gaps", *bullets(answer.gaps, MAX_GAPS, "none known"),
    ]  # fmt: skip
    return frame.rstrip() + "\n\n" + "\n".join(body) + "\n"


def report_confidence(text: str) -> str | None:
    """The confidence a research report states (high / medium / low), if any."""
    found = _CONFIDENCE.search(text)
    return found.group(1) if found else None
