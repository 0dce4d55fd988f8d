"""Where a ground-truth location points, resolved against the fixture's own input.

A location is written in one of four forms:

- ``path:line`` or ``path:a-b``: lines of a file, relative to the input;
- ``section: Heading``: a section of the document, by its heading;
- ``name:anchor``: interflux's form for documents (``api-spec:error-responses``,
  ``api-spec:GET /tasks``, ``api-spec:DELETE /tasks/:id``): ``name`` is the
  document (``api-spec`` -> ``api-spec.md``, or the one file a document
  fixture holds) and ``anchor`` a heading, as a slug or in its own words.

Why resolve against the input rather than compare strings: the reference's
fixtures are written by people who name the code a document shows
(``app.py:16`` for the listing in ``document.md``, its lines counted in
``document.md``) and sections by a slug of their heading, while a reviewer
reports ``document.md:16`` and the heading's text. So, once per fixture:

- in a document fixture every path names its one document;
- a heading (``section:`` or an anchor) becomes that section's lines (the
  heading to the line before the next heading of its level or above) plus
  its words, so a finding anywhere in the section, or reporting it as its
  section, is in the place. A slug matches the heading with the same words
  (``error-responses`` = "Error responses"), else the shortest heading
  containing them (``GET /tasks`` = "GET /tasks (list)");
- an anchor that names no heading (``base-url`` in a spec without one, or
  ``error-responses`` of a spec whose error bodies are spread over every
  endpoint) is a claim about the whole document: anywhere in it is a weaker
  place (:data:`WHOLE`), so the kind and the description must carry the match.

Documents are read confined to the fixture (:mod:`fluxdrive.core.confine`); one
that cannot be read has no headings, and its anchors match by section name only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from fluxdrive.core.confine import read_confined
from fluxdrive.errors import FluxdriveError
from fluxdrive.triage.profile import document_sections

LINES = re.compile(r"^(?P<path>[^:\s][^:]*):(?P<start>\d+)(?:-(?P<end>\d+))?$")
_SECTION = re.compile(r"^section:\s*(?P<heading>\S.*)$", re.I)
_ANCHOR = re.compile(r"^(?P<name>[^:\s][^:]*):(?P<anchor>\S.*)$")
_NOT_AN_ANCHOR = re.compile(r"^[\d-]+$")  # ``app.py:12-``: a broken line range, not a heading
_WORD = re.compile(r"[a-z0-9]+")
DOCUMENT_SUFFIXES = ("", ".md", ".markdown")
MAX_DOCUMENT_BYTES = 4 * 1024 * 1024
WHOLE = 0.5  # the place score of "somewhere in this document"


def words(text: str) -> str:
    """``text`` as lower-case words: a slug and its heading compare equal."""
    return " ".join(_WORD.findall(text.lower()))


def check(location: str) -> str:
    """``location`` when it is one of the four forms; ValueError (the one line a fixture author sees) otherwise."""
    if LINES.match(location) or _SECTION.match(location):
        return location
    anchor = _ANCHOR.match(location)
    if anchor and not _NOT_AN_ANCHOR.match(anchor["anchor"]) and words(anchor["anchor"]):
        return location
    raise ValueError("expected path:line, path:a-b, 'section: Heading' or document:heading (api-spec:error-responses)")


@dataclass(frozen=True, slots=True)
class Place:
    """A resolved location: lines of a file, a heading's words, or the whole file (or several of these)."""

    path: str = ""  # the file; "" for a section whose document is unknown
    start: int = 0  # 0: no line range
    end: int = 0
    heading: str = ""  # the section's heading as words; "" for none
    whole: bool = False  # anywhere in ``path`` counts (as a weaker place)


@dataclass(frozen=True, slots=True)
class _Heading:
    words: str
    start: int
    end: int


def headings(text: str) -> list[_Heading]:
    """Every heading of a markdown text (fenced code aside) with the lines its section spans."""
    sections, _units = document_sections(text)
    last = max(len(text.splitlines()), 1)
    found = []
    for index, section in enumerate(sections):
        after = (s.line for s in sections[index + 1 :] if s.level <= section.level)
        found.append(_Heading(words(section.title), section.line, next(after, last + 1) - 1))
    return found


def _find(wanted: str, among: list[_Heading]) -> _Heading | None:
    """The heading with exactly these words, else the shortest one containing them as whole words."""
    exact = next((h for h in among if h.words == wanted), None)
    if exact is not None or not wanted:
        return exact
    containing = [h for h in among if f" {wanted} " in f" {h.words} "]
    return min(containing, key=lambda h: (len(h.words), h.start), default=None)


class Locator:
    """Resolves the locations of one fixture; built once per fixture from its input (:meth:`of`)."""

    def __init__(self, root: Path | None = None, document: str | None = None) -> None:
        """``root``: the reviewed input (a project or base/ directory, or the document's directory);
        ``document``: the one file a document fixture holds, which every path then names."""
        self.root, self.document = root, document
        self._headings: dict[str, list[_Heading] | None] = {}

    @classmethod
    def of(cls, root: Path, kind: str) -> Locator:
        """The locator of a fixture at ``root`` whose input is ``kind`` (document, project or diff)."""
        if kind == "document":
            return cls(root, "document.md")
        return cls(root / ("project" if kind == "project" else "base"))

    def _read(self, name: str) -> list[_Heading] | None:
        """The headings of the input's file ``name`` (None when it is not there or cannot be read)."""
        if name not in self._headings:
            found: list[_Heading] | None = None
            if self.root is not None and (self.root / name).is_file():
                try:
                    data = read_confined(self.root / name, self.root, "fixture document", limit=MAX_DOCUMENT_BYTES)
                    found = headings(data.decode("utf-8", errors="replace"))
                except (OSError, FluxdriveError):
                    found = None
            self._headings[name] = found
        return self._headings[name]

    def _document(self, name: str) -> str | None:
        """The input's file a document name means: the fixture's one document, or ``name`` (+ .md)."""
        if self.document is not None:
            return self.document
        return next((name + suffix for suffix in DOCUMENT_SUFFIXES if self._read(name + suffix) is not None), None)

    def _section(self, path: str, heading: str) -> Place:
        wanted = words(heading)
        among = self._read(path) if path else None
        found = _find(wanted, among or [])
        if found is not None:
            return Place(path, found.start, found.end, found.words)
        return Place(path, heading=wanted, whole=bool(path) and among is not None)

    def resolve(self, location: str) -> Place:
        """The place ``location`` means in this fixture's input (never raises: a fixture's locations were
        checked when it loaded; an unknown name or heading is a place only a section name can match)."""
        lines = LINES.match(location)
        if lines:
            start = int(lines["start"])
            return Place(self.document or lines["path"], start, int(lines["end"] or start))
        section = _SECTION.match(location)
        if section:
            return self._section(self.document or "", section["heading"])
        anchor = _ANCHOR.match(location)
        if anchor is None:
            return Place()
        name = self._document(anchor["name"])
        return self._section(name, anchor["anchor"]) if name else Place(anchor["name"], heading=words(anchor["anchor"]))
