"""Reading a markdown document as prose: its kind, sections, blocks and sentences.

The cognitive document checks (decisions, people, resilience, perception,
systems) ask the same questions of a document: is it a plan, a decision
record or meeting notes (or a README that none of them should judge), which
section does a line belong to, which lines form one paragraph or list item,
what is the text once code spans and link targets are gone. This module
answers them once, the same way for every check.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from fluxdrive.runtimes.static.checks.engine.document import DocModule, Heading

# Title words that make a document a plan (documents.py's KIND_WORDS["plan"], widened to
# proposals, reorganisations and cutovers), a PRD, or notes of a meeting.
PLAN_WORDS = frozenset(
    {
        "plan",
        "plans",
        "design",
        "rfc",
        "proposal",
        "proposed",
        "propose",
        "implementation",
        "migration",
        "migrating",
        "rollout",
        "cutover",
        "switchover",
        "reorg",
        "reorganisation",
        "reorganization",
        "restructure",
        "restructuring",
        "strategy",
        "roadmap",
        "kep",
        "okrs",
        "decommission",
        "decommissioning",
        "deprecation",
        "memo",
        "memorandum",
        "brief",
        "one-pager",
        "pitch",
        "initiative",
        "transition",
        "moving",
    }
)
PRD_WORDS = frozenset({"prd", "requirements", "spec", "specification"})
NOTES_WORDS = frozenset(
    {
        "notes",
        "minutes",
        "meeting",
        "offsite",
        "retro",
        "retrospective",
        "postmortem",
        "post-mortem",
        "incident",
        "kickoff",
        "workshop",
        "summit",
        "sync",
    }
)
_ADR_PATH = re.compile(r"(^|/)(adrs?|decisions|decision-records|rfcs?)(/|$)|(^|/)(adr|rfc)[-_]?\d", re.I)
_NOT_PROPOSAL_NAMES = re.compile(r"(^|/)(readme|changelog|changes|history|contributing|license|licence)[^/]*$", re.I)

# "design reviewer", "design system", "strategy guide": the plan word names something else.
_NOT_A_PLAN = re.compile(
    r"\b(design|strategy|plan)\s+(reviewers?|reviews?|systems?|guides?|guidelines|principles|patterns|tokens|language|"
    r"team|patterns?)\b",
    re.I,
)
# Sections that describe the world as it is (or was), not what the document proposes.
BACKGROUND = re.compile(
    r"^(context|background|problem|problem statement|history|current (?:state|situation|architecture|setup)|"
    r"motivation|status|prior art|context and problem statement|as-is|today|references?|appendix)\b"
)
NON_GOALS = re.compile(r"\b(non-?goals?|out of scope|not in scope|out-of-scope|future work|later)\b")
_CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+\1")
_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_URL = re.compile(r"<?https?://\S+>?")
_HTML = re.compile(r"<!--.*?-->|</?[a-zA-Z][^>]*>")
ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+(?:\[[ xX]\]\s+)?(.*\S)")
NUMBERED = re.compile(r"^\s*\d+[.)]\s+")
INTENT = re.compile(
    r"\b(will|shall|should|going to|plan(?:ning)? to|decided|propose[sd]?|proposal|we'll|let's|must|need to|"
    r"intend to|aim to|recommend|agreed to|are to|is to|next|then|from now on|starting)\b",
    re.I,
)
# A sentence about what will happen, not what is: a date or period ahead of it.
FUTURE = re.compile(
    r"\b(from (?:\d{4}-\d{2}(?:-\d{2})?|(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)\w*|q[1-4]|next)|"
    r"starting (?:on |in |from )?\w+|after the (?:split|move|reorg|change|cutover|migration|launch)|"
    r"next (?:week|month|quarter|year|sprint)|(?:in|by|until) (?:q[1-4]|h[12]|(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|"
    r"nov|dec)[a-z]*\b)|effective (?:date|from|on))",
    re.I,
)
_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]]*\s+(?=[A-Z0-9\"'(*_])")


def clean(line: str) -> str:
    """The readable text of a markdown line: code spans, URLs, link targets and HTML dropped."""
    text = _CODE_SPAN.sub(" ", line)
    text = _LINK.sub(r"\1", text)
    text = _URL.sub(" ", text)
    return _HTML.sub(" ", text)


def words(text: str) -> set[str]:
    """Lower-case words of a text (hyphenated words kept whole)."""
    return set(re.findall(r"[a-z][a-z0-9]*(?:-[a-z0-9]+)*", text.lower()))


def front_matter(doc: DocModule) -> dict[str, str]:
    """``key: value`` pairs of a leading YAML front matter block (empty when there is none)."""
    if not doc.lines or doc.lines[0].strip() != "---":
        return {}
    found: dict[str, str] = {}
    for line in doc.lines[1:400]:
        if line.strip() in ("---", "..."):
            return found
        pair = re.match(r"^([A-Za-z_][\w-]*)\s*:\s*(.*)$", line)
        if pair:
            found[pair.group(1).lower()] = pair.group(2).strip().strip("\"'")
    return {}


def front_matter_end(doc: DocModule) -> int:
    """The number of leading lines taken by front matter (0 when there is none)."""
    if not front_matter(doc):
        return 0
    return next(i for i, line in enumerate(doc.lines[1:], start=2) if line.strip() in ("---", "..."))


def title(doc: DocModule) -> str:
    """The document's title: front matter ``title``, else the first level-1 heading, else the file name."""
    meta = front_matter(doc).get("title")
    if meta:
        return meta
    titles = [h for h in doc.headings if h.level == 1]
    return titles[0].text if titles else doc.path.rsplit("/", 1)[-1]


