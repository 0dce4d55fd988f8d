"""Progress while a review runs, as a CI log and a terminal see it: real ``fluxdrive`` processes, real analyzers.

A CI log (stderr not a terminal) hears from a long stage through heartbeat
lines with the analysis's file counts, then one line per agent; a fast run
prints no heartbeat; ``-q`` prints no progress at all; a terminal gets a
progress bar of the files analyzed. The heartbeat interval is shortened
through ``FLUXDRIVE_HEARTBEAT_S`` (never by waiting out the real 10 s), and
nothing here asserts how long anything took.
"""

from __future__ import annotations

import io
import json
import re
import sys
import textwrap
import time
from pathlib import Path

import pexpect
import pytest

from fluxdrive.launch.progress import HEARTBEAT_ENV, HEARTBEAT_S, PlainProgress, heartbeat_from
from tests.conftest import committed_copy, run_fluxdrive

REPO = Path(__file__).resolve().parent.parent.parent
FIXTURE = REPO / "tests" / "fixtures" / "projects" / "py-webapp"
MODULES = 56  # x ~400 lines: past the 20,000 lines at which the per-file pass runs in worker processes
HEARTBEAT = re.compile(r"^Stage 1: \d+ s, analyzers: .*\((\d[\d,]*)/(\d[\d,]*) files\), \d+/7 agents complete$")
COMPLETION = re.compile(r"^\[(\d)/7 agents complete\] (fd-[a-z-]+) \w+ in \d+\.\d s \(")
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b[()][A-Z0-9]")


def _module(number: int) -> str:
    functions = "\n".join(
        textwrap.dedent(
            f'''
            def total_{number}_{index}(items, discount=0):
                """Order total for batch {index}."""
                total = 0
                for item in items:
                    if item.get("price") and item.get("qty", 0) > 0:
                        total += item["price"] * item["qty"]
                    elif item.get("refund"):
                        total -= item["refund"]
                if discount:
                    total = total * (100 - discount) / 100
                return round(total, 2)
            '''
        )
        for index in range(32)
    )
    return f'"""Orders, part {number}."""\n\nimport json\nimport os\n{functions}\n'


@pytest.fixture(scope="module")
def big_tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A project big enough for the parallel per-file pass (and for a stage that outlasts a short heartbeat)."""
    root = tmp_path_factory.mktemp("big") / "orders"
    (root / "orders").mkdir(parents=True)
    for number in range(MODULES):
        (root / "orders" / f"part_{number:02d}.py").write_text(_module(number), encoding="utf-8")
    assert sum(p.read_text().count("\n") for p in root.rglob("*.py")) > 20_000
    return root


def _review(tree: Path, out: Path, *extra: str) -> tuple[int, str, str]:
    done = run_fluxdrive("review", tree, "--yes", "--fail-on", "never", "--output-dir", out, *extra)
    return done.code, done.out, done.err


def test_a_ci_log_hears_heartbeats_with_file_counts_then_one_line_per_agent(
    big_tree: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(HEARTBEAT_ENV, "0.1")
    code, out, err = _review(big_tree, tmp_path / "run", "--format", "json")
    assert code == 0, err
    assert json.loads(out)["findings"] is not None  # stdout is the JSON document alone
    lines = err.splitlines()
    beats = [(i, HEARTBEAT.match(line)) for i, line in enumerate(lines) if line.startswith("Stage 1: ")]
    counted = [(i, m) for i, m in beats if m is not None]
    assert counted, err  # a heartbeat appeared, with the per-file pass's counts
    assert all(int(m.group(1).replace(",", "")) <= int(m.group(2)) for _i, m in counted)
    assert int(counted[0][1].group(2)) >= MODULES
    completions = [(i, COMPLETION.match(line)) for i, line in enumerate(lines)]
    done = [(i, m) for i, m in completions if m is not None]
    assert [int(m.group(1)) for _i, m in done] == list(range(1, 8)), err  # one line per agent, counted up
    assert len({m.group(2) for _i, m in done}) == 7
    assert counted[0][0] < done[0][0]  # the log spoke while the stage ran, not only when it ended


def test_a_fast_review_prints_no_heartbeat(tmp_path: Path) -> None:
    project = committed_copy(FIXTURE, tmp_path / "shop")
    code, _out, err = _review(project, tmp_path / "run")
    assert code == 0, err
    assert "agents complete]" in err
    assert not [line for line in err.splitlines() if re.match(r"Stage \d+: \d+ s, ", line)], err


def test_quiet_prints_no_progress_even_with_a_short_heartbeat(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(HEARTBEAT_ENV, "0.05")
    project = committed_copy(FIXTURE, tmp_path / "shop")
    code, out, err = _review(project, tmp_path / "run", "-q", "--format", "json")
    assert code == 0, err
    json.loads(out)
    assert "Stage 1" not in err and "agents complete" not in err and "files)" not in err, err


def test_a_terminal_shows_the_files_analyzed(big_tree: Path, tmp_path: Path) -> None:
    exe = str(Path(sys.executable).parent / "fluxdrive")
    args = ["review", str(big_tree), "--yes", "--fail-on", "never", "--output-dir", str(tmp_path / "run")]
    child = pexpect.spawn(exe, args, encoding="utf-8", timeout=300, dimensions=(50, 200))
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0, child.before
    shown = ANSI.sub("", child.before)
    counts = [
        (int(a.replace(",", "")), int(b.replace(",", ""))) for a, b in re.findall(r"(\d[\d,]*)/(\d[\d,]*) files", shown)
    ]
    assert counts, shown[-3000:]  # the progress bar's "done/total files", drawn while the pass ran
    assert all(done <= total and total >= MODULES for done, total in counts)
    assert re.search(r"━{10,} +\d[\d,]*/\d[\d,]* files", shown)  # the bar itself, then its count


def test_the_heartbeat_names_what_runs_and_stops_with_the_stage() -> None:
    """In process, with a 50 ms interval passed as a parameter: the line's parts, and silence once all are done."""
    stream = io.StringIO()
    progress = PlainProgress(stream, heartbeat_s=0.05)
    progress.stage(1, ["fd-safety", "fd-quality", "fd-remote"])
    for agent in ("fd-safety", "fd-quality", "fd-remote"):
        progress.started(agent)
    for agent in ("fd-safety", "fd-quality"):  # agents sharing one analysis: its activity is named once
        progress.working(agent, "analyzers: ruff done; checks running", 1210, 2034)
    deadline = time.monotonic() + 30
    while "agents complete" not in stream.getvalue() and time.monotonic() < deadline:
        time.sleep(0.01)
    beat = next(
        line for line in stream.getvalue().splitlines() if line.startswith("Stage 1: ") and "launching" not in line
    )
    assert re.fullmatch(
        r"Stage 1: \d+ s, analyzers: ruff done; checks running \(1,210/2,034 files\), running: fd-remote, "
        r"0/3 agents complete",
        beat,
    ), beat
    for agent in ("fd-safety", "fd-quality", "fd-remote"):
        progress.finished(agent, "completed", 1.0, "no findings")
    assert progress.heartbeat() is None  # the stage is over: nothing more to say
    progress.close()


@pytest.mark.parametrize(
    ("value", "expected"),
    [("0.5", 0.5), ("", HEARTBEAT_S), ("soon", HEARTBEAT_S), ("-1", HEARTBEAT_S), ("inf", HEARTBEAT_S)],
)
def test_the_interval_comes_from_the_environment_only_when_it_is_a_positive_number(value: str, expected: float) -> None:
    assert heartbeat_from({HEARTBEAT_ENV: value}) == expected
    assert heartbeat_from({}) == HEARTBEAT_S
