"""The Findings Index: the machine-readable head of every agent report.

PROTOCOL.md section 6. An agent report begins with::

    ### Findings Index
    - P1 | SF-001 | "Authentication" | Session tokens stored in localStorage
    - P2 | SF-002 | "API Design" | No rate limit on public endpoints | src/api.py:88
    Verdict: needs-changes

This module renders that form exactly and parses it forgivingly, because real
agents vary: ``##``/``###``/``####`` headings, front matter or metadata lines
first, CRLF line ends, the index inside a code fence, extra ``|`` fields,
the older ``- [P0-XXX] Description (file:line)`` bullets, markdown tables,
word severities, and a missing ``Verdict:`` line. Every tolerated variation is
recorded as a *note*; variations that break the contract (a missing or wrong
verdict, word severities) are recorded as *violations*, which make the output
"malformed but usable" for synthesis.

The parser never raises: any text in, a :class:`ParsedIndex` out.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from fluxdrive.core.structured import load_yaml

Severity = Literal["P0", "P1", "P2", "P3"]
Verdict = Literal["safe", "needs-changes", "risky", "error"]

SEVERITIES: tuple[Severity, ...] = ("P0", "P1", "P2", "P3")
VERDICTS: tuple[Verdict, ...] = ("safe", "needs-changes", "risky", "error")
INDEX_HEADING = "### Findings Index"
ERROR_STUB_PREFIX = "Agent failed to produce findings after retry. Error: "
CANONICAL_ID = re.compile(r"^[A-Z]{2,3}-\d{3}$")

# A field may not contain a pipe standing alone between whitespace: that is
# the field separator, so such a field could not survive render -> parse.
_FIELD_BREAK = re.compile(r"(?:^|\s)\|(?:\s|$)")
_FIELD_SPLIT = re.compile(r"\s+\|\s+")
_HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
_INDEX_TITLE = re.compile(r"^(?:final\s+|updated\s+)?findings\s+index\b", re.IGNORECASE)
_BULLET = re.compile(r"^\s*(?:[-*+]|\d{1,3}[.)])\s+(.*)$")
_SEVERITY_TOKEN = re.compile(r"^(?:\*\*|__)?\[?(P[0-3])\]?(?:\*\*|__)?$")
_WORD_SEVERITY = {
    "CRITICAL": "P0",
    "BLOCKER": "P0",
    "HIGH": "P1",
    "MAJOR": "P1",
    "MEDIUM": "P2",
    "MODERATE": "P2",
    "MINOR": "P3",
    "LOW": "P3",
    "INFO": "P3",
}
_IMPROVEMENT_TOKEN = re.compile(r"^(?:\*\*)?IMP(?:\*\*)?$", re.IGNORECASE)
_IMPROVEMENT_ID = re.compile(r"^IMP-\d+$", re.IGNORECASE)
_LEGACY = re.compile(r"^\s*[-*+]\s+\[(P[0-3])-([^\]\s]+)\]\s+(.*?)(?:\s+\(([^()]*?:\d+[^()]*)\))?\s*$")
_VERDICT = re.compile(
    r"^\s*(?:[-*]\s+)?(?:\*\*|__)?verdict(?:\*\*|__)?\s*:\s*(?:\*\*|__)?\s*(.*?)\s*(?:\*\*|__)?\s*$",
    re.IGNORECASE,
)
_FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
_TABLE_ROW = re.compile(r"^\s*\|(.*)\|\s*$")
_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{2,}")
_VERDICT_WORDS: dict[str, Verdict] = {
    "safe": "safe",
    "needs-changes": "needs-changes",
    "needs_changes": "needs-changes",
    "needs changes": "needs-changes",
    "risky": "risky",
    "error": "error",
}


def clean_field(text: str) -> str:
    """Make free text safe to use as one index field.

    Newlines become spaces, separator-like pipes become slashes and the
    result is stripped. Runtimes use this on analyzer or model text before
    building an :class:`IndexEntry`.
    """
    text = " ".join(text.split())
    text = _FIELD_BREAK.sub(lambda m: m.group(0).replace("|", "/"), text)
    previous = None
    while previous != text:
        previous = text
        text = text.strip().strip("|")
    return text


def _valid_field(value: str) -> bool:
    """A field that renders and parses back unchanged."""
    return (
        value == value.strip()
        and not value.startswith("|")
        and not value.endswith("|")
        and "\n" not in value
        and "\r" not in value
        and not _FIELD_BREAK.search(value)
    )


@dataclass(frozen=True, slots=True)
class IndexEntry:
    """One line of a Findings Index.

    ``location`` is the optional 5th field (``file:line``); ``extra`` holds
    any fields after it. ``improvement`` marks ``IMP`` lines, which carry
    severity P3 and belong in synthesis's improvements list.
    """

    severity: Severity
    id: str
    section: str
    title: str
    location: str | None = None
    extra: tuple[str, ...] = ()
    improvement: bool = False

    def __post_init__(self) -> None:
        if self.severity not in SEVERITIES:
            raise ValueError(f"severity must be one of P0..P3, got {self.severity!r}")
        if not self.id or not _valid_field(self.id):
            raise ValueError(f"invalid id {self.id!r}")
        if not self.title or not _valid_field(self.title):
            raise ValueError(f"invalid title {self.title!r}")
        if not _valid_field(self.section):
            raise ValueError(f"invalid section {self.section!r}")
        if self.location is not None and (not self.location or not _valid_field(self.location)):
            raise ValueError(f"invalid location {self.location!r}")
        if self.improvement and self.severity != "P3":
            raise ValueError("improvement entries carry severity P3")
        if self.extra and self.location is None:
            raise ValueError("extra fields need a location field before them")
        for value in self.extra:
            if not value or not _valid_field(value):
                raise ValueError(f"invalid extra field {value!r}")

    def render(self) -> str:
        """The canonical index line for this entry."""
        severity = "IMP" if self.improvement else self.severity
        parts = [f"- {severity}", self.id, f'"{self.section}"', self.title]
        if self.location is not None:
            parts.append(self.location)
            parts.extend(self.extra)
        return " | ".join(parts)


@dataclass(frozen=True, slots=True)
class ParsedIndex:
    """What the parser recovered from an agent's output.

    ``verdict`` is always derived from the entries (or ``error`` when the
    agent declared an error); ``declared_verdict`` is what the file said.
    ``found`` is False when no index could be located at all.
    """

    entries: tuple[IndexEntry, ...] = ()
    found: bool = False
    declared_verdict: str | None = None
    verdict: Verdict = "safe"
    notes: tuple[str, ...] = ()
    violations: tuple[str, ...] = ()
    error_message: str | None = None
    unparsed: int = 0

    @property
    def is_error(self) -> bool:
        """True for an error stub (``Verdict: error``)."""
        return self.declared_verdict == "error"

    @property
    def findings(self) -> tuple[IndexEntry, ...]:
        """Entries that are findings, not improvement suggestions."""
        return tuple(e for e in self.entries if not e.improvement)


def derive_verdict(severities: Iterable[str]) -> Verdict:
    """P0 -> risky, else P1 -> needs-changes, else safe (section 5.6)."""
    seen = set(severities)
    if "P0" in seen:
        return "risky"
    if "P1" in seen:
        return "needs-changes"
    return "safe"


def render_index(entries: Sequence[IndexEntry]) -> str:
    """Render the canonical index block (heading, entries, derived verdict)."""
    lines = [INDEX_HEADING]
    lines.extend(entry.render() for entry in entries)
    lines.append(f"Verdict: {derive_verdict(e.severity for e in entries if not e.improvement)}")
    return "\n".join(lines) + "\n"


def render_error_stub(message: str) -> str:
    """The error stub of section 6: heading, ``Verdict: error``, the message."""
    text = " ".join(message.split()) or "unknown error"
    return f"{INDEX_HEADING}\nVerdict: error\n\n{ERROR_STUB_PREFIX}{text}\n"


# --------------------------------------------------------------------------
# parsing


@dataclass(slots=True)
class _Line:
    number: int
    text: str
    fence: int  # 0 outside any fence, else the ordinal of the fence block


@dataclass(slots=True)
class _Block:
    entries: list[IndexEntry] = field(default_factory=list)
    verdict_raw: str | None = None
    verdict_line: int | None = None
    template: bool = False
    fenced: bool = False
    table: bool = False
    legacy: bool = False
    word_severity: bool = False
    noncanonical_ids: int = 0
    heading_level: int = 3
    headless: bool = False
    unparsed: int = 0


def _split_lines(text: str) -> tuple[list[_Line], bool]:
    crlf = "\r" in text
    text = text.replace("\r\n", "\n").replace("\r", "\n").lstrip("\ufeff")
    lines: list[_Line] = []
    fence_marker: str | None = None
    fence_ordinal = 0
    for number, raw in enumerate(text.split("\n"), start=1):
        match = _FENCE.match(raw)
        if fence_marker is None and match:
            fence_ordinal += 1
            fence_marker = match.group(1)[0] * 3
            lines.append(_Line(number, raw, fence_ordinal))
            continue
        if fence_marker is not None and match and match.group(1).startswith(fence_marker):
            lines.append(_Line(number, raw, fence_ordinal))
            fence_marker = None
            continue
        lines.append(_Line(number, raw, fence_ordinal if fence_marker else 0))
    return lines, crlf


def _unquote(section: str) -> str:
    for left, right in (('"', '"'), ("\u201c", "\u201d"), ("'", "'"), ("`", "`")):
        if len(section) >= 2 and section.startswith(left) and section.endswith(right):
            return section[1:-1].strip()
    return section


def _severity(token: str) -> tuple[Severity | None, bool, bool]:
    """(severity, is_word_severity, is_improvement) for a first field."""
    token = token.strip()
    match = _SEVERITY_TOKEN.match(token)
    if match:
        return match.group(1), False, False  # type: ignore[return-value]
    if _IMPROVEMENT_TOKEN.match(token):
        return "P3", False, True
    word = token.strip("*_[]").upper()
    if word in _WORD_SEVERITY:
        return _WORD_SEVERITY[word], True, False  # type: ignore[return-value]
    return None, False, False


def _entry(fields: list[str], block: _Block) -> IndexEntry | None:
    fields = [clean_field(f) for f in fields]
    if len(fields) >= 3 and _IMPROVEMENT_ID.match(fields[0]):
        fields = ["IMP", *fields]
    if len(fields) < 4:
        return None
    severity, word, improvement = _severity(fields[0])
    if severity is None:
        return None
    entry_id, section, title = fields[1], _unquote(fields[2]), fields[3]
    rest = [f for f in fields[4:] if f]
    if not entry_id or not title:
        return None
    try:
        entry = IndexEntry(
            severity=severity,
            id=entry_id,
            section=clean_field(section),
            title=title,
            location=rest[0] if rest else None,
            extra=tuple(rest[1:]),
            improvement=improvement,
        )
    except ValueError:
        return None
    block.word_severity |= word
    if not improvement and not CANONICAL_ID.match(entry_id):
        block.noncanonical_ids += 1
    return entry


def _legacy_entry(text: str, block: _Block) -> IndexEntry | None:
    match = _LEGACY.match(text)
    if not match:
        return None
    severity, suffix, title, location = match.groups()
    title = clean_field(title)
    location = clean_field(location) if location else None
    if not title:
        return None
    section = location.rsplit(":", 1)[0] if location else ""
    try:
        entry = IndexEntry(
            severity=severity,  # type: ignore[arg-type]
            id=clean_field(f"{severity}-{suffix}"),
            section=clean_field(section),
            title=title,
            location=location or None,
        )
    except ValueError:
        return None
    block.legacy = True
    return entry


_LOOKS_LIKE_ENTRY = re.compile(
    r"^\s*(?:[-*+]|\d{1,3}[.)])\s+\W*(?:P[0-3]|IMP|CRITICAL|HIGH|MEDIUM|LOW|INFO)\b(?!-)", re.IGNORECASE
)
_TEMPLATE_LINE = re.compile(r"^\s*(?:[-*+]\s+)?\W*(?:SEVERITY\W*\|\W*ID\b|<SEVERITY>)")


def _is_template(text: str) -> bool:
    """A line copied from the contract's template, not a real entry."""
    return bool(_TEMPLATE_LINE.match(text)) and not text.lstrip().startswith("|")


