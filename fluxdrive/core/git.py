"""The few git questions fluxdrive asks, each one subprocess with a timeout.

Git is optional: a path outside a repository works (PROJECT_ROOT is the
input's directory); only ``--diff REF`` and ``--staged`` require it, and say
so clearly when it is missing.
"""

from __future__ import annotations

import re
import shutil
import stat
import subprocess
from pathlib import Path

from fluxdrive.errors import InputError

TIMEOUT_S = 60


# Always off: settings of a repository's own .git/config that make read-only commands run programs.
# (log.showSignature would run gpg.program, which the same config names, on every signed commit git log shows.)
_DEFUSED = (
    "core.fsmonitor=false",
    "core.hooksPath=/dev/null",
    "diff.external=",
    "core.pager=cat",
    "log.showSignature=false",
)
# Per-driver settings (filter.<driver>.clean, diff.<driver>.textconv ...) that run a program on a file.
_DRIVER_COMMANDS = re.compile(r"^(filter\.[^\n]+\.(clean|smudge|process)|diff\.[^\n]+\.(textconv|command))$", re.I)


def command(root: Path, *args: str) -> list[str] | None:
    """``git ARGS`` with every program the repository's own config names switched off; None without git.

    A reviewed tree is untrusted, and so is its ``.git/config`` (an unpacked archive, a shared work tree):
    ``core.fsmonitor``, filter drivers and textconv commands there would otherwise run during a plain
    ``git diff`` or ``git ls-files``. Reading the config runs nothing, so the drivers it names are found
    first and overridden with empty commands on the command line, which wins over every config file.
    """
    git = shutil.which("git")
    if git is None or _blocking_git_files(Path(root)):
        return None
    defused = [arg for setting in _DEFUSED for arg in ("-c", setting)]
    try:
        listed = subprocess.run(
            [git, *defused, "config", "--list", "--name-only", "-z"],
            cwd=root,
            capture_output=True,
            timeout=TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    names = sorted({n for n in listed.stdout.decode("utf-8", "replace").split("\0") if _DRIVER_COMMANDS.match(n)})
    for name in names:
        defused += ["-c", f"{name}="]
    return [git, *defused, *args]


# Files of a repository that git opens on every command; a FIFO in their place blocks it until the timeout.
_ALWAYS_OPENED = ("config", "HEAD", "index", "info/exclude", "commondir")


def _blocking_git_files(root: Path) -> bool:
    """True when the repository enclosing ``root`` has a FIFO, socket or device where git opens a file.

    Why: such a repository (an unpacked archive is enough) would hang every git command fluxdrive runs for
    its whole timeout; it is treated as no repository at all."""
    for directory in (root, *root.parents):
        git_dir = directory / ".git"
        if not git_dir.is_dir():
            if git_dir.exists():
                return not git_dir.is_file()  # a worktree's .git file is read by git: a FIFO there would block
            continue
        for name in _ALWAYS_OPENED:
            try:
                mode = (git_dir / name).lstat().st_mode
            except OSError:
                continue
            if not (stat.S_ISREG(mode) or stat.S_ISLNK(mode) or stat.S_ISDIR(mode)):
                return True
        return False
    return False


def _git(root: Path, *args: str) -> subprocess.CompletedProcess[bytes] | None:
    argv = command(root, *args)
    if argv is None:
        return None
    try:
        return subprocess.run(argv, cwd=root, capture_output=True, timeout=TIMEOUT_S, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None


def is_repository(root: Path) -> bool:
    """True when ``root`` is inside a git work tree."""
    proc = _git(root, "rev-parse", "--is-inside-work-tree")
    return proc is not None and proc.returncode == 0 and proc.stdout.strip() == b"true"


def is_bare_repository(root: Path) -> bool:
    """True when ``root`` is a bare repository (a mirror: history without a work tree)."""
    proc = _git(root, "rev-parse", "--is-bare-repository")
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
    args = ["diff", "--no-color", "--no-ext-diff", "--no-textconv"]
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


def show_file(root: Path, revision: str, relative: str) -> bytes | None:
    """The bytes of ``relative`` (to ``root``) as of commit ``revision``; None when it did not exist there."""
    proc = _git(root, "show", f"{revision}:./{relative}")
    return proc.stdout if proc is not None and proc.returncode == 0 else None


def list_files_at(root: Path, revision: str, relative: str) -> list[str]:
    """The file names directly inside directory ``relative`` (to ``root``) as of commit ``revision``."""
    proc = _git(root, "ls-tree", "--name-only", "-z", revision, f"./{relative}/")
    if proc is None or proc.returncode != 0:
        return []
    return sorted(name.rsplit("/", 1)[-1] for name in proc.stdout.decode("utf-8", "replace").split("\0") if name)


def settings_base(root: Path, ref: str | None) -> str | None:
    """The commit whose project settings govern a review of ``git diff REF`` (or the staged change).

    The merge-base of REF and HEAD (where the change left REF), else REF itself; HEAD for the staged change.
    Never the work tree: the change under review must not choose the settings it is reviewed with.
    """
    if ref is None:
        return head(root)
    for args in (("merge-base", ref, "HEAD"), ("rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")):
        proc = _git(root, *args)
        if proc is not None and proc.returncode == 0 and proc.stdout.strip():
            return proc.stdout.decode("ascii", "replace").strip()
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
