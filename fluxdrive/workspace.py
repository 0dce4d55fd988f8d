"""Where a review happens: what the input is, the project root, the files, the output directory.

PROTOCOL.md section 1. The input is classified as a file, a document
(markdown or text), a directory, or a diff (a file or stdin whose content is
a unified diff, or ``--diff REF`` / ``--staged`` through git). PROJECT_ROOT is the nearest ancestor with ``.git``
(else the input's directory); OUTPUT_DIR defaults to
``PROJECT_ROOT/docs/research/flux-drive/<stem>-<hash>`` where the hash is
the first 8 hex digits of sha256 of the input path (stable on purpose, so
prompt caches stay warm across reruns). A directory input expands to its
files, honouring ``.gitignore`` (through git when the tree is a repository,
else by reading the ignore files), and never includes fluxdrive's own output.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
import socket
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import pathspec

from fluxdrive import _git
from fluxdrive._atomic import atomic_write_text
from fluxdrive._clock import utc_timestamp
from fluxdrive._paths import decode_utf8, require_directory
from fluxdrive._project import find_project_root
from fluxdrive.errors import InputError, UsageError

RUNS_DIR = Path("docs") / "research" / "flux-drive"
ALWAYS_EXCLUDED = {
    ".git", ".hg", ".svn", "node_modules", ".venv", "venv", "__pycache__", ".mypy_cache",
    ".pytest_cache", ".ruff_cache", ".tox", ".nox", ".eggs", "dist", "build", ".fluxdrive",
}  # fmt: skip


def project_root(path: Path) -> Path:
    """PROJECT_ROOT for an input path (file or directory)."""
    return find_project_root(Path(path))


def default_output_dir(root: Path, input_path: Path) -> Path:
    """``ROOT/docs/research/flux-drive/<stem>-<sha256(input)[:8]>``."""
    resolved = str(Path(input_path).resolve())
    digest = hashlib.sha256(resolved.encode()).hexdigest()[:8]
    stem = re.sub(r"[^A-Za-z0-9._-]+", "-", Path(input_path).resolve().stem or "input").strip("-")[:50]
    return Path(root) / RUNS_DIR / f"{stem or 'input'}-{digest}"


def _excluded(relative: str) -> bool:
    parts = relative.split("/")
    return any(part in ALWAYS_EXCLUDED for part in parts[:-1]) or relative.startswith(str(RUNS_DIR) + "/")


def _git_files(directory: Path) -> list[str] | None:
    git = shutil.which("git")
    if git is None:
        return None
    try:
        proc = subprocess.run(
            [git, "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", "."],
            cwd=directory, capture_output=True, timeout=60, check=False,
        )  # fmt: skip
    except (OSError, subprocess.TimeoutExpired):
        return None
    if proc.returncode != 0:
        return None
    names = proc.stdout.decode("utf-8", errors="surrogateescape").split("\0")
    return [n for n in names if n and (directory / n).is_file()]


def _walk_files(directory: Path) -> list[str]:
    specs: list[tuple[str, pathspec.GitIgnoreSpec]] = []
    found: list[str] = []
    for current, dirs, files in os.walk(directory):
        base = Path(current).relative_to(directory).as_posix()
        base = "" if base == "." else base
        ignore = Path(current) / ".gitignore"
        if ignore.is_file():
            lines = ignore.read_text(encoding="utf-8", errors="replace").splitlines()
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


def review_files(path: Path, root: Path) -> tuple[str, ...]:
    """The files to review for ``path``, relative to ``root``, sorted."""
    path = Path(path).resolve()
    root = Path(root).resolve()
    if not path.exists():
        raise InputError(f"input not found: {path}", hint="check the path")
    try:
        prefix = path.relative_to(root)
    except ValueError:
        raise InputError(f"{path} is outside the project root {root}") from None
    if path.is_file():
        return (prefix.as_posix(),)
    require_directory(path, "input directory")
    listed = _git_files(path) if (root / ".git").exists() else None
    names = listed if listed is not None else _walk_files(path)
    base = "" if str(prefix) == "." else prefix.as_posix() + "/"
    runs = _run_directories(names)
    return tuple(sorted(f"{base}{n}" for n in names if not _excluded(f"{base}{n}") and not n.startswith(runs or "\0")))


def _run_directories(names: list[str]) -> tuple[str, ...]:
    """Output directories of fluxdrive runs (``--output-dir`` anywhere): never part of what is reviewed."""
    markers = (LOCK_FILE, "input-profile.json")
    found = {n.rsplit("/", 1)[0] + "/" for n in names if "/" in n and n.rsplit("/", 1)[-1] in markers}
    return tuple(sorted(found))


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

    @property
    def stem(self) -> str:
        """A short, file-name-safe name for the input."""
        raw = self.path.stem if self.path is not None and self.kind != "diff" else self.label
        text = re.sub(r"[^A-Za-z0-9._-]+", "-", raw).strip("-.")[:50]
        return text or "input"

    @property
    def identity(self) -> str:
        """What OUTPUT_DIR's hash is computed from: stable across reruns."""
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


