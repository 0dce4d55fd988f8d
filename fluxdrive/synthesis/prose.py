"""The prose fallback (PROTOCOL.md 5.3): findings from reports with no usable index.

A heading or a bold word alone is not a finding: a finding needs a severity
and a sentence. Rules, applied to lines outside fenced code, tables and HTML:

1. Labels. A heading, a bold-only line (``**Critical**``, ``**High
   Priority Issues:**``) or an item whose words are a severity word plus
   group words (``### Critical``, ``## 🔴 CRITICAL ISSUES (Must Fix)``,
   ``### Should fix``, ``- **Low**``) is a label: it gives its severity to
   the candidates beneath it (a heading's: until the next heading of its
   level or higher; a bold line's: until the next heading or bold line; an
   item's: its sub-items) and is never a finding.
2. Candidates: level 3-4 headings and top-level items that carry an
   explicit severity marker (``**P0**``, ``P1:``, ``[P2]``, ``(P1)``,
   ``Severity: P1``) or sit under a heading about issues, findings,
   concerns, problems, risks or bugs, or under a label. Also a bold title
   line right after a review bot's tag line (``_⚠️ Potential issue_ |
   _🟠 Major_``). Indented sub-items are details of the item above them.
3. A candidate item (or tagged title) is a finding when its text has at
   least 4 words (3 when it names a ``file:line``); an inline code span is
   one word, a path is none, short words ("in", "of") do not count. A field
   line (``**Location:** ...``, ``Fix: ...``) and a struck-through
   (``~~resolved~~``) item are not findings.
4. A candidate heading is a finding when its title has at least 2 words,
   is not a group title (``Thread Safety (6 issues)``, ``Security
   Issues``) and a description follows it before the next heading: a line
   of at least 4 words that is not a table row, code or a lead-in ending in
   ``:``. The items beneath a heading finding are its details. A heading
   followed by items but no description groups them: its items are the
   candidates.
5. Severity: the marker; for a heading, else its ``Severity:`` or
   ``Priority:`` field; else the nearest label or tag; else words
   (critical/blocker/severe -> P0; high/must fix/major/serious -> P1;
   medium/should/moderate -> P2; low/minor/nit/consider/recommend/could
   -> P3); else P2.
6. Title: the text without markers, numbering, checkbox and trailing
   location, at most 120 characters; shorter than 8 characters -> not a
   finding. Location: the first ``file.ext:LINE``; for a heading, else its
   ``Location:`` or ``File:`` field. Section: the nearest heading. A title
   seen before (case-insensitively) is the same finding.
7. At most :data:`MAX_PROSE_FINDINGS` per report: past that the least
   severe are dropped (ties: the later ones), and the rest keep their order.

Candidates that are not findings (rules 3, 4 and 6, not labels, groups or
duplicates) are counted as ignored; :meth:`ProseResult.summary` says how many
were ignored and dropped, and synthesis records it on the agent and as a note.
Findings from prose carry ``from_prose`` and get lower confidence. This
module also extracts the detail of one issue (its ``Fix:`` line) from a
report's Issues Found section, which synthesis reads only for conflicts.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from fluxdrive.synthesis.model import SEVERITY_ORDER, RawFinding

# A real review rarely has more; a report that yields more is mostly noise, and prose
# findings are low-confidence anyway. The most severe are kept.
MAX_PROSE_FINDINGS = 25
MIN_WORDS = 4  # a finding's text reads as a sentence: at least this many words (one fewer with a file:line)

_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_ISSUE_HEADING = re.compile(r"issue|finding|concern|problem|risk|bug", re.I)
_GROUP_NOUN = re.compile(r"\b(?:issues|findings|concerns|problems|risks|bugs)\b", re.I)
_COUNTED = re.compile(r"\(\s*[~≈]?\s*\d+(?:\s+of\s+\d+)?(?:\s+[A-Za-z]+)?\s*\)")
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
_EXTENSIONS = (
    "py|pyi|js|jsx|mjs|cjs|ts|tsx|go|java|kt|kts|rs|rb|php|c|h|cc|cpp|hpp|cs|swift|scala|sh|html|vue|css|scss"
    "|md|ya?ml|toml|json|ini|cfg|sql|tf"
)
_LOCATION = re.compile(rf"`?([\w./-]+\.(?:{_EXTENSIONS})):(\d+)`?")
_TRAILING_LOCATION = re.compile(
    r"\s*(?:[\u2014\u2013-]\s*)?[(\[]?`?[\w./-]+\.\w+:\d+(?:[-\u2013]\d+)?`?[)\]]?\s*[.:;,]?\s*$"
)
_FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
_TABLE_OR_HTML = re.compile(r"^\s*(?:\||<|>)")
_RULE = re.compile(r"^\s*(?:[-*_]\s*){3,}$")
_BOLD_LINE = re.compile(r"^[^\w*`]*(?:\*\*|__)([^*_`]+?)(?:\*\*|__)[^\w*`]*$")
_TAG_LINE = re.compile(r"^\s*_[^_\n]+_(?:\s*\|\s*_[^_\n]+_)*\s*$")
_FIELD = re.compile(
    r"^\s*(?:[-*+]\s+|\d{1,3}[.)]\s+)?(?:\*\*|__)?\s*(?P<name>location|locations|file|files|line|lines|severity"
    r"|priority|impact|problem|issue|description|fix|recommended fix|suggested fix|suggestion|recommendation"
    r"|solution|why|evidence|example|status|effort|confidence|category|current|target|before|after|note"
    r"|rationale|details|affected files|references?)\s*(?:\*\*|__)?\s*:\s*(?:\*\*|__)?\s*(?P<value>.*)$",
    re.I,
)
# Rule 1: a label is a severity word, then only group words ("Critical Issues", "High Priority", "Should fix").
_GROUP = r"(?:\s+(?:issues?|findings?|problems?|concerns?|bugs?|risks?|gaps?|fix(?:es)?|items?|priority|severity"
_GROUP += r"|comments?|notes?|improvements?|changes?|to|before|merge|and|or))*"
_LABELS = tuple(
    (severity, re.compile(rf"(?:{words}){_GROUP}"))
    for severity, words in (
        ("P0", r"critical|blockers?|blocking|severe"),
        ("P1", r"must[ -]fix|high|major|important|serious|urgent"),
        ("P2", r"should[ -]fix|medium|moderate|warnings?|caution"),
        ("P3", r"nice to have|could fix|low|minor|nits?|nitpicks?|trivial|suggest(?:ions?|ed)|optional|info"),
        ("P3", r"informational|cosmetic|polish|consider"),
    )
)
_MARKER_LABEL = re.compile(rf"(p[0-3]){_GROUP}")
_TAG_SEVERITY = (
    ("P0", re.compile(r"\bcritical\b", re.I)),
    ("P1", re.compile(r"\bmajor\b", re.I)),
    ("P3", re.compile(r"\b(?:minor|trivial|nitpick|suggestion)\b", re.I)),
)
_TAG_GENERIC = re.compile(r"\b(?:potential issue|warning|caution)\b", re.I)


@dataclass(frozen=True, slots=True)
class ProseResult:
    """What the prose fallback took from a report, and what it left out."""

    findings: tuple[RawFinding, ...]
    ignored: int = 0  # candidate lines that are not findings (rules 3, 4, 6)
    dropped: int = 0  # findings past MAX_PROSE_FINDINGS

    def summary(self) -> str:
        """``N finding(s) from prose``, then what was ignored and dropped, if anything."""
        parts = [f"{len(self.findings)} finding(s) from prose"]
        if self.ignored:
            parts.append(
                f"{self.ignored} candidate line(s) ignored (no sentence, a field line or a heading with no description)"
            )
        if self.dropped:
            parts.append(f"{self.dropped} more dropped over the cap of {MAX_PROSE_FINDINGS} (the least severe)")
        return "; ".join(parts)


def _severity(text: str) -> str:
    marker = _MARKER.search(text)
    if marker:
        return next(g for g in marker.groups() if g).upper()
    return _word_severity(text) or "P2"


def _marker(text: str) -> str | None:
    marker = _MARKER.search(text)
    return next(g for g in marker.groups() if g).upper() if marker else None


def _word_severity(text: str) -> str | None:
    for severity, pattern in _WORDS:
        if pattern.search(text):
            return severity
    return None


def _plain_words(text: str) -> list[str]:
    """Lower-case words of ``text`` without emphasis, emoji, punctuation, asides in parentheses or numbering."""
    text = re.sub(r"\([^)]*\)", " ", text)
    text = re.sub(r"^\s*\d{1,3}[.)]\s+", "", text)
    return re.sub(r"[^A-Za-z0-9-]+", " ", text).lower().split()


def _label(text: str) -> str | None:
    """The severity a label line gives what is beneath it: ``Critical Issues (Must Fix)`` -> P0; not a label: None."""
    words = " ".join(_plain_words(text))
    marker = _MARKER_LABEL.fullmatch(words)
    if marker:
        return marker.group(1).upper()
    return next((severity for severity, pattern in _LABELS if pattern.fullmatch(words)), None)


def _tag_severity(line: str) -> str | None:
    """The severity of a review bot's tag line (``_⚠️ Potential issue_ | _🟠 Major_``), None if it is not one."""
    if not _TAG_LINE.match(line):
        return None
    tags = re.findall(r"_([^_\n]+)_", line)
    specific = [s for tag in tags for s, pattern in _TAG_SEVERITY if pattern.search(tag)]
    if specific:
        return min(specific, key=SEVERITY_ORDER.__getitem__)
    return "P2" if any(_TAG_GENERIC.search(tag) for tag in tags) else None


