"""A run's output directory: a fresh directory per run, and the familiar path a link swung to it.

Why: the repository under review is untrusted, and the default run folder's
name is predictable (``docs/research/flux-drive/<stem>-<hash>``). A run that
reused a folder and cleared the previous run's files could be steered - by a
committed folder whose entries link elsewhere, or a committed link on the
way to it - into deleting and writing files anywhere. So a run never
deletes, and never writes into anything that existed before it:

- every run writes into a directory it has just created with an exclusive
  ``mkdir`` (``PARENT/.fluxdrive-runs/NAME/<UTC time>-<random>``): nothing
  committed or left by anyone can be inside it;
- the path the user knows (``PARENT/NAME``, the *pointer*) becomes a
  relative symlink to that directory, replaced atomically (a new link
  renamed over it) once the run holds its lock. Before that, the pointer
  path must be absent, fluxdrive's own pointer (a link of exactly that
  shape: replaced, never followed), or an empty directory (``rmdir``, which
  cannot remove anything else). Anything else is refused with one line;
- the chain of directories down to PARENT (``docs/research/flux-drive``
  for the default) is created one component at a time, and a component that
  resolves outside the intended root (a committed link out of the project)
  is refused; fluxdrive's own ``.fluxdrive-runs/NAME`` is opened with
  ``O_NOFOLLOW``, so a committed link there is refused too.

Earlier runs stay on disk, each in its own directory (nothing is ever
deleted; ``rm -r PARENT/.fluxdrive-runs`` reclaims the space).
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import stat
from datetime import UTC, datetime
from pathlib import Path

from fluxdrive.core.atomic import fsync_directory
from fluxdrive.errors import InputError, UsageError

RUNS_CONTAINER = ".fluxdrive-runs"
RUN_MARKER = ".fluxdrive-run"  # workspace.RUN_MARKER
_STAMP = r"\d{8}T\d{6}\.\d{6}Z-[0-9a-f]{6}"
_DIRECTORY = os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0)


def directory_within(root: Path, relative: Path) -> Path:
    """``root/relative`` created one component at a time, each checked to resolve inside ``root``.

    A component that exists may be a link that stays inside the root (a
    ``docs -> documentation`` the project chose); one that leads out of it,
    or is not a directory, is refused (exit 2) before anything is created
    beyond it. Returns the real path.
    """
    base = Path(os.path.realpath(root))
    current = base
    for part in Path(relative).parts:
        candidate = current / part
        try:
            os.mkdir(candidate, 0o755)  # never follows a link at ``candidate``: it exists, so EEXIST
        except FileExistsError:
            pass
        except OSError as exc:
            raise InputError(f"cannot create output directory {candidate}: {exc.strerror}") from None
        real = Path(os.path.realpath(candidate))
        if real != base and base not in real.parents:
            raise InputError(
                f"output directory {candidate} resolves to {real}, outside the project root {base}",
                hint="a symlink in the repository leads out of it and is never written through; "
                "pass --output-dir to write the run elsewhere",
            )
        if not real.is_dir():
            raise InputError(f"output directory {candidate} is not a directory", hint="pass --output-dir")
        current = real
    return current


def pointer_target(pointer: Path) -> str | None:
    """The run directory a fluxdrive pointer at ``pointer`` names, or None when the path is not one."""
    try:
        text = os.readlink(pointer)
    except OSError:
        return None
    shape = rf"{re.escape(RUNS_CONTAINER)}/{re.escape(pointer.name)}/({_STAMP})"
    found = re.fullmatch(shape, text)
    return found[1] if found else None


def check_pointer(pointer: Path) -> None:
    """Refuse (exit 2) a pointer path holding anything but nothing, fluxdrive's pointer or an empty directory."""
    try:
        mode = os.lstat(pointer).st_mode
    except (FileNotFoundError, NotADirectoryError):  # the parent is made (or refused) next
        return
    except OSError as exc:
        raise InputError(f"cannot use output directory {pointer}: {exc.strerror}") from None
    if stat.S_ISLNK(mode):
        if pointer_target(pointer) is None:
            raise UsageError(
                f"output directory {pointer} is a symlink fluxdrive did not create (to {os.readlink(pointer)})",
                hint="fluxdrive never writes through a link it did not make; remove it or pass another --output-dir",
            )
        return
    if not stat.S_ISDIR(mode):
        raise InputError(f"output directory {pointer} exists and is not a directory", hint="pass a directory")
    try:
        entries = os.listdir(pointer)
    except OSError as exc:
        raise InputError(f"cannot list output directory {pointer}: {exc.strerror}") from None
    if entries:
        earlier = "if an earlier fluxdrive version wrote it, move it away; " if RUN_MARKER in entries else ""
        raise UsageError(
            f"output directory {pointer} is not empty and was not created by fluxdrive",
            hint=f"{earlier}each run writes a fresh directory and links this path to it: "
            "pass a new or empty --output-dir",
        )