def _table_cells(text: str) -> list[str] | None:
    match = _TABLE_ROW.match(text)
    if not match:
        return None
    return [cell.strip() for cell in match.group(1).split("|")]


def _bullet_entry(text: str, block: _Block) -> IndexEntry | None:
    bullet = _BULLET.match(text)
    if not bullet:
        return None
    return _entry(_FIELD_SPLIT.split(bullet.group(1)), block) or _legacy_entry(text, block)


def _read_line(line: _Line, block: _Block) -> bool:
    """Feed one line into ``block``; False when the block has ended."""
    text = line.text
    if _is_template(text):
        block.template = True
        return True
    verdict = _VERDICT.match(text)
    if verdict:
        raw = verdict.group(1).strip().strip("*_`").strip()
        if "|" in raw:
            block.template = True
        else:
            block.verdict_raw = raw
            block.verdict_line = line.number
        return False
    entry = _bullet_entry(text, block)
    if entry is None:
        cells = _table_cells(text)
        if cells is not None and not _TABLE_RULE.match(text):
            entry = _entry(cells, block)
            block.table |= entry is not None
    if entry is not None:
        block.entries.append(entry)
    elif _LOOKS_LIKE_ENTRY.match(text):
        block.unparsed += 1
    return True


def _scan_block(lines: list[_Line], start: int, fence: int, block: _Block) -> _Block:
    """Read from just after an index heading to its end.

    The block ends at the verdict line, at the next heading, or where the
    fence it lives in (or outside of) changes.
    """
    opened: int | None = None
    for line in lines[start:]:
        if line.fence != fence and opened is None and not fence and not block.entries and block.verdict_raw is None:
            # "### Findings Index" followed by the index lines in a code fence
            opened = fence = line.fence
            block.fenced = True
            continue
        if line.fence != fence or _HEADING.match(line.text):
            break
        if not _read_line(line, block):
            break
    return block