def resolve_target(
    target: str | None,
    *,
    diff_ref: str | None = None,
    staged: bool = False,
    stdin_text: str | None = None,
    cwd: Path | None = None,
) -> Target:
    """Classify the input (PROTOCOL.md section 1); one clear InputError when it cannot be used."""
    here = Path(cwd or Path.cwd())
    if diff_ref is not None or staged:
        if target not in (None, "", "."):
            raise UsageError("--diff/--staged take the diff from git; do not also pass a TARGET")
        root = find_project_root(here)
        text = _git.diff(root, diff_ref, staged=staged)
        if not text.strip():
            raise InputError("the diff is empty", hint="nothing changed between the refs")
        label = f"diff-{diff_ref}" if diff_ref else "staged"
        return Target("diff", root, label, diff_text=text, source=f"git:{diff_ref or 'staged'}")
    if target is None:
        raise UsageError("no TARGET given", hint="pass a file, directory, diff file, or '-' for a diff on stdin")
    if target == "-":
        text = stdin_text or ""
        if not text.strip():
            raise InputError("stdin is empty", hint="pipe a unified diff, e.g. git diff | fluxdrive triage -")
        if not looks_like_diff(text):
            raise InputError("stdin is not a unified diff", hint="pipe the output of git diff")
        return Target("diff", find_project_root(here), "stdin", diff_text=text, source="stdin")
    path = (here / target).resolve() if not Path(target).is_absolute() else Path(target)
    if not path.exists():
        raise InputError(f"input not found: {target}", hint="check the path")
    if not os.access(path, os.R_OK):
        raise InputError(f"input is not readable: {target}", hint="check its permissions")
    root = project_root(path)
    if path.is_dir():
        return Target("directory", root, path.name or str(path), path=path)
    sniffed = _sniff(path)
    if sniffed is not None:
        return Target("diff", root, path.stem, path=path, diff_text=sniffed, source="file")
    kind: InputKind = "document" if path.suffix.lower() in DOCUMENT_SUFFIXES else "file"
    return Target(kind, root, path.name, path=path)


def output_dir_for(target: Target, override: Path | None = None) -> Path:
    """``--output-dir``, or the default ``docs/research/flux-drive/<stem>-<hash>``."""
    if override is not None:
        return Path(override).resolve()
    digest = hashlib.sha256(target.identity.encode()).hexdigest()[:8]
    return Path(target.root) / RUNS_DIR / f"{target.stem}-{digest}"


# --------------------------------------------------------------------------
# one run per output directory

LOCK_FILE = ".fluxdrive.lock"


class BusyError(InputError):
    """Another live run holds the output directory."""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@contextlib.contextmanager
def run_lock(output_dir: Path, *, command: str = "review") -> Iterator[Path]:
    """Hold ``OUTPUT_DIR/.fluxdrive.lock`` for the duration of a run.

    The lock records the owner's PID, host and start time. A lock whose owner
    is dead (or on this host and gone) is taken over; a live owner means the
    run is refused with a clear message.
    """
    output_dir = Path(output_dir)
    try:
        output_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"cannot create output directory {output_dir}: {exc.strerror}") from None
    path = output_dir / LOCK_FILE
    record = {"pid": os.getpid(), "host": socket.gethostname(), "started_at": utc_timestamp(), "command": command}
    for _attempt in range(2):
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        except FileExistsError:
            owner = _owner(path)
            if owner is not None and owner.get("host") == record["host"] and _alive(_pid(owner)):
                started = owner.get("started_at", "?")
                raise BusyError(
                    f"{output_dir} is in use by another fluxdrive run (pid {owner['pid']}, started {started})",
                    hint="wait for it to finish, or pass a different --output-dir",
                ) from None
            with contextlib.suppress(FileNotFoundError):
                path.unlink()  # the owner is dead: take the lock over
            continue
        except OSError as exc:
            raise InputError(f"cannot write to output directory {output_dir}: {exc.strerror}") from None
        with os.fdopen(fd, "w") as handle:
            json.dump(record, handle)
        break
    else:
        raise BusyError(f"could not take the lock on {output_dir}", hint="retry, or pass a different --output-dir")
    try:
        yield path
    finally:
        with contextlib.suppress(FileNotFoundError):
            if (_owner(path) or {}).get("pid") == record["pid"]:
                path.unlink()


def _pid(owner: dict[str, object]) -> int:
    pid = owner.get("pid")
    return pid if isinstance(pid, int) else 0


def _owner(path: Path) -> dict[str, object] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def isolate(output_dir: Path) -> list[str]:
    """Run isolation: remove a previous run's reports, channel, verdicts and run records (nothing else)."""
    output_dir = Path(output_dir)
    removed = []
    patterns = (
        "*.md",
        "*.md.partial",
        "peer-findings.jsonl",
        "verdicts/*.json",
        "run.json",
        "findings.json",
        "findings.sarif",
        "input.diff",
        "prompts/*.md",
        "research/*.md",
        "content/*",
    )
    keep = {"triage-table.md"}
    for pattern in patterns:
        for path in sorted(output_dir.glob(pattern)):
            if path.is_file() and path.name not in keep:
                path.unlink()
                removed.append(str(path.relative_to(output_dir)))
    return removed


def write_input_copy(output_dir: Path, target: Target) -> Path | None:
    """Save a diff (or stdin) input as OUTPUT_DIR/input.diff so agents can read it."""
    if target.diff_text is None:
        return None
    path = Path(output_dir) / "input.diff"
    atomic_write_text(path, target.diff_text)
    return path
