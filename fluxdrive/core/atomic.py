"""The one way fluxdrive writes a durable file: temp sibling, fsync, rename.

A reader never sees a half-written file: the data goes to a hidden temporary
file in the same directory (same file system, so the rename is atomic), is
flushed to disk, and replaces the target with ``os.replace``. The directory is
fsynced afterwards so the rename itself survives a crash.

This module imports nothing from the package, so every layer may use it.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any


def fsync_directory(directory: Path) -> None:
    """Persist a rename or unlink in ``directory`` (a no-op where unsupported)."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


@contextlib.contextmanager
def atomic_writer(path: Path, *, mode: int = 0o644) -> Iterator[IO[bytes]]:
    """Yield a binary file; on clean exit it atomically becomes ``path``.

    If the block raises, the temporary file is removed and ``path`` is left
    exactly as it was.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
        raise
    fsync_directory(path.parent)


def atomic_write_bytes(path: Path, data: bytes, *, mode: int = 0o644) -> None:
    """Replace ``path`` with ``data`` atomically."""
    with atomic_writer(path, mode=mode) as handle:
        handle.write(data)


def atomic_write_text(path: Path, text: str, *, mode: int = 0o644) -> None:
    """Replace ``path`` with UTF-8 ``text`` atomically."""
    atomic_write_bytes(path, text.encode("utf-8"), mode=mode)


def atomic_write_json(path: Path, data: Any, *, mode: int = 0o644) -> None:
    """Replace ``path`` with ``data`` as indented JSON (stable, newline-terminated)."""
    text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    atomic_write_text(path, text, mode=mode)
