"""An unusable history database never blocks a review: history is auxiliary.

Reproduces the report "corrupt or unwritable history DB blocks every review
(internal error: DatabaseError, exit 3)". For each way the database can be
unusable - garbage bytes, a directory where the file belongs, a data
directory fluxdrive cannot write to, a data directory that is a file - a
review of a small project still ends with a verdict (exit 0 or 1) and says
so on stderr exactly once; ``fluxdrive history`` and ``fluxdrive feedback``,
which exist only to read or write that database, exit 2 with one line.

Everything runs the real ``fluxdrive`` console script as a subprocess, with
XDG_DATA_HOME pointing at a temp dir (the autouse fixture in conftest).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.conftest import CliResult, committed_copy, run_fluxdrive

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "projects" / "py-webapp"


def _data_dir() -> Path:
    """``$XDG_DATA_HOME/fluxdrive``, where history.db lives (XDG_DATA_HOME is a temp dir here)."""
    return Path(os.environ["XDG_DATA_HOME"]) / "fluxdrive"


def _garbage(data: Path) -> None:
    data.mkdir(parents=True)
    (data / "history.db").write_bytes(b"this is not a database\n" + os.urandom(8192))


def _directory(data: Path) -> None:
    (data / "history.db").mkdir(parents=True)


def _read_only(data: Path) -> None:
    """The data directory cannot be written to.

    As root, chmod does not stop a write, so the same situation is made
    another way: history.db is a dangling symlink into a directory that does
    not exist (SQLite can neither open nor create it).
    """
    data.mkdir(parents=True)
    if os.geteuid() == 0:
        (data / "history.db").symlink_to(data.parent / "missing" / "dir" / "history.db")
    else:
        data.chmod(stat.S_IRUSR | stat.S_IXUSR)


def _data_dir_is_a_file(data: Path) -> None:
    data.parent.mkdir(parents=True)
    data.write_text("not a directory\n")


BREAKAGES: dict[str, Callable[[Path], None]] = {
    "garbage bytes": _garbage,
    "a directory": _directory,
    "a read-only data directory": _read_only,
    "a data directory that is a file": _data_dir_is_a_file,
}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return committed_copy(FIXTURE, tmp_path / "proj")


@pytest.fixture(params=list(BREAKAGES))
def broken(request: pytest.FixtureRequest) -> Iterator[str]:
    data = _data_dir()
    BREAKAGES[request.param](data)
    yield request.param
    if data.is_dir():
        data.chmod(stat.S_IRWXU)  # so that pytest can remove the temp dir


def _history_mentions(err: str) -> int:
    """How many lines of stderr speak of the history database."""
    return sum(1 for line in err.splitlines() if "history" in line.lower())


def _one_error_line(done: CliResult, command: str) -> list[str]:
    """What is wrong with ``done`` as "exit 2 and one line naming the history database" (nothing: [])."""
    lines = done.err.splitlines()
    problems = []
    if done.code != 2:
        problems.append(f"{command}: exit {done.code}, expected 2 (stdout {done.out[:200]!r})")
    if len(lines) != 1 or not lines[0].startswith("fluxdrive: error:") or "history" not in lines[0]:
        problems.append(f"{command}: expected one 'fluxdrive: error:' line naming the history database: {done.err!r}")
    if "Traceback" in done.err or "internal error" in done.err:
        problems.append(f"{command}: a traceback or an internal error")
    return problems


def test_an_unusable_history_db_warns_once_and_blocks_only_history_and_feedback(
    broken: str, project: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    review = run_fluxdrive("review", "shop", "--yes", "--output-dir", out, cwd=project)
    assert review.code in (0, 1), f"history ({broken}) blocked the review: exit {review.code}: {review.err[-600:]!r}"
    assert review.out.startswith("Verdict: "), review.out[:300]
    assert "Traceback" not in review.err and "internal error" not in review.err
    problems = []
    mentions = _history_mentions(review.err)
    if mentions != 1:
        problems.append(f"review: the history problem is mentioned {mentions} time(s) on stderr, expected once")
    problems += _one_error_line(run_fluxdrive("history", cwd=project), "history")
    # feedback records into the history database: it is the one thing it does
    assert '"P0-1"' in (out / "findings.json").read_text()
    feedback = run_fluxdrive("feedback", "accept", out / "findings.json", "P0-1", cwd=project)
    problems += _one_error_line(feedback, "feedback accept")
    assert not problems, (
        f"history database unusable ({broken}):\n" + "\n".join(problems) + f"\nreview stderr:\n{review.err}"
    )


def test_a_quiet_review_still_warns_once(project: Path, tmp_path: Path) -> None:
    """``-q`` silences progress, not the warning that nothing is recorded (the knowledge-store warning shows too)."""
    _garbage(_data_dir())
    done = run_fluxdrive("review", "shop", "--yes", "-q", "--output-dir", tmp_path / "out", cwd=project)
    assert done.code in (0, 1) and done.out.startswith("Verdict: "), done.err
    assert _history_mentions(done.err) == 1, f"stderr: {done.err!r}"
