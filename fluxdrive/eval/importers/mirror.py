"""Read-only questions to a benchmark's upstream repository (a mirror or clone, bare or not).

The repositories are downloaded, untrusted data: every question goes through
:class:`fluxdrive.eval.mine_szz.Repository` (the one git wrapper of ``eval``: the programs a repository's own
config could name - hooks, fsmonitor, filters, textconv - switched off once per repository, paths taken
literally, bounded by a timeout), and nothing read from them chooses what runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from fluxdrive.errors import InputError
from fluxdrive.eval.importers.base import SkipError
from fluxdrive.eval.mine_szz import Repository

_DIFF = ("--no-color", "--no-ext-diff", "--no-textconv", "--no-renames")
_REGULAR = ("100644", "100755")


@dataclass(frozen=True, slots=True)
class Changed:
    """One file a change touches: its path, and whether it can be a fixture's text (regular, not binary)."""

    path: str
    text: bool


def find(repos: Path, owner: str, name: str) -> Repository:
    """The repository ``owner/name`` under ``repos`` (``owner+name/repo`` as a fetch leaves it, or ``owner+name``)."""
    for candidate in (repos / f"{owner}+{name}" / "repo", repos / f"{owner}+{name}"):
        if candidate.is_dir() and not candidate.is_symlink():
            try:
                return Repository(candidate)
            except InputError:
                break
    raise SkipError("upstream repository not in the repositories directory")


def has_commit(repo: Repository, commit: str) -> bool:
    return repo.run("cat-file", "-e", f"{commit}^{{commit}}") is not None


def merge_base(repo: Repository, one: str, other: str) -> str | None:
    found = repo.run("merge-base", one, other)
    return found.decode("ascii", "replace").strip() or None if found is not None else None


def changed(repo: Repository, base: str, head: str) -> list[Changed] | None:
    """The files ``git diff base head`` touches; symbolic links, submodules and binary files are not text."""
    raw = repo.run("diff", *_DIFF, "--raw", "-z", base, head)
    numstat = repo.run("diff", *_DIFF, "--numstat", "-z", base, head)
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


def diff(repo: Repository, base: str, head: str, paths: list[str]) -> str | None:
    """The unified diff of ``paths`` from ``base`` to ``head`` (paths as in the repository)."""
    out = repo.run("diff", *_DIFF, "--full-index", base, head, "--", *paths)
    try:
        return out.decode("utf-8") if out is not None else None
    except UnicodeDecodeError:
        return None


def show(repo: Repository, commit: str, path: str) -> bytes | None:
    """The bytes of ``path`` at ``commit``; None when it is not a regular file there."""
    listed = repo.run("ls-tree", "-z", commit, "--", path)
    if not listed or listed.split(b" ", 1)[0].decode() not in _REGULAR:
        return None
    return repo.run("cat-file", "blob", f"{commit}:{path}")
