"""How commands print: results to stdout, warnings to stderr, JSON stably - all of it scrubbed.

Whatever a command prints may quote a file name, a report or a provider's
error: :func:`fluxdrive.core.masking.scrub` strips terminal escapes and masks
credentials and configured keys on the way out, here, once for every command.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any

from fluxdrive.core.masking import scrub


def out(text: str, *, colour: Callable[[str, str], str] | None = None, verdict: str = "") -> None:
    """Write ``text`` to stdout, adding a final newline if it lacks one.

    ``colour`` (on a terminal) adds its escapes after the scrub, which would strip them.
    """
    text = scrub(text)
    if colour is not None:
        text = colour(text, verdict)
    sys.stdout.write(text if text.endswith("\n") else text + "\n")


def read_stdin() -> str:
    """All of stdin as text, bytes that are not UTF-8 replaced by U+FFFD.

    Why bytes: the text layer decodes by the locale, raising on a byte that
    is not UTF-8 or turning it into a lone surrogate that every writer later
    fails to encode. A piped diff of a Latin-1 file is still a diff to review.
    """
    buffer = getattr(sys.stdin, "buffer", None)
    data = buffer.read() if buffer is not None else sys.stdin.read().encode("utf-8", "surrogateescape")
    return bytes(data).decode("utf-8", "replace")


def warn(text: str) -> None:
    """One ``fluxdrive: warning:`` line on stderr."""
    sys.stderr.write(f"fluxdrive: warning: {' '.join(scrub(text).split())}\n")


def note(text: str) -> None:
    """One ``fluxdrive:`` informational line on stderr (keeps stdout clean)."""
    sys.stderr.write(f"fluxdrive: {' '.join(scrub(text).split())}\n")


def out_json(data: Any) -> None:
    """Print ``data`` as indented JSON, every string in it scrubbed first.

    Scrubbing the encoded text is not enough: ``json.dumps`` turns an escape
    character into the six characters ``\u001b``, which ``jq -r`` (or an
    assistant reading the JSON) turns back into a live escape.
    """
    out(json.dumps(scrub_data(data), indent=2, ensure_ascii=False))


def scrub_data(data: Any) -> Any:
    """``data`` with every string (keys included) scrubbed."""
    if isinstance(data, str):
        return scrub(data)
    if isinstance(data, dict):
        return {scrub_data(k): scrub_data(v) for k, v in data.items()}
    if isinstance(data, list | tuple):
        return [scrub_data(v) for v in data]
    return data


def terminal() -> tuple[int | None, bool]:
    """(columns, colour) for stdout: the width to fit and whether to colour; (None, False) when not a terminal.

    Colour follows the NO_COLOR convention (no-color.org) and TERM=dumb.
    """
    import os
    import shutil

    if not sys.stdout.isatty():
        return None, False
    colour = "NO_COLOR" not in os.environ and os.environ.get("TERM") != "dumb"
    return shutil.get_terminal_size((100, 24)).columns, colour
