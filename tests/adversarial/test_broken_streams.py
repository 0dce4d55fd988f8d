"""A reader that goes away never takes a review down (issue 26, item 9).

Each test runs a real ``fluxdrive review`` process on a copy of the
py-webapp fixture (four P0 findings: RISKY) with ``--fail-on risky`` and
breaks one of its console streams the way a shell or CI runner does: stderr
closed before the process starts (``2>&-``), stderr a pipe whose reader
closes after two lines, stdout a pipe whose reader closes before the report
arrives, stdout closed from the start, and the issue's own ``2>&1 | head -2``.
Every time, findings.json must be written with the RISKY verdict and the
process must exit 1 - the verdict's code, not 0 (the old silent death) nor
120/141 (a broken pipe at exit) - without a traceback anywhere.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from tests.adversarial._support import review_dir
from tests.conftest import committed_copy

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "projects" / "py-webapp"
FLUXDRIVE = [sys.executable, "-m", "fluxdrive"]
REVIEW = ["review", ".", "--yes", "--fail-on", "risky"]
TIMEOUT = 240  # a hang guard only


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return committed_copy(FIXTURE, tmp_path / "shop")


def _verdict(project: Path) -> str:
    """The verdict of the review's findings.json (which must exist and be whole)."""
    return str(json.loads((review_dir(project) / "findings.json").read_text(encoding="utf-8"))["verdict"])


def _shell(project: Path, line: str) -> subprocess.CompletedProcess[str]:
    """``line`` run by bash in the project, with ``FD`` standing for the fluxdrive command."""
    command = f'set -o pipefail; FD() {{ {shlex.join(FLUXDRIVE)} "$@"; }}; {line}'
    return subprocess.run(
        ["bash", "-c", command], cwd=project, capture_output=True, text=True, timeout=TIMEOUT, check=False
    )


def test_stderr_closed_from_the_start(project: Path) -> None:
    done = _shell(project, f"FD {shlex.join(REVIEW)} 2>&-")
    assert done.returncode == 1, (done.returncode, done.stdout[-500:])
    assert _verdict(project) == "risky"
    assert "Verdict: RISKY" in done.stdout, "stdout still gets the report"


def test_stdout_closed_from_the_start(project: Path) -> None:
    done = _shell(project, f"FD {shlex.join(REVIEW)} >&-")
    assert done.returncode == 1, (done.returncode, done.stderr[-500:])
    assert _verdict(project) == "risky"
    assert "Traceback" not in done.stderr and "Exception ignored" not in done.stderr, done.stderr[-500:]


def test_the_issue_pipeline_2_to_1_into_head_2(project: Path) -> None:
    done = _shell(project, f"FD {shlex.join(REVIEW)} 2>&1 | head -2")
    assert done.returncode == 1, "pipefail: the review's own exit code, the verdict's"
    assert len(done.stdout.splitlines()) == 2
    assert _verdict(project) == "risky"


def test_stderr_reader_closes_after_two_lines(project: Path, tmp_path: Path) -> None:
    with (tmp_path / "stdout.txt").open("w") as stdout:
        process = subprocess.Popen([*FLUXDRIVE, *REVIEW], cwd=project, stdout=stdout, stderr=subprocess.PIPE, text=True)
        assert process.stderr is not None
        lines = [process.stderr.readline(), process.stderr.readline()]
        process.stderr.close()  # every later progress line meets EPIPE
        code = process.wait(timeout=TIMEOUT)
    assert all(lines), lines
    assert code == 1
    assert _verdict(project) == "risky"
    report = (tmp_path / "stdout.txt").read_text(encoding="utf-8")
    assert "Verdict: RISKY" in report, "stdout is unaffected by the broken stderr"


def test_stdout_reader_closes_before_the_report(project: Path, tmp_path: Path) -> None:
    with (tmp_path / "stderr.txt").open("w") as stderr:
        process = subprocess.Popen([*FLUXDRIVE, *REVIEW], cwd=project, stdout=subprocess.PIPE, stderr=stderr)
        assert process.stdout is not None
        process.stdout.close()  # the report (printed at the end) meets EPIPE
        code = process.wait(timeout=TIMEOUT)
    progress = (tmp_path / "stderr.txt").read_text(encoding="utf-8")
    assert code == 1, progress[-500:]
    assert _verdict(project) == "risky"
    assert "Traceback" not in progress and "BrokenPipeError" not in progress, progress[-500:]
    assert "agents complete]" in progress, "stderr is unaffected by the broken stdout"


def test_only_a_vanished_reader_is_silenced() -> None:
    """EPIPE or a closed file silences the stream for good; a full disk or an encoding error still raises."""
    import errno
    import io

    from fluxdrive.core.streams import GuardedStream

    class Failing(io.StringIO):
        def __init__(self, error: BaseException) -> None:
            super().__init__()
            self.error = error

        def write(self, text: str) -> int:
            raise self.error

    gone = GuardedStream(Failing(BrokenPipeError(errno.EPIPE, "Broken pipe")))
    assert gone.write("progress\n") == len("progress\n") and gone.broken
    gone.write("more\n")  # dropped, not raised
    closed = io.StringIO()
    closed.close()
    assert GuardedStream(closed).write("x") == 1
    assert GuardedStream(None).write("x") == 1, "a stream that never existed (2>&-) takes writes too"
    for error in (OSError(errno.ENOSPC, "No space left on device"), UnicodeEncodeError("utf-8", "\udcff", 0, 1, "x")):
        with pytest.raises(type(error)):
            GuardedStream(Failing(error)).write("x")
