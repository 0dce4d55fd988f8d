"""The one walk over a project's files, and the one list of directories no walk enters.

Every part of fluxdrive that lists a project's files - the review's file list,
the llm reviewer's ``list_files`` and ``grep``, the secret values collected at
the start of a run, the knowledge inquisitor looking for a moved file, the
triage samplers - skips the same directories, :data:`SKIPPED_DIRS`, so a file
one of them sees is never a file another one hides. What differs between them
is scope, and scope is a parameter here, never another list: whether
``.gitignore`` applies (the secret collector must read the ignored ``.env``),
whether dot-directories are entered, which fluxdrive output paths to prune.

The review's list (:func:`list_files`) asks git when the tree is a repository
(``ls-files --cached --others --exclude-standard``: tracked and untracked,
ignored left out) and otherwise walks, reading the ``.gitignore`` files itself.
Either way the result is sorted, relative to the project root, holds only
regular files inside the root (a symlink is resolved and kept only when it
lands on a regular file inside the root), and never enters a skipped
directory. This module needs only ``core``, so ``runtimes``, ``triage``,
``kb`` and ``workspace`` all import it without importing each other.
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pathspec

import fluxdrive.core.git as _git
from fluxdrive.core.names import decodable, shown
from fluxdrive.core.paths import read_regular, require_directory
from fluxdrive.errors import InputError

MAX_IGNORE_BYTES = 4 * 1024 * 1024

# Version-control metadata: history, not the project's files (and the llm tools refuse to read it).
VCS_DIRS = frozenset({".git", ".hg", ".svn"})
# Installed dependencies and the environments that hold them: someone else's code, reviewed upstream.
DEPENDENCY_DIRS = frozenset({"node_modules", ".venv", "venv", ".tox", ".nox", ".eggs"})
# Caches tools write beside the code: derived, regenerated, never written by a person.
CACHE_DIRS = frozenset({"__pycache__", ".mypy_cache", ".pytest_cache", ".ruff_cache"})
# Build outputs: copies of the sources (or compiled from them), reviewed where they come from.
BUILD_DIRS = frozenset({"dist", "build"})
# fluxdrive's own configuration, agents and caches: the tool's, not the project's code.
OWN_DIRS = frozenset({".fluxdrive"})
# The one skip policy. fluxdrive's runs are not named here: git ignores them (each runs container holds a
# ``.gitignore`` of ``*``), so a repository cannot hide its code by putting it where runs usually go.
SKIPPED_DIRS = VCS_DIRS | DEPENDENCY_DIRS | CACHE_DIRS | BUILD_DIRS | OWN_DIRS


def skipped(relative: str) -> bool:
    """True when a directory of ``relative`` (a POSIX path; its last part is the file) is one no walk enters."""
    return any(part in SKIPPED_DIRS for part in relative.split("/")[:-1])


def walk(top: Path, *, gitignore: bool = True, hidden_dirs: bool = True, prune: tuple[str, ...] = ()) -> Iterator[str]:
    """Every file name under ``top``, relative to it (POSIX), directory by directory in name order.

    Never through a link (a link to a directory is neither entered nor
    listed; a link to a file is listed, for the caller to judge) and never
    into :data:`SKIPPED_DIRS`. ``gitignore`` honours the ``.gitignore``
    files met on the way; ``hidden_dirs=False`` leaves dot-directories out;
    ``prune`` names directory paths (relative to ``top``) not to enter, such
    as fluxdrive's own output trees for a walk that reads ignored files.
    """
    ignores = _Ignores()
    for current, dirs, files in os.walk(top, followlinks=False):
        base = Path(current).relative_to(top).as_posix()
        prefix = "" if base == "." else base + "/"
        if gitignore:
            ignores.read(Path(current), prefix)
        entered = []
        for name in sorted(dirs):
            relative = prefix + name
            if name in SKIPPED_DIRS or (not hidden_dirs and name.startswith(".")) or relative.startswith(prune):
                continue
            if _environment(Path(current, name)):
                continue
            if not ignores.ignored(relative, is_dir=True):
                entered.append(name)
        dirs[:] = entered
        yield from (prefix + name for name in sorted(files) if not ignores.ignored(prefix + name, is_dir=False))


def _environment(directory: Path) -> bool:
    """An installed environment under any name (``.venv-bench``, ``env3``): third-party code, not the project's.

    Its marker is what the tools write: ``pyvenv.cfg`` for a virtualenv, ``conda-meta`` for conda.
    """
    return (directory / "pyvenv.cfg").is_file() or (directory / "conda-meta").is_dir()


class _Ignores:
    """The ``.gitignore`` rules met so far on a walk, each applying under the directory that holds it."""

    def __init__(self) -> None:
        self.specs: list[tuple[str, pathspec.GitIgnoreSpec]] = []

    def read(self, directory: Path, prefix: str) -> None:
        ignore = directory / ".gitignore"
        if not ignore.is_file():
            return
        with contextlib.suppress(InputError):  # a FIFO swapped in after the check: no rules, never a wait
            data = read_regular(ignore, ".gitignore", limit=MAX_IGNORE_BYTES)
            lines = data.decode("utf-8", errors="replace").splitlines()
            self.specs.append((prefix, pathspec.GitIgnoreSpec.from_lines(lines)))

    def ignored(self, relative: str, *, is_dir: bool) -> bool:
        for prefix, spec in self.specs:
            if relative.startswith(prefix) and spec.match_file(relative[len(prefix) :] + ("/" if is_dir else "")):
                return True
        return False


def _blocking_ignore_file(directory: Path) -> bool:
    """True when a ``.gitignore`` under ``directory`` is a FIFO, device or socket.

    Why look first: ``git ls-files --exclude-standard`` opens every
    ``.gitignore`` it meets with a blocking ``open()``, so one FIFO committed
    under that name hangs git (until the 60 s timeout). One pass of
    ``lstat`` (no file is opened, links are not followed) finds it; the
    listing then walks the tree itself, which reads only regular files.
    """
    pending = [directory]
    while pending:
        try:
            with os.scandir(pending.pop()) as entries:
                for entry in entries:
                    if entry.is_dir(follow_symlinks=False):
                        if entry.name not in SKIPPED_DIRS:
                            pending.append(Path(entry.path))
                    elif entry.name == ".gitignore" and not entry.is_symlink() and not entry.is_file():
                        return True
        except OSError:
            continue
    return False


def committed_files(directory: Path) -> list[str]:
    """What a commit of ``directory`` would hold: tracked files, and untracked ones git would add - except
    what fluxdrive itself writes (``.fluxdrive/``, ``docs/research/flux-*``) unless it is tracked.

    Every file outside git (a release tarball's fixture holds nothing else). Why: a copy of a fixture
    must be the fixture, whatever runs left in it (a ``fluxdrive review --project`` on a fixture
    made the next ``make test`` fail 17 tests).
    """
    listed = _git_files(directory)
    if listed is None:
        return sorted(
            os.path.relpath(os.path.join(current, name), directory)
            for current, _dirs, files in os.walk(directory)
            for name in files
        )
    tracked = set(_git_files(directory, others=False) or ())
    return [name for name in listed if name in tracked or not _OURS.search(name)]


_OURS = re.compile(r"(^|/)(\.fluxdrive|docs/research/flux-(drive|research))/")


def _git_files(directory: Path, *, others: bool = True) -> list[str] | None:
    if _blocking_ignore_file(directory):
        return None
    untracked = ("--others", "--exclude-standard") if others else ()
    argv = _git.command(directory, "ls-files", "-z", "--cached", *untracked, "--", ".")
    if argv is None:
        return None
    try:
        proc = subprocess.run(argv, cwd=directory, capture_output=True, timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if proc.returncode != 0:
        return None
    names = proc.stdout.decode("utf-8", errors="surrogateescape").split("\0")
    return [n for n in names if n and os.path.lexists(directory / n)]


@dataclass(frozen=True, slots=True)
class FileList:
    """The files to review, and the ones left out with the reason (a symlink out of the root, a loop, a FIFO)."""

    files: tuple[str, ...]
    skipped: tuple[tuple[str, str], ...] = ()


def list_files(path: Path, root: Path) -> FileList:
    """The files to review for ``path``, relative to ``root``, sorted; only regular files inside the root.

    Listing never descends into a symlinked directory (git records it as a
    link; the walk does not follow links), so only a listed name itself can
    be a link: one ``lstat`` per file tells, and only links are resolved.
    """
    path = Path(path).resolve()
    root = Path(root).resolve()
    if not path.exists():
        raise InputError(f"input not found: {path}", hint="check the path")
    try:
        prefix = path.relative_to(root)
    except ValueError:
        raise InputError(f"{path} is outside the project root {root}") from None
    if path.is_file():
        return FileList((prefix.as_posix(),))
    require_directory(path, "input directory")
    listed = _git_files(path) if (root / ".git").exists() else None
    names = listed if listed is not None else list(walk(path))
    base = "" if str(prefix) == "." else prefix.as_posix() + "/"
    kept: list[str] = []
    left_out: list[tuple[str, str]] = []
    for name in names:
        relative = f"{base}{name}"
        if skipped(relative):
            continue
        if not decodable(relative):  # no writer can encode it: skipped, and named with its bytes escaped
            left_out.append((shown(relative), "its name is not UTF-8 text"))
            continue
        reason = _unreadable(root, relative)
        if reason is None:
            kept.append(relative)
        elif reason:
            left_out.append((relative, reason))
    return FileList(tuple(sorted(kept)), tuple(sorted(left_out)))


def _unreadable(root: Path, relative: str) -> str | None:
    """Why a listed name is not reviewed (``""``: silently, a link to a directory), or None."""
    try:
        mode = os.lstat(root / relative).st_mode
    except OSError as exc:
        return exc.strerror or "unreadable"
    if stat.S_ISREG(mode):
        return None
    if not stat.S_ISLNK(mode):
        return "not a regular file"
    try:
        real = (root / relative).resolve(strict=True)
    except (OSError, RuntimeError):
        return "a broken symlink or a symlink loop"
    if real != root and root not in real.parents:
        return f"a symlink to {real}, outside the project root"
    return None if real.is_file() else ""


def review_files(path: Path, root: Path) -> tuple[str, ...]:
    """The files to review for ``path``, relative to ``root``, sorted (see :func:`list_files`)."""
    return list_files(path, root).files
