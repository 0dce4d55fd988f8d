"""What every benchmark importer shares: its protocol, its options, its summary, and the one fixture writer.

A fixture is written whole or not at all: it is built in a hidden staging directory beside its final
place and renamed into place, and an existing fixture directory is never overwritten (nor anything an
import did not create deleted), so rerunning an import over an earlier output only adds the new cases.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from fluxdrive.core.atomic import atomic_write_bytes, atomic_write_json, fsync_directory
from fluxdrive.eval.fixture import GROUND_TRUTH, safe_relative

__all__ = ["safe_relative"]  # re-exported: every importer checks the paths its data names


@dataclass(frozen=True, slots=True)
class Options:
    """What the user narrowed the import to (``--limit``, ``--language``) and where repositories are."""

    limit: int | None = None
    language: str | None = None
    repos: Path | None = None


@dataclass(slots=True)
class Summary:
    """Counts an import prints: cases (PRs, CVEs) seen and imported, their line-level truths (review comments,
    weaknesses) imported, fixtures written (positive and clean), skips by reason."""

    case: str = "PR"
    truth: str = "comment"
    seen: int = 0
    imported: int = 0
    comments: int = 0
    fixtures: int = 0
    clean: int = 0
    skipped: Counter[str] = field(default_factory=Counter)
    skipped_comments: Counter[str] = field(default_factory=Counter)
    skipped_clean: Counter[str] = field(default_factory=Counter)  # cases that gave no clean-change fixture

    def lines(self) -> list[str]:
        truths = self.truth + ("es" if self.truth.endswith("s") else "s")
        out = [f"{self.case}s seen: {self.seen}, imported: {self.imported}, {truths} imported: {self.comments}"]
        if self.fixtures or self.clean:
            out.append(f"fixtures written: {self.fixtures} positive, {self.clean} clean")
        out += [f"skipped {self.case} ({n}): {reason}" for reason, n in sorted(self.skipped.items())]
        out += [f"skipped {self.truth} ({n}): {reason}" for reason, n in sorted(self.skipped_comments.items())]
        out += [f"no clean change ({n}): {reason}" for reason, n in sorted(self.skipped_clean.items())]
        return out


class Importer(Protocol):
    """A benchmark format: reads SOURCE, writes fixtures under OUT, says what it did."""

    name: str

    def run(self, source: Path, out: Path, options: Options) -> Summary: ...


class SkipError(Exception):
    """A PR (or comment) that cannot become a fixture; the message is the reason counted in the summary."""


_UNSAFE = re.compile(r"[^a-z0-9]+")
_COMMIT_ID = re.compile(r"^[0-9a-f]{7,64}$")


def commit_id(value: object) -> str:
    """A commit id named by benchmark data, checked to be hex before any git command sees it (a value such as
    ``--output=FILE`` would otherwise reach git as an option); SkipError when it is not one."""
    text = str(value or "").strip().lower()
    if not _COMMIT_ID.match(text):
        raise SkipError("a commit named by the data is not a commit id")
    return text


def slug(*parts: str) -> str:
    """A fixture id from ``parts``: lower-case words joined by dashes (stable, filesystem-safe)."""
    return "-".join(p for p in (_UNSAFE.sub("-", part.lower()).strip("-") for part in parts) if p)


def line_count(data: bytes) -> int:
    """How many lines ``data`` has (a last line without a newline counts)."""
    return data.count(b"\n") + (0 if data.endswith(b"\n") or not data else 1)


def write_fixture(out: Path, fixture_id: str, base: dict[str, bytes], patch: str, truth: dict[str, Any]) -> bool:
    """Write fixture ``out/fixture_id`` (base/ files, change.patch, ground-truth.json) all at once.

    False, writing nothing, when that directory already exists. Paths in ``base`` were checked
    by the caller to be relative and free of ``..``.
    """
    final = out / fixture_id
    if final.exists() or final.is_symlink():
        return False
    out.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{fixture_id}.", suffix=".tmp", dir=out))
    try:
        (staging / "base").mkdir()
        for relative, data in sorted(base.items()):
            atomic_write_bytes(staging / "base" / relative, data)
        atomic_write_bytes(staging / "change.patch", patch.encode("utf-8"))
        atomic_write_json(staging / GROUND_TRUTH, truth)
        try:
            os.rename(staging, final)  # refuses (ENOTEMPTY/EEXIST) when something appeared there meanwhile
        except OSError:
            return False
        fsync_directory(out)
        return True
    finally:
        if staging.exists():
            with contextlib.suppress(OSError):
                shutil.rmtree(staging)