def _blocks(lines: list[_Line]) -> list[_Block]:
    found: list[_Block] = []
    for position, line in enumerate(lines):
        heading = _HEADING.match(line.text)
        if not heading or not _INDEX_TITLE.match(heading.group(2).strip("*_ ")):
            continue
        block = _Block(fenced=line.fence != 0, heading_level=len(heading.group(1)))
        found.append(_scan_block(lines, position + 1, line.fence, block))
    return found


def _headless_block(lines: list[_Line]) -> _Block | None:
    """Index lines with no heading, within the first 40 unfenced lines."""
    block = _Block(headless=True)
    for line in [line for line in lines if not line.fence][:40]:
        if _is_template(line.text):
            return None
        if _VERDICT.match(line.text):
            if block.entries:
                _read_line(line, block)
                break
            continue
        entry = _bullet_entry(line.text, block)
        if entry is not None:
            block.entries.append(entry)
    return block if block.entries else None


def _choose(blocks: list[_Block]) -> _Block | None:
    usable = [b for b in blocks if (b.entries or b.verdict_raw is not None) and not (b.template and not b.entries)]
    for group in ([b for b in usable if not b.fenced], [b for b in usable if b.fenced]):
        if not group:
            continue
        top = group[0]
        if top.entries:
            return top
        with_entries = [b for b in group if b.entries]
        return with_entries[-1] if with_entries else top
    return None


