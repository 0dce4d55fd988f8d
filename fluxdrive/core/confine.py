"""Keep every read inside the project: one helper resolves a path and refuses what escapes.

Why one place: a reviewed tree is input nobody vetted. A symlink
``app/x.py -> /etc/passwd`` (or a report, channel or verdict file linked out
of an output directory) must not be analyzed, quoted into a report, served
over MCP or sent to a model provider. Every reader - the LLM tools, the
static analyzers, triage, synthesis and the MCP drill-downs - resolves what
it opens here: symlinks are followed, ``..`` collapsed, and anything whose
real path lies outside the root is refused. A symlink that points somewhere
inside the root stays fine. A symlink loop is refused too, with the same
kind of one-line reason, instead of surfacing as ``OSError: Too many levels
of symbolic links``.

The check resolves and then opens the resolved path, so a link swapped in
between the listing and the read is caught at the read.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from fluxdrive.core.paths import read_regular
from fluxdrive.errors import InputError


class OutsideRootError(InputError):
    """A path resolves outside the root it must stay in (or cannot be resolved at all)."""


def real_path(path: Path) -> Path | None:
    """``path`` with every symlink resolved, or None for a loop or an unresolvable link."""
    try:
        return Path(path).resolve(strict=False)
    except (OSError, RuntimeError):  # RuntimeError: symlink loop on older Pythons
        return None


def is_inside(path: Path, root: Path) -> bool:
    """True when ``path`` (symlinks resolved) is ``root`` or lies under it."""
    real = real_path(path)
    base = real_path(root)
    return real is not None and base is not None and (real == base or base in real.parents)


def confine(path: Path, root: Path, what: str = "path") -> Path:
    """The real path of ``path`` if it stays inside ``root``; else :class:`OutsideRootError` (exit 2)."""
    real = real_path(path)
    base = real_path(root)
    if real is None or base is None:
        raise OutsideRootError(f"{what} {path} cannot be resolved (a symlink loop?)", hint="remove the broken link")
    if real != base and base not in real.parents:
        raise OutsideRootError(
            f"{what} {path} resolves to {real}, outside {base}",
            hint="fluxdrive reads only inside the project root; symlinks out of it are refused",
        )
    if _loops(real):
        raise OutsideRootError(f"{what} {path} is a symlink loop", hint="remove the broken link")
    return real


def _loops(real: Path) -> bool:
    try:
        os.stat(real)
    except OSError as exc:
        return exc.errno == 40  # ELOOP
    return False


def why_unreadable(relative: str, root: Path) -> str | None:
    """Why the project file ``relative`` may not be read (outside the root, a loop, not a regular file), or None."""
    path = Path(root) / relative
    real = real_path(path)
    base = real_path(root)
    if real is None or _loops(real if real is not None else path):
        return "a symlink loop"
    if base is None or (real != base and base not in real.parents):
        return f"a symlink to {real}, outside the project root"
    try:
        mode = os.stat(real).st_mode
    except OSError as exc:
        return exc.strerror or "unreadable"
    if not stat.S_ISREG(mode):
        return "not a regular file"
    return None


def read_confined(path: Path, root: Path, what: str = "file", *, limit: int | None = None) -> bytes:
    """The bytes of a regular file that resolves inside ``root`` (at most ``limit`` bytes, if given).

    Devices, FIFOs and directories are refused: ``/dev/zero`` must not be read forever.
    """
    real = confine(path, root, what)
    return read_regular(real, what, limit=limit)
