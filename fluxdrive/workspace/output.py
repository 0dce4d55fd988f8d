"""Where a run's files go: ``PROJECT_ROOT/docs/research/flux-drive/<stem>-<hash>``, and the input copy.

OUTPUT_DIR defaults to ``PROJECT_ROOT/docs/research/flux-drive/<stem>-<hash>``
where the hash is the first 8 hex digits of sha256 of the input's identity
(stable on purpose, so prompt caches stay warm across reruns); it is a link
swung to a fresh directory each run, so a run never deletes
(:mod:`fluxdrive.core.run_dirs`, :mod:`fluxdrive.workspace.lock`). The runs
root is made inside the project only, and told to git to ignore, so runs
never show up as the project's files (:mod:`fluxdrive.core.walk`).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
from pathlib import Path

import fluxdrive.core.run_dirs as _run_dirs
from fluxdrive.core.atomic import atomic_write_text
from fluxdrive.core.confine import is_inside
from fluxdrive.core.masking import scrub
from fluxdrive.core.run_dirs import directory_within
from fluxdrive.workspace.target import Target

RUNS_DIR = Path("docs") / "research" / "flux-drive"


def default_output_dir(root: Path, input_path: Path) -> Path:
    """``ROOT/docs/research/flux-drive/<stem>-<sha256(input)[:8]>`` (the runs root made, inside ROOT only)."""
    resolved = str(Path(input_path).resolve())
    digest = hashlib.sha256(resolved.encode()).hexdigest()[:8]
    stem = re.sub(r"[^A-Za-z0-9._-]+", "-", Path(input_path).resolve().stem or "input").strip("-")[:50]
    return runs_root(Path(root)) / f"{stem or 'input'}-{digest}"


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


def write_input_copy(output_dir: Path, target: Target) -> Path | None:
    """Save a diff (or stdin) input as OUTPUT_DIR/input.diff so agents can read it (credentials masked)."""
    if target.diff_text is None:
        return None
    path = Path(output_dir) / "input.diff"
    atomic_write_text(path, scrub(target.diff_text, detect=True))
    return path
