"""File names as a person (and every writer) can show them: undecodable bytes and control characters escaped.

Why one place: a reviewed tree may hold names that are not text. Linux
allows any byte but ``/`` and NUL in a name; Python hands such a name back
with lone surrogates (``bad\\udcff\\udcfe.py``), which no UTF-8 writer can
encode, so one such file once ended a review with ``UnicodeEncodeError``. A
name may also hold an escape sequence (``\\x1b[31m``) that recolours the
terminal or the markdown viewer of whoever reads the report. Listing skips
undecodable names with a note that shows them through :func:`shown`, and
every markdown writer that prints a path shows it through :func:`shown`:
``bad\\xff\\xfe.py``, ``\\x1b[31mred.py`` - the bytes are visible, nothing
is interpreted.
"""

from __future__ import annotations

import re

# C0 and C1 controls and DEL: never printed raw (tab and newline included: a path holds neither legitimately).
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def decodable(name: str) -> bool:
    """True when ``name`` is text (it holds no byte that failed to decode as UTF-8)."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def shown(name: str) -> str:
    """``name`` with each undecodable byte as ``\\xNN`` and each control character as ``\\xNN``."""
    if not decodable(name):
        try:
            name = name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
        except UnicodeEncodeError:  # a surrogate that did not come from a byte (a hand-written JSON \ud800)
            name = name.encode("utf-8", "backslashreplace").decode("utf-8")
    return _CONTROL.sub(lambda match: f"\\x{ord(match.group()):02x}", name)