def _is_path(text: str) -> bool:
    return "/" in text or re.fullmatch(r"[\w.-]+\.\w{1,5}(?::\d+(?:-\d+)?)?", text) is not None


def _word_count(text: str) -> int:
    """Words of a candidate: a code span counts once (unless a path); paths and words under 3 letters do not."""
    text = _MARKER.sub(" ", text).replace("**", "").replace("__", "")
    spans = re.findall(r"`([^`]+)`", text)
    count = sum(1 for span in spans if re.search(r"[A-Za-z]", span) and not _is_path(span.strip()))
    rest = re.sub(r"`[^`]*`", " ", text)
    rest = re.sub(r"\S*/\S*|\S+\.\w{1,5}:\d+\S*", " ", rest)
    return count + len(re.findall(r"[A-Za-z][A-Za-z'\u2019-]{2,}", rest))


# Fields that describe a finding rather than state one: ``- **Location**: ...`` or ``Fix: ...`` alone is no finding
# (``Problem: <sentence>`` or ``Impact: <sentence>`` may be the only statement of one, so those count).
_METADATA_FIELD = re.compile(
    r"locations?|files?|lines?|severity|priority|status|effort|confidence|category|(?:recommended |suggested )?fix"
    r"|suggestion|recommendation|solution|example|evidence|references?|current|target|before|after|affected files",
    re.I,
)


