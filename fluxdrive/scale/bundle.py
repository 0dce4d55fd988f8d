"""The reviewed files, shipped to a node that has no copy of the project.

A review driven from a laptop against a cluster elsewhere cannot assume the
nodes see the driver's disk. The driver puts the reviewed files into Ray's
object store once per review (:func:`pack`); an agent task first checks
whether the project is already on its node at the same path with the same
bytes (same machine, or a shared file system) and uses it in place, and
otherwise materializes the bundle once per node under the temp directory
(:func:`resolve_root`), keyed by the content digest.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from fluxdrive.core.atomic import atomic_write_bytes

CACHE_DIR = "fluxdrive-content"


@dataclass(frozen=True, slots=True)
class Bundle:
    """The driver's root, the reviewed files, their digest, and (boxed, so Ray does not fetch it eagerly) the ref."""

    root: str
    files: tuple[str, ...]
    digest: str
    boxed: tuple[Any, ...] = ()  # (ObjectRef of {file: bytes},) - fetched only by a node that needs it


def _read(root: Path, name: str) -> bytes | None:
    try:
        return (root / name).read_bytes()
    except OSError:
        return None


def digest_of(root: Path, files: Sequence[str]) -> str:
    """sha256 over every file's name and bytes (a missing file counts as missing)."""
    total = hashlib.sha256()
    for name in sorted(files):
        data = _read(root, name)
        total.update(name.encode() + b"\0")
        total.update(hashlib.sha256(data).digest() if data is not None else b"missing")
    return total.hexdigest()


def pack(root: Path, files: Sequence[str], put: Any) -> Bundle:
    """The bundle of ``files`` under ``root``; ``put`` stores the bytes (``ray.put``)."""
    contents = {name: data for name in files if (data := _read(root, name)) is not None}
    return Bundle(str(root), tuple(files), digest_of(root, files), (put(contents),))


def _safe(name: str) -> bool:
    parts = PurePosixPath(name).parts
    return bool(parts) and not PurePosixPath(name).is_absolute() and ".." not in parts


def materialize(contents: dict[str, bytes], target: Path) -> Path:
    """Write ``contents`` under ``target`` (created whole or not at all); names that leave it are skipped."""
    if target.is_dir():
        return target
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=target.parent))
    try:
        for name, data in contents.items():
            if _safe(name):
                path = staging / name
                path.parent.mkdir(parents=True, exist_ok=True)
                atomic_write_bytes(path, data)
        os.rename(staging, target)
    except OSError:
        shutil.rmtree(staging, ignore_errors=True)
        if not target.is_dir():  # another task of this node won the race: its copy is the same bytes
            raise
    return target


def resolve_root(bundle: Bundle, get: Any) -> tuple[Path, bool]:
    """Where the task reads the project: (root, shipped). ``get`` fetches the bytes (``ray.get``)."""
    local = Path(bundle.root)
    if local.is_dir() and digest_of(local, bundle.files) == bundle.digest:
        return local, False
    cache = Path(tempfile.gettempdir()) / CACHE_DIR
    cache.mkdir(mode=0o700, exist_ok=True)
    return materialize(get(bundle.boxed[0]), cache / bundle.digest), True
