"""Where a review happens: what the input is, the project root, the files, the output directory.

PROTOCOL.md section 1. The input is classified as a file, a document
(markdown or text), a directory, or a diff (a file or stdin whose content is
a unified diff, or ``--diff REF`` / ``--staged`` through git). PROJECT_ROOT is the nearest ancestor with ``.git``
(else the input's directory); OUTPUT_DIR defaults to
``PROJECT_ROOT/docs/research/flux-drive/<stem>-<hash>`` where the hash is
the first 8 hex digits of sha256 of the input path (stable on purpose, so
prompt caches stay warm across reruns); it is a link swung to a fresh
directory each run, so a run never deletes (:mod:`fluxdrive.core.run_dirs`). A directory input expands to its
files, honouring ``.gitignore`` (through git when the tree is a repository,
else by reading the ignore files), and never includes fluxdrive's own output.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import re
import socket
import stat
import subprocess
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import pathspec

from fluxdrive.core import git as _git
from fluxdrive.core import run_dirs as _run_dirs
from fluxdrive.core.atomic import atomic_write_text
from fluxdrive.core.clock import utc_timestamp
from fluxdrive.core.confine import confine, is_inside
from fluxdrive.core.masking import scrub
from fluxdrive.core.names import decodable, shown
from fluxdrive.core.paths import decode_utf8, read_regular, require_directory
from fluxdrive.core.project import find_project_root
from fluxdrive.core.run_dirs import directory_within
from fluxdrive.errors import InputError, NothingToReviewError, UsageError

RUNS_DIR = Path("docs") / "research" / "flux-drive"
MAX_IGNORE_BYTES = 4 * 1024 * 1024
ALWAYS_EXCLUDED = {
    ".git", ".hg", ".svn", "node_modules", ".venv", "venv", "__pycache__", ".mypy_cache",
    ".pytest_cache", ".ruff_cache", ".tox", ".nox", ".eggs", "dist", "build", ".fluxdrive",
}  # fmt: skip


def project_root(path: Path) -> Path:
    """PROJECT_ROOT for an input path (file or directory)."""
    return find_project_root(Path(path))


def default_output_dir(root: Path, input_path: Path) -> Path:
    """``ROOT/docs/research/flux-drive/<stem>-<sha256(input)[:8]>`` (the runs root made, inside ROOT only)."""
    resolved = str(Path(input_path).resolve())
    digest = hashlib.sha256(resolved.encode()).hexdigest()[:8]
    stem = re.sub(r"[^A-Za-z0-9._-]+", "-", Path(input_path).resolve().stem or "input").strip("-")[:50]
    return runs_root(Path(root)) / f"{stem or 'input'}-{digest}"


def _excluded(relative: str) -> bool:
    """Tool and dependency directories. fluxdrive's own runs are not named here: they are left out because
    git ignores them (each runs container holds a ``.gitignore`` of ``*``), so a repository cannot hide
    its code by putting it where runs usually go or beside a run's marker file."""
    parts = relative.split("/")
    return any(part in ALWAYS_EXCLUDED for part in parts[:-1])


def _blocking_ignore_file(directory: Path) -> bool:
    """True when a ``.gitignore`` under ``directory`` is a FIFO, device or socket.

    Why look first: ``git ls-files --exclude-standard`` opens every
    ``.gitignore`` it meets with a blocking ``open()``, so one FIFO committed
    under that name hangs git (until the 60 s timeout). One pass of
    ``lstat`` (no file is opened, links are not followed) finds it; the
    listing then walks the tree itself, which reads only regular files.
    """
    pending = [directory]
    while pending:
        try:
            with os.scandir(pending.pop()) as entries:
                for entry in entries:
                    if entry.is_dir(follow_symlinks=False):
                        if entry.name not in ALWAYS_EXCLUDED:
                            pending.append(Path(entry.path))
                    elif entry.name == ".gitignore" and not entry.is_symlink() and not entry.is_file():
                        return True
        except OSError:
            continue
    return False


