"""Turn a user-supplied path into readable text, or one clear InputError.

Every command that reads a file the user named goes through here, so a
missing file, a directory, a permission problem, a binary file or a file that
is not UTF-8 always produce the same one-line message.
"""

from __future__ import annotations

import os
import re
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


def read_text(path: Path, what: str) -> str:
    """Read a whole UTF-8 text file the user named."""
    require_file(path, what)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read {what} {path}: {exc.strerror}") from None
    return decode_utf8(data, path, what)