def _reads_as_finding(text: str) -> bool:
    """Rule 3: enough words for a sentence, not a metadata field line, not struck through."""
    field = _FIELD.match(text)
    if (field and _METADATA_FIELD.fullmatch(field.group("name"))) or "~~" in text:
        return False
    return _word_count(text) >= (MIN_WORDS - 1 if _LOCATION.search(text) else MIN_WORDS)


def _title(text: str) -> str:
    text = _MARKER.sub(" ", text)
    text = _TRAILING_LOCATION.sub("", text)
    text = re.sub(r"^\s*(?:[-*+]\s+)?\[[ xX]\]\s+", "", text)
    text = re.sub(r"^[^\w`~]*(?:\d{1,3}[.)]\s+)?(?:[A-Z]{1,4}-?\d{1,3}[^\w`]+)?", "", text)
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


@dataclass
class _Body:
    """What follows a heading up to the next heading: is there a description, are there items, which fields."""

    described: bool = False
    items: bool = False
    severity: str | None = None
    location: str | None = None


def _body(lines: list[str], start: int) -> _Body:
    body = _Body()
    for line in lines[start:]:
        if _HEADING.match(line):
            break
        if not line.strip() or _TABLE_OR_HTML.match(line) or _RULE.match(line):
            continue
        if _ITEM.match(line) and not _FIELD.match(line):
            body.items = True
            continue
        field = _FIELD.match(line)
        text = line
        if field:
            name, text = field.group("name").lower(), field.group("value")
            if name in ("severity", "priority") and body.severity is None:
                body.severity = _marker(text) or _label_or_words(text)
            if name in ("location", "locations", "file", "files") and body.location is None:
                location = _LOCATION.search(text)
                body.location = f"{location.group(1)}:{location.group(2)}" if location else None
        if not text.rstrip().endswith(":") and _word_count(text) >= MIN_WORDS:
            body.described = True
    return body


def _label_or_words(text: str) -> str | None:
    return _label(text.split(" - ")[0]) or _word_severity(text)


@dataclass
class _Candidate:
    text: str
    headings: list[str]
    severity: str | None  # from a marker, a field, a label or a tag (None: from words, else P2)
    location: str | None = None


