"""The review input: a file, a document, a directory, several paths, or a diff - classified once.

PROTOCOL.md section 1. The input is classified as a file, a document
(markdown or text), a directory, or a diff (a file or stdin whose content is
a unified diff, or ``--diff REF`` / ``--staged`` through git). PROJECT_ROOT is
the nearest ancestor with ``.git`` (else the input's directory), or
``--project``. Every path given is confined to its project before anything
reads it, and every problem is one :class:`~fluxdrive.errors.InputError` or
:class:`~fluxdrive.errors.UsageError` line, never a traceback.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import fluxdrive.core.git as _git
from fluxdrive.core.confine import confine
from fluxdrive.core.names import decodable, shown
from fluxdrive.core.paths import decode_utf8, require_directory
from fluxdrive.core.project import find_project_root
from fluxdrive.core.walk import review_files
from fluxdrive.errors import InputError, NothingToReviewError, UsageError

InputKind = Literal["file", "document", "directory", "diff"]
DOCUMENT_SUFFIXES = {".md", ".markdown", ".mdx", ".txt", ".rst", ".adoc"}
_DIFF_START = re.compile(r"\A\s*(?:diff --git |--- (?:a/|/dev/null|\S))", re.M)
MAX_INPUT_BYTES = 200_000_000


@dataclass(frozen=True, slots=True)
class Target:
    """A classified review input."""

    kind: InputKind
    root: Path
    label: str
    path: Path | None = None
    diff_text: str | None = None
    source: str = "path"
    files: tuple[str, ...] = ()  # several paths given (pre-commit's file list): exactly these, relative to root
    # For a git diff: the commit whose project settings (config, agents) apply, never the change's own.
    settings_revision: str | None = None

    @property
    def stem(self) -> str:
        """A short, file-name-safe name for the input."""
        if self.files:
            return f"{len(self.files)}-files"
        raw = self.path.stem if self.path is not None and self.kind != "diff" else self.label
        text = re.sub(r"[^A-Za-z0-9._-]+", "-", raw).strip("-.")[:50]
        return text or "input"

    @property
    def identity(self) -> str:
        """What OUTPUT_DIR's hash is computed from: stable across reruns."""
        if self.files:
            return f"files:{self.root}:" + "\0".join(self.files)
        if self.path is not None:
            return str(self.path.resolve())
        return f"{self.source}:{self.root}"


def project_root(path: Path) -> Path:
    """PROJECT_ROOT for an input path (file or directory)."""
    return find_project_root(Path(path))


def looks_like_diff(text: str) -> bool:
    """Unified diff content (``diff --git`` or ``--- a/...`` first)."""
    return bool(_DIFF_START.match(text[:4096]))


def _sniff(path: Path) -> str | None:
    """Read a diff input whole; for anything else only check the head (big files stream later)."""
    size = path.stat().st_size
    if size == 0:
        raise InputError(f"input file is empty: {path}", hint="nothing to review")
    with path.open("rb") as handle:
        head = handle.read(65536)
    if b"\x00" in head[:8192]:
        raise InputError(f"input is a binary file: {path}", hint="review source code, documents or diffs")
    if not looks_like_diff(head.decode("utf-8", errors="replace")):
        return None
    if size > MAX_INPUT_BYTES:
        raise InputError(f"diff is too large: {path} ({size:,} bytes)", hint="review a smaller range")
    return decode_utf8(path.read_bytes(), path, "diff file")


_DIFF_PATH = re.compile(r"^(---|\+\+\+) (?:[ab]/)?(?P<path>[^\t\n]+)", re.MULTILINE)


def diff_project(text: str, candidates: Sequence[Path]) -> Path:
    """The candidate root the diff's paths belong to: most changed files found (or their directories).

    ``fluxdrive review /tmp/change.diff`` run in a project reviews that
    project's change; a diff saved inside a repository reviews that one.
    Ties go to the first candidate (the current directory's repository).
    """
    paths = {m["path"].strip() for m in _DIFF_PATH.finditer(text) if m["path"].strip() != "/dev/null"}

    def found(root: Path) -> int:
        return sum(2 if (root / p).is_file() else 1 if (root / p).parent.is_dir() else 0 for p in sorted(paths)[:200])

    best = max(candidates, key=lambda root: (found(root), -candidates.index(root)))
    return best


def _within(path: Path, root: Path) -> bool:
    """``path`` (links resolved) lies in ``root``."""
    real, base = Path(os.path.realpath(path)), Path(os.path.realpath(root))
    return real == base or base in real.parents


