"""The few git questions fluxdrive asks, each one subprocess with a timeout.

Git is optional: a path outside a repository works (PROJECT_ROOT is the
input's directory); only ``--diff REF`` and ``--staged`` require it, and say
so clearly when it is missing.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from fluxdrive.errors import InputError

TIMEOUT_S = 60


def _git(root: Path, *args: str) -> subprocess.CompletedProcess[bytes] | None:
    git = shutil.which("git")
    if git is None:
        return None
    try:
        return subprocess.run([git, *args], cwd=root, capture_output=True, timeout=TIMEOUT_S, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None


def is_repository(root: Path) -> bool:
    """True when ``root`` is inside a git work tree."""
    proc = _git(root, "rev-parse", "--is-inside-work-tree")
    return proc is not None and proc.returncode == 0 and proc.stdout.strip() == b"true"


def head(root: Path) -> str | None:
    """The commit HEAD points at, or None outside a repository or before the first commit."""
    proc = _git(root, "rev-parse", "--verify", "--quiet", "HEAD")
    if proc is None or proc.returncode != 0:
        return None
    return proc.stdout.decode("ascii", errors="replace").strip() or None


def renames(root: Path, since: str) -> dict[str, str]:
    """Files renamed between commit ``since`` and HEAD: old path -> new path (empty when git cannot say)."""
    proc = _git(root, "diff", "--name-status", "--find-renames", since, "HEAD")
    if proc is None or proc.returncode != 0:
        return {}
    moved = {}
    for line in proc.stdout.decode("utf-8", errors="replace").splitlines():
        parts = line.split("\t")
        if len(parts) == 3 and parts[0].startswith("R"):
            moved[parts[1]] = parts[2]
    return moved


def diff(root: Path, ref: str | None, *, staged: bool = False) -> str:
    """``git diff REF`` (or ``--cached``) as text; InputError with the reason otherwise."""
    if shutil.which("git") is None:
        raise InputError("git is not installed", hint="install git, or pass a diff file or '-' for stdin")
    if not is_repository(root):
        raise InputError(f"{root} is not inside a git repository", hint="run from a repository, or pass a diff file")
    args = ["diff", "--no-color", "--no-ext-diff"]
    if staged:
        args.append("--cached")
    if ref:
        check = _git(root, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
        if check is None or check.returncode != 0:
            raise InputError(f"unknown git ref {ref!r}", hint="check the branch, tag or commit name (git branch -a)")
        args.append(ref)
    proc = _git(root, *args)
    if proc is None or proc.returncode != 0:
        message = proc.stderr.decode("utf-8", "replace").strip() if proc else "git could not run"
        raise InputError(f"git diff failed: {message}")
    return proc.stdout.decode("utf-8", errors="replace")


def merge_base(root: Path) -> str | None:
    """Where this branch left the default branch (origin's HEAD, else main or master); None when HEAD is on it."""
    if not is_repository(root):
        return None
    candidates = []
    origin = _git(root, "symbolic-ref", "--quiet", "refs/remotes/origin/HEAD")
    if origin is not None and origin.returncode == 0:
        candidates.append(origin.stdout.decode().strip())
    candidates += ["main", "master", "origin/main", "origin/master"]
    here = head(root)
    for branch in candidates:
        found = _git(root, "merge-base", "HEAD", branch)
        if found is not None and found.returncode == 0:
            base = found.stdout.decode().strip()
            return base if base and base != here else None
    return None


def changed_since(root: Path, since: str, paths: list[str]) -> bool | None:
    """Whether commits since ``since`` touched ``paths``; None when git cannot tell (shallow, no repo)."""
    if not paths or not is_repository(root):
        return None
    shallow = _git(root, "rev-parse", "--is-shallow-repository")
    if shallow is None or shallow.stdout.strip() == b"true":
        return None
    proc = _git(root, "log", f"--since={since}", "--format=%H", "--", *paths)
    if proc is None or proc.returncode != 0:
        return None
    return bool(proc.stdout.strip())