class _Scanner:
    """Rules 1-4 in one pass: the candidates that read as findings, and how many did not."""

    def __init__(self, text: str) -> None:
        self.lines = [line for _number, line in _lines_outside_fences(text)]
        self.found: list[_Candidate] = []
        self.ignored = 0
        self.stack: list[tuple[int, str, str | None]] = []  # (level, heading, its label severity)
        self.bold: str | None = None  # severity of the last bold label line under this heading
        self.tag: str | None = None  # severity of a bot's tag line, waiting for its bold title
        self.in_finding = False  # under a heading that is a finding: its items are details
        self.item_indent: int | None = None
        self.label_item: tuple[int, str] | None = None  # (indent, severity) of a label item over its sub-items

    def run(self) -> _Scanner:
        for index, line in enumerate(self.lines):
            if not line.strip():
                continue
            waiting, self.tag = self.tag, None
            heading = _HEADING.match(line)
            if heading:
                self._heading(index, len(heading.group(1)), heading.group(2))
            elif not _TABLE_OR_HTML.match(line):
                self._line(line, waiting)
        return self

    def _headings(self) -> list[str]:
        return [title for _level, title, _severity in self.stack]

    def _context(self) -> str | None:
        """The severity of the nearest label heading."""
        return next((severity for _level, _title, severity in reversed(self.stack) if severity), None)

    def _under_issues(self) -> bool:
        return any(_ISSUE_HEADING.search(h) for h in self._headings())

    def _heading(self, index: int, level: int, title: str) -> None:
        self.stack = [entry for entry in self.stack if entry[0] < level]
        enclosing, context, issues = self._headings(), self._context(), self._under_issues()
        label = _label(title)
        self.stack.append((level, title, label))
        self.bold, self.in_finding, self.item_indent, self.label_item = None, False, None, None
        marker = _marker(title)
        if label or level not in (3, 4) or not (marker or context or issues):
            return
        body = _body(self.lines, index + 1)
        grouping = _COUNTED.search(title) or (_GROUP_NOUN.search(title) and len(_plain_words(title)) <= 4)
        if body.described and not grouping and "~~" not in title and _word_count(title) >= 2:
            self.in_finding = True
            location = _LOCATION.search(title)
            where = f"{location.group(1)}:{location.group(2)}" if location else body.location
            self.found.append(_Candidate(title, enclosing, marker or body.severity or context, where))
        elif not body.items:
            self.ignored += 1

    def _line(self, line: str, waiting: str | None) -> None:
        tagged = _tag_severity(line)
        bold_line = _BOLD_LINE.match(line)
        item = _ITEM.match(line)
        if tagged:
            self.tag = tagged
        elif bold_line and not item and waiting:
            self._candidate(bold_line.group(1), waiting)
        elif bold_line and not item:
            self.bold = _label(bold_line.group(1))
        elif item and not self.in_finding:
            self._item(len(item.group("indent").expandtabs()), item.group("body"))

    def _item(self, indent: int, text: str) -> None:
        if self.label_item is not None and indent <= self.label_item[0]:
            self.label_item = None
        under_label = self.label_item is not None and self.item_indent == self.label_item[0]
        if self.item_indent is not None and indent >= self.item_indent + 2 and not under_label:
            return  # a sub-item: detail of the item above
        self.item_indent = indent
        marker, label = _marker(text), _label(text)
        if label and not marker:
            self.label_item = (indent, label)
            return
        context = (self.label_item[1] if self.label_item else None) or self.bold or self._context()
        if marker or context or self._under_issues():
            self._candidate(text, marker or context)

    def _candidate(self, text: str, severity: str | None) -> None:
        if _reads_as_finding(text):
            self.found.append(_Candidate(text, self._headings(), severity))
        else:
            self.ignored += 1


