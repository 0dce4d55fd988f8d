"""The output directory: a run never removes anything, writes only a directory it made, one run at a time.

Reproduces, with real files and real processes: ``--output-dir`` pointed at
the user's own ``docs/`` (which used to wipe ``plan.md`` and every other
``*.md`` and ``content/*`` there), the input living inside the output
directory, a lock raced by many contenders at once (it used to be held twice
in 109 of 200 trials), and the temporary files a killed run leaves behind.
"""

from __future__ import annotations

import hashlib
import json
import multiprocessing
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from fluxdrive.workspace import RUN_MARKER, BusyError, claim_output_dir, run_lock
from tests.conftest import committed_copy, run_fluxdrive

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "projects" / "py-webapp"
PLAN = "# Migration plan\n\n## Steps\n\nMove the orders table.\n\n## Rollback\n\nRestore the backup.\n"


def _tree(root: Path) -> dict[str, str]:
    """Every file under ``root`` with its sha256."""
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".git" not in p.parts
    }


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = committed_copy(FIXTURE, tmp_path / "proj")
    docs = root / "docs"
    (docs / "content").mkdir(parents=True)
    (docs / "plan.md").write_text(PLAN)
    (docs / "notes.md").write_text("# Notes\n\nkeep me\n")
    (docs / "content" / "data.txt").write_text("precious\n")
    (docs / "run.json").write_text('{"mine": true}\n')  # a user's file that happens to share a report's name
    return root


def test_the_users_docs_directory_is_refused_and_left_intact(project: Path) -> None:
    before = _tree(project)
    done = run_fluxdrive("review", "docs/plan.md", "--yes", "--output-dir", "docs", cwd=project)
    assert done.code == 2, done.err
    assert done.err.count("\n") == 1 and done.err.startswith("fluxdrive: error: the input plan.md is inside")
    assert _tree(project) == before, "not one file of the user's was touched"


def test_a_non_empty_directory_fluxdrive_did_not_create_is_refused(project: Path) -> None:
    before = _tree(project)
    done = run_fluxdrive("review", "shop/routes.py", "--yes", "--output-dir", "docs", cwd=project)
    assert done.code == 2
    assert "is not empty and was not created by fluxdrive" in done.err and done.err.count("\n") == 1
    triage = run_fluxdrive("triage", "shop", "--yes", "--output-dir", "docs", cwd=project)
    assert triage.code == 2 and "not created by fluxdrive" in triage.err
    assert _tree(project) == before
    assert not (project / "docs" / RUN_MARKER).exists()


def test_a_run_directory_is_marked_reused_and_isolated(project: Path, tmp_path: Path) -> None:
    out = tmp_path / "reviews"
    first = run_fluxdrive("review", "shop", "--yes", "--output-dir", out, "--fail-on", "never", cwd=project)
    assert first.code == 0, first.err
    assert (out / RUN_MARKER).is_file() and (out / "findings.json").is_file()
    stale = out / "fd-stale-agent.md"
    stale.write_text("### Findings Index\nVerdict: risky\n")  # a report a previous run left
    again = run_fluxdrive("review", "shop", "--yes", "--output-dir", out, "--fail-on", "never", cwd=project)
    assert again.code == 0, again.err
    assert not stale.exists(), "a new run starts in a fresh directory: no report of the previous run is in it"
    assert "fd-stale-agent" not in json.loads((out / "findings.json").read_text())["agents_launched"]


def test_a_directory_that_merely_looks_like_a_run_is_refused(project: Path, tmp_path: Path) -> None:
    """What earlier versions wrote (or a repository forged) is no proof: such a directory is refused, untouched."""
    out = tmp_path / "legacy"
    (out / "verdicts").mkdir(parents=True)
    for name in ("triage.json", "input-profile.json", "fd-safety.md", "summary.md", "verdicts/fd-safety.json"):
        (out / name).write_text("{}\n")
    before = _tree(out)
    done = run_fluxdrive("review", "shop", "--yes", "--output-dir", out, "--fail-on", "never", cwd=project)
    assert done.code == 2 and "is not empty and was not created by fluxdrive" in done.err
    assert _tree(out) == before and not (out / RUN_MARKER).exists()


