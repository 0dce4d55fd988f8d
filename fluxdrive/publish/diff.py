"""Which lines of a pull request can carry an inline review comment.

GitHub accepts a review comment on the RIGHT side only on a line that is
part of the diff: an added line or a context line of one hunk of the file's
``patch`` (``GET /repos/{o}/{r}/pulls/{n}/files``). A multi-line comment's
``start_line`` must lie in the same hunk as its ``line`` and come before it.
Anything else is refused with 422 ("Pull request review thread line must be
part of the diff"), and the whole review with it - so the lines are worked
out here, before posting.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from fluxdrive.reports.diff_filter import DiffLines

_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,\d+)? @@")
_HUNK_BOTH = re.compile(r"^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@")


def right_side_hunks(patch: str) -> list[frozenset[int]]:
    """The new-file line numbers of each hunk of a unified-diff ``patch`` (added and context lines)."""
    hunks: list[set[int]] = []
    line = 0
    for text in patch.splitlines():
        header = _HUNK.match(text)
        if header:
            line = int(header.group(1))
            hunks.append(set())
            continue
        if not hunks or text.startswith("\\"):  # before the first hunk, or "\ No newline at end of file"
            continue
        if text.startswith("-"):
            continue
        hunks[-1].add(line)  # "+" added, " " (or an empty line) context
        line += 1
    return [frozenset(h) for h in hunks]


def added_lines(patch: str) -> frozenset[int]:
    """The new-file line numbers of the lines ``patch`` adds."""
    added: set[int] = set()
    line = 0
    for text in patch.splitlines():
        header = _HUNK.match(text)
        if header:
            line = int(header.group(1))
            continue
        if not line or text.startswith(("\\", "-")):
            continue
        if text.startswith("+"):
            added.add(line)
        line += 1
    return frozenset(added)


def context_old_lines(patch: str) -> dict[int, int]:
    """New-file line -> old-file line of every context (unchanged) line of ``patch``; an added line is absent.

    GitLab wants both numbers for a comment on an unchanged line of the diff and only the new one for an
    added line."""
    pairs: dict[int, int] = {}
    new = old = 0
    seen = False
    for text in patch.splitlines():
        header = _HUNK_BOTH.match(text)
        if header:
            old, new, seen = int(header.group(1)), int(header.group(2)), True
            continue
        if not seen or text.startswith("\\"):
            continue
        if text.startswith("-"):
            old += 1
        elif text.startswith("+"):
            new += 1
        else:
            pairs[new] = old
            new += 1
            old += 1
    return pairs


@dataclass(frozen=True)
class Anchor:
    """Where an inline comment goes: ``line`` and, for several lines, ``start_line`` (same hunk, before it)."""

    path: str
    line: int
    start_line: int | None = None


@dataclass
class DiffIndex:
    """The commentable RIGHT-side lines of every file of a pull request, hunk by hunk."""

    files: dict[str, list[frozenset[int]]] = field(default_factory=dict)
    added: dict[str, frozenset[int]] = field(default_factory=dict)  # the "+" lines: --filter added

    @classmethod
    def from_pull_files(cls, files: Iterable[Mapping[str, object]]) -> DiffIndex:
        """From the objects ``GET /pulls/{n}/files`` returns (a removed file, or one without a patch -
        binary or too large - has no commentable line)."""
        index = cls()
        for item in files:
            name, patch, status = item.get("filename"), item.get("patch"), item.get("status")
            if not isinstance(name, str):
                continue
            text = patch if isinstance(patch, str) and status != "removed" else ""
            index.add(name, text)
        return index

    def add(self, path: str, patch: str) -> None:
        """The file ``path`` of the change, with its ``patch`` ("" for none: no commentable line)."""
        self.files[path] = right_side_hunks(patch)
        self.added[path] = added_lines(patch)

    def lines(self) -> DiffLines:
        """The line sets :mod:`fluxdrive.reports.diff_filter` filters findings by."""
        hunks = {p: frozenset().union(*h) for p, h in self.files.items()}
        # a forge that lists only hunks (a plugin filling ``files``): every line of them counts as added
        return DiffLines(added={p: self.added.get(p, lines) for p, lines in hunks.items()}, hunks=hunks)

    def same_hunk(self, path: str, start: int, end: int) -> bool:
        """True when every line ``start``..``end`` of ``path`` is in one hunk (a suggestion may replace them)."""
        return any(all(n in hunk for n in range(start, end + 1)) for hunk in self.files.get(path, ()))

    def hunk_of(self, path: str, line: int) -> int | None:
        """The index of the hunk of ``path`` holding ``line`` on the RIGHT side, or None."""
        for number, hunk in enumerate(self.files.get(path, ())):
            if line in hunk:
                return number
        return None

    def anchor(self, path: str, start: int, end: int) -> Anchor | None:
        """Where a finding on ``path`` lines ``start``..``end`` can be commented, or None if no line of it
        is in the diff: the last line of the range in a hunk, from the first line of the range in it."""
        start, end = min(start, end), max(start, end)
        for hunk in self.files.get(path, ()):
            inside = sorted(n for n in hunk if start <= n <= end)
            if not inside:
                continue
            first, last = inside[0], inside[-1]
            return Anchor(path, last, first if first < last else None)
        return None

    def __contains__(self, path: object) -> bool:
        return path in self.files
