"""Which findings of a diff review are shown: reviewdog's ``--filter`` modes, as one pure function.

Why: a pull request must not be blocked by what was already there. The modes mean what they mean in
reviewdog (``-filter-mode``), so people who know one know the other:

- ``added``: a finding on a line the diff added (or changed);
- ``diff_context``: a finding on any line of a hunk, the context lines around the change included;
- ``file``: a finding anywhere in a file the diff touches;
- ``nofilter``: every finding.

A finding stays when ANY of its places passes (a grouped finding stands for each of them). A place
with a file but no line passes when its file is in the diff (nothing says it is old); a finding with
no file place at all (about the change as a whole) always stays. What is left out is counted, never
silent: the caller says "12 finding(s) outside the changed lines not shown (--filter added)".

The same function serves the review (the verdict is derived from what stays, so the exit code and the
gate follow it) and the publishers (the forge's own diff of the pull request), so both filter alike.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal, TypeVar, get_args

from fluxdrive.contracts import derive_verdict
from fluxdrive.errors import UsageError
from fluxdrive.synthesis import Finding, Synthesis
from fluxdrive.synthesis.grounding import place

FilterMode = Literal["added", "diff_context", "file", "nofilter"]
MODES: tuple[str, ...] = get_args(FilterMode)
DEFAULT_MODE: FilterMode = "added"
_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,\d+)? @@")

Place = tuple[str, int, int]  # path, first line, last line (0, 0: the file, no line)
_F = TypeVar("_F")


def check_mode(mode: str) -> FilterMode:
    """``mode`` when it is one of :data:`MODES`; else one line naming them (exit 2)."""
    if mode not in MODES:
        raise UsageError(f"unknown --filter {mode!r}", hint="use " + ", ".join(MODES))
    return mode  # type: ignore[return-value]


@dataclass(frozen=True)
class DiffLines:
    """A diff's line sets in the new file's numbering: the added lines, and every line of its hunks."""

    added: Mapping[str, frozenset[int]] = field(default_factory=dict)
    hunks: Mapping[str, frozenset[int]] = field(default_factory=dict)

    @classmethod
    def from_patches(cls, patches: Mapping[str, str]) -> DiffLines:
        """From one unified-diff ``patch`` per new path (what forges list per file, and what a diff holds)."""
        added: dict[str, frozenset[int]] = {}
        hunks: dict[str, frozenset[int]] = {}
        for path, patch in sorted(patches.items()):
            plus, every = _patch_lines(patch)
            added[path], hunks[path] = frozenset(plus), frozenset(every)
        return cls(added, hunks)

    @classmethod
    def from_diff(cls, text: str) -> DiffLines:
        """From a whole ``git diff``: its files split on ``diff --git``/``+++`` headers (deleted files left out)."""
        patches: dict[str, str] = {}
        current: str | None = None
        body: list[str] = []
        previous = ""
        for line in text.splitlines():
            after, previous = previous, line
            if line.startswith("diff --git "):
                current = None
                continue
            if line.startswith("+++ ") and after.startswith("--- "):  # a header, not an added "++" line
                name = line[4:].split("\t", 1)[0].strip()
                current = None if name == "/dev/null" else name[2:] if name.startswith("b/") else name
                body = []
                if current is not None:
                    patches[current] = ""
                continue
            if current is not None:
                body.append(line)
                patches[current] = "\n".join(body)
        return cls.from_patches(patches)

    def keeps(self, places: Iterable[Place], mode: FilterMode) -> bool:
        """True when a finding at ``places`` is shown under ``mode`` (see the module docstring)."""
        if mode == "nofilter":
            return True
        listed = [p for p in places if p[0]]
        if not listed:
            return True
        for path, start, end in listed:
            if path not in self.hunks:
                continue
            if mode == "file" or not start:
                return True
            lines = self.added.get(path, frozenset()) if mode == "added" else self.hunks[path]
            if any(start <= n <= end for n in lines):
                return True
        return False


def _patch_lines(patch: str) -> tuple[set[int], set[int]]:
    """(added, every hunk line) of one file's patch, in the new file's numbering."""
    added: set[int] = set()
    every: set[int] = set()
    line = 0
    seen = False
    for text in patch.splitlines():
        header = _HUNK.match(text)
        if header:
            line, seen = int(header.group(1)), True
            continue
        if not seen or text.startswith(("\\", "-")):
            continue
        if text.startswith("+"):
            added.add(line)
        every.add(line)
        line += 1
    return added, every


def place_of(location: str) -> Place:
    """``path:12`` / ``path:3-9`` / ``path`` -> (path, start, end): the one parser, grounding's."""
    return place(location)


def split(
    findings: Sequence[_F], places: Callable[[_F], Iterable[Place]], lines: DiffLines, mode: FilterMode
) -> tuple[list[_F], list[_F]]:
    """(shown, left out) of ``findings``, in order; ``places`` reads a finding's places (any finding type)."""
    shown: list[_F] = []
    left: list[_F] = []
    for finding in findings:
        (shown if lines.keeps(places(finding), mode) else left).append(finding)
    return shown, left


def left_out_note(count: int, mode: str) -> str:
    """The line every output shows about what the filter left out."""
    return f"{count} finding(s) outside the changed lines not shown (--filter {mode})"


def _finding_places(finding: Finding) -> list[Place]:
    return [place_of(x) for x in finding.locations]


def apply_filter(synthesis: Synthesis, lines: DiffLines, mode: FilterMode) -> Synthesis:
    """A new synthesis holding only the findings ``mode`` shows, its verdict derived from them.

    The verdict stays ``error`` when it was; the filter and the count are recorded
    (:attr:`Synthesis.line_filter`, findings.json ``line_filter``) and a note says how many were left out.
    """
    shown, left = split(synthesis.findings, _finding_places, lines, mode)
    was = synthesis.findings_verdict
    notes = [*synthesis.notes, left_out_note(len(left), mode)] if left else list(synthesis.notes)
    hidden = {f.id for f in left}
    return dataclasses.replace(
        synthesis,
        findings=shown,
        findings_verdict=was if was == "error" else derive_verdict(f.severity for f in shown),
        notes=notes,
        conflicts=[c for c in synthesis.conflicts if c.finding is None or c.finding not in hidden],
        line_filter=(mode, len(left)),
    )