def open_slot(parent: Path, name: str) -> Path:
    """``PARENT/.fluxdrive-runs/NAME``, created if missing; refused (exit 2) if either part is a link or a file."""
    path = Path(parent)
    try:
        fd = os.open(path, _DIRECTORY)
    except OSError as exc:
        raise InputError(f"cannot open output directory {path}: {exc.strerror}") from None
    try:
        for part in (RUNS_CONTAINER, name):
            path = path / part
            created = False
            try:
                os.mkdir(part, 0o755, dir_fd=fd)
                created = True
            except FileExistsError:
                pass
            except OSError as exc:
                raise InputError(f"cannot create output directory {path}: {exc.strerror}") from None
            try:
                child = os.open(part, _DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
            except OSError:
                raise UsageError(
                    f"{path} is a symlink or not a directory, and fluxdrive keeps its runs there",
                    hint="fluxdrive made neither; remove it or pass another --output-dir",
                ) from None
            os.close(fd)
            fd = child
            if created and part == RUNS_CONTAINER:
                _ignore_everything(fd)
    finally:
        os.close(fd)
    return path


IGNORE_ALL = "# Written by fluxdrive: its runs are outputs, not sources.\n*\n"


def _ignore_everything(directory_fd: int) -> None:
    """A ``.gitignore`` of ``*`` in the runs container fluxdrive has just made.

    Why: a review lists the project's files as git does (and honours ``.gitignore`` when walking a tree
    that is not a repository), so runs that git ignores are never reviewed - without excluding any
    directory by its name or by a marker file, which a hostile repository could use to hide its code.
    """
    with contextlib.suppress(OSError):
        fd = os.open(".gitignore", os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644, dir_fd=directory_fd)
        try:
            os.write(fd, IGNORE_ALL.encode())
        finally:
            os.close(fd)


def fresh_run_dir(slot: Path) -> Path:
    """A new directory in ``slot``, created exclusively and named by UTC time (names sort by age)."""
    for _attempt in range(100):
        name = f"{datetime.now(UTC):%Y%m%dT%H%M%S.%fZ}-{secrets.token_hex(3)}"
        try:
            os.mkdir(slot / name, 0o755)
        except FileExistsError:
            continue
        except OSError as exc:
            raise InputError(f"cannot create output directory {slot / name}: {exc.strerror}") from None
        return slot / name
    raise InputError(f"cannot create a fresh run directory in {slot}", hint="retry")


def point(pointer: Path, run_dir: Path) -> None:
    """Make ``pointer`` a relative link to ``run_dir`` (in its slot), atomically: readers see the old or the new."""
    check_pointer(pointer)  # again, under the run's lock
    link = f"{RUNS_CONTAINER}/{pointer.name}/{run_dir.name}"
    temporary = pointer.parent / f".{pointer.name}.{secrets.token_hex(4)}.link.tmp"
    try:
        os.symlink(link, temporary)
        if not os.path.islink(pointer) and os.path.isdir(pointer):
            os.rmdir(pointer)  # empty (checked); rmdir refuses anything else
        os.replace(temporary, pointer)  # replaces a link itself, never what it points at
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise InputError(
            f"cannot point {pointer} at this run: {exc.strerror}", hint="pass another --output-dir"
        ) from None
    fsync_directory(pointer.parent)


def discard_if_empty(run_dir: Path) -> None:
    """Undo :func:`fresh_run_dir` when the run never started: its marker, then the (then empty) directory."""
    with contextlib.suppress(OSError):
        os.unlink(run_dir / RUN_MARKER)
    with contextlib.suppress(OSError):
        os.rmdir(run_dir)
