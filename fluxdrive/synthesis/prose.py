"""The prose fallback (PROTOCOL.md 5.3): findings from reports with no usable index.

Rules, applied to lines outside fenced code:

1. A candidate is a bullet, a numbered item or a level 3-4 heading that
   carries an explicit severity marker (``**P0**``, ``P1:``, ``[P2]``,
   ``(P1)``, ``Severity: P1``) or sits under a heading about issues,
   findings, concerns, problems, risks or bugs.
2. Severity: the marker; else words (critical/blocker/severe -> P0;
   high/must fix/major/serious -> P1; medium/should/moderate -> P2;
   low/minor/nit/consider/recommend/could -> P3); else P2.
3. Title: the line without markers and trailing location, at most 120
   characters; shorter than 8 characters -> skipped. Location: the first
   ``file.ext:LINE``. Section: the nearest heading. Indented sub-bullets are
   details of the finding above them, not findings.

Findings from prose carry ``from_prose`` and get lower confidence. This
module also extracts the detail of one issue (its ``Fix:`` line) from a
report's Issues Found section, which synthesis reads only for conflicts.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from fluxdrive.synthesis.model import RawFinding

_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_ISSUE_HEADING = re.compile(r"issue|finding|concern|problem|risk|bug", re.I)
_ITEM = re.compile(r"^(?P<indent>\s*)(?:[-*+]|\d{1,3}[.)])\s+(?P<body>.+)$")
_MARKER = re.compile(
    r"\*\*\[?(P[0-3])\]?\*\*:?|\[(P[0-3])\]|\((P[0-3])\)|\bseverity:\s*(P[0-3])\b|^(P[0-3])\s*[:\-\u2013\u2014|]|\b(P[0-3]):",
    re.I,
)
_WORDS = (
    ("P0", re.compile(r"\b(critical|blocker|severe)\b", re.I)),
    ("P1", re.compile(r"\b(high|must fix|major|serious)\b", re.I)),
    ("P2", re.compile(r"\b(medium|should|moderate)\b", re.I)),
    ("P3", re.compile(r"\b(low|minor|nit|consider|recommend|could)\b", re.I)),
)
_LOCATION = re.compile(r"`?([\w./-]+\.(?:py|js|ts|tsx|go|java|rb|php|sh|html|md|ya?ml|sql)):(\d+)`?")
_FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")


def _severity(text: str) -> str:
    marker = _MARKER.search(text)
    if marker:
        return next(g for g in marker.groups() if g).upper()
    for severity, pattern in _WORDS:
        if pattern.search(text):
            return severity
    return "P2"


def _title(text: str) -> str:
    text = _MARKER.sub(" ", text)
    text = re.sub(r"\s*[(\[]?`?[\w./-]+\.\w+:\d+`?[)\]]?\s*[.:;,]?\s*$", "", text)
    text = re.sub(r"^\W*(?:[A-Z]{1,4}-?\d{1,3}\W+)?", "", text)
    text = text.replace("**", "").replace("__", "").strip(" -:\u2013\u2014|")
    return " ".join(text.split())[:120]


def _lines_outside_fences(text: str) -> Iterator[tuple[int, str]]:
    fence: str | None = None
    for number, line in enumerate(text.replace("\r\n", "\n").split("\n"), start=1):
        marker = _FENCE.match(line)
        if marker and (fence is None or marker.group(1).startswith(fence)):
            fence = None if fence else marker.group(1)[:3]
            continue
        if fence is None:
            yield number, line


def _candidates(text: str) -> Iterator[tuple[str, list[str]]]:
    """(candidate text, enclosing headings) for headings and top-level items."""
    stack: list[tuple[int, str]] = []
    item_indent: int | None = None
    for _number, line in _lines_outside_fences(text):
        heading = _HEADING.match(line)
        if heading:
            level = len(heading.group(1))
            stack = [(lvl, t) for lvl, t in stack if lvl < level]
            if level in (3, 4):
                yield heading.group(2), [t for _lvl, t in stack]
            stack.append((level, heading.group(2)))
            item_indent = None
            continue
        item = _ITEM.match(line)
        if item is None:
            continue
        indent = len(item.group("indent").expandtabs())
        if item_indent is not None and indent >= item_indent + 2:
            continue  # a sub-bullet: detail of the item above
        item_indent = indent
        yield item.group("body"), [t for _lvl, t in stack]


def prose_findings(agent: str, text: str, *, partial: bool = False) -> list[RawFinding]:
    """Findings mined from a report's prose, in order of appearance."""
    found: list[RawFinding] = []
    seen: set[str] = set()
    for body, headings in _candidates(text):
        under_issues = any(_ISSUE_HEADING.search(h) for h in headings)
        if not _MARKER.search(body) and not under_issues:
            continue
        title = _title(body)
        if len(title) < 8 or title.lower() in seen:
            continue
        seen.add(title.lower())
        location = _LOCATION.search(body)
        found.append(
            RawFinding(
                agent=agent,
                severity=_severity(body),
                local_id=f"{agent}-prose-{len(found) + 1}",
                section=(headings[-1] if headings else "").strip("*_ "),
                title=title,
                location=f"{location.group(1)}:{location.group(2)}" if location else None,
                from_prose=True,
                partial=partial,
            )
        )
    return found


_ISSUE_START = re.compile(r"^(?:\d{1,3}[.)]|[-*+])\s+(?P<rest>.*)$")
_ISSUE_ID = re.compile(r"\b([A-Z]{1,5}-\d{1,4}|P[0-3]-[A-Z0-9]+)\b")
_FIX = re.compile(
    r"^\s*(?:[-*+]\s+)?(?:\*\*)?(?:fix|recommendation|recommended fix|suggested fix|remediation)(?:\*\*)?"
    r"\s*:\s*(?:\*\*)?\s*(.+)",
    re.I,
)


def recommendations(text: str) -> dict[str, str]:
    """Issue id -> its ``Fix:`` line, from a report's Issues Found prose (one pass).

    Index lines (``- P1 | SF-001 | ...``) are skipped: the fix lives under the
    numbered issue, not in the index.
    """
    found: dict[str, str] = {}
    current: str | None = None
    for _number, line in _lines_outside_fences(text):
        if _HEADING.match(line):
            current = None
            continue
        start = _ISSUE_START.match(line)
        if start and line[:1] not in (" ", "\t") and line.count(" | ") < 2:
            identifier = _ISSUE_ID.search(start.group("rest"))
            current = identifier.group(1) if identifier else None
            continue
        fix = _FIX.match(line)
        if fix and current and current not in found:
            found[current] = " ".join(fix.group(1).split())
    return found
