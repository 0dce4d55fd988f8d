"""Parse YAML and JSON that fluxdrive did not write, with a limit on how deeply it may nest.

Why: project agents, knowledge entries, the domain cache, agents' reports
(their front matter), findings.json and queue files are text anyone can
write. ``[[[[...]]]]`` 100,000 levels deep makes Python's parsers raise
``RecursionError`` - and libyaml's C loader overflow its stack and crash the
process with a segmentation fault. The depth is measured before any parser
sees YAML (brackets, and block indentation), and a parser's own
``RecursionError`` is caught too (JSON's C scanner raises it cleanly); either way the caller gets a ``ValueError``
naming the problem, which each caller already turns into its one-line error.

A leaf module: imports nothing from the package.
"""

from __future__ import annotations

import json
from typing import Any

import yaml

MAX_DEPTH = 200  # far beyond any real configuration, front matter or report
_LOADER: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml when present: fast


class TooDeepError(ValueError):
    """The text nests deeper than :data:`MAX_DEPTH`."""


def nesting_depth(text: str, *, stop_at: int = MAX_DEPTH) -> int:
    """An upper bound of how deeply ``text`` nests: open brackets at once, or block levels on one line.

    Quoted strings are skipped roughly (a bracket inside quotes may count;
    that only errs on the side of refusing absurd input). Stops counting once
    ``stop_at`` is passed.
    """
    depth = deepest = 0
    quote = ""
    for char in text:
        if quote:
            if char == quote:
                quote = ""
            continue
        if char in "\"'":
            quote = char
        elif char in "[{":
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > stop_at:
                    return deepest
        elif char in "]}" and depth:
            depth -= 1
        elif char == "\n":
            quote = ""  # an unterminated quote does not swallow the rest of the document
    for line in text.splitlines():
        stripped = line.lstrip(" -?:")  # "- - - - x": block sequences nested on one line
        levels = (len(line) - len(stripped)) // 2
        if levels > deepest:
            deepest = levels
            if deepest > stop_at:
                return deepest
    return deepest


def _check(text: str, what: str) -> None:
    if nesting_depth(text) > MAX_DEPTH:
        raise TooDeepError(f"{what} nests more than {MAX_DEPTH} levels deep")


def load_yaml(text: str, what: str = "YAML") -> Any:
    """``yaml.safe_load`` with the nesting limit; ``yaml.YAMLError`` passes through as before."""
    _check(text, what)
    try:
        return yaml.load(text, Loader=_LOADER)  # noqa: S506 - a safe loader
    except RecursionError:
        raise TooDeepError(f"{what} nests too deeply to read") from None


def load_json(text: str | bytes, what: str = "JSON") -> Any:
    """``json.loads``, turning a ``RecursionError`` into :class:`TooDeepError` (the C scanner raises it cleanly,
    so no pre-scan of what may be megabytes); ``json.JSONDecodeError`` (a ValueError) passes through."""
    try:
        return json.loads(text)
    except RecursionError:
        raise TooDeepError(f"{what} nests too deeply to read") from None
