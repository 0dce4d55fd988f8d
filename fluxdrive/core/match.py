"""Matching text and paths the way triage and slicing both need it.

Concern words match as whole words or phrases, plurals included; routing
keywords match as written but never inside a longer word (``race`` is not
in ``traceback``); globs follow ``fnmatch`` with ``**/`` also matching at
the top level. One implementation, so an agent's score and its slice agree.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

# The only characters Python's case-insensitive matching folds onto ASCII letters that
# str.lower() leaves alone or lengthens (found by exhaustive search over Unicode).
_ODD_FOLDS = ("\u017f", "\u0131", "\u0130")


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


@dataclass(frozen=True, slots=True)
class Text:
    """A text to match, with its lowercase twin when that twin keeps every position."""

    raw: str
    lowered: str | None

    @classmethod
    def of(cls, raw: str) -> Text:
        lowered = raw.lower()
        same = len(lowered) == len(raw) and (raw.isascii() or not any(c in raw for c in _ODD_FOLDS))
        return cls(raw, lowered if same else None)


@dataclass(frozen=True, slots=True)
class Finder:
    """A pattern from :mod:`fluxdrive.core.match`, and one per word for checking a candidate position.

    Every match of ``keyword_pattern(words)`` or ``word_pattern(words)``
    starts with one of the words (case-insensitively), so where no word occurs
    as a substring there is no match, and where one does, that word's own
    pattern, matched at that position, decides with the pattern's boundaries.
    Words sharing a shorter word as prefix (``auth``, ``authorize``) are found
    by one scan for the prefix. Non-ASCII words, and texts whose lowercase
    form shifts positions, take the plain search.
    """

    pattern: re.Pattern[str]
    heads: tuple[tuple[str, tuple[re.Pattern[str], ...]], ...]

    @classmethod
    def build(cls, words: Iterable[str], compile_: Callable[[Iterable[str]], re.Pattern[str] | None]) -> Finder | None:
        cleaned = sorted({w for w in words if w.strip()})
        pattern = compile_(cleaned)
        if pattern is None:
            return None
        heads: dict[str, list[re.Pattern[str]]] = {}
        for needle in sorted({w.lower() for w in cleaned}):  # a prefix sorts before its extensions
            single = compile_([needle])
            if single is None or not needle.isascii():
                return cls(pattern, ())
            head = next((h for h in heads if needle.startswith(h)), needle)
            heads.setdefault(head, []).append(single)
        return cls(pattern, tuple((h, tuple(p)) for h, p in heads.items()))

    def found_in(self, text: Text) -> bool:
        """True when the pattern matches somewhere in ``text``."""
        if not self.heads or text.lowered is None:
            return self.pattern.search(text.raw) is not None
        lowered, raw = text.lowered, text.raw
        for head, singles in self.heads:
            start = lowered.find(head)
            while start != -1:
                if any(single.match(raw, start) for single in singles):
                    return True
                start = lowered.find(head, start + 1)
        return False

    def first(self, text: Text) -> str | None:
        """The leftmost match (as the combined pattern's ``search`` finds it), or None."""
        if not self.heads or text.lowered is None:
            found = self.pattern.search(text.raw)
            return found.group(0) if found is not None else None
        lowered, raw = text.lowered, text.raw
        best: tuple[int, int, str] | None = None  # (start, -length, text)
        for head, singles in self.heads:
            start = lowered.find(head)
            while start != -1 and (best is None or start <= best[0]):
                hits = [m.group(0) for single in singles if (m := single.match(raw, start))]
                if hits:
                    word = max(hits, key=len)
                    candidate = (start, -len(word), word)
                    best = candidate if best is None else min(best, candidate)
                    break
                start = lowered.find(head, start + 1)
        return best[2] if best is not None else None
