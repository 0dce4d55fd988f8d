"""Paths a project asks the review to leave out: ``.fluxdriveignore`` and ``static.exclude``.

A generated client, a corpus of deliberately vulnerable samples, a copy of
another project's docs: a team knows what is not theirs to fix, and a review
that keeps reporting it teaches people to ignore the review. Patterns use
``.gitignore``'s syntax (``#`` comments, ``!`` to bring a path back, a
trailing ``/`` for directories, ``**``, a leading or inner ``/`` anchors to
the root); the last matching pattern wins. Excluded files are listed as not
reviewed, with the file that excluded them, like vendored ones.

The file is the repository's, so in a diff it is read from the base commit
(``revision``): a change must not exclude itself from its own review.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from fluxdrive.core import git as _git
from fluxdrive.core.confine import read_confined
from fluxdrive.errors import FluxdriveError
from fluxdrive.runtimes.static.origin import glob_regex

IGNORE_FILE = ".fluxdriveignore"


@dataclass(frozen=True, slots=True)
class Rule:
    """One pattern: its regex, whether it brings paths back (``!``), whether it names directories only."""

    regex: re.Pattern[str]
    negated: bool
    directories: bool
    origin: str


@dataclass(frozen=True, slots=True)
class Excludes:
    """The patterns in force for one review, in order."""

    rules: tuple[Rule, ...] = ()

    def reason(self, path: str) -> str | None:
        """Why ``path`` (project-relative, POSIX) is left out, or None when it is reviewed."""
        parts = PurePosixPath(path).parts
        ancestors = ["/".join(parts[:depth]) for depth in range(1, len(parts))]
        verdict: Rule | None = None
        for rule in self.rules:
            candidates = ancestors if rule.directories else [*ancestors, path]
            if any(rule.regex.match(candidate) for candidate in candidates):
                verdict = None if rule.negated else rule
        return f"excluded by {verdict.origin}" if verdict is not None else None


def parse(text: str, origin: str) -> tuple[Rule, ...]:
    """The rules of one ignore file (or config list joined by newlines); bad patterns are skipped."""
    rules = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        negated = line.startswith("!")
        pattern = line[1:] if negated else line
        directories = pattern.endswith("/")
        regex = glob_regex(pattern.rstrip("/")) if pattern.rstrip("/") else None
        if regex is not None:
            rules.append(Rule(regex, negated, directories, origin))
    return tuple(rules)


def read_excludes(root: Path, patterns: list[str], revision: str | None = None) -> tuple[Excludes, str | None]:
    """``static.exclude`` then ``.fluxdriveignore`` (the base commit's in a diff), and a note if unreadable."""
    rules = parse("\n".join(patterns), "static.exclude")
    note = None
    if revision is not None:
        data = _git.show_file(root, revision, IGNORE_FILE)
    else:
        data = None
        path = root / IGNORE_FILE
        if path.is_file() or path.is_symlink():
            try:
                data = read_confined(path, root, "ignore file", limit=1_000_000)
            except (FluxdriveError, OSError) as exc:
                note = f"{IGNORE_FILE} ignored: {str(exc).splitlines()[0]}"
    if data is not None:
        rules += parse(data.decode("utf-8", errors="replace"), IGNORE_FILE)
    return Excludes(rules), note
