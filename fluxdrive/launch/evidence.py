"""Analyzer evidence for model agents: their lane's offline candidates, to confirm or refute.

Before a stage is dispatched, every agent of it that runs on a runtime that
is not offline gets what an offline runtime's analyzers find in the same lane
(the same agent name, run by a runtime that ``supplies_evidence``): the most
severe ``evidence.max_per_agent`` candidates, numbered ``AE-001``..., each with
its severity, rule, place, title and data-flow path when there is one. They
are written to ``OUTPUT_DIR/evidence/<agent>.json`` (what synthesis reads back)
and put in the agent's prompt under "Analyzer evidence", with the instruction
to answer each in an ``### Analyzer Evidence`` section. What was given to whom
is recorded in decisions.jsonl (kind ``evidence``).

Why: a model reviewer that is shown the analyzers' candidates stops spending
its attention rediscovering them, and its word on each one (confirmed, or
refuted with a reason) is exactly the cross-check neither side gives alone;
synthesis (fluxdrive.synthesis.evidence) turns the answers into one ranked list.

The analysis runs in-process, once per content (the supplier's own cache),
within the supplier's usual bounds and the local agent timeout; a failure
costs the agents their evidence (a note says so), never the review.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from fluxdrive.agents import AgentDefinition
from fluxdrive.config.model import Config
from fluxdrive.core.atomic import atomic_write_json
from fluxdrive.core.threads import in_daemon_thread
from fluxdrive.errors import FluxdriveError
from fluxdrive.launch.content import ContentBuilder
from fluxdrive.launch.runtimes import RuntimePool
from fluxdrive.runs.decisions import DecisionLog
from fluxdrive.runtimes import AgentTask, Runtime, available
from fluxdrive.synthesis.evidence import EVIDENCE_DIR, SECTION, Candidate, Given, rank

HEADING = "## Analyzer evidence"


def prompt_section(candidates: Sequence[Candidate]) -> str:
    """The prompt's "Analyzer evidence" section ("" when there is nothing to answer)."""
    if not candidates:
        return ""
    return "\n".join(
        [
            "",
            HEADING,
            "",
            "The offline analyzers found these candidates in your lane. They may be false positives. Check",
            "each against the code and answer every one in your report, in a section of its own:",
            "",
            SECTION,
            "- AE-001 | confirmed | the reason, citing the code",
            "- AE-002 | refuted | the reason, citing the code",
            "",
            "List a confirmed candidate in your Findings Index too (at its place). Then look for what the",
            "analyzers cannot see: your own findings matter as much as your answers.",
            "",
            *(c.line() for c in candidates),
            "",
        ]
    )


@dataclass
class AnalyzerEvidence:
    """The evidence of one review: what each model agent was given (computed once per agent)."""

    config: Config
    runtimes: RuntimePool
    content: ContentBuilder
    output_dir: Path
    channel_path: Path
    decisions: DecisionLog | None = None
    say: Callable[[str], None] | None = None
    given: dict[str, Given] = field(default_factory=dict)
    _supplier: Runtime | None = None

    def prompt_for(self, agent: str) -> str:
        """The "Analyzer evidence" section of ``agent``'s prompt ("" when it was given none)."""
        one = self.given.get(agent)
        return prompt_section(one.candidates) if one is not None else ""

    async def prepare(self, agents: Sequence[AgentDefinition], stage: int) -> list[str]:
        """Give each of ``agents`` on a model its lane's candidates (before the stage is dispatched).

        Returns notes for run.json: agents whose evidence could not be computed."""
        settings = self.config.evidence
        wanted = [
            a
            for a in agents
            if a.name not in self.given and not self.runtimes.for_agent(a, self.config).offline and a.kind == "review"
        ]
        if not settings.enabled or not wanted:
            return []
        supplier = self._find_supplier()
        if supplier is None:
            return []
        found: dict[str, list[Candidate]] = {}
        failed: dict[str, str] = {}
        notes: list[str] = []
        for agent in wanted:
            task = self._task(agent, stage)
            try:
                if supplier.can_run(agent):
                    found[agent.name] = await asyncio.wait_for(
                        in_daemon_thread(supplier.evidence, task), self.config.dispatch.timeout_local_s
                    )
                else:
                    found[agent.name] = []  # a lane no analyzer covers: nothing to give
            except (FluxdriveError, OSError, ValueError, RuntimeError, TimeoutError) as exc:
                failed[agent.name] = str(exc) or type(exc).__name__
                notes.append(f"analyzer evidence for {agent.name} not given: {failed[agent.name]}")
                continue
            runtime = self.runtimes.for_agent(agent, self.config)
            record = runtime.provenance(task)
            one = Given(
                agent.name,
                f"{record.provider}:{record.model_id}",
                tuple(rank(found[agent.name], settings.max_per_agent)),
            )
            self.given[agent.name] = one
            atomic_write_json(self.output_dir / EVIDENCE_DIR / f"{agent.name}.json", one.record())
        self._record(wanted, found, failed, supplier, stage)
        return notes

    def _find_supplier(self) -> Runtime | None:
        """The first registered offline runtime that supplies evidence (the review's instance when it has one)."""
        for name, cls in available().items():
            if cls.supplies_evidence and cls.offline:
                if self._supplier is None or self._supplier.name != name:
                    self._supplier = self.runtimes.get(name) if name in self.runtimes.names else cls.create(None)
                return self._supplier
        return None

    def _task(self, agent: AgentDefinition, stage: int) -> AgentTask:
        return AgentTask(
            agent,
            "",
            self.content.for_agent(agent.name),
            self.output_dir,
            self.channel_path,
            self.config,
            self.config.dispatch.timeout_local_s,
            stage,
        )

    def _record(
        self,
        wanted: Sequence[AgentDefinition],
        found: dict[str, list[Candidate]],
        failed: dict[str, str],
        supplier: Runtime,
        stage: int,
    ) -> None:
        given = {
            name: {
                "model": self.given[name].model,
                "ids": [f"{c.id} {c.severity} {c.rule} {c.place}" for c in self.given[name].candidates],
                "left_out": len(found[name]) - len(self.given[name].candidates),
            }
            for name in sorted(found)
        }
        if self.say is not None:
            shown = ", ".join(f"{n} {len(self.given[n].candidates)}" for n in given) or "none"
            self.say(f"Analyzer evidence: {shown} candidate(s) given to model agents")
        if self.decisions is not None:
            self.decisions.record(
                "evidence",
                {"given": given, "not_given": failed},
                {
                    "stage": stage,
                    "agents": sorted(a.name for a in wanted),
                    "supplier": supplier.name,
                    "config": self.config.evidence,
                },
            )
