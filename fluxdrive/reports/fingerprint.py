"""One fingerprint of a finding: what baselines suppress by and what SARIF ``partialFingerprints`` carry.

Why one: a finding that a baseline hides and the alert a code-scanning UI
keeps open must be recognized by the same identity, or one of them drifts
(the old SARIF hash - file and title - also merged two identical hits in one
file into one alert, and changed with a title that quotes a number).

A fingerprint hashes, with no line number in it:

1. the file (relative to PROJECT_ROOT, ``./`` and ``\\`` normalized);
2. the issue: the analyzer rule when the finding names one (``ruff:S608``,
   stable across runs however the title is worded), else the normalized
   title with its ``(and N more places)`` tail and bare numbers dropped;
3. the flagged source line's text, whitespace collapsed, read from the
   working tree when it is readable inside the root (else empty): moving code
   keeps it, editing the flagged line makes the finding new again, which is
   what a reviewer wants;
4. an occurrence index among the findings of one review sharing 1-3,
   counted in line order: two identical hits in one file stay two.

So within one review every fingerprint is unique, the same tree reviewed
twice gives the same fingerprints, and lines inserted above a finding do
not change it. The hash is of unmasked text (masking depends on the
environment, which would make fingerprints differ between a laptop and CI);
only 128 bits of a SHA-256 are kept, and nothing can be read back into
source text. :data:`FINGERPRINT_VERSION` is recorded in every baseline file:
changing the material above means raising it.

Works on anything shaped like a finding (:class:`Fingerprinted`): the merged
finding synthesis produces and the one findings.json holds.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

from fluxdrive.core.confine import read_confined
from fluxdrive.errors import FluxdriveError
from fluxdrive.synthesis.dedup import normalize_title

FINGERPRINT_VERSION = 1
MAX_SOURCE_BYTES = 8 * 1024 * 1024  # a larger file's lines are not read: its fingerprints use an empty line text
MORE_PLACES = re.compile(r"\s*\(and \d+ more (?:places|lines)[^()]*(?:\(\))?\)$")


class Fingerprinted(Protocol):
    """What a fingerprint reads of a finding."""

    @property
    def id(self) -> str: ...
    @property
    def title(self) -> str: ...
    @property
    def location(self) -> str | None: ...
    @property
    def rules(self) -> list[str]: ...


def _relative(path: str, root: Path) -> str:
    """A location's file as a project-relative POSIX path."""
    path = path.replace("\\", "/")
    if path.startswith("/"):
        try:
            return Path(path).resolve().relative_to(Path(root).resolve()).as_posix()
        except (OSError, ValueError):
            return path
    while path.startswith("./"):
        path = path[2:]
    return path


def split_location(location: str | None, root: Path) -> tuple[str, int | None]:
    """``("app/db.py", 41)`` for ``app/db.py:41``; the line is None when the location has none."""
    if not location:
        return "", None
    path, sep, line = location.rpartition(":")
    if sep and line.isdigit():
        return _relative(path, root), int(line)
    return _relative(location, root), None


def _issue(finding: Fingerprinted) -> str:
    if finding.rules:
        return f"rule:{finding.rules[0]}"
    words = normalize_title(MORE_PLACES.sub("", finding.title)).split()
    return "title:" + " ".join(w for w in words if not w.isdigit())


class _Lines:
    """The project's files, read once each, confined to the root."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self._cache: dict[str, list[str] | None] = {}

    def text(self, path: str, line: int | None) -> str:
        if not path or line is None or line < 1:
            return ""
        if path not in self._cache:
            try:
                data = read_confined(self.root / path, self.root, "source file", limit=MAX_SOURCE_BYTES)
                self._cache[path] = None if b"\0" in data[:8192] else data.decode("utf-8", "replace").splitlines()
            except (FluxdriveError, OSError, ValueError):
                self._cache[path] = None
        lines = self._cache[path]
        if lines is None or line > len(lines):
            return ""
        return " ".join(lines[line - 1].split())


def fingerprints(findings: Sequence[Fingerprinted], root: Path) -> list[str]:
    """The line-independent fingerprint of each finding of one review, in order (see the module docstring)."""
    lines = _Lines(root)
    keys: list[tuple[str, str, str]] = []
    order: list[tuple[int, str, str]] = []
    for finding in findings:
        path, line = split_location(finding.location, root)
        keys.append((path, _issue(finding), lines.text(path, line)))
        order.append((line or 0, finding.title, finding.id))
    occurrence: dict[tuple[str, str, str], int] = {}
    index = [0] * len(findings)
    for position in sorted(range(len(findings)), key=lambda n: order[n]):
        key = keys[position]
        index[position] = occurrence.get(key, 0)
        occurrence[key] = index[position] + 1
    out = []
    for (path, issue, text), number in zip(keys, index, strict=True):
        material = f"v{FINGERPRINT_VERSION}\0{path}\0{issue}\0{text}\0{number}"
        out.append(hashlib.sha256(material.encode("utf-8", "surrogatepass")).hexdigest()[:32])
    return out