def resolve_target(
    target: str | Sequence[str] | None,
    *,
    diff_ref: str | None = None,
    staged: bool = False,
    stdin_text: str | None = None,
    cwd: Path | None = None,
    project: Path | None = None,
) -> Target:
    """Classify the input (PROTOCOL.md section 1); one clear InputError when it cannot be used.

    PROJECT_ROOT is ``project`` when given (it must exist, and hold the
    input); else the git repository enclosing the input - for a diff file,
    the repository its paths belong to, not the directory it sits in.
    """
    here = Path(cwd or Path.cwd())
    if project is not None:  # the directory given is the project, even inside a larger repository
        require_directory(here / project, "--project directory")
        project = (here / project).resolve()
    if target is not None and not isinstance(target, str):
        paths = list(target)
        if len(paths) != 1:
            if diff_ref is not None or staged or "-" in paths:
                raise UsageError("several TARGETs are files to review: they do not combine with --diff, --staged or -")
            return _paths(paths, here, project)
        target = paths[0]
    if diff_ref is not None or staged:
        if target not in (None, "", "."):
            raise UsageError("--diff/--staged take the diff from git; do not also pass a TARGET")
        return _git_diff(project or find_project_root(here), diff_ref, staged=staged)
    if target is None:
        raise UsageError("no TARGET given", hint="pass a file, directory, diff file, or '-' for a diff on stdin")
    if target == "-":
        return _stdin_diff(stdin_text or "", project or find_project_root(here))
    return _path(target, here, project)


def _git_diff(root: Path, diff_ref: str | None, *, staged: bool) -> Target:
    text = _git.diff(root, diff_ref, staged=staged)
    if not text.strip():
        since = f"since {diff_ref}" if diff_ref else "staged"
        raise NothingToReviewError(f"the diff is empty: nothing changed {since}")
    label = f"diff-{diff_ref}" if diff_ref else "staged"
    base = _git.settings_base(root, diff_ref)
    return Target("diff", root, label, diff_text=text, source=f"git:{diff_ref or 'staged'}", settings_revision=base)


def _stdin_diff(text: str, root: Path) -> Target:
    # Bytes that are not UTF-8 (a Latin-1 file in the change) arrive as lone surrogates, which no writer can
    # encode: they become U+FFFD here, as ``--diff`` decodes git's output, and the change is still reviewed.
    text = text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    if not text.strip():
        raise NothingToReviewError("stdin is empty: the piped diff has no changes")
    if not looks_like_diff(text):
        raise InputError("stdin is not a unified diff", hint="pipe the output of git diff")
    return Target("diff", root, "stdin", diff_text=text, source="stdin")


def _path(target: str, here: Path, project: Path | None) -> Target:
    """A file, document, directory or diff file given by path."""
    if "\0" in target:
        raise InputError("the TARGET path contains a NUL byte", hint="check the path")
    if not decodable(target):  # no report could name it; a review of its directory skips it with a note
        raise InputError(
            f"the TARGET name is not UTF-8 text: {shown(target)}", hint="rename it, or review its directory"
        )
    given = Path(os.path.abspath(here / target))  # lexical: the project is where the user pointed, not a link's target
    if not os.path.lexists(given):
        raise InputError(f"input not found: {target}", hint="check the path")
    own = project_root(given if given.is_dir() and not given.is_symlink() else given.parent)
    path = confine(given, own, "input")
    if not os.access(path, os.R_OK):
        raise InputError(f"input is not readable: {target}", hint="check its permissions")
    if not path.is_dir() and not stat.S_ISREG(path.stat().st_mode):
        raise InputError(f"input is not a regular file: {target}", hint="review a file, a directory or a diff")
    sniffed = None if path.is_dir() else _sniff(path)
    if sniffed is not None:  # a diff may be saved anywhere: its project is where its paths are
        root = project or diff_project(sniffed, [find_project_root(here), own])
        return Target("diff", root, path.stem, path=path, diff_text=sniffed, source="file")
    if project is not None and not _within(path, project):
        raise InputError(f"{target} is outside the --project directory {project}", hint="review a path inside it")
    root = project or own
    if path.is_dir():
        return Target("directory", root, path.name or str(path), path=path)
    kind: InputKind = "document" if path.suffix.lower() in DOCUMENT_SUFFIXES else "file"
    return Target(kind, root, path.name, path=path)


def _paths(targets: Sequence[str], here: Path, project: Path | None) -> Target:
    """Several files or directories (a pre-commit hook's file list): one review of exactly those files.

    Each path is resolved and confined as a single TARGET would be; all must
    belong to one project. Directories contribute their reviewable files.
    Diff files are refused here: a list is of files to review, not of changes.
    """
    if not targets:
        raise UsageError("no TARGET given", hint="pass a file, directory, diff file, or '-' for a diff on stdin")
    resolved = [_path(t, here, project) for t in targets]
    roots = {Path(t.root) for t in resolved}
    if len(roots) != 1:
        raise InputError("the TARGETs belong to different projects", hint="review each project on its own")
    if any(t.kind == "diff" for t in resolved):
        raise UsageError("a diff file cannot be reviewed together with other TARGETs", hint="review it on its own")
    root = roots.pop()
    files: dict[str, None] = {}
    for target in resolved:
        assert target.path is not None
        files.update(dict.fromkeys(review_files(target.path, root)))
    if not files:
        raise NothingToReviewError("none of the TARGETs holds a file to review")
    names = sorted(files)
    return Target("directory", root, f"{len(names)} files", path=root, files=tuple(names), source="files")
