"""Grounding: does a finding point at something that is really in the reviewed input?

Why: a model reviewer can cite ``shop/db.py:93`` in a 40-line file, a file that
does not exist, or "quote" code it invented. Such a finding must not block a
merge on the model's word alone. This check is deterministic (no model): it
reads the cited files and answers grounded, or ungrounded with one reason a
person can verify ("shop/db.py has 40 lines; the finding cites line 93").

What is checked, for every place of a finding:

- ``path``, ``path:12``, ``path:3-9`` (``path:12:5`` too): the file must be in
  the reviewed project and the cited lines must exist in it;
- ``section: Heading``: a markdown heading of that text must exist in one of
  the reviewed documents (case and spacing ignored).

Then every quoted code fragment of the title (a backtick span that looks like
code: it has ``(``, ``.``, ``=``, ``[`` and the like, not a single word) must
occur in one of the finding's cited files, ignoring whitespace and the kind of
string quote (``'`` or ``"``). The whole file is searched, not only the cited
lines: models cite a function's first line and quote its body, and a wrong
line is already caught by the line check. A name reference ``find_user()`` is
checked as ``find_user(``; a quote cut with ``…`` or ``...`` must have every
piece in the file. A path-like span (``shop/db.py``) is not code.

A finding with no file or section place is not judged (None), and neither is a
place whose file cannot be read for another reason (too large, not text):
grounding demotes only on evidence. The file reader is passed in, so this
module stays pure; :func:`project_reader` is the one edge that touches disk.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from fluxdrive.core.confine import OutsideRootError, read_confined
from fluxdrive.core.masking import strip_controls
from fluxdrive.errors import InputError
from fluxdrive.synthesis.model import Grounding

# ``path:12`` / ``path:L3-L9`` / ``path:12:5``: the one parser of a place (the diff filter uses it too).
_PLACE = re.compile(r"^(?P<path>.+?):L?(?P<start>\d+)(?:-L?(?P<end>\d+)|:\d+)?$")
_SECTION = re.compile(r"^section:\s*(?P<heading>.+)$", re.IGNORECASE)
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(?P<text>.+?)\s*#*\s*$")
_BACKTICKS = re.compile(r"`([^`\n]+)`")
_CODE_MARKS = re.compile(r"[()\[\]{}=.;<>+*/%!&|:]")
_PATH_LIKE = re.compile(r"^[\w./-]*/[\w./-]*$|^[\w-]+\.[A-Za-z]{1,5}$")
_NAME_CALL = re.compile(r"^[\w.]+\(\)$")
_ELLIPSIS = re.compile(r"…|\.\.\.")
_SPACE = re.compile(r"\s+")


class UnjudgedError(Exception):
    """The reader cannot tell what a file holds (too large, not text): the place is not judged."""


# path -> the file's text, or None when the reviewed input has no such file; raises UnjudgedError.
Reader = Callable[[str], str | None]


def place(location: str) -> tuple[str, int, int]:
    """``path:12`` / ``path:3-9`` / ``path`` -> (path, first line, last line); (path, 0, 0) without lines."""
    match = _PLACE.match(location.strip())
    if not match:
        return location.strip(), 0, 0
    start = int(match["start"])
    end = int(match["end"]) if match["end"] else start
    return match["path"], min(start, end), max(start, end)


@functools.lru_cache(maxsize=64)  # a cited file is squashed once, however many findings quote it
def _squash(text: str) -> str:
    """Whitespace removed and both string quotes made one, so layout and quote style do not matter."""
    return _SPACE.sub("", text).replace('"', "'")


def quotes(text: str) -> list[str]:
    """The code fragments quoted in ``text``: backtick spans that look like code, in order."""
    found = []
    for raw in _BACKTICKS.findall(text):
        span = raw.strip()
        if len(span) < 3 or not _CODE_MARKS.search(span) or _PATH_LIKE.match(span):
            continue
        if not any(c.isalpha() for c in span):
            continue
        found.append(span)
    return found


def _pieces(quote: str) -> list[str]:
    """What must occur for ``quote``: ``name(`` for a name reference, else the pieces around ellipses."""
    if _NAME_CALL.match(quote):
        return [_squash(quote[:-1])]
    return [s for s in (_squash(p) for p in _ELLIPSIS.split(quote)) if s]


def headings(text: str) -> set[str]:
    """The markdown headings of ``text``, lower-cased with spacing collapsed (fenced code left out)."""
    found: set[str] = set()
    fence: str | None = None
    for line in text.splitlines():
        stripped = line.strip()
        marker = re.match(r"(`{3,}|~{3,})", stripped)
        if marker:
            fence = None if fence is not None and stripped.startswith(fence) else fence or marker.group(1)
            continue
        heading = _HEADING.match(line) if fence is None else None
        if heading:
            found.add(_normal_heading(heading["text"]))
    return found


def _normal_heading(text: str) -> str:
    return " ".join(text.strip().strip("\"'").split()).lower()


def _line_count(text: str) -> int:
    return len(text.splitlines())


def judge(locations: Sequence[str], title: str, read: Reader, documents: Iterable[str] = ()) -> Grounding | None:
    """Grounded, ungrounded with the first reason, or None (nothing here can be judged)."""
    judged = False
    texts: dict[str, str] = {}
    for location in locations:
        section = _SECTION.match(location.strip())
        if section:
            verdict = _judge_section(section["heading"], read, documents)
            if verdict is not None:
                if not verdict.grounded:
                    return verdict
                judged = True
            continue
        path, start, end = place(location)
        if not path:
            continue
        try:
            text = read(path)
        except UnjudgedError:
            continue
        judged = True
        if text is None:
            return Grounding(False, f"no file {path} in the reviewed input")
        lines = max(1, _line_count(text))
        if end > lines:
            cited = f"line {end}" if start == end else f"lines {start}-{end}"
            return Grounding(False, f"{path} has {lines} line{'s' if lines != 1 else ''}; the finding cites {cited}")
        texts[path] = text
    if not judged:
        return None
    quoted = quotes(title) if texts else []
    if quoted:
        squashed = [_squash(t) for t in texts.values()]
        where = " or ".join(sorted(texts))
        for quote in quoted:
            if not all(any(piece in s for s in squashed) for piece in _pieces(quote)):
                return Grounding(False, f"the quoted code `{quote}` does not occur in {where}")
    return Grounding(True)


def _judge_section(heading: str, read: Reader, documents: Iterable[str]) -> Grounding | None:
    known: set[str] = set()
    readable = []
    for document in documents:
        try:
            text = read(document)
        except UnjudgedError:
            continue
        if text is not None:
            readable.append(document)
            known |= headings(text)
    if not readable:
        return None
    if _normal_heading(heading) in known:
        return Grounding(True)
    return Grounding(False, f"no heading {heading.strip()!r} in {' or '.join(sorted(readable))}")


def project_reader(root: Path, limit: int) -> Reader:
    """A :data:`Reader` of files under ``root`` (confined, at most ``limit`` bytes each, cached)."""
    cache: dict[str, str | None] = {}
    unjudged: set[str] = set()

    def read(path: str) -> str | None:
        if path in unjudged:
            raise UnjudgedError(path)
        if path not in cache:
            cache[path] = _read(root, path, limit, unjudged)
        return cache[path]

    return read


def _shown_as(candidate: Path) -> bool:
    """A file whose real name differs from ``candidate``'s only by control characters: the place cites it as
    every output shows it (``shop/net\\x1b[31mtools.py`` is written ``shop/nettools.py``): it is there."""
    try:
        names = [entry.name for entry in os.scandir(candidate.parent)]
    except OSError:
        return False
    return any(strip_controls(name) == candidate.name and name != candidate.name for name in names)


def _read(root: Path, path: str, limit: int, unjudged: set[str]) -> str | None:
    candidate = Path(root) / path
    try:
        data = read_confined(candidate, root, "cited file", limit=limit)
    except OutsideRootError:
        return None  # a place outside the project is not in the reviewed input
    except InputError:
        if candidate.exists() or _shown_as(candidate):  # there (a directory, too large, unreadable; or a
            unjudged.add(path)  # name whose control characters every output drops): cannot tell
            raise UnjudgedError(path) from None
        return None
    if b"\0" in data[:8192]:
        unjudged.add(path)
        raise UnjudgedError(path)
    return data.decode("utf-8", errors="replace")
