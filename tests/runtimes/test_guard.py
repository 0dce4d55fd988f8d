"""The guard: whatever a runtime does, exactly one report and one verdict remain."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from fluxdrive.contracts import OutputStatus, classify_output
from fluxdrive.runtimes import Outcome, run_guarded
from fluxdrive.runtimes.testing import (
    CLEAN,
    Crash,
    Delay,
    FunctionRuntime,
    Garbage,
    Hang,
    Partial,
    Report,
    ScriptedRuntime,
    Spend,
    findings_report,
)


def _verdict(task) -> dict:  # type: ignore[no-untyped-def]
    return json.loads((task.output_dir / "verdicts" / f"{task.agent.name}.json").read_text())


def _files(task) -> list[str]:  # type: ignore[no-untyped-def]
    return sorted(p.name for p in task.output_dir.iterdir() if p.is_file())


def test_report_is_written_and_verdict_recorded(make_task) -> None:  # type: ignore[no-untyped-def]
    task = make_task("fd-safety")
    text = findings_report("SF", ("P0", "db.py", "SQL built from input", "db.py:3"))
    runtime = ScriptedRuntime({"fd-safety": [[Spend(1200, 300), Report(text)]]})
    result = asyncio.run(run_guarded(runtime, task))
    assert result.outcome is Outcome.COMPLETED
    assert result.usage.tokens == 1500
    assert classify_output(result.output_path).index.verdict == "risky"
    record = _verdict(task)
    assert record["status"] == "NEEDS_ATTENTION"
    assert record["summary"] == "1 P0: SQL built from input"
    assert record["tokens"] == 1500 and record["detail_path"] == "fd-safety.md"
    assert _files(task) == ["fd-safety.md"]


def test_crash_becomes_an_error_stub(make_task) -> None:  # type: ignore[no-untyped-def]
    task = make_task("fd-quality")
    result = asyncio.run(run_guarded(ScriptedRuntime({"fd-quality": [Crash("model exploded")]}), task))
    assert result.outcome is Outcome.ERROR
    assert result.error == "RuntimeError: model exploded"
    classified = classify_output(result.output_path)
    assert classified.status is OutputStatus.ERROR and "model exploded" in classified.reason
    assert _verdict(task)["status"] == "ERROR"


def test_hang_is_cut_at_the_deadline_and_stubbed(make_task) -> None:  # type: ignore[no-untyped-def]
    task = make_task("fd-performance", deadline_s=0.2)
    result = asyncio.run(run_guarded(ScriptedRuntime({"fd-performance": [Hang()]}), task))
    assert result.outcome is Outcome.TIMEOUT
    classified = classify_output(result.output_path)
    assert classified.status is OutputStatus.ERROR and "timed out after 0.2 s" in classified.reason
    assert _files(task) == ["fd-performance.md"]


def test_partial_output_at_timeout_is_kept_and_tagged(make_task) -> None:  # type: ignore[no-untyped-def]
    task = make_task("fd-correctness", deadline_s=0.2)
    partial = '### Findings Index\n- P1 | CR-001 | "db.py" | Lost update on balance | db.py:9\n'
    result = asyncio.run(run_guarded(ScriptedRuntime({"fd-correctness": [Partial(partial)]}), task))
    assert result.outcome is Outcome.TIMEOUT
    assert result.notes == ("partial report kept, tagged partial",)
    classified = classify_output(result.output_path)
    assert classified.partial and classified.status is OutputStatus.MALFORMED and classified.usable_index
    assert [e.id for e in classified.index.entries] == ["CR-001"]
    assert _files(task) == ["fd-correctness.md"]


def test_garbage_is_classified_malformed_and_flagged_for_attention(make_task) -> None:  # type: ignore[no-untyped-def]
    task = make_task("fd-architecture")
    asyncio.run(run_guarded(ScriptedRuntime({"fd-architecture": [Garbage()]}), task))
    assert classify_output(task.output_dir / "fd-architecture.md").status is OutputStatus.MALFORMED
    record = _verdict(task)
    assert record["status"] == "NEEDS_ATTENTION" and record["summary"].startswith("malformed:")


def test_runtime_that_returns_without_writing_gets_a_stub(make_task) -> None:  # type: ignore[no-untyped-def]
    task = make_task("fd-safety")
    result = asyncio.run(run_guarded(ScriptedRuntime({"fd-safety": [Delay(0.01)]}), task))
    assert classify_output(result.output_path).status is OutputStatus.ERROR


def test_cancellation_writes_a_stub_and_propagates(make_task) -> None:  # type: ignore[no-untyped-def]
    task = make_task("fd-safety")

    async def scenario() -> None:
        running = asyncio.create_task(run_guarded(ScriptedRuntime({"fd-safety": [Hang()]}), task))
        await asyncio.sleep(0.05)
        running.cancel()
        await running

    with pytest.raises(asyncio.CancelledError):
        asyncio.run(scenario())
    classified = classify_output(task.output_dir / "fd-safety.md")
    assert classified.status is OutputStatus.ERROR and "cancelled" in classified.reason


def test_scripted_attempts_advance_per_call(make_task) -> None:  # type: ignore[no-untyped-def]
    runtime = ScriptedRuntime({"fd-safety": [Crash("first try"), Report(CLEAN)]})
    first = asyncio.run(run_guarded(runtime, make_task("fd-safety")))
    second = asyncio.run(run_guarded(runtime, make_task("fd-safety")))
    assert (first.outcome, second.outcome) == (Outcome.ERROR, Outcome.COMPLETED)
    assert [c.attempt for c in runtime.calls] == [0, 1]


def test_function_runtime(make_task, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    async def review(task) -> str:  # type: ignore[no-untyped-def]
        return findings_report(
            task.agent.prefix,
            ("P2", "a.py", f"{task.agent.name} saw {len(task.content.files)} files"),
        )

    result = asyncio.run(run_guarded(FunctionRuntime(review), make_task("fd-quality", files=("a.py", "b.py"))))
    assert classify_output(result.output_path).index.entries[0].title == "fd-quality saw 2 files"
    assert result.provenance.model_family == "function"
