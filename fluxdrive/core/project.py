"""Find PROJECT_ROOT: the nearest ancestor holding ``.git`` (PROTOCOL.md 1), and directories inside it."""

from __future__ import annotations

from pathlib import Path

from fluxdrive.core.atomic import atomic_write_text
from fluxdrive.core.confine import confine
from fluxdrive.core.paths import read_regular, require_directory
from fluxdrive.errors import FluxdriveError

# The first line of the .gitignore fluxdrive keeps beside its caches; a .gitignore without it is the user's.
IGNORE_HEADER = "# fluxdrive's caches: this clone's state, never committed (this file ignores itself)\n"


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


def cache_file(root: Path, relative: str | Path, what: str) -> Path:
    """:func:`project_file` for a cache (the domain cache): listed in a ``.gitignore`` beside it, so a
    review never leaves ``?? .fluxdrive/`` in ``git status`` while the files people commit there (config,
    baseline, agents) stay visible. The ``.gitignore`` is fluxdrive's own and ignores itself; one the user
    wrote is left as it is."""
    path = project_file(root, relative, what)
    ignore = project_file(root, Path(relative).parent / ".gitignore", "the caches' .gitignore")
    try:
        current = (
            read_regular(ignore, "the caches' .gitignore", limit=64 * 1024).decode("utf-8") if ignore.exists() else None
        )
    except (OSError, UnicodeDecodeError, FluxdriveError):  # unreadable: leave it, the cache still works
        return path
    if current is not None and not current.startswith(IGNORE_HEADER):
        return path  # the user's own: never rewritten
    listed = {line for line in (current or "").splitlines()[1:] if line}
    wanted = listed | {".gitignore", path.name}
    if wanted != listed:
        ignore.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(ignore, IGNORE_HEADER + "".join(f"{name}\n" for name in sorted(wanted)))
    return path


def project_directory(root: Path, relative: str, what: str) -> Path:
    """``root/relative`` for a configured directory (knowledge store, knowledge base), refused if a symlink
    (or the setting) takes it outside the project."""
    return confine(Path(root) / relative, Path(root), what)
