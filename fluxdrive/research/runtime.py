"""Research agents as a runtime, so a question runs through the review's own dispatcher.

``fluxdrive research`` launches its agents with
:func:`fluxdrive.launch.dispatcher.run_stage`: the same concurrency cap,
guard (a crash is an error stub, a hang a timeout), retry, cancellation
and write-behind verdict record as a review's agents. What differs is only
what an agent does: :class:`ResearchRuntime` calls the agent's executor
(offline search, or a model) in a daemon worker thread (a hung one never keeps the process alive) and writes its answer
through the completion contract as a report with no findings, ``Verdict:
safe``, and the research contract's Sources, Findings, Confidence and Gaps.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping
from typing import ClassVar

from fluxdrive.contracts import write_agent_output
from fluxdrive.launch.research.model import ResearchAnswer, ResearchExecutor, ResearchRequest
from fluxdrive.launch.research.runner import in_worker
from fluxdrive.launch.research.triggers import Trigger
from fluxdrive.research.report import render_research_report
from fluxdrive.runtimes.base import AgentResult, AgentTask, Outcome, Provenance, Runtime, Usage


class ResearchRuntime(Runtime):
    """Runs research agents: one executor per agent name, one question for all of them."""

    name: ClassVar[str] = "research"
    offline: ClassVar[bool] = True
    reads_prompt: ClassVar[bool] = False
    description: ClassVar[str] = "research agents answering one question (offline search or a model)"

    def __init__(self, executors: Mapping[str, ResearchExecutor], question: str, kind: str, scope: str | None) -> None:
        self.executors = dict(executors)
        self.question = question
        self.kind = kind
        self.scope = scope
        self.answers: dict[str, ResearchAnswer] = {}

    def trigger(self, agent: str) -> Trigger:
        """The question as the research executors' request shape (no finding: a free question)."""
        return Trigger("", "", (), self.scope, self.kind, agent, self.question, self.question)

    async def run(self, task: AgentTask) -> AgentResult:
        name = task.agent.name
        started = time.monotonic()
        deadline = started + (task.deadline_s if task.deadline_s is not None else 3600.0)
        request = ResearchRequest(self.trigger(name), task.content.root, deadline)
        answer = await asyncio.wrap_future(in_worker(self.executors[name], request, name=f"fluxdrive-research-{name}"))
        self.answers[name] = answer
        path = write_agent_output(task.output_dir, name, render_research_report(name, self.question, self.kind, answer))
        usage = answer.usage or Usage()
        return AgentResult(
            name,
            Outcome.COMPLETED,
            path,
            answer.provenance or self.provenance(task),
            Usage(usage.tokens_in, usage.tokens_out, usage.cost_usd, time.monotonic() - started),
        )

    def provenance(self, task: AgentTask) -> Provenance:
        return Provenance("research", "offline", task.agent.name)
