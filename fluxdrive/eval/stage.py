"""Copy one fixture's input to a scratch directory, never following a symbolic link.

A suite may come from anyone (a contributor's pull request, a downloaded
benchmark), and ``shutil.copytree``/``copy2`` dereference links: a
``project/tool.py`` pointing at ``~/.aws/credentials`` was copied in as a
regular file, reviewed, and sent to the model provider. So a link anywhere
in a fixture's input - the input itself (``document.md``, ``project/``,
``base/``, ``change.patch``), a file or directory inside it, or a link the
patch creates - refuses the case with one line naming it.

Refused, not skipped: the ground truth was written for the tree its author
saw, and reviewing a tree with a file silently missing (or silently
replaced by what the link pointed at) would skew recall and precision with
nobody noticing. A refused case is a case error in the report (the rest of
the suite still runs) and, its findings all missed, fails the gate. The
copies are also made with ``symlinks=True``, so a link that appears between
the check and the copy is copied as a link and caught by the check of the
copy, never followed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from fluxdrive.errors import UsageError
from fluxdrive.eval.fixture import Fixture


class RefusedCaseError(Exception):
    """This fixture cannot be run as it is; the message is the one line the report shows."""


def _refuse(name: str, why: str = "") -> RefusedCaseError:
    return RefusedCaseError(
        f"refused: {name} is a symbolic link{why}; a fixture's files are copied, never followed "
        "(replace the link with the file it points to)"
    )


def _first_link(top: Path, relative_to: Path) -> str | None:
    """The first symbolic link under ``top`` (by path, links never descended into), relative to ``relative_to``."""
    for directory, dirs, files in os.walk(top, followlinks=False):
        dirs.sort()
        for name in sorted([*dirs, *files]):
            path = Path(directory, name)
            if path.is_symlink():
                return path.relative_to(relative_to).as_posix()
    return None


def _check_tree(top: Path, relative_to: Path, why: str = "") -> None:
    link = _first_link(top, relative_to)
    if link is not None:
        raise _refuse(link, why)


def stage(fixture: Fixture, scratch: Path) -> tuple[str, Path, str | None]:
    """(target, working directory, diff text) of the copy of ``fixture`` the review runs on.

    Raises :class:`RefusedCaseError` for a link anywhere in the input.
    """
    root = fixture.root
    inputs = {"document": ["document.md"], "project": ["project"], "diff": ["base", "change.patch"]}[fixture.kind]
    for name in inputs:
        if (root / name).is_symlink():
            raise _refuse(name)
    if fixture.kind == "document":
        work = scratch / "input"
        work.mkdir()
        shutil.copy2(root / "document.md", work / "document.md", follow_symlinks=False)
        _check_tree(work, work)
        return "document.md", work, None
    if fixture.kind == "project":
        work = scratch / "project"
        shutil.copytree(root / "project", work, symlinks=True)
        _check_tree(work, scratch)
        return ".", work, None
    work = scratch / "base"
    shutil.copytree(root / "base", work, symlinks=True)
    _check_tree(work, scratch)
    patch = (root / "change.patch").read_bytes().decode("utf-8")  # not read_text: CRLF lines must stay CRLF
    git = shutil.which("git")
    if git is None:
        raise UsageError("git is not installed: a diff fixture's patch is applied with git apply")
    applied = subprocess.run(
        [git, "apply", "--whitespace=nowarn", "-"], input=patch, text=True, cwd=work, capture_output=True, check=False
    )
    if applied.returncode != 0:
        raise UsageError(f"{root / 'change.patch'}: does not apply to base/: {applied.stderr.strip()[:200]}")
    _check_tree(work, scratch, " created by change.patch")
    return "-", work, patch
