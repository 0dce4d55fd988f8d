"""The dispatcher and the monitor with the scripted runtime: real files, real events, real cancellation."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from fluxdrive.agents import load_roster
from fluxdrive.config import Config
from fluxdrive.contracts import OutputStatus, classify_output
from fluxdrive.exchange import verdicts
from fluxdrive.launch.dispatcher import Launch, StageResult, run_stage
from fluxdrive.launch.monitor import Monitor
from fluxdrive.launch.progress import PlainProgress, Recorder
from fluxdrive.runtimes import AgentTask, Outcome, ReviewContent
from fluxdrive.runtimes.testing import (
    Crash,
    Delay,
    Garbage,
    Hang,
    Partial,
    Report,
    ScriptedRuntime,
    findings_report,
)

REPORT = findings_report("SF", ("P1", "Auth", "Token never expires", "app.py:3"))


def _launches(directory: Path, runtime: ScriptedRuntime, names: list[str], deadline: float = 30.0) -> list[Launch]:
    base = load_roster(directory).get("fd-safety")
    content = ReviewContent(directory, ("app.py",))
    return [
        Launch(
            AgentTask(
                base.model_copy(update={"name": name}),
                "prompt",
                content,
                directory,
                directory / "peer-findings.jsonl",
                Config(),
                deadline,
            ),
            runtime,
        )
        for name in names
    ]


def _run(
    directory: Path,
    runtime: ScriptedRuntime,
    names: list[str],
    *,
    concurrency: int = 6,
    deadline: float = 30.0,
    polling: bool = False,
    progress: Recorder | None = None,
) -> StageResult:
    async def go() -> StageResult:
        async with Monitor(directory, force_polling=polling, poll_interval_s=0.05) as monitor:
            return await run_stage(
                1,
                _launches(directory, runtime, names, deadline),
                concurrency=concurrency,
                retries=1,
                progress=progress or Recorder(),
                monitor=monitor,
            )

    return asyncio.run(go())


def test_all_agents_start_at_once_and_report(tmp_path: Path) -> None:
    names = [f"agent-{n}" for n in range(5)]
    runtime = ScriptedRuntime({n: [[Delay(0.3), Report(REPORT)]] for n in names})
    recorder = Recorder()
    result = _run(tmp_path, runtime, names, progress=recorder)
    assert sorted(result.results) == names
    assert all(r.outcome is Outcome.COMPLETED for r in result.results.values())
    first_finish = min(c.finished for c in runtime.calls if c.finished is not None)
    assert all(c.started < first_finish for c in runtime.calls), "no agent waited for another"
    assert all(classify_output(tmp_path / f"{n}.md").verdict == "needs-changes" for n in names)
    assert set(result.registered_at) == set(names)
    assert [e[0] for e in recorder.events].count("finished") == 5
    assert {r.agent for r in verdicts.load_verdicts(tmp_path).records} == set(names)


def test_concurrency_cap_bounds_agents_in_flight(tmp_path: Path) -> None:
    names = [f"agent-{n}" for n in range(6)]
    runtime = ScriptedRuntime({n: [[Delay(0.1), Report(REPORT)]] for n in names})
    _run(tmp_path, runtime, names, concurrency=2)
    spans = [(c.started, c.finished) for c in runtime.calls if c.finished is not None]
    most = max(sum(1 for s, f in spans if s <= start < f) for start, _ in spans)
    assert most <= 2


def test_crash_is_retried_once_then_stubbed(tmp_path: Path) -> None:
    runtime = ScriptedRuntime(
        {
            "flaky": [Crash("connection reset"), Report(REPORT)],
            "broken": [Crash("boom"), Crash("boom again")],
        }
    )
    result = _run(tmp_path, runtime, ["flaky", "broken"])
    assert result.attempts == {"flaky": 2, "broken": 2}
    assert result.results["flaky"].outcome is Outcome.COMPLETED
    assert result.results["broken"].outcome is Outcome.ERROR
    stub = classify_output(tmp_path / "broken.md")
    assert stub.status is OutputStatus.ERROR and "boom again" in stub.reason
    assert sorted(p.name for p in tmp_path.glob("*.md")) == ["broken.md", "flaky.md"]


def test_hang_times_out_and_garbage_is_malformed(tmp_path: Path) -> None:
    runtime = ScriptedRuntime(
        {"stuck": [Hang()], "rambling": [Garbage()], "cut": [Partial('### Findings Index\n- P1 | SF-001 | "A" | B\n')]}
    )
    result = _run(tmp_path, runtime, ["stuck", "rambling", "cut"], deadline=0.3)
    # one deadline covers every attempt: a run that used all of it is not started again (a crash is)
    assert result.results["stuck"].outcome is Outcome.TIMEOUT and result.attempts["stuck"] == 1
    assert classify_output(tmp_path / "stuck.md").status is OutputStatus.ERROR
    assert classify_output(tmp_path / "rambling.md").status is OutputStatus.MALFORMED
    cut = classify_output(tmp_path / "cut.md")
    assert cut.partial, "a report cut off at the timeout is kept and tagged partial"
    assert not list(tmp_path.glob("*.partial"))


def test_cancellation_leaves_one_report_per_launched_agent(tmp_path: Path) -> None:
    names = ["a", "b", "c", "d"]
    runtime = ScriptedRuntime({n: [Hang()] for n in names})

    async def go() -> None:
        async with Monitor(tmp_path) as monitor:
            stage = asyncio.ensure_future(
                run_stage(
                    1,
                    _launches(tmp_path, runtime, names),
                    concurrency=2,  # two agents wait for a slot when the cancel comes
                    retries=1,
                    progress=Recorder(),
                    monitor=monitor,
                )
            )
            await asyncio.sleep(0.2)
            stage.cancel()
            with pytest.raises(asyncio.CancelledError):
                await stage

    asyncio.run(go())
    assert sorted(p.name for p in tmp_path.glob("*.md")) == ["a.md", "b.md", "c.md", "d.md"]
    reasons = {n: classify_output(tmp_path / f"{n}.md").reason for n in names}
    assert sum("cancelled before it finished" in r for r in reasons.values()) == 2
    assert sum("cancelled before it started" in r for r in reasons.values()) == 2
    assert len(runtime.calls) == 2


@pytest.mark.parametrize("polling", [False, True])
def test_monitor_registers_reports_written_by_another_process(tmp_path: Path, polling: bool) -> None:
    """Completion comes from the file, not the runtime: a child process renames the reports into place."""
    import sys
    import time

    async def go() -> dict[str, float]:
        async with Monitor(tmp_path, force_polling=polling, poll_interval_s=0.05) as monitor:
            assert monitor.mode == ("polling" if polling else "events")
            monitor.expect(["x", "y"])
            script = (
                "import sys, time; from pathlib import Path; from fluxdrive.contracts import write_agent_output;"
                "d = Path(sys.argv[1]); time.sleep(0.2); write_agent_output(d, 'x', '### Findings Index\\nVerdict: safe\\n');"
                "time.sleep(0.1); write_agent_output(d, 'y', '### Findings Index\\nVerdict: safe\\n')"
            )
            child = await asyncio.create_subprocess_exec(sys.executable, "-c", script, str(tmp_path))
            seen = {name: await monitor.wait(name) for name in ("x", "y")}
            await child.wait()
            return seen

    before = time.time()
    seen = asyncio.run(go())
    assert before < seen["x"] <= seen["y"]
    assert (tmp_path / "x.md").is_file() and (tmp_path / "y.md").is_file()


def test_plain_progress_is_one_line_per_event(tmp_path: Path) -> None:
    import io

    stream = io.StringIO()
    names = ["one", "two"]
    runtime = ScriptedRuntime({"one": [Report(REPORT)], "two": [Crash("x"), Report(REPORT)]})

    async def go() -> None:
        async with Monitor(tmp_path) as monitor:
            await run_stage(
                1, _launches(tmp_path, runtime, names), concurrency=2, retries=1, progress=PlainProgress(stream),
                monitor=monitor,
            )  # fmt: skip

    asyncio.run(go())
    lines = stream.getvalue().splitlines()
    assert lines[0] == "Stage 1: launching 2 agent(s): one, two"
    assert "two failed (RuntimeError: x); retrying once" in lines
    done = [line for line in lines if line.startswith("[")]
    assert [line.split("]")[0] + "]" for line in done] == ["[1/2 agents complete]", "[2/2 agents complete]"]
    assert all("completed in" in line and "1 P1" in line for line in done)