def _git_files(directory: Path) -> list[str] | None:
    if _blocking_ignore_file(directory):
        return None
    argv = _git.command(directory, "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", ".")
    if argv is None:
        return None
    try:
        proc = subprocess.run(argv, cwd=directory, capture_output=True, timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if proc.returncode != 0:
        return None
    names = proc.stdout.decode("utf-8", errors="surrogateescape").split("\0")
    return [n for n in names if n and os.path.lexists(directory / n)]


def _walk_files(directory: Path) -> list[str]:
    specs: list[tuple[str, pathspec.GitIgnoreSpec]] = []
    found: list[str] = []
    for current, dirs, files in os.walk(directory):
        base = Path(current).relative_to(directory).as_posix()
        base = "" if base == "." else base
        ignore = Path(current) / ".gitignore"
        if ignore.is_file():
            with contextlib.suppress(InputError):  # a FIFO swapped in after the check: no rules, never a wait
                data = read_regular(ignore, ".gitignore", limit=MAX_IGNORE_BYTES)
                lines = data.decode("utf-8", errors="replace").splitlines()
                specs.append((base, pathspec.GitIgnoreSpec.from_lines(lines)))

        def ignored(relative: str, is_dir: bool) -> bool:
            for prefix, spec in specs:
                if prefix and not relative.startswith(prefix + "/"):
                    continue
                tail = relative[len(prefix) + 1 :] if prefix else relative
                if spec.match_file(tail + ("/" if is_dir else "")):
                    return True
            return False

        dirs[:] = sorted(d for d in dirs if d not in ALWAYS_EXCLUDED and not ignored(f"{base}/{d}".lstrip("/"), True))
        for name in sorted(files):
            relative = f"{base}/{name}".lstrip("/")
            if not ignored(relative, False):
                found.append(relative)
    return found


@dataclass(frozen=True, slots=True)
class FileList:
    """The files to review, and the ones left out with the reason (a symlink out of the root, a loop, a FIFO)."""

    files: tuple[str, ...]
    skipped: tuple[tuple[str, str], ...] = ()


def list_files(path: Path, root: Path) -> FileList:
    """The files to review for ``path``, relative to ``root``, sorted; only regular files inside the root.

    Listing never descends into a symlinked directory (git records it as a
    link; the walk does not follow links), so only a listed name itself can
    be a link: one ``lstat`` per file tells, and only links are resolved.
    """
    path = Path(path).resolve()
    root = Path(root).resolve()
    if not path.exists():
        raise InputError(f"input not found: {path}", hint="check the path")
    try:
        prefix = path.relative_to(root)
    except ValueError:
        raise InputError(f"{path} is outside the project root {root}") from None
    if path.is_file():
        return FileList((prefix.as_posix(),))
    require_directory(path, "input directory")
    listed = _git_files(path) if (root / ".git").exists() else None
    names = listed if listed is not None else _walk_files(path)
    base = "" if str(prefix) == "." else prefix.as_posix() + "/"
    kept: list[str] = []
    skipped: list[tuple[str, str]] = []
    for name in names:
        relative = f"{base}{name}"
        if _excluded(relative):
            continue
        if not decodable(relative):  # no writer can encode it: skipped, and named with its bytes escaped
            skipped.append((shown(relative), "its name is not UTF-8 text"))
            continue
        reason = _unreadable(root, relative)
        if reason is None:
            kept.append(relative)
        elif reason:
            skipped.append((relative, reason))
    return FileList(tuple(sorted(kept)), tuple(sorted(skipped)))


def _unreadable(root: Path, relative: str) -> str | None:
    """Why a listed name is not reviewed (``""``: silently, a link to a directory), or None."""
    try:
        mode = os.lstat(root / relative).st_mode
    except OSError as exc:
        return exc.strerror or "unreadable"
    if stat.S_ISREG(mode):
        return None
    if not stat.S_ISLNK(mode):
        return "not a regular file"
    try:
        real = (root / relative).resolve(strict=True)
    except (OSError, RuntimeError):
        return "a broken symlink or a symlink loop"
    if real != root and root not in real.parents:
        return f"a symlink to {real}, outside the project root"
    return None if real.is_file() else ""


def review_files(path: Path, root: Path) -> tuple[str, ...]:
    """The files to review for ``path``, relative to ``root``, sorted (see :func:`list_files`)."""
    return list_files(path, root).files


# --------------------------------------------------------------------------
# the input

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


def output_dir_for(target: Target, override: Path | None = None) -> Path:
    """``--output-dir``, or the default ``docs/research/flux-drive/<stem>-<hash>`` (its root told to git to ignore).

    Both are the run's *pointer* path (see :mod:`fluxdrive.core.run_dirs`), kept
    lexical: resolving it would follow the link an earlier run left there.
    """
    if override is not None:
        return Path(os.path.abspath(override))
    digest = hashlib.sha256(target.identity.encode()).hexdigest()[:8]
    return runs_root(Path(target.root)) / f"{target.stem}-{digest}"


RUNS_GITIGNORE = "# Written by fluxdrive: runs are outputs, not sources (delete this file to commit them).\n*\n"


def latest_run(root: Path, holding: str) -> Path | None:
    """The newest run under ``ROOT/docs/research/flux-drive/`` whose directory holds ``holding``, or None.

    Only fluxdrive's own links count (a link of exactly the shape a run leaves, into ``.fluxdrive-runs/``)
    and only where they resolve inside the project: a repository that commits ``docs/research`` as a link,
    or a "run" linking elsewhere, cannot make ``publish`` or ``verdicts`` read - and post - what lies
    outside it. Newest by the run's own time stamp in its name, not by a modification time anyone can set.
    """
    runs = Path(root) / RUNS_DIR
    if not runs.is_dir() or not is_inside(runs, root):
        return None
    found: list[tuple[str, Path]] = []
    for pointer in runs.iterdir():
        stamp = _run_dirs.pointer_target(pointer)
        if stamp is not None and is_inside(pointer, root) and (pointer / holding).exists():
            found.append((stamp, pointer))
    return max(found)[1] if found else None


def runs_root(root: Path, relative: Path = RUNS_DIR) -> Path:
    """``ROOT/docs/research/flux-drive`` made inside ROOT only, with a ``.gitignore`` of ``*`` the first time.

    Each component is checked to resolve inside the project root, so a
    committed ``docs/research -> /elsewhere`` is refused (exit 2), never
    written through. Runs land in the user's repository; without the
    ``.gitignore`` every review leaves untracked files for ``git status`` to
    show and ``git add -A`` to commit. An existing ``.gitignore`` (even a
    link) is the user's and is never touched. Returns the real path.
    """
    runs = directory_within(root, relative)
    marker = runs / ".gitignore"
    with contextlib.suppress(OSError):
        if not os.path.lexists(marker):
            atomic_write_text(marker, RUNS_GITIGNORE)
    return runs


# --------------------------------------------------------------------------
# one run per output directory: a fresh directory each run, the path the user knows pointed at it

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


def write_input_copy(output_dir: Path, target: Target) -> Path | None:
    """Save a diff (or stdin) input as OUTPUT_DIR/input.diff so agents can read it (credentials masked)."""
    if target.diff_text is None:
        return None
    path = Path(output_dir) / "input.diff"
    atomic_write_text(path, scrub(target.diff_text, detect=True))
    return path