def title_line(doc: DocModule) -> int:
    """The line a whole-document finding points at: the title heading, else line 1."""
    titles = [h for h in doc.headings if h.level == 1]
    return titles[0].line if titles else (doc.headings[0].line if doc.headings else 1)


def is_decision_record(doc: DocModule) -> bool:
    """An ADR or RFC: by its path, or by Context/Status and Decision sections."""
    if _ADR_PATH.search(doc.path) or re.match(r"\s*(adr|rfc)\b", title(doc), re.I):
        return True
    if words(title(doc)) & {"decision", "decisions", "adr"}:
        return True
    names = {_heading_key(h.text) for h in doc.headings}
    decided = any(n.startswith("decision") for n in names)
    return decided and bool(names & {"context", "status", "consequences", "considered options"})


# Sections of a document written to gather comments (the Rust RFC template, PEPs, KEPs): a "Motivation" and
# the alternatives it weighed. Such a document lists its unresolved questions for its reviewers to answer.
_DELIBERATION = frozenset(
    {
        "drawbacks",
        "alternatives",
        "rationale and alternatives",
        "alternatives considered",
        "considered alternatives",
        "prior art",
        "rejected ideas",
        "rejected alternatives",
        "future possibilities",
    }
)
_SELF_PROPOSAL = re.compile(r"\bthis (?:rfc|pep|kep|proposal)\b", re.I)
_COMMENT_WORDS = frozenset({"rfc", "rfcs", "pep", "kep", "proposal", "proposed", "draft"})


def asks_for_comments(doc: DocModule) -> bool:
    """A request for comments (an RFC, PEP, KEP, proposal or draft): its open questions are addressed to its reviewers.

    Known by its title or file name, its front matter ``status`` (draft, proposed), its words ("this RFC",
    "this proposal"), or the shape of the RFC template: a Motivation section and one weighing drawbacks or
    alternatives.
    """
    name = doc.path.rsplit("/", 1)[-1].rsplit(".", 1)[0].replace("_", " ").replace("-", " ")
    if (words(title(doc)) | words(name)) & _COMMENT_WORDS or "request for comments" in title(doc).lower():
        return True
    if words(front_matter(doc).get("status", "")) & {"draft", "proposed", "proposal"}:
        return True
    if _SELF_PROPOSAL.search(doc.text):  # "The goal of this RFC", "this proposal adds"
        return True
    names = {_heading_key(h.text) for h in doc.headings}
    return "motivation" in names and bool(names & _DELIBERATION)


def _heading_key(text: str) -> str:
    return re.sub(r"^[\d.\s]+", "", text.strip().strip("*_").lower()).rstrip(":")


def kind(doc: DocModule) -> str | None:
    """``adr``, ``plan``, ``prd``, ``notes`` or None (a README, a guide, a changelog: judged by none of these)."""
    if _NOT_PROPOSAL_NAMES.search(doc.path) and not re.search(r"\b(plan|proposal|rfc)\b", title(doc), re.I):
        return None
    if is_decision_record(doc):
        return "adr"
    text = title(doc)
    if text == doc.path.rsplit("/", 1)[-1]:  # no title: the file name, as documents.py's _kind reads it
        text = text.rsplit(".", 1)[0].replace("_", " ").replace("-", " ")
    text = _NOT_A_PLAN.sub(" ", text)
    found = words(text)
    if found & PLAN_WORDS:
        return "plan"
    if found & PRD_WORDS or "product requirements" in text.lower():
        return "prd"
    if found & NOTES_WORDS or "post-mortem" in text.lower():
        return "notes"
    return None


@dataclass(frozen=True, slots=True)
class Section:
    """A heading and the lines under it, up to the next heading of the same or a higher level."""

    heading: Heading
    end: int  # first line after the section

    @property
    def key(self) -> str:
        """The heading text, lower case, without numbering or trailing colon."""
        return _heading_key(self.heading.text)

    def contains(self, line: int) -> bool:
        """True when ``line`` lies under this heading (the heading line excluded)."""
        return self.heading.line < line < self.end


def sections(doc: DocModule) -> list[Section]:
    """Every section in document order (nested ones included)."""
    found: list[Section] = []
    for index, heading in enumerate(doc.headings):
        later = (h.line for h in doc.headings[index + 1 :] if h.level <= heading.level)
        found.append(Section(heading, next(later, len(doc.lines) + 1)))
    return found


