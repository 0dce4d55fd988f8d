"""``fluxdrive review`` and ``make review`` as people and scripts run them: real processes, a real terminal, real signals."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pexpect
import pytest

from fluxdrive.contracts import OutputStatus, classify_output
from tests.conftest import committed_copy, run_fluxdrive
from tests.triage.conftest import git

REPO = Path(__file__).resolve().parent.parent.parent
FIXTURE = REPO / "tests" / "fixtures" / "projects" / "py-webapp"
ALL_SEVEN = "fd-safety,fd-correctness,fd-quality,fd-performance,fd-architecture,fd-user-product,fd-game-design"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return committed_copy(FIXTURE, tmp_path / "shop")


def test_seven_agent_review_stdout_fits_the_budget(project: Path) -> None:
    done = run_fluxdrive("review", ".", "--yes", "--agents", ALL_SEVEN, "--expand", "all", cwd=project)
    assert done.code == 1, done.err  # verdict risky at the default --fail-on risky
    lines = done.out.splitlines()
    assert lines[0].startswith("Verdict: RISKY (")
    assert lines[1].startswith("All 7 reviewers reported")
    assert "\x1b[" not in done.out, "no colour when stdout is not a terminal"
    agent_rows = lines[lines.index("Agents:") + 1 : lines.index("Agents:") + 8]
    assert sorted(row.split()[0] for row in agent_rows) == sorted(ALL_SEVEN.split(","))
    assert len(done.out) <= 4000, len(done.out)
    assert "Files in " in done.out and "findings.json" in done.out
    assert "[7/7 agents complete]" in done.err or "agents complete]" in done.err
    assert "Expansion decision:" in done.err


def test_formats_and_fail_on(project: Path) -> None:
    done = run_fluxdrive("review", ".", "--yes", "--format", "json", "--fail-on", "never", "-q", cwd=project)
    assert done.code == 0, done.err
    document = json.loads(done.out)
    assert document["verdict"] == "risky" and document["findings"]
    assert done.err == "" or "warning" in done.err
    sarif = run_fluxdrive("review", ".", "--yes", "--format", "sarif", "--fail-on", "never", "-q", cwd=project)
    assert json.loads(sarif.out)["version"] == "2.1.0"
    markdown = run_fluxdrive("review", ".", "--yes", "--format", "markdown", "--fail-on", "never", "-q", cwd=project)
    assert markdown.out.startswith("# ")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([], "a non-interactive review must choose how to expand"),
        (["--yes", "--expand", "sideways"], "unknown --expand value 'sideways'"),
        (["--yes", "--format", "yaml"], "unknown --format 'yaml'"),
        (["--yes", "--runtime", "statik"], "unknown runtime 'statik' (hint: did you mean 'static'?)"),
        (["--yes", "--timeout", "0"], "--timeout must be a positive number of seconds"),
        (["--yes", "--agents", "fd-nobody"], "unknown agent 'fd-nobody'"),
    ],
)
def test_bad_usage_is_one_line_exit_2(project: Path, args: list[str], message: str) -> None:
    done = run_fluxdrive("review", ".", *args, cwd=project)
    assert done.code == 2, done
    assert message in done.err and done.err.count("\n") == 1 and "Traceback" not in done.err


def test_diff_on_stdin(project: Path) -> None:
    routes = project / "shop" / "routes.py"
    routes.write_text(routes.read_text() + "\n\ndef ping(host):\n    import os\n    return os.system('ping ' + host)\n")
    diff = git(project, "diff")
    done = run_fluxdrive("review", "-", "--yes", "--fail-on", "never", cwd=project, input=diff)
    assert done.code == 0, done.err
    assert "shop/routes.py:" in done.out


def test_make_review_on_a_fresh_target(project: Path) -> None:
    proc = subprocess.run(
        ["make", "-s", "-C", str(REPO), "review", f"TARGET={project}"],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("Verdict: RISKY")
    assert "Stage 1: launching" in proc.stderr and "Expansion decision:" in proc.stderr
    strict = subprocess.run(
        ["make", "-s", "-C", str(REPO), "review", f"TARGET={project}", "ARGS=--fail-on risky --quiet"],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert strict.returncode != 0 and strict.stdout.startswith("Verdict: RISKY"), "CI can fail the build on risky"
    usage = subprocess.run(["make", "-s", "-C", str(REPO), "review"], capture_output=True, text=True, check=False)
    assert usage.returncode != 0 and "usage: make review TARGET=" in usage.stderr


# The expansion question only exists with two stages; offline, the cost model runs everyone in Stage 1.
STAGED = ["--set", "selection.staging=always"]


def _fluxdrive() -> str:
    return str(Path(sys.executable).parent / "fluxdrive")


def test_interactive_review_in_a_real_terminal(project: Path) -> None:
    child = pexpect.spawn(
        _fluxdrive(), ["review", ".", "--fail-on", "never", *STAGED], cwd=str(project), encoding="utf-8",
        timeout=120, dimensions=(60, 220),
    )  # fmt: skip
    child.expect("approve / reject")
    child.sendline("approve")
    child.expect(r"Launch Stage 2\? \[")
    child.sendline("stop")
    child.expect(r"Verdict: \x1b\[1;31mRISKY\x1b\[0m \(")  # on a terminal the verdict is coloured
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    run = json.loads(next((project / "docs" / "research" / "flux-drive").glob("*/run.json")).read_text())
    assert run["early_stop"] and run["expansion"]["chosen"] == []


def test_ctrl_c_at_the_gate_dispatches_nothing(project: Path) -> None:
    child = pexpect.spawn(_fluxdrive(), ["review", "."], cwd=str(project), encoding="utf-8", timeout=120)
    child.expect("approve / reject")
    child.sendintr()
    child.expect("interrupted")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 130
    # nothing is claimed before approval: no run directory, or one with no report and no lock
    for out in (project / "docs" / "research" / "flux-drive").glob("[!.]*/"):  # the run links, not .fluxdrive-runs
        assert not list(out.glob("fd-*.md")) and not (out / ".fluxdrive.lock").exists()


HANGING_REVIEW = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from fluxdrive.launch.progress import PlainProgress
    from fluxdrive.api import ReviewOptions, run_review
    from fluxdrive.runtimes.testing import Hang, ScriptedRuntime

    root = Path(sys.argv[1])
    runtime = ScriptedRuntime(default=Hang())
    run = run_review(".", ReviewOptions(cwd=root, output_dir=root / "out", yes=True, runtime=runtime,
                                        progress=PlainProgress(sys.stderr)))
    print("interrupted" if run.interrupted else "finished", run.synthesis.verdict if run.synthesis else "-")
    sys.exit(130 if run.interrupted else 0)
    """
)


