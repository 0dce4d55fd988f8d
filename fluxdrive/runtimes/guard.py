"""The wrapper that keeps one agent's failure from becoming the run's.

:func:`run_guarded` is how every caller runs an agent. Whatever the runtime
does - returns, raises, hangs past its deadline, or is cancelled - afterwards
exactly one ``<agent>.md`` exists (PROTOCOL.md section 7), a verdict record
describes it, and an :class:`AgentResult` says what happened. Timeouts apply
the completion table (a partial report is kept and tagged); errors become
the section 6 error stub. Cancellation writes a stub and is re-raised so the
caller's Ctrl-C still stops the run.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import re
import time
from pathlib import Path

from fluxdrive.contracts import (
    OutputStatus,
    classify_output,
    freeze_report,
    output_path,
    settle,
    write_error_stub,
)
from fluxdrive.core.masking import scrub
from fluxdrive.exchange import verdicts
from fluxdrive.runtimes.base import AgentResult, AgentTask, Outcome, Runtime, Usage

CANCEL_GRACE_S = 5.0  # after its deadline, a run may take this long to clean up; then it is abandoned


def _first_summary_line(path: Path) -> str:
    """A research agent's answer line ("answered, high confidence: ..."): its report raises no findings."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return "answered"
    found = re.search(r"^### Summary\s*\n+(.+)$", text, re.M)
    return found.group(1).split(". Question")[0].strip()[: verdicts.SUMMARY_MAX] if found else "answered"


def summarize_output(task: AgentTask) -> tuple[str, str]:
    """(verdict status, one-line summary) for the agent's output."""
    result = classify_output(output_path(task.output_dir, task.agent.name))
    index = result.index
    if result.status is OutputStatus.ERROR:
        return "ERROR", result.reason
    if result.status is OutputStatus.MISSING or (result.status is OutputStatus.MALFORMED and not result.usable_index):
        return "NEEDS_ATTENTION", f"{result.status.value}: {result.reason}"
    if task.agent.kind == "research" and result.status is OutputStatus.VALID and not index.findings:
        return "CLEAN", _first_summary_line(output_path(task.output_dir, task.agent.name))
    counts = {s: sum(1 for e in index.findings if e.severity == s) for s in ("P0", "P1", "P2", "P3")}
    shown = ", ".join(f"{n} {s}" for s, n in counts.items() if n) or "no findings"
    top = next((e for e in index.findings if e.severity in ("P0", "P1")), None)
    headline = f": {top.title}" if top else ""
    status = verdicts.STATUS_FOR_VERDICT[result.verdict]
    if result.status is OutputStatus.MALFORMED:
        status = "NEEDS_ATTENTION"
        shown += f" (malformed: {result.reason})"
    return status, f"{shown}{headline}"


def record_verdict(task: AgentTask, result: AgentResult) -> AgentResult:
    """The agent is done: freeze its report (a private copy synthesis reads), write its verdict record."""
    sha = freeze_report(task.output_dir, task.agent.name)
    status, summary = summarize_output(task)
    verdicts.write_verdict(
        task.output_dir,
        task.agent.name,
        status,
        summary,
        detail_path=f"{task.agent.name}.md",
        tokens=result.usage.tokens,
        cost_usd=result.usage.cost_usd,
    )
    return dataclasses.replace(result, report_sha256=sha)


def _failed(task: AgentTask, runtime: Runtime, outcome: Outcome, message: str, started: float) -> AgentResult:
    return AgentResult(
        agent=task.agent.name,
        outcome=outcome,
        output_path=output_path(task.output_dir, task.agent.name),
        provenance=runtime.provenance(task),
        usage=Usage(wall_s=time.monotonic() - started),
        error=message,
    )


def _consume(future: asyncio.Future[AgentResult]) -> None:
    """Retrieve an abandoned run's outcome so asyncio does not log it as never retrieved."""
    if not future.cancelled():
        future.exception()


async def _within(runtime: Runtime, task: AgentTask, seconds: float) -> AgentResult:
    """``runtime.run(task)``, or TimeoutError after ``seconds`` - a hard deadline.

    ``asyncio.wait_for`` waits for the cancelled run to finish; a runtime
    stuck in a tool that ignores cancellation would hold the whole review.
    Here the run gets ``CANCEL_GRACE_S`` to clean up after the deadline
    (kill its process group, close its connections) and is then abandoned.
    """
    inner = asyncio.ensure_future(runtime.run(task))
    try:
        done, _pending = await asyncio.wait({inner}, timeout=seconds)
    except asyncio.CancelledError:
        inner.cancel()
        await asyncio.wait({inner}, timeout=CANCEL_GRACE_S)
        if not inner.done():
            inner.add_done_callback(_consume)
        raise
    if inner in done:
        return inner.result()
    inner.cancel()
    await asyncio.wait({inner}, timeout=CANCEL_GRACE_S)
    if not inner.done():
        inner.add_done_callback(_consume)
    elif not inner.cancelled() and inner.exception() is None:
        return inner.result()  # it finished in the grace period after all
    raise TimeoutError


async def run_guarded(runtime: Runtime, task: AgentTask) -> AgentResult:
    """Run ``task`` on ``runtime``; never raise except on cancellation."""
    started = time.monotonic()
    name = task.agent.name
    try:
        if task.deadline_s is None:
            result = await runtime.run(task)
        else:
            result = await _within(runtime, task, task.deadline_s)
        settle(task.output_dir, name, reason="finished without completing its report")
    except TimeoutError:
        reason = f"timed out after {task.deadline_s:g} s"
        completion = settle(task.output_dir, name, reason=reason)
        outcome = Outcome.TIMEOUT
        result = _failed(task, runtime, outcome, reason, started)
        if completion.partial:
            result = dataclasses.replace(result, notes=("partial report kept, tagged partial",))
    except asyncio.CancelledError:
        with contextlib.suppress(OSError):  # a full disk must not turn Ctrl-C into a traceback
            write_error_stub(task.output_dir, name, "cancelled before it finished")
            record_verdict(task, _failed(task, runtime, Outcome.CANCELLED, "cancelled", started))
        raise
    except Exception as exc:  # the guard's whole job: any failure becomes a stub
        message = scrub(f"{type(exc).__name__}: {' '.join(str(exc).split()) or 'no message'}")
        try:
            write_error_stub(task.output_dir, name, message)
        except OSError as error:  # the disk is full: the run goes on and fails once, where it writes its reports
            message += f" (and its error stub could not be written: {error.strerror})"
        result = _failed(task, runtime, Outcome.ERROR, message, started)
    try:
        return record_verdict(task, result)
    except OSError:
        return result
