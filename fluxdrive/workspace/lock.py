"""One run per output directory: a fresh directory each run, the path the user knows pointed at it.

A run first claims its output path (:func:`claim_output_dir`: refused,
exit 2, before anything is written, when the path is the user's own), then
holds an ``flock`` for the whole run (:func:`run_lock`), under which the
run's fresh directory is made and the path swung to it. The kernel releases
the lock however its holder dies, so there is never a stale lock to break.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import socket
import stat
from collections.abc import Iterator
from pathlib import Path

import fluxdrive.core.run_dirs as _run_dirs
from fluxdrive.core.atomic import atomic_write_text
from fluxdrive.core.clock import utc_timestamp
from fluxdrive.errors import InputError, UsageError
from fluxdrive.workspace.target import Target

LOCK_FILE = ".fluxdrive.lock"
RUN_MARKER = _run_dirs.RUN_MARKER
RUNS_CONTAINER = _run_dirs.RUNS_CONTAINER
# Pointer paths claimed by this process and not yet locked, with their slot (``PARENT/.fluxdrive-runs/NAME``).
_CLAIMED: dict[str, Path] = {}


class BusyError(InputError):
    """Another live run holds the output directory."""


def claim_output_dir(output_dir: Path, target: Target | None = None) -> Path:
    """Check that a run may point ``output_dir`` at a fresh directory of its own; refuse (exit 2) before writing.

    ``output_dir`` must be absent, the link an earlier run left, or an empty
    directory; a user's ``docs/``, a committed run folder or a link that
    fluxdrive did not make is refused, and so is an output directory that
    holds the input under review. The parent is created (the user chose it);
    fluxdrive's own ``.fluxdrive-runs/NAME`` beside it must not be a link.
    Returns the pointer path (its parent resolved), which :func:`run_lock`
    points at the run's fresh directory once it holds the lock: every reader
    of ``OUTPUT_DIR/findings.json`` finds this run's file.
    """
    pointer = Path(os.path.abspath(output_dir))
    if pointer.name in ("", ".", ".."):
        raise UsageError(f"output directory {output_dir} has no name", hint="pass a directory path")
    if target is not None and target.path is not None:
        reviewed = Path(target.path).resolve()
        real = Path(os.path.realpath(pointer))
        if reviewed in (real, pointer) or real in reviewed.parents or pointer in reviewed.parents:
            raise UsageError(
                f"the input {target.label} is inside the output directory {pointer}",
                hint="the output directory becomes a link to the run's own directory: pass a different --output-dir",
            )
    _run_dirs.check_pointer(pointer)
    try:
        pointer.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"cannot create output directory {pointer}: {exc.strerror}") from None
    pointer = Path(os.path.realpath(pointer.parent)) / pointer.name
    _run_dirs.check_pointer(pointer)
    _CLAIMED[str(pointer)] = _run_dirs.open_slot(pointer.parent, pointer.name)
    return pointer


def is_run_directory(directory: Path) -> bool:
    """True for a directory that holds fluxdrive's run marker."""
    return (Path(directory) / RUN_MARKER).is_file()


@contextlib.contextmanager
def run_lock(output_dir: Path, *, command: str = "review") -> Iterator[Path]:
    """Hold the run lock of ``output_dir`` for the duration of a run.

    For a path :func:`claim_output_dir` claimed (or the link an earlier run
    left), the lock is ``.fluxdrive.lock`` in its slot, and once it is held
    the run's fresh directory is created and ``output_dir`` pointed at it.
    For any other directory (the knowledge base's) it is
    ``OUTPUT_DIR/.fluxdrive.lock``.

    The lock is an ``flock`` on the file, so the kernel releases it when its
    holder dies, however it dies (kill -9 included): there is no stale lock
    to take over, and no window in which two runs both believe they own it.
    The file records the owner's PID, host and start time, for the message a
    refused run prints.
    """
    output_dir = Path(output_dir)
    slot = _slot(output_dir)
    if slot is None:
        try:
            output_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise InputError(f"cannot create output directory {output_dir}: {exc.strerror}") from None
    path = (slot or output_dir) / LOCK_FILE
    record = {"pid": os.getpid(), "host": socket.gethostname(), "started_at": utc_timestamp(), "command": command}
    fd = _acquire(path, output_dir)
    try:
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps(record).encode(), 0)
    except OSError:
        pass  # the record only improves a refused run's message
    try:
        if slot is not None:
            _start_run(Path(os.path.abspath(output_dir)), slot)
        yield path
    finally:
        with contextlib.suppress(OSError):
            path.unlink()  # still holding the lock: nobody can be between open and flock on this inode
        os.close(fd)


def _slot(output_dir: Path) -> Path | None:
    """The slot of a claimed pointer path, or of the link an earlier run left there; None for a plain directory."""
    pointer = Path(os.path.abspath(output_dir))
    claimed = _CLAIMED.pop(str(pointer), None)
    if claimed is not None:
        return claimed
    if _run_dirs.pointer_target(pointer) is None:
        return None
    pointer = Path(os.path.realpath(pointer.parent)) / pointer.name
    return _run_dirs.open_slot(pointer.parent, pointer.name)


def _start_run(pointer: Path, slot: Path) -> None:
    """Under the lock: this run's fresh directory, marked, and the pointer swung to it."""
    run_dir = _run_dirs.fresh_run_dir(slot)
    record = {"created_by": "fluxdrive", "created_at": utc_timestamp()}
    try:
        atomic_write_text(run_dir / RUN_MARKER, json.dumps(record) + "\n")
        _run_dirs.point(Path(os.path.realpath(pointer.parent)) / pointer.name, run_dir)
    except OSError as exc:
        _run_dirs.discard_if_empty(run_dir)
        raise InputError(f"cannot create output directory {run_dir}: {exc.strerror}") from None
    except InputError:
        _run_dirs.discard_if_empty(run_dir)
        raise


def _acquire(path: Path, output_dir: Path) -> int:
    """An open descriptor of ``path`` holding an exclusive flock on the file currently at ``path``."""
    for _attempt in range(100):
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o644)
        except OSError as exc:
            raise InputError(f"cannot write to output directory {output_dir}: {exc.strerror}") from None
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_nlink > 1:  # a hard link would truncate someone's file
            os.close(fd)
            hint = "remove it, or pass another --output-dir"
            raise InputError(f"{path} is not a lock file fluxdrive made", hint=hint)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            owner = _owner(fd)
            os.close(fd)
            who = f" (pid {owner.get('pid')}, started {owner.get('started_at', '?')})" if owner else ""
            raise BusyError(
                f"{output_dir} is in use by another fluxdrive run{who}",
                hint="wait for it to finish, or pass a different --output-dir",
            ) from None
        try:
            current = os.stat(path).st_ino
        except FileNotFoundError:
            current = None
        if current == os.fstat(fd).st_ino:
            return fd
        os.close(fd)  # the holder we waited on unlinked it: lock the new file instead
    raise BusyError(f"could not take the lock on {output_dir}", hint="retry, or pass a different --output-dir")


def _owner(fd: int) -> dict[str, object] | None:
    try:
        data = json.loads(os.pread(fd, 4096, 0).decode("utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None
