"""Per-file bounds on the analyzers: a hostile file must not take the reviewing machine down.

The repository under review is untrusted, and some analyzers cost far more
than the size of a file suggests. Measured (lizard 1.17, CPython 3.11):

- lizard's memory doubles with every level of nested functions: 24 nested
  ``def``\\ s take 137 MB, 26 take 497 MB, 28 take 1.9 GB, 30 end in
  MemoryError at 2.3 GB - a 42 KB file drove a plain review past 3 GB
  (and 14.7 GB without an address-space cap);
- a 5 MB single-line minified JavaScript file kept lizard busy 42 s and the
  line rules over 100 s (the review never finished).

So, before an analyzer sees a file, one cheap linear pass measures its
:class:`Shape` (deepest nesting by indentation or brackets, longest line),
and :func:`over_bound` names the bound a file breaks for that analyzer. The
analyzer skips the file with a note ``<analyzer> skipped <path>: <reason>``,
which the runtime lists under "Not reviewed" (:func:`skip_of`): a file
nobody looked at never passes for a clean one. fluxdrive's own checks also
stop on a file after ``static.max_file_seconds`` (:class:`TimeBoundError`). Worker processes also get an
address-space ceiling (:func:`limit_memory`), so what the pre-scan cannot
foresee ends in a MemoryError that skips the file, not in the kernel's OOM
killer taking the machine's other work with it.
"""

from __future__ import annotations

import resource
from dataclasses import dataclass

# lizard's cost doubles per nested level (see above): 20 levels stay under 40 MB.
LIZARD_MAX_NESTING = 20
# Past this, line-oriented tools (lizard's tokenizer, the line rules' regexes) go quadratic or worse.
MAX_LINE_CHARS = 20_000
# The address space of one analyzer worker process (spawned interpreters use about 100 MB).
WORKER_MEMORY_BYTES = 2 * 1024**3
_OPENERS, _CLOSERS = "([{", ")]}"
# Analyzers whose per-file notes say "<analyzer> skipped <path>: <reason>".
SKIPPING_ANALYZERS = ("lizard", "pattern rules", "detect-secrets", "checks")


class TimeBoundError(Exception):
    """fluxdrive's own checks ran past ``static.max_file_seconds`` on one file (they check between nodes).

    Why cooperative: the checks run in a worker thread when the input is
    small, where no signal can interrupt them; the foreign analyzers (lizard,
    ast-grep) are single calls and are bounded by the pre-scan instead.
    """


@dataclass(frozen=True, slots=True)
class Shape:
    """What the bounds look at: the deepest nesting (indentation levels or open brackets) and the longest line."""

    nesting: int
    longest_line: int


def shape(text: str) -> Shape:
    """Measure ``text`` in one pass over its lines (brackets in strings count too: a bound, not a parser)."""
    depth = deepest = longest = 0
    indents: list[int] = [0]
    for line in text.splitlines():
        longest = max(longest, len(line))
        stripped = line.lstrip(" \t")
        if stripped:
            width = len(line.expandtabs(8)) - len(stripped.expandtabs(8)) if "\t" in line else len(line) - len(stripped)
            while width < indents[-1]:
                indents.pop()
            if width > indents[-1]:
                indents.append(width)
        for char in stripped:
            if char in _OPENERS:
                depth += 1
                deepest = max(deepest, depth)
            elif char in _CLOSERS and depth:
                depth -= 1
        deepest = max(deepest, len(indents) - 1)
    return Shape(deepest, longest)


def over_bound(text: str, *, max_nesting: int | None = None, max_line: int = MAX_LINE_CHARS) -> str | None:
    """Why an analyzer with these bounds must skip ``text`` (None: it may read it)."""
    longest = max(map(len, text.splitlines()), default=0)  # first, and alone: cheap even on a 5 MB line
    if longest > max_line:
        return f"a line of {longest:,} characters, over the {max_line:,}-character bound"
    if max_nesting is not None and (measured := shape(text)).nesting > max_nesting:
        return f"nested {measured.nesting:,} levels deep, over the {max_nesting}-level bound"
    return None


def skip_of(note: str) -> tuple[str, str] | None:
    """(path, reason) of an analyzer's per-file skip note, None for any other note."""
    for analyzer in SKIPPING_ANALYZERS:
        prefix = f"{analyzer} skipped "
        if note.startswith(prefix):
            path, separator, why = note[len(prefix) :].rpartition(": ")
            if separator and path:
                return path, f"{analyzer} skipped it: {why}"
    return None


def limit_memory(limit: int = WORKER_MEMORY_BYTES) -> None:
    """Cap this process's address space at ``limit`` (never raising a lower cap already in place).

    Only for analyzer worker processes: a file that still exhausts memory
    raises MemoryError in its analyzer, which skips it; the review goes on.
    """
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    wanted = limit if hard == resource.RLIM_INFINITY else min(limit, hard)
    if soft == resource.RLIM_INFINITY or soft > wanted:
        resource.setrlimit(resource.RLIMIT_AS, (wanted, hard))