def _front_matter_block(lines: list[_Line]) -> _Block | None:
    """Variation seen in real outputs: YAML front matter with an issues list."""
    if not lines or lines[0].text.strip() != "---":
        return None
    end = next((i for i in range(1, len(lines)) if lines[i].text.strip() == "---"), None)
    if end is None:
        return None
    try:
        data = load_yaml("\n".join(line.text for line in lines[1:end]))
    except Exception:  # any YAML error means "not an index"; never raise
        return None
    if not isinstance(data, dict) or not isinstance(data.get("issues"), list):
        return None
    block = _Block(headless=True)
    for item in data["issues"]:
        if not isinstance(item, dict):
            continue
        fields = [str(item.get(k, "")) for k in ("severity", "id", "section", "title")]
        if item.get("location"):
            fields.append(str(item["location"]))
        entry = _entry(fields, block)
        if entry is not None:
            block.entries.append(entry)
    verdict = data.get("verdict")
    if isinstance(verdict, str):
        block.verdict_raw = verdict
        block.verdict_line = lines[end].number
    return block if (block.entries or block.verdict_raw) else None


def _error_message(lines: list[_Line], after: int) -> str | None:
    for line in lines:
        if line.number <= after or line.fence:
            continue
        text = line.text.strip()
        if not text or text.startswith("<!--"):
            continue
        if text.startswith(ERROR_STUB_PREFIX):
            return text[len(ERROR_STUB_PREFIX) :].strip() or text
        return text
    return None