def test_an_empty_or_new_directory_is_claimed(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    pointer = claim_output_dir(empty)
    assert pointer == empty.resolve() and not empty.is_symlink(), "nothing changes before the run holds its lock"
    with run_lock(pointer):
        assert empty.is_symlink() and (empty / RUN_MARKER).is_file(), "the empty directory became this run's link"
    fresh = claim_output_dir(tmp_path / "a" / "b")
    with run_lock(fresh):
        assert (fresh / RUN_MARKER).is_file()
    file = tmp_path / "file"
    file.write_text("x")
    with pytest.raises(Exception, match="not a directory"):
        claim_output_dir(file)


# --------------------------------------------------------------------------
# the lock, raced


def _contend(directory: str, holders: Any, overlaps: Any) -> None:
    try:
        with run_lock(Path(directory), command="race"):
            with holders.get_lock():
                holders.value += 1
                if holders.value > 1:
                    overlaps.value += 1
            time.sleep(0.002)
            with holders.get_lock():
                holders.value -= 1
    except BusyError:
        pass


def _race(directory: Path, contenders: int) -> int:
    """Start ``contenders`` threads at one barrier, each taking the lock; the most that held it at once."""
    inside = most = 0
    guard = threading.Lock()
    start = threading.Barrier(contenders)

    def contend() -> None:
        nonlocal inside, most
        start.wait()
        try:
            with run_lock(directory, command="race"):
                with guard:
                    inside += 1
                    most = max(most, inside)
                time.sleep(0.001)
                with guard:
                    inside -= 1
        except BusyError:
            pass

    threads = [threading.Thread(target=contend) for _ in range(contenders)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return most


def test_the_lock_is_never_held_twice_by_racing_threads(tmp_path: Path) -> None:
    trials = 200
    doubled = 0
    for trial in range(trials):
        directory = tmp_path / f"t{trial}"
        directory.mkdir()
        doubled += _race(directory, 4) > 1
        assert not (directory / ".fluxdrive.lock").exists(), "released when the holder is done"
    assert doubled == 0, f"the lock was held twice in {doubled} of {trials} trials"


def test_the_lock_is_never_held_twice_by_racing_processes(tmp_path: Path) -> None:
    context = multiprocessing.get_context("spawn")
    holders, overlaps = context.Value("i", 0), context.Value("i", 0)
    for trial in range(10):
        directory = tmp_path / f"p{trial}"
        directory.mkdir()
        workers = [context.Process(target=_contend, args=(str(directory), holders, overlaps)) for _ in range(6)]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join(30)
            assert worker.exitcode == 0
    assert overlaps.value == 0


# --------------------------------------------------------------------------
# what a killed run leaves behind


def test_temporaries_a_killed_run_left_are_swept_and_never_block(project: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    first = run_fluxdrive("review", "shop", "--yes", "--output-dir", out, "--fail-on", "never", cwd=project)
    assert first.code == 0, first.err
    leftovers = [out / "verdicts" / ".fd-safety.json.k9x2.tmp", out / ".run.json.a1b2.tmp", out / ".fluxdrive.lock"]
    for path in leftovers:
        path.write_text("half-writ")  # what kill -9 mid-write leaves: a temp file and an unheld lock file
    listed = run_fluxdrive("verdicts", out, cwd=project)
    assert listed.code == 0 and "Traceback" not in listed.err
    again = run_fluxdrive("review", "shop", "--yes", "--output-dir", out, "--fail-on", "never", cwd=project)
    assert again.code == 0, again.err
    assert not any(p.exists() for p in leftovers)
