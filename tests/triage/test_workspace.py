"""Input classification, OUTPUT_DIR, the run lock and run isolation (PROTOCOL.md section 1)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from fluxdrive.errors import InputError, UsageError
from fluxdrive.workspace import RUN_MARKER, BusyError, claim_output_dir, output_dir_for, resolve_target, run_lock
from tests.conftest import hold_lock
from tests.triage.conftest import git

DIFF = "diff --git a/app.py b/app.py\n--- a/app.py\n+++ b/app.py\n@@ -1,1 +1,2 @@\n x = 1\n+y = 2\n"


def test_classification(make_project) -> None:  # type: ignore[no-untyped-def]
    root = make_project({"app.py": "x = 1\n", "docs/plan.md": "# Plan\n", "change.diff": DIFF}, repository=True)
    assert resolve_target(str(root / "app.py")).kind == "file"
    assert resolve_target(str(root / "docs/plan.md")).kind == "document"
    assert resolve_target(str(root)).kind == "directory"
    diff = resolve_target(str(root / "change.diff"))
    assert diff.kind == "diff" and diff.diff_text == DIFF and diff.root == root
    stdin = resolve_target("-", stdin_text=DIFF, cwd=root)
    assert stdin.kind == "diff" and stdin.source == "stdin" and stdin.root == root


def test_git_diff_and_staged(make_project) -> None:  # type: ignore[no-untyped-def]
    root = make_project({"app.py": "x = 1\n"}, repository=True)
    (root / "app.py").write_text("x = 1\ny = 2\n")
    git(root, "commit", "-q", "-am", "second")
    since = resolve_target(None, diff_ref="HEAD~1", cwd=root)
    assert since.kind == "diff" and "+y = 2" in (since.diff_text or "") and since.label == "diff-HEAD~1"
    (root / "app.py").write_text("x = 1\ny = 3\n")
    git(root, "add", "app.py")
    staged = resolve_target(None, staged=True, cwd=root)
    assert "+y = 3" in (staged.diff_text or "") and staged.label == "staged"


@pytest.mark.parametrize(
    ("setup", "message"),
    [
        ("missing", "input not found"),
        ("empty", "input file is empty"),
        ("binary", "binary file"),
        ("empty-stdin", "stdin is empty"),
        ("not-a-diff", "stdin is not a unified diff"),
        ("unknown-ref", "unknown git ref 'no-such-branch'"),
        ("empty-diff", "the diff is empty"),
        ("no-repo-diff", "not inside a git repository"),
    ],
)
def test_bad_input(make_project, tmp_path: Path, setup: str, message: str) -> None:  # type: ignore[no-untyped-def]
    root = make_project(
        {"app.py": "x = 1\n", "empty.py": "", "logo.png": b"\x89PNG\x00\x00"}, repository=setup != "no-repo-diff"
    )
    calls = {
        "missing": lambda: resolve_target(str(root / "nope.py")),
        "empty": lambda: resolve_target(str(root / "empty.py")),
        "binary": lambda: resolve_target(str(root / "logo.png")),
        "empty-stdin": lambda: resolve_target("-", stdin_text="", cwd=root),
        "not-a-diff": lambda: resolve_target("-", stdin_text="hello\n", cwd=root),
        "unknown-ref": lambda: resolve_target(None, diff_ref="no-such-branch", cwd=root),
        "empty-diff": lambda: resolve_target(None, diff_ref="HEAD", cwd=root),
        "no-repo-diff": lambda: resolve_target(None, diff_ref="HEAD", cwd=root),
    }
    with pytest.raises(InputError, match=message):
        calls[setup]()


def test_usage_errors(make_project) -> None:  # type: ignore[no-untyped-def]
    root = make_project({"app.py": "x\n"}, repository=True)
    with pytest.raises(UsageError):
        resolve_target("app.py", diff_ref="HEAD", cwd=root)
    with pytest.raises(UsageError):
        resolve_target(None, cwd=root)


def test_project_root_and_output_dir(make_project, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    root = make_project({"src/app.py": "x = 1\n"}, repository=True)
    target = resolve_target(str(root / "src" / "app.py"))
    assert target.root == root
    first, second = output_dir_for(target), output_dir_for(resolve_target(str(root / "src" / "app.py")))
    assert first == second, "the run hash is stable across reruns"
    assert first.parent == root / "docs" / "research" / "flux-drive" and first.name.startswith("app-")
    assert len(first.name.rsplit("-", 1)[1]) == 8
    assert output_dir_for(target, tmp_path / "custom") == (tmp_path / "custom").resolve()
    outside = tmp_path / "loose"
    outside.mkdir()
    (outside / "notes.md").write_text("# Notes\n")
    assert resolve_target(str(outside / "notes.md")).root == outside, (
        "outside git, PROJECT_ROOT is the input's directory"
    )


def test_lock_refuses_a_live_owner_and_recovers_from_a_dead_one(tmp_path: Path) -> None:
    with (
        hold_lock(tmp_path) as holder,
        pytest.raises(BusyError, match=f"in use by another fluxdrive run \\(pid {holder.pid}"),
        run_lock(tmp_path),
    ):
        pass
    assert (tmp_path / ".fluxdrive.lock").exists(), "a killed holder leaves its file, not its lock"
    with run_lock(tmp_path) as lock:
        assert str(os.getpid()) in lock.read_text()
        with pytest.raises(BusyError), run_lock(tmp_path):
            pass
    assert not (tmp_path / ".fluxdrive.lock").exists(), "released on exit"


def test_each_run_writes_a_fresh_directory_and_removes_nothing(tmp_path: Path) -> None:
    """Run isolation without deleting: the path is re-pointed at a new, empty directory; the old one stays whole."""
    out = tmp_path / "out"
    with run_lock(claim_output_dir(out)):
        (out / "fd-safety.md").write_text("old")
        (out / "verdicts").mkdir()
        (out / "verdicts" / "fd-safety.json").write_text("old")
    first = out.resolve()
    with run_lock(claim_output_dir(out)):
        assert sorted(p.name for p in out.iterdir()) == [RUN_MARKER], "the new run starts empty"
    assert out.is_symlink() and out.resolve() != first and out.resolve().parent == first.parent
    assert (first / "fd-safety.md").read_text() == "old" and (first / "verdicts" / "fd-safety.json").exists()
    assert sorted(p.name for p in out.iterdir()) == [RUN_MARKER]
