"""Read-only questions to a benchmark's upstream repository (a mirror or clone, bare or not).

The repositories are downloaded, untrusted data: every git command goes through
:func:`fluxdrive.core.git.command`, which switches off the programs a repository's own config could
name (hooks, fsmonitor, filters, textconv), and nothing read from them chooses what runs.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

from fluxdrive.core.git import TIMEOUT_S, command
from fluxdrive.eval.importers.base import SkipError

_DIFF = ("--no-color", "--no-ext-diff", "--no-textconv", "--no-renames")
_REGULAR = ("100644", "100755")


@dataclass(frozen=True, slots=True)
class Changed:
    """One file a change touches: its path, and whether it can be a fixture's text (regular, not binary)."""

    path: str
    text: bool


def find(repos: Path, owner: str, name: str) -> Path:
    """The repository ``owner/name`` under ``repos`` (``owner+name/repo`` as a fetch leaves it, or ``owner+name``)."""
    for candidate in (repos / f"{owner}+{name}" / "repo", repos / f"{owner}+{name}"):
        if candidate.is_dir() and not candidate.is_symlink():
            return candidate
    raise SkipError("upstream repository not in the repositories directory")


def _git(repo: Path, *args: str, stdin: bytes | None = None) -> bytes | None:
    argv = command(repo, *args)
    if argv is None:
        return None
    try:
        done = subprocess.run(argv, cwd=repo, input=stdin, capture_output=True, timeout=TIMEOUT_S, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout if done.returncode == 0 else None


def has_commit(repo: Path, commit: str) -> bool:
    return _git(repo, "cat-file", "-e", f"{commit}^{{commit}}") is not None


def merge_base(repo: Path, one: str, other: str) -> str | None:
    found = _git(repo, "merge-base", one, other)
    return found.decode("ascii", "replace").strip() or None if found is not None else None


def changed(repo: Path, base: str, head: str) -> list[Changed] | None:
    """The files ``git diff base head`` touches; symbolic links, submodules and binary files are not text."""
    raw = _git(repo, "diff", *_DIFF, "--raw", "-z", base, head)
    numstat = _git(repo, "diff", *_DIFF, "--numstat", "-z", base, head)
    if raw is None or numstat is None:
        return None
    binary = set()
    for entry in numstat.decode("utf-8", "replace").split("\0"):
        added, _, rest = entry.partition("\t")
        if added == "-":
            binary.add(rest.partition("\t")[2])
    fields = raw.decode("utf-8", "replace").split("\0")
    files = []
    for meta, path in zip(fields[0::2], fields[1::2], strict=False):
        modes = meta.lstrip(":").split(" ")[:2]
        regular = all(mode in (*_REGULAR, "000000") for mode in modes)
        files.append(Changed(path, regular and path not in binary))
    return files


def diff(repo: Path, base: str, head: str, paths: list[str]) -> str | None:
    """The unified diff of ``paths`` from ``base`` to ``head`` (paths as in the repository)."""
    out = _git(repo, "diff", *_DIFF, "--full-index", base, head, "--", *[f":(literal){p}" for p in paths])
    try:
        return out.decode("utf-8") if out is not None else None
    except UnicodeDecodeError:
        return None


def show(repo: Path, commit: str, path: str) -> bytes | None:
    """The bytes of ``path`` at ``commit``; None when it is not a regular file there."""
    listed = _git(repo, "ls-tree", "-z", commit, "--", f":(literal){path}")
    if not listed or listed.split(b" ", 1)[0].decode() not in _REGULAR:
        return None
    return _git(repo, "cat-file", "blob", f"{commit}:{path}")
