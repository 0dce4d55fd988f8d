"""Find PROJECT_ROOT: the nearest ancestor holding ``.git`` (PROTOCOL.md 1), and directories inside it."""

from __future__ import annotations

from pathlib import Path

from fluxdrive.core.confine import confine
from fluxdrive.core.paths import require_directory


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


def project_from_option(project: Path | None) -> Path:
    """PROJECT_ROOT for a ``--project DIR`` option (default: the current directory); DIR must exist.

    Without the check a mistyped ``--project /nonexistent`` resolves to ``/``
    (the nearest existing ancestor has no ``.git``) and the command succeeds
    on the wrong tree.
    """
    if project is not None:
        require_directory(Path(project), "--project directory")
    return find_project_root((project or Path.cwd()).resolve())


def project_file(root: Path, relative: str | Path, what: str) -> Path:
    """``root/relative`` for a file fluxdrive keeps in the project (the domain cache, the last-review record),
    refused (:class:`~fluxdrive.errors.OutsideRootError`) when a committed symlink - the file itself or a
    directory on the way, such as ``.fluxdrive`` - would take the write outside the project."""
    path = Path(root) / relative
    confine(path, Path(root), what)
    return path


def project_directory(root: Path, relative: str, what: str) -> Path:
    """``root/relative`` for a configured directory (knowledge store, knowledge base), refused if a symlink
    (or the setting) takes it outside the project."""
    return confine(Path(root) / relative, Path(root), what)
