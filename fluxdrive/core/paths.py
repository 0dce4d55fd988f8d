"""Turn a user-supplied path into readable text, or one clear InputError.

Every command that reads a file the user named goes through here, so a
missing file, a directory, a permission problem, a binary file or a file that
is not UTF-8 always produce the same one-line message.
"""

from __future__ import annotations

import errno
import os
import re
import stat
from pathlib import Path

from fluxdrive.errors import InputError

# An agent name is also a file name (<agent>.md, verdicts/<agent>.json): no separators, no leading dot.
AGENT_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")


def require_file(path: Path, what: str) -> Path:
    """Return ``path`` if it is an existing regular file we can read."""
    if not path.exists():
        raise InputError(f"{what} not found: {path}", hint="check the path")
    if path.is_dir():
        raise InputError(f"{what} is a directory, not a file: {path}", hint="pass a file path")
    if not os.access(path, os.R_OK):
        raise InputError(f"{what} is not readable: {path}", hint="check its permissions")
    return path


def require_directory(path: Path, what: str) -> Path:
    """Return ``path`` if it is an existing directory we can list."""
    if not path.exists():
        raise InputError(f"{what} not found: {path}", hint="check the path")
    if not path.is_dir():
        raise InputError(f"{what} is not a directory: {path}", hint="pass a directory")
    if not os.access(path, os.R_OK | os.X_OK):
        raise InputError(f"{what} is not readable: {path}", hint="check its permissions")
    return path


def decode_utf8(data: bytes, path: Path, what: str) -> str:
    """Decode ``data`` read from ``path`` strictly, naming the file on failure."""
    if b"\x00" in data[:8192]:
        raise InputError(f"{what} is a binary file: {path}", hint="pass a UTF-8 text file")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(
            f"{what} is not UTF-8 text: {path} (byte {exc.start})",
            hint="convert it to UTF-8",
        ) from None


MAX_TEXT_BYTES = 256 * 1024 * 1024  # a file a person names is text, not a disk image


def read_text(path: Path, what: str) -> str:
    """Read a whole UTF-8 text file the user named (a regular file: never wait on a FIFO or read /dev/zero)."""
    require_file(path, what)
    return decode_utf8(read_regular(path, what, limit=MAX_TEXT_BYTES), path, what)


class UnreadableFileError(InputError):
    """A file that is not a regular file, too large, or cannot be opened; ``problem`` says which without the path."""

    def __init__(self, message: str, problem: str, *, hint: str | None = None) -> None:
        super().__init__(message, hint=hint)
        self.problem = problem


def read_regular(path: Path, what: str = "file", *, limit: int | None = None, follow: bool = True) -> bytes:
    """The bytes of ``path`` if it is a regular file; a device, FIFO or directory is one clear InputError.

    Why open before looking: a FIFO committed where a file is expected (a
    config, an agent definition, a source file) would block ``open()`` until
    a writer appears - forever, in a review. Opening with ``O_NONBLOCK``
    returns at once for any kind of file, and ``fstat`` on the descriptor
    (not the name, which could be swapped in between) decides. ``follow=False``
    adds ``O_NOFOLLOW``: a name that is itself a symlink is refused.
    """
    flags = os.O_RDONLY | os.O_CLOEXEC | getattr(os, "O_NONBLOCK", 0)
    if not follow:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        if not follow and exc.errno == errno.ELOOP:
            raise UnreadableFileError(
                f"{what} {path} is a symlink", "is a symlink", hint="pass a regular file"
            ) from None
        raise UnreadableFileError(
            f"cannot read {what} {path}: {exc.strerror}", f"cannot read: {exc.strerror}"
        ) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            kind = "a directory" if stat.S_ISDIR(info.st_mode) else "not a regular file"
            raise UnreadableFileError(f"{what} {path} is {kind}", f"is {kind}", hint="pass a regular file")
        if limit is not None and info.st_size > limit:
            size = f"is too large ({info.st_size:,} bytes; at most {limit:,})"
            raise UnreadableFileError(f"{what} {path} {size}", size)
        chunks = []
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
        return b"".join(chunks)
    except OSError as exc:
        raise UnreadableFileError(
            f"cannot read {what} {path}: {exc.strerror}", f"cannot read: {exc.strerror}"
        ) from None
    finally:
        os.close(fd)
