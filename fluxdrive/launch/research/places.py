"""Finding locations resolved to files inside the project root, and never outside it.

Both executors start from here: a ``file:line`` location becomes a :class:`Place`
only when it resolves (symlinks followed) inside the root; otherwise the reason
becomes one of the answer's gaps.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from fluxdrive.launch.research.model import ResearchRequest

MAX_FILE_BYTES = 2_000_000

_LOCATION = re.compile(r"^(?:\./)?(?P<path>.+?)(?::(?P<line>\d+)(?:[-:,]\d+)*)?$")


@dataclass(frozen=True, slots=True)
class Place:
    relative: str
    path: Path
    line: int | None


def inside(root: Path, candidate: Path) -> Path | None:
    """``candidate`` resolved (symlinks followed) when it stays inside ``root``."""
    try:
        resolved = candidate.resolve()
    except (OSError, RuntimeError):
        return None
    return resolved if resolved == root or resolved.is_relative_to(root) else None


def _place(root: Path, location: str) -> Place | str:
    """The file and line a location names, or why it cannot be used."""
    match = _LOCATION.match(location.strip().strip("`'\"()[]"))
    if match is None:
        return f"`{location}` is not a file:line location"
    resolved = inside(root, root / match.group("path"))
    if resolved is None:
        return f"`{location}` is outside the project root; not read"
    if not resolved.is_file():
        return f"`{location}` is not a file in the project"
    line = int(match.group("line")) if match.group("line") else None
    return Place(resolved.relative_to(root).as_posix(), resolved, line if line and line > 0 else None)


def trigger_places(request: ResearchRequest, limit: int) -> tuple[list[Place], list[str]]:
    """Up to ``limit`` distinct files from the trigger's locations, and a gap for each one not used."""
    places: list[Place] = []
    gaps: list[str] = []
    for location in request.trigger.locations or ((request.trigger.location,) if request.trigger.location else ()):
        place = _place(request.root, location)
        if isinstance(place, str):
            gaps.append(place)
        elif all(p.relative != place.relative for p in places):
            if len(places) < limit:
                places.append(place)
            else:
                gaps.append(f"`{location}` not researched: only {limit} file(s) per answer")
    if not places and not gaps:
        gaps.append("the finding has no location: nothing to look up")
    return places, gaps


def read_text(path: Path) -> str | None:
    """The file's text; None when it is too large, binary or unreadable."""
    try:
        if path.stat().st_size > MAX_FILE_BYTES:
            return None
        data = path.read_bytes()
    except OSError:
        return None
    if b"\x00" in data[:8192]:
        return None
    return data.decode("utf-8", errors="replace")


def quote_code(code: str) -> str:
    code = code.strip().replace("`", "'")
    return f"`{code[:157]}…`" if len(code) > 160 else f"`{code}`"