def test_ctrl_c_during_launch_stubs_every_agent_and_synthesizes(project: Path) -> None:
    """SIGINT to a real review process while its agents run: stubs, run.json, and a synthesis of what finished."""
    proc = subprocess.Popen(
        [sys.executable, "-c", HANGING_REVIEW, str(project)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )  # fmt: skip
    assert proc.stderr is not None
    deadline = time.monotonic() + 60
    line = ""
    while "Stage 1: launching" not in line and time.monotonic() < deadline:
        line = proc.stderr.readline()
    assert "Stage 1: launching" in line
    agents = line.split(": ", 2)[2].strip().split(", ")
    time.sleep(0.3)
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, stderr
    assert stdout.startswith("interrupted error"), "nothing completed: the verdict is error"
    out = project / "out"
    for agent in agents:
        result = classify_output(out / f"{agent}.md")
        assert result.status is OutputStatus.ERROR and "cancelled" in result.reason
    run = json.loads((out / "run.json").read_text())
    assert run["interrupted"] is True and (out / "summary.md").is_file()
    assert not (out / ".fluxdrive.lock").exists()
    assert "Traceback" not in stderr


def test_ctrl_c_at_the_expansion_question_keeps_stage1(project: Path) -> None:
    child = pexpect.spawn(
        _fluxdrive(), ["review", ".", "--fail-on", "never", *STAGED], cwd=str(project), encoding="utf-8",
        timeout=120, dimensions=(60, 220),
    )  # fmt: skip
    child.expect("approve / reject")
    child.sendline("approve")
    child.expect(r"Launch Stage 2\? \[")
    child.sendintr()
    child.expect(r"Verdict: \x1b\[1;31mRISKY\x1b\[0m \(")  # on a terminal the verdict is coloured
    child.expect("interrupted: the report covers the agents that finished")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 130
    run = json.loads(next((project / "docs" / "research" / "flux-drive").glob("*/run.json")).read_text())
    assert run["interrupted"] is True and [s.get("launched", True) for s in run["stages"]] == [True, False]
