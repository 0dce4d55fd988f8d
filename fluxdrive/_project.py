"""Find PROJECT_ROOT: the nearest ancestor holding ``.git`` (PROTOCOL.md 1)."""

from __future__ import annotations

from pathlib import Path


def find_project_root(start: Path) -> Path:
    """The nearest ancestor of ``start`` (a directory, or a file's parent) with ``.git``.

    Falls back to the starting directory itself when no repository encloses it.
    """
    start = Path(start).resolve()
    base = start if start.is_dir() else start.parent
    for candidate in (base, *base.parents):
        if (candidate / ".git").exists():
            return candidate
    return base
