"""Run one stage's agents in parallel, and guarantee a report for each (PROTOCOL.md 4.5-4.6, 7).

Every agent of a stage starts at once, bounded only by the concurrency cap
(no batches: a slow agent never holds a fast one back). Each attempt goes
through :func:`fluxdrive.runtimes.guard.run_guarded`, which turns crashes,
garbage and timeouts into the contract's outcomes; a failed or timed-out
agent is retried once with the same task, then keeps its error stub.
Completion is registered the moment the report lands (the monitor's file
event) or the runtime returns, whichever is first.

Cancellation (Ctrl-C) is part of the contract: agents that are running get
their "cancelled" stub from the guard, agents still waiting for a slot get
one here, and the cancellation propagates - afterwards every launched agent
has exactly one ``.md``.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import functools
import time
from collections.abc import Sequence
from dataclasses import dataclass

from fluxdrive.contracts import output_path, write_error_stub
from fluxdrive.launch.monitor import Monitor
from fluxdrive.launch.progress import Progress
from fluxdrive.runtimes import AgentResult, AgentTask, Outcome, Runtime, Usage, run_guarded
from fluxdrive.runtimes.guard import record_verdict, summarize_output

RETRYABLE = (Outcome.ERROR, Outcome.TIMEOUT)
MIN_RETRY_SHARE = 0.1  # less than this share of the deadline left: keep the failure instead of a doomed retry


@dataclass(frozen=True, slots=True)
class Launch:
    """One agent to run, and the runtime that runs it."""

    task: AgentTask
    runtime: Runtime


@dataclass(frozen=True, slots=True)
class StageResult:
    """Each agent's final result, its attempts, and when its report was registered."""

    results: dict[str, AgentResult]
    attempts: dict[str, int]
    registered_at: dict[str, float]  # time.time()
    seconds: float


async def _attempt(launch: Launch, monitor: Monitor | None) -> tuple[AgentResult, float]:
    """One guarded run; returns the result and when its report was registered."""
    name = launch.task.agent.name
    guarded = asyncio.ensure_future(run_guarded(launch.runtime, launch.task))
    if monitor is None:
        result = await guarded
        return result, time.time()
    monitor.expect([name])
    seen = asyncio.ensure_future(monitor.wait(name))
    try:
        await asyncio.wait({guarded, seen}, return_when=asyncio.FIRST_COMPLETED)
        result = await guarded
    finally:
        seen.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await seen
        if not guarded.done():
            guarded.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await guarded
    registered = monitor.seen_at.get(name)
    return result, registered if registered is not None and result.outcome is Outcome.COMPLETED else time.time()


def _never_started(launch: Launch) -> None:
    """A stub (and verdict) for an agent cancelled before it got a slot."""
    task = launch.task
    if output_path(task.output_dir, task.agent.name).exists():
        return
    write_error_stub(task.output_dir, task.agent.name, "cancelled before it started")
    result = AgentResult(
        task.agent.name,
        Outcome.CANCELLED,
        output_path(task.output_dir, task.agent.name),
        launch.runtime.provenance(task),
        Usage(),
        "cancelled before it started",
    )
    record_verdict(task, result)


async def run_stage(
    stage: int,
    launches: Sequence[Launch],
    *,
    concurrency: int,
    retries: int,
    progress: Progress,
    monitor: Monitor | None = None,
) -> StageResult:
    """Run every launch (at most ``concurrency`` at a time) and return their final results."""
    started = time.monotonic()
    gate = asyncio.Semaphore(max(1, concurrency))
    results: dict[str, AgentResult] = {}
    attempts: dict[str, int] = {}
    registered: dict[str, float] = {}
    progress.stage(stage, [launch.task.agent.name for launch in launches])

    async def one(launch: Launch) -> None:
        name = launch.task.agent.name
        try:
            await gate.acquire()
        except asyncio.CancelledError:
            _never_started(launch)
            raise
        try:
            progress.started(name)
            agent_started = time.monotonic()
            deadline = launch.task.deadline_s
            for attempt in range(retries + 1):
                attempts[name] = attempt + 1
                left = deadline if deadline is None or attempt == 0 else deadline - (time.monotonic() - agent_started)
                task = dataclasses.replace(
                    launch.task,
                    deadline_s=left,
                    notify=functools.partial(progress.waiting, name),
                    activity=functools.partial(progress.working, name),
                )
                result, at = await _attempt(Launch(task, launch.runtime), monitor)
                left = None if deadline is None else deadline - (time.monotonic() - agent_started)
                if (
                    result.outcome not in RETRYABLE
                    or not result.retryable
                    or attempt == retries
                    or (left is not None and deadline is not None and left < deadline * MIN_RETRY_SHARE)
                ):
                    break  # one deadline covers every attempt: a retry never doubles the wait
                progress.retrying(name, result.error or result.outcome.value)
            results[name] = result
            registered[name] = at
            _status, summary = summarize_output(launch.task)
            progress.finished(name, result.outcome.value, time.monotonic() - agent_started, summary)
        finally:
            gate.release()

    tasks = [asyncio.ensure_future(one(launch)) for launch in launches]
    try:
        outcomes = await asyncio.gather(*tasks, return_exceptions=True)
    except asyncio.CancelledError:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        for launch in launches:
            with contextlib.suppress(OSError):
                _never_started(launch)
        raise
    failure = next((o for o in outcomes if isinstance(o, BaseException)), None)
    if failure is not None:  # every sibling has finished and been retrieved: report the first failure once
        raise failure
    return StageResult(results, attempts, registered, time.monotonic() - started)
