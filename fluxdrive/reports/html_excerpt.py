"""Code excerpts for ``summary.html``: a few lines around a finding's place, read inside the project root only.

A location is ``path:line`` relative to the project root. The path is
resolved with every symlink followed and refused when it leaves the root (an
absolute path, ``..``, a link out); only regular text files up to
:data:`MAX_BYTES` are read. At most ``2 * CONTEXT + 1`` lines are shown,
each cut at :data:`MAX_WIDTH` characters, with credentials masked: a private
key block is masked as a whole even when the excerpt shows only its middle,
then every excerpt goes through :func:`fluxdrive.core.masking.scrub` (with the
detect-secrets plugins: this is raw content coming in).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from fluxdrive.core.confine import confine
from fluxdrive.core.masking import MASK, scrub
from fluxdrive.core.paths import read_regular
from fluxdrive.errors import FluxdriveError

CONTEXT = 3  # lines either side: at most 7 lines
MAX_WIDTH = 200
MAX_BYTES = 2_000_000
_SCAN_WIDTH = 4000  # a minified line is masked this far, then cut at MAX_WIDTH
_PEM_START = re.compile(r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY")
_PEM_END = re.compile(r"-----END [A-Z0-9 ]*PRIVATE KEY")


@dataclass(frozen=True, slots=True)
class Excerpt:
    """Lines ``first``.. of ``path`` (already masked), with ``line`` the finding's own."""

    path: str
    line: int
    first: int
    lines: tuple[str, ...]


def split_location(location: str) -> tuple[str, int | None]:
    """``("pkg/a.py", 12)`` from ``pkg/a.py:12``; no line when the location has none."""
    path, sep, line = location.rpartition(":")
    if sep and line.isdigit():
        return path, int(line)
    return location, None


def _mask_private_keys(lines: list[str]) -> list[str]:
    """Every line of a private key block replaced by the mask (line numbers stay)."""
    inside = False
    out = []
    for text in lines:
        if _PEM_START.search(text):
            inside = True
        out.append(MASK if inside else text)
        if inside and _PEM_END.search(text):
            inside = False
    return out


class ExcerptReader:
    """Reads each file once; refuses whatever is not a regular text file inside ``root``."""

    def __init__(self, root: Path | None) -> None:
        self.root = root
        self._files: dict[str, list[str] | None] = {}

    def _lines(self, path: str) -> list[str] | None:
        if path in self._files:
            return self._files[path]
        lines: list[str] | None = None
        if self.root is not None and path and "\0" not in path:
            try:
                real = confine(self.root / path, self.root, "excerpt")
                data = read_regular(real, "excerpt", limit=MAX_BYTES)
            except (FluxdriveError, OSError, ValueError):
                data = None
            if data is not None and b"\0" not in data[:8192]:
                # numbered as the agents count: by "\n" only (splitlines would also split at \f, \x1c, U+2028...)
                raw = data.decode("utf-8", errors="replace").split("\n")
                if raw and raw[-1] == "":
                    raw.pop()
                lines = _mask_private_keys([line.removesuffix("\r") for line in raw])
        self._files[path] = lines
        return lines

    def excerpt(self, location: str | None) -> Excerpt | None:
        """The lines around ``location``, or None (no line, unreadable, outside the root, past the end)."""
        if not location:
            return None
        path, line = split_location(location)
        if line is None or line < 1:
            return None
        lines = self._lines(path)
        if lines is None or line > len(lines):
            return None
        first = max(1, line - CONTEXT)
        last = min(len(lines), line + CONTEXT)
        # masked whole (a secret cut at the width would no longer look like one), then cut
        shown = [text[:_SCAN_WIDTH] for text in lines[first - 1 : last]]
        masked = scrub("\n".join(shown), detect=True).split("\n")
        if len(masked) != len(shown):  # masking joined lines: mask them one by one
            masked = [scrub(text, detect=True) for text in shown]
        return Excerpt(path, line, first, tuple(text.expandtabs(4)[:MAX_WIDTH] for text in masked))
