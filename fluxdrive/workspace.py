"""Where a review happens: the project root, the files to review, the output directory.

PROTOCOL.md section 1. PROJECT_ROOT is the nearest ancestor with ``.git``
(else the input's directory); OUTPUT_DIR defaults to
``PROJECT_ROOT/docs/research/flux-drive/<stem>-<hash>`` where the hash is
the first 8 hex digits of sha256 of the input path (stable on purpose, so
prompt caches stay warm across reruns). A directory input expands to its
files, honouring ``.gitignore`` (through git when the tree is a repository,
else by reading the ignore files), and never includes fluxdrive's own output.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
from pathlib import Path

import pathspec

from fluxdrive._paths import require_directory
from fluxdrive._project import find_project_root
from fluxdrive.errors import InputError

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
    return tuple(sorted(f"{base}{n}" for n in names if not _excluded(f"{base}{n}")))