def sections_named(doc: DocModule, pattern: re.Pattern[str]) -> list[Section]:
    """Sections whose heading matches ``pattern``."""
    return [s for s in sections(doc) if pattern.search(s.key)]


def section_text(doc: DocModule, section: Section) -> str:
    """The cleaned prose under a section."""
    return "\n".join(text for _line, text in prose_lines(doc, section.heading.line + 1, section.end))


def prose_lines(doc: DocModule, start: int = 1, end: int | None = None) -> Iterator[tuple[int, str]]:
    """(line, cleaned text) of prose lines: no code fences, headings, front matter or quoted lines."""
    skip = front_matter_end(doc)
    headings = {h.line for h in doc.headings}
    stop = len(doc.lines) + 1 if end is None else end
    for number in range(max(start, skip + 1), stop):
        if doc.in_code[number - 1] or number in headings:
            continue
        line = doc.lines[number - 1]
        if line.startswith("    ") and not ITEM.match(line) and not line.strip().startswith("|"):
            continue  # an indented code block (or an item's continuation, which loses little)
        if line.lstrip().startswith(">"):
            continue
        yield number, clean(line)


@dataclass(frozen=True, slots=True)
class Block:
    """A paragraph or a list item: its first line, its last line and its cleaned text on one line."""

    line: int
    end: int
    text: str
    item: bool
    numbered: bool

    def sentences(self) -> list[str]:
        """The block's sentences (a naive split on end punctuation)."""
        return split_sentences(self.text)


def raw_text(doc: DocModule, block: Block) -> str:
    """A block's text with code spans kept as words (``accounts-svc`` is a service name, not code to skip)."""
    lines = (doc.lines[n - 1] for n in range(block.line, block.end + 1))
    return re.sub(r"\s+", " ", _URL.sub(" ", " ".join(lines).replace("`", ""))).strip()


def split_sentences(text: str) -> list[str]:
    """Sentences of a text (a naive split on end punctuation followed by a capital)."""
    return [s.strip() for s in _SENTENCE_END.split(text) if s.strip()]


def blocks(doc: DocModule, start: int = 1, end: int | None = None) -> list[Block]:
    """Paragraphs and list items between two lines (continuation lines joined to their item)."""
    found: list[Block] = []
    current: list[tuple[int, str]] = []
    item = numbered = False

    def flush() -> None:
        if current:
            text = " ".join(t.strip() for _n, t in current)
            found.append(Block(current[0][0], current[-1][0], re.sub(r"\s+", " ", text).strip(), item, numbered))
            current.clear()

    previous = 0
    for number, text in prose_lines(doc, start, end):
        raw = doc.lines[number - 1]
        starts_item = bool(ITEM.match(raw))
        if not text.strip() or number != previous + 1 or starts_item or raw.lstrip().startswith("|"):
            flush()
            item, numbered = starts_item, bool(NUMBERED.match(raw))
        if text.strip():
            body = ITEM.match(text)
            current.append((number, body.group(1) if starts_item and body else text))
            if raw.lstrip().startswith("|"):
                flush()
        previous = number
    flush()
    return found


def in_background(doc: DocModule, line: int) -> bool:
    """True when a line sits under a Context / Background / Status heading (what is, not what is proposed)."""
    section = section_for(doc, line)
    return section is not None and bool(BACKGROUND.search(section.key))


def section_for(doc: DocModule, line: int) -> Section | None:
    """The innermost section containing a line."""
    inner = None
    for section in sections(doc):
        if section.contains(line):
            inner = section
    return inner


def quote(text: str, limit: int = 70) -> str:
    """A short quotation of matched text for a finding title."""
    text = re.sub(r"\s+", " ", text).strip().strip("*_")
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def near(found: list[Block], index: int, radius: int = 1) -> str:
    """The text of a block and its neighbours (the paragraph before and after)."""
    return " ".join(b.text for b in found[max(0, index - radius) : index + radius + 1])


def handled(
    doc: DocModule, line: int, pattern: re.Pattern[str], dedicated: re.Pattern[str] | None = None, *, after: int = 0
) -> bool:
    """Whether a concern raised at ``line`` is answered where it is raised.

    Real documents handle one thing and forget the next: a plan that rolls
    back its first phase may have no way back from its cutover, a proposal
    that staffs one rotation may leave the other to five people. So the
    answer must be in the same paragraph or list item (or the ``after``
    blocks that follow it in the same section), or in a section dedicated to
    it (a heading matching ``dedicated``: "Rollback", "Failure modes",
    "Transition"), not merely somewhere in the document.
    """
    section = section_for(doc, line)
    start, end = (section.heading.line + 1, section.end) if section is not None else (1, None)
    found = blocks(doc, start, end)
    index = next((i for i, b in enumerate(found) if b.line <= line <= b.end), None)
    if index is not None and any(pattern.search(b.text) for b in found[index : index + 1 + after]):
        return True
    if dedicated is None:
        return False
    return any(
        pattern.search(f"{s.heading.text} {section_text(doc, s)}") for s in sections(doc) if dedicated.search(s.key)
    )
