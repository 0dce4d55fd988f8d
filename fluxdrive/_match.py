"""Matching text and paths the way triage and slicing both need it.

Concern words match as whole words or phrases, plurals included; routing
keywords match as written but never inside a longer word (``race`` is not
in ``traceback``); globs follow ``fnmatch`` with ``**/`` also matching at
the top level. One implementation, so an agent's score and its slice agree.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable, Sequence


def word_pattern(words: Iterable[str]) -> re.Pattern[str] | None:
    """Whole words or phrases, plural forms included (``invariant`` matches ``invariants``)."""
    cleaned = sorted({w.lower() for w in words if w.strip()}, key=len, reverse=True)
    if not cleaned:
        return None
    alternatives = "|".join(re.escape(w) for w in cleaned)
    return re.compile(r"(?<![\w])(?:" + alternatives + r")(?:e?s)?(?![\w])", re.IGNORECASE)


def keyword_pattern(words: Iterable[str]) -> re.Pattern[str] | None:
    """Keywords as written; a keyword that starts or ends with a letter must not sit inside a word.

    ``race`` must not match ``traceback``; ``for `` and ``map(`` keep their punctuation.
    """
    cleaned = sorted({w for w in words if w.strip()}, key=len, reverse=True)
    if not cleaned:
        return None

    def one(word: str) -> str:
        before = r"(?<![\w])" if word[0].isalnum() or word[0] == "_" else ""
        after = r"(?![\w])" if word[-1].isalnum() or word[-1] == "_" else ""
        return before + re.escape(word) + after

    return re.compile("|".join(one(w) for w in cleaned), re.IGNORECASE)


def glob_match(path: str, globs: Sequence[str]) -> bool:
    """True when the POSIX path matches one of the globs (``**/x`` also matches ``x`` at the top)."""
    for pattern in globs:
        if fnmatch.fnmatchcase(path, pattern):
            return True
        if pattern.startswith("**/") and (
            fnmatch.fnmatchcase(path, pattern[3:]) or fnmatch.fnmatchcase(path.rsplit("/", 1)[-1], pattern[3:])
        ):
            return True
    return False