def mine_prose(agent: str, text: str, *, partial: bool = False) -> ProseResult:
    """Findings mined from a report's prose (rules in the module docstring), with what was left out."""
    scan = _Scanner(text).run()
    kept: list[RawFinding] = []
    seen: set[str] = set()
    ignored = scan.ignored
    for candidate in scan.found:
        title = _title(candidate.text)
        if len(title) < 8:
            ignored += 1
            continue
        if title.lower() in seen:
            continue
        seen.add(title.lower())
        location = _LOCATION.search(candidate.text)
        kept.append(
            RawFinding(
                agent=agent,
                severity=candidate.severity or _severity(candidate.text),
                local_id="",
                section=(candidate.headings[-1] if candidate.headings else "").strip("*_ "),
                title=title,
                location=f"{location.group(1)}:{location.group(2)}" if location else candidate.location,
                from_prose=True,
                partial=partial,
            )
        )
    dropped = max(0, len(kept) - MAX_PROSE_FINDINGS)
    if dropped:
        ranked = sorted(range(len(kept)), key=lambda i: (SEVERITY_ORDER[kept[i].severity], i))
        chosen = sorted(ranked[:MAX_PROSE_FINDINGS])
        kept = [kept[i] for i in chosen]
    findings = tuple(
        RawFinding(
            agent=f.agent,
            severity=f.severity,
            local_id=f"{agent}-prose-{number}",
            section=f.section,
            title=f.title,
            location=f.location,
            from_prose=True,
            partial=partial,
        )
        for number, f in enumerate(kept, start=1)
    )
    return ProseResult(findings, ignored, dropped)


def prose_findings(agent: str, text: str, *, partial: bool = False) -> list[RawFinding]:
    """Findings mined from a report's prose, in order of appearance (see :func:`mine_prose`)."""
    return list(mine_prose(agent, text, partial=partial).findings)


_ISSUE_START = re.compile(r"^(?:\d{1,3}[.)]|[-*+])\s+(?P<rest>.*)$")
_ISSUE_ID = re.compile(r"\b([A-Z]{1,5}-\d{1,4}|P[0-3]-[A-Z0-9]+)\b")
_FIX = re.compile(
    r"^\s*(?:[-*+]\s+)?(?:\*\*)?(?:fix|recommendation|recommended fix|suggested fix|remediation)(?:\*\*)?"
    r"\s*:\s*(?:\*\*)?\s*(.+)",
    re.I,
)


def _issue_lines(text: str) -> Iterator[tuple[str | None, str | None]]:
    """The Issues Found prose as (issue id, line): ``(id, None)`` where a numbered issue starts, then its lines.

    Index lines (``- P1 | SF-001 | ...``) do not start an issue; a heading ends
    one (its lines come with id None).
    """
    current: str | None = None
    for _number, line in _lines_outside_fences(text):
        if _HEADING.match(line):
            current = None
            continue
        start = _ISSUE_START.match(line)
        if start and line[:1] not in (" ", "\t") and line.count(" | ") < 2:
            identifier = _ISSUE_ID.search(start.group("rest"))
            current = identifier.group(1) if identifier else None
            yield current, None
            continue
        yield current, line


def recommendations(text: str) -> dict[str, str]:
    """Issue id -> its first ``Fix:`` line, from a report's Issues Found prose (one pass)."""
    found: dict[str, str] = {}
    for current, line in _issue_lines(text):
        fix = _FIX.match(line) if current is not None and line is not None else None
        if fix and current is not None and current not in found:
            found[current] = " ".join(fix.group(1).split())
    return found


_EVIDENCE = re.compile(r"^\s*(?:[-*+]\s+)?(?:\*\*)?evidence(?:\*\*)?\s*:", re.I)
_PLACES_LINE = re.compile(r"^\s*(?:rule|also at|other places|other lines)\s*:", re.I)


def issue_notes(text: str) -> dict[str, tuple[str, str]]:
    """Issue id -> (explanation, fix) from a report's Issues Found prose (one pass).

    The explanation is the issue's prose lines that are neither evidence
    (the ``Evidence:`` line and what is indented under it), nor the fix, nor
    the lines that only name the rule or other places. Used for help texts
    (SARIF rule descriptions); never for the findings themselves. The first
    description of an id wins.
    """
    found: dict[str, tuple[list[str], list[str]]] = {}
    kept: tuple[list[str], list[str]] | None = None
    evidence_indent: int | None = None
    for current, line in _issue_lines(text):
        if line is None:  # an issue starts
            kept = found.setdefault(current, ([], [])) if current is not None and current not in found else None
            evidence_indent = None
            continue
        if kept is None or current is None or not line.strip():
            continue
        indent = len(line) - len(line.lstrip())
        if evidence_indent is not None and indent > evidence_indent:
            continue
        evidence_indent = None
        if _EVIDENCE.match(line):
            evidence_indent = indent
            continue
        fix = _FIX.match(line)
        if fix:
            kept[1].append(" ".join(fix.group(1).split()))
        elif not _PLACES_LINE.match(line):
            kept[0].append(" ".join(line.split()))
    return {key: (" ".join(why), " ".join(fix)) for key, (why, fix) in found.items()}
