"""Test doubles shipped with the library, for our tests and plugin authors.

:class:`ScriptedRuntime` plays a script per agent - reports, delays,
crashes, hangs, garbage and half-written output - so dispatch, monitoring,
timeouts and synthesis can be exercised without analyzers or models.
:class:`FunctionRuntime` wraps a plain function from task to report text.
Both write through the completion contract like any real runtime.

    runtime = ScriptedRuntime({
        "fd-safety": [Crash("boom"), [Delay(0.2), Report(findings_report(...))]],
        "fd-quality": [Hang()],
    })

Each list item is one attempt: the first call for an agent plays the first
attempt, a retry plays the second, and the last attempt repeats.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass

from fluxdrive.contracts import (
    AgentOutputWriter,
    IndexEntry,
    render_index,
    write_agent_output,
)
from fluxdrive.runtimes.base import (
    AgentResult,
    AgentTask,
    Outcome,
    Provenance,
    Runtime,
    Usage,
)


@dataclass(frozen=True)
class Report:
    """Write ``text`` as the agent's completed report."""

    text: str


@dataclass(frozen=True)
class Delay:
    """Sleep before the next step."""

    seconds: float


@dataclass(frozen=True)
class Crash:
    """Raise an exception, as a crashing agent would."""

    message: str = "scripted crash"


@dataclass(frozen=True)
class Hang:
    """Never finish (until cancelled or timed out)."""


@dataclass(frozen=True)
class Garbage:
    """Complete with text that is not a Findings Index."""

    text: str = "I looked at the code and it seems mostly fine, probably.\n"


@dataclass(frozen=True)
class Partial:
    """Start writing ``text`` to the .partial file, then hang."""

    text: str


@dataclass(frozen=True)
class Spend:
    """Report token usage for this attempt."""

    tokens_in: int
    tokens_out: int
    cost_usd: float = 0.0


Step = Report | Delay | Crash | Hang | Garbage | Partial | Spend
Attempt = Step | Sequence[Step]

SCRIPTED = Provenance("scripted", "scripted", "scripted-1")
FUNCTION = Provenance("function", "function", "function-1")
CLEAN = "### Findings Index\nVerdict: safe\n\n### Summary\nNothing to report.\n"


def findings_report(agent_prefix: str, *rows: tuple[str, str, str] | tuple[str, str, str, str]) -> str:
    """A valid report from ``(severity, section, title[, location])`` rows."""
    entries = []
    for number, row in enumerate(rows, start=1):
        severity, section, title = row[:3]
        location = row[3] if len(row) > 3 else None
        entries.append(IndexEntry(severity, f"{agent_prefix}-{number:03d}", section, title, location))  # type: ignore[arg-type]
    return render_index(entries)


@dataclass
class Call:
    """One recorded run: which agent, which attempt, when."""

    agent: str
    attempt: int
    started: float
    finished: float | None = None


class ScriptedRuntime(Runtime):
    """Plays a scripted attempt per call; agents without a script report clean."""

    name = "scripted"
    offline = True
    description = "test double: plays scripted reports, delays, crashes and hangs"

    def __init__(
        self,
        scripts: Mapping[str, Sequence[Attempt]] | None = None,
        *,
        default: Attempt = Report(CLEAN),
        provenance: Provenance = SCRIPTED,
    ) -> None:
        self.scripts = {agent: list(attempts) for agent, attempts in (scripts or {}).items()}
        self.default = default
        self._provenance = provenance
        self.calls: list[Call] = []

    def provenance(self, task: AgentTask) -> Provenance:
        return self._provenance

    def _attempt(self, agent: str, number: int) -> Sequence[Step]:
        attempts = self.scripts.get(agent) or [self.default]
        chosen = attempts[min(number, len(attempts) - 1)]
        if isinstance(chosen, Sequence) and not isinstance(chosen, str):
            return list(chosen)
        return [chosen]

    async def run(self, task: AgentTask) -> AgentResult:
        name = task.agent.name
        number = sum(1 for c in self.calls if c.agent == name)
        call = Call(name, number, time.monotonic())
        self.calls.append(call)
        usage = Usage()
        outcome = Outcome.COMPLETED
        for step in self._attempt(name, number):
            if isinstance(step, Delay):
                await asyncio.sleep(step.seconds)
            elif isinstance(step, Crash):
                raise RuntimeError(step.message)
            elif isinstance(step, Hang):
                await asyncio.Event().wait()
            elif isinstance(step, Report | Garbage):
                write_agent_output(task.output_dir, name, step.text)
            elif isinstance(step, Partial):
                with AgentOutputWriter(task.output_dir, name) as writer:
                    writer.write(step.text)
                    await asyncio.Event().wait()
            elif isinstance(step, Spend):
                usage = Usage(step.tokens_in, step.tokens_out, step.cost_usd)
        call.finished = time.monotonic()
        usage = Usage(usage.tokens_in, usage.tokens_out, usage.cost_usd, call.finished - call.started)
        return AgentResult(
            name,
            outcome,
            task.output_dir / f"{name}.md",
            self._provenance,
            usage,
        )


class FunctionRuntime(Runtime):
    """Runs ``function(task) -> report text`` (sync or async) for every agent."""

    name = "function"
    offline = True
    description = "test double: a plain function returns each agent's report"

    def __init__(
        self,
        function: Callable[[AgentTask], str | Awaitable[str]],
        *,
        provenance: Provenance = FUNCTION,
    ) -> None:
        self.function = function
        self._provenance = provenance

    def provenance(self, task: AgentTask) -> Provenance:
        return self._provenance

    async def run(self, task: AgentTask) -> AgentResult:
        started = time.monotonic()
        text = self.function(task)
        if inspect.isawaitable(text):
            text = await text
        path = write_agent_output(task.output_dir, task.agent.name, str(text))
        return AgentResult(
            task.agent.name,
            Outcome.COMPLETED,
            path,
            self._provenance,
            Usage(wall_s=time.monotonic() - started),
        )