def _normalize_verdict(raw: str) -> str:
    word = raw.strip().strip("*_`.").strip().lower()
    first = re.split(r"[\s(,;]", word, maxsplit=1)[0] if word else ""
    for candidate in (word, first):
        if candidate in _VERDICT_WORDS:
            return _VERDICT_WORDS[candidate]
    return raw.strip()


def parse_index(text: str) -> ParsedIndex:
    """Recover the Findings Index from an agent's output. Never raises."""
    try:
        return _parse(text)
    except Exception as exc:  # defensive: the contract is "never raises"
        return ParsedIndex(found=False, violations=(f"parser failure: {type(exc).__name__}",))


def _block_notes(block: _Block) -> list[str]:
    """The tolerated variations a chosen block shows."""
    notes = []
    if block.heading_level != 3 and not block.headless:
        notes.append(f"heading level {block.heading_level}")
    if block.fenced:
        notes.append("index inside a code fence")
    if block.table:
        notes.append("index written as a table")
    if block.legacy:
        notes.append("older [P0-XXX] bullet shape")
    if block.noncanonical_ids:
        notes.append(f"{block.noncanonical_ids} id(s) not of the form AB-001")
    if any(e.extra for e in block.entries):
        notes.append("extra fields after the location")
    return notes


def _verdict_of(block: _Block, lines: list[_Line], violations: list[str]) -> tuple[str | None, Verdict, str | None]:
    """(declared verdict, effective verdict, error message); records violations."""
    derived = derive_verdict(e.severity for e in block.entries if not e.improvement)
    declared = _normalize_verdict(block.verdict_raw) if block.verdict_raw is not None else None
    if declared is None:
        violations.append("no Verdict line (derived from the findings)")
    elif declared == "error":
        return declared, "error", _error_message(lines, block.verdict_line or 0)
    elif declared not in VERDICTS:
        violations.append(f"unrecognized verdict {declared!r} (derived {derived})")
    elif declared != derived:
        violations.append(f"declared verdict {declared} disagrees with findings ({derived})")
    return declared, derived, None


def _parse(text: str) -> ParsedIndex:
    lines, crlf = _split_lines(text)
    notes = ["CRLF line endings"] if crlf else []
    blocks = _blocks(lines)
    block = _choose(blocks)
    if block is None:
        block = _headless_block(lines) or _front_matter_block(lines)
        if block is not None:
            notes.append("index without a Findings Index heading")
    if block is None:
        empty = ("Findings Index heading with no entries and no Verdict line (possibly truncated)",) if blocks else ()
        return ParsedIndex(found=False, notes=tuple(notes), violations=empty)
    notes += _block_notes(block)
    violations = ["word severities mapped to P0..P3"] if block.word_severity else []
    if block.unparsed:
        violations.append(f"{block.unparsed} index line(s) could not be parsed")
    declared, verdict, error_message = _verdict_of(block, lines, violations)
    return ParsedIndex(
        entries=tuple(block.entries),
        found=True,
        declared_verdict=declared,
        verdict=verdict,
        notes=tuple(notes),
        violations=tuple(violations),
        error_message=error_message,
        unparsed=block.unparsed,
    )
