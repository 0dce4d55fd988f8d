"""The launch phases of one review: Stage 1, research, the expansion decision, Stage 2.

State and dependencies are kept apart (the way pydantic-ai separates a
run's state from its deps): :class:`~fluxdrive.launch.plan.StagePlan` says
what runs, :class:`ReviewDeps` holds what the phases use but do not decide
(the runtimes, progress, a person to ask, the knowledge store), and each
phase leaves a typed result in :class:`LaunchRecord` - which
:mod:`fluxdrive.launch.manifest` turns into ``run.json``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from fluxdrive.agents import AgentDefinition
from fluxdrive.config.model import Config
from fluxdrive.core.masking import scrub
from fluxdrive.core.threads import in_daemon_thread
from fluxdrive.errors import ReviewError
from fluxdrive.launch.budget import budget_key
from fluxdrive.launch.content import ContentBuilder
from fluxdrive.launch.criteria import merged_criteria, render_criteria
from fluxdrive.launch.dispatcher import Launch, run_stage
from fluxdrive.launch.dropout import Dropout, assess_dropout, render_dropout
from fluxdrive.launch.evidence import AnalyzerEvidence
from fluxdrive.launch.expansion import Decision, choose, decide, render_decision
from fluxdrive.launch.knowledge import ReviewKnowledge
from fluxdrive.launch.monitor import Monitor
from fluxdrive.launch.plan import Ask, StagePlan
from fluxdrive.launch.progress import Progress
from fluxdrive.launch.prompts import PromptContext, render_prompt, save_prompt
from fluxdrive.launch.reaction import ReactionPhase, RoundInputs, reaction_round
from fluxdrive.launch.research import EXECUTORS, ResearchExecutor, ResearchOutcome, find_triggers, run_research
from fluxdrive.launch.runtimes import RuntimePool
from fluxdrive.launch.validation import model_ask, validate, validation_line
from fluxdrive.runs.decisions import DecisionLog
from fluxdrive.runtimes import AgentResult, AgentTask, Outcome, Runtime
from fluxdrive.synthesis import Finding, synthesize
from fluxdrive.triage import Triage
from fluxdrive.workspace import Target

ExpandChoice = Literal["ask", "recommended", "all", "none"]
STAGE1_FINDINGS_SHOWN = 40


@dataclass(frozen=True)
class ReviewDeps:
    """What the phases use but do not decide."""

    runtimes: RuntimePool
    progress: Progress
    knowledge: ReviewKnowledge
    ask: Ask | None = None
    say: Callable[[str], None] | None = None
    decisions: DecisionLog | None = None  # decisions.jsonl: dropout, expansion and the choice, with their inputs


@dataclass(frozen=True)
class StagePhase:
    """One stage that was dispatched: who, and how long it took."""

    stage: int
    agents: tuple[str, ...]
    seconds: float


@dataclass(frozen=True)
class ExpansionPhase:
    """After Stage 1: who was redundant, what was recommended, what was chosen."""

    dropout: Dropout
    decision: Decision
    chosen: tuple[str, ...]


@dataclass
class LaunchRecord:
    """Everything the launch did, phase by phase (what run.json is built from)."""

    stage1: StagePhase | None = None
    research: tuple[ResearchOutcome, ...] = ()
    research_seconds: float = 0.0
    reaction: ReactionPhase | None = None  # the reaction round after the last stage (launch/reaction.py)
    expansion: ExpansionPhase | None = None
    stage2: StagePhase | None = None
    results: dict[str, AgentResult] = field(default_factory=dict)
    launched: dict[str, int] = field(default_factory=dict)  # agent -> the stage it was dispatched in
    notes: list[str] = field(default_factory=list)
    placement: list[str] = field(default_factory=list)  # where agents and analysis ran (a cluster)
    model_calls: list[dict[str, Any]] = field(default_factory=list)  # calls besides the agents' (validation)

    @property
    def chosen(self) -> tuple[str, ...]:
        """The Stage 2 agents chosen at the expansion decision."""
        return self.expansion.chosen if self.expansion else ()

    def phases(self) -> dict[str, float]:
        """Seconds per phase that ran."""
        out = {}
        if self.stage1 is not None:
            out["stage1"] = self.stage1.seconds
            out["research"] = self.research_seconds
        if self.stage2 is not None:
            out["stage2"] = self.stage2.seconds
        if self.reaction is not None and self.reaction.ran:
            out["reaction"] = self.reaction.seconds
        return out


class Launcher:
    """Runs the phases of one plan, in order, and records each one's result."""

    def __init__(
        self, result: Triage, target: Target, config: Config, plan: StagePlan, deps: ReviewDeps, output_dir: Path
    ) -> None:
        self.triage, self.target, self.config, self.plan, self.deps = result, target, config, plan, deps
        self.output_dir = output_dir
        self.channel_path = output_dir / "peer-findings.jsonl"
        self.content = ContentBuilder(target, plan.content, plan.line_filter)
        self.record = LaunchRecord(notes=list(deps.knowledge.notes))
        self.stage1_findings: list[Finding] = []
        self.evidence = AnalyzerEvidence(  # analyzer candidates for the agents on a model (launch/evidence.py)
            config, deps.runtimes, self.content, output_dir, self.channel_path, deps.decisions, deps.progress.phase
        )

    async def run(self, mode: ExpandChoice) -> LaunchRecord:
        """Stage 1, research, the expansion decision and Stage 2; the record (also when interrupted)."""
        record = self.record
        async with Monitor(self.output_dir, poll_interval_s=self.config.dispatch.poll_interval_s) as monitor:
            if monitor.note:
                record.notes.append(monitor.note)
            record.stage1 = await self._stage(1, self.plan.stage1, monitor)
            started = time.monotonic()
            self.stage1_findings = self._stage1_findings()
            record.research = await in_daemon_thread(self._research)
            record.research_seconds = round(time.monotonic() - started, 3)
            dropout, decision = self._decide()
            if mode == "ask":
                self.deps.progress.suspend()
                # In a thread, so Ctrl-C at the question still cancels the review at once.
                chosen = await in_daemon_thread(self._choose, decision, mode)
            else:
                chosen = self._choose(decision, mode)
            record.expansion = ExpansionPhase(dropout, decision, tuple(chosen))
            if self.deps.decisions is not None and decision.candidates:
                self.deps.decisions.record("choice", {"stage2": chosen}, {"mode": mode})
            if chosen:
                record.stage2 = await self._stage(2, chosen, monitor)
        record.reaction = await self._react()
        await self._validate()
        await self.deps.runtimes.aclose()
        record.notes.extend(self.deps.runtimes.notes())
        record.placement.extend(self.deps.runtimes.placement())
        return record

    async def _validate(self) -> None:
        """Every model's P0/P1 checked by a model of another family, before synthesis (launch/validation.py)."""
        agents, runtimes, results = self.triage.roster.agents, self.deps.runtimes, self.record.results

        def model_of(name: str) -> str | None:
            if name not in agents or name not in results:
                return None
            if not runtimes.for_agent(agents[name], self.config).costs_tokens:
                return None
            return f"{results[name].provenance.provider}:{results[name].provenance.model_id}"

        if not any(model_of(name) for name in self.record.launched):
            return  # nothing a model wrote: no synthesis spent on finding what to check
        done = await validate(
            self.output_dir,
            Path(self.target.root),
            self.config,
            model_of,
            model_ask(self.config, runtimes.meter),
            self.deps.decisions,
            grounds=self.target.kind != "diff" and self.config.synthesis.grounding,
        )
        if done.checks:
            self.deps.progress.phase(validation_line(done))
        self.record.notes.extend(done.notes)
        self.record.model_calls.extend(done.model_calls)

    async def _react(self) -> ReactionPhase:
        """The reaction round over every report so far (launch/reaction.py); its notes and calls recorded."""
        agents, results = self.triage.roster.agents, self.record.results
        completed = {
            n: agents[n] for n in self.record.launched if n in results and results[n].outcome is Outcome.COMPLETED
        }

        def task_for(agent: AgentDefinition, prompt: str, runtime: Runtime) -> AgentTask:
            content = self.content.for_agent(agent.name)
            return AgentTask(agent, prompt, content, self.output_dir, self.channel_path, self.config,
                             self._timeout(runtime), 3)  # fmt: skip

        budgets = self.config.budget.per_input
        inputs = RoundInputs(
            self._stage1_findings,
            completed,
            lambda agent: self.deps.runtimes.for_agent(agent, self.config),
            task_for,
            {a.name: a.final_score for a in self.triage.agents},
            budgets.get(budget_key(self.triage.profile, self.config), budgets.get("other", 150_000)),
            self.target.label,
        )
        done = await reaction_round(inputs, self.config, self.output_dir, self.deps.decisions, self.deps.progress.phase)
        self.record.notes.extend(done.notes)
        self.record.model_calls.extend(done.model_calls)
        return done

    # ---------------------------------------------------------------- stages

    async def _stage(self, stage: int, names: Sequence[str], monitor: Monitor) -> StagePhase:
        started = time.monotonic()
        context = self._context(stage)
        self.record.notes.extend(await self.evidence.prepare([self.triage.roster.agents[n] for n in names], stage))
        launches = [self._launch(self.triage.roster.agents[n], stage, context) for n in names]
        for name in names:
            self.record.launched[name] = stage
        done = await run_stage(
            stage,
            launches,
            concurrency=self.config.dispatch.max_concurrency,
            retries=self.config.dispatch.retries,
            progress=self.deps.progress,
            monitor=monitor,
        )
        self.record.results.update(done.results)
        return StagePhase(stage, tuple(names), round(time.monotonic() - started, 3))

    def _launch(self, agent: AgentDefinition, stage: int, context: PromptContext) -> Launch:
        piece = self.plan.content.slices.get(agent.name)
        content_path = piece.content_path if piece else self.plan.content.shared_path
        note = piece.reason if piece and piece.mode == "sliced" else "You receive the full content."
        criteria = merged_criteria(agent.name, self.triage.domains, self.config.domains.max_injected)
        prompt = scrub(  # what reaches a provider, or a CLI, carries no credential
            render_prompt(
                agent,
                context,
                content_path=content_path,
                slice_note=note,
                domain_criteria=render_criteria(criteria),
                knowledge=self.deps.knowledge.for_agent(agent),
                evidence=self.evidence.prompt_for(agent.name),
            )
        )
        save_prompt(self.output_dir, agent.name, prompt)
        runtime = self.deps.runtimes.for_agent(agent, self.config)
        task = AgentTask(
            agent,
            prompt,
            self.content.for_agent(agent.name),
            self.output_dir,
            self.channel_path,
            self.config,
            self._timeout(runtime),
            stage,
        )
        return Launch(task, runtime)

    def _timeout(self, runtime: Runtime) -> float:
        dispatch = self.config.dispatch
        return dispatch.timeout_remote_s if runtime.remote else dispatch.timeout_local_s

    def _context(self, stage: int) -> PromptContext:
        return PromptContext(
            input_label=self.target.label,
            input_type=self.target.kind,
            project_root=Path(self.target.root),
            output_dir=self.output_dir,
            channel_path=self.channel_path,
            stage=stage,
            stage1_findings=findings_text(self.stage1_findings),
            research=research_text(self.output_dir, self.record.research),
        )

    def _stage1_findings(self) -> list[Finding]:
        try:
            return synthesize(self.output_dir, self.config).findings
        except ReviewError:
            return []

    # -------------------------------------------------------------- research

    def _research(self) -> tuple[ResearchOutcome, ...]:
        settings, say = self.config.research, self.deps.progress.phase
        if not self.plan.candidates:  # the expansion decision says once that there is no Stage 2
            return ()
        if not settings.enabled:
            say("Research: disabled")
            return ()
        if not any(f.severity in ("P0", "P1") and not f.improvement for f in self.stage1_findings):
            say("Research: skipped (no P0/P1 finding in Stage 1)")
            return ()
        triggers = find_triggers(self.stage1_findings, self.triage.roster, limit=settings.max_agents)
        if not triggers:
            say("Research: skipped (no P0/P1 finding refers outward)")
            return ()
        executors, offline = self._research_executors()
        outcomes = run_research(
            triggers,
            root=Path(self.target.root),
            output_dir=self.output_dir,
            timeout_s=settings.timeout_s,
            offline=offline,
            executors=executors,
        )
        for outcome in outcomes:
            say(f"Research: {outcome.agent} {outcome.status} ({outcome.seconds:.1f} s) {outcome.note}")
        return tuple(outcomes)

    def _research_executors(self) -> tuple[dict[str, ResearchExecutor], bool]:
        """Who answers research: the offline executors, learnings from the knowledge store when there is one,
        and - with the llm runtime in use - framework-docs and best-practices on its model. Also: offline?"""
        table: dict[str, ResearchExecutor] = dict(EXECUTORS)
        store = self.deps.knowledge.store
        if store is not None and (store.active or store.archived):
            from fluxdrive.launch.research.learnings import learnings_executor

            table["learnings"] = learnings_executor(store)
        runtimes = self.deps.runtimes
        model = runtimes.model or self.config.llm.model
        if "llm" not in runtimes.names or not model:
            return table, True
        from fluxdrive.launch.research.on_model import MODEL_AGENTS, model_executor
        from fluxdrive.runtimes.llm.web import WebCache

        roster, cache = self.triage.roster.agents, WebCache()  # one cache per run, shared by the web agents
        table.update(
            {
                name: model_executor(roster[name], model, self.config, web_cache=cache)
                for name in MODEL_AGENTS
                if name in roster
            }
        )
        return table, False

    # ------------------------------------------------------------- expansion

    def _tokens_for(self, name: str) -> int:
        estimate = self.config.budget.review_agent_default
        piece = self.plan.content.slices.get(name)
        if piece is not None and piece.mode == "sliced":
            estimate = int(estimate * self.config.budget.slicing_multiplier)
        return estimate

    def _decide(self) -> tuple[Dropout, Decision]:
        plan, say = self.plan, self.deps.progress.phase
        trust = {a.name: a.trust_multiplier for a in self.triage.agents}
        dropout = assess_dropout(
            plan.candidates,
            plan.stage1,
            self.stage1_findings,
            self.triage.roster,
            trust,
            self.config.dropout,
            tokens_for=self._tokens_for,
            evidence=plan.evidence,
        )
        if plan.candidates:  # with no Stage 2 at all, the expansion decision's one line says so
            say(render_dropout(dropout))
        launched = self.record.launched
        failed = all(r.outcome.value != "completed" for n, r in self.record.results.items() if launched.get(n) == 1)
        decision = decide(
            plan.stage2,
            plan.pool,
            self.stage1_findings,
            stage1_failed=failed,
            roster=self.triage.roster,
            boosted={a.name for a in self.triage.agents if a.domain_boost},
            dropped=dropout.dropped,
            config=self.config.expansion,
            evidence=plan.evidence,
            base_scores={a.name: a.base_score for a in self.triage.agents},
        )
        say(render_decision(decision))
        if self.deps.decisions is not None:
            self.deps.decisions.record(
                "dropout",
                {"dropped": dropout.dropped, "skipped": dropout.skipped, "rows": dropout.rows},
                {"candidates": plan.candidates, "stage1": plan.stage1, "trust": trust, "config": self.config.dropout},
            )
            self.deps.decisions.record(
                "expansion",
                {"kind": decision.kind, "recommended": decision.recommended, "candidates": decision.candidates},
                {
                    "stage1_failed": failed,
                    "stage1_findings": [(f.severity, f.title) for f in self.stage1_findings],
                    "config": self.config.expansion,
                },
            )
        return dropout, decision

    def _choose(self, decision: Decision, mode: ExpandChoice) -> list[str]:
        if not decision.candidates:
            return []
        if mode != "ask":
            chosen = choose(decision, mode)
            self.deps.progress.phase(f"Expansion: --expand {mode} -> {', '.join(chosen) or 'stop after Stage 1'}")
            return chosen
        assert self.deps.ask is not None
        return ask_expansion(decision, self.deps.ask, self.deps.say or self.deps.progress.phase)

    # ------------------------------------------------------------- afterwards

    def reads_prompt(self) -> dict[str, bool]:
        """Per launched agent: did its runtime read the prompt (and so the knowledge it carried)?"""
        agents = self.triage.roster.agents
        return {n: self.deps.runtimes.for_agent(agents[n], self.config).reads_prompt for n in self.record.launched}

    def skipped_files(self) -> list[dict[str, Any]]:
        """Every file left out (before dispatch, or by an agent that could not read it), with who and why."""
        found: dict[tuple[str, str], set[str]] = {(path, why): set() for path, why in self.content.skipped}
        for name, result in self.record.results.items():
            for path, why in result.skipped:
                found.setdefault((path, why), set()).add(name)
        return [{"path": p, "reason": r, "agents": sorted(a)} for (p, r), a in sorted(found.items())]


def findings_text(findings: Sequence[Finding]) -> str:
    """Stage 1's findings, one line each, for a Stage 2 prompt."""
    lines = []
    for finding in findings[:STAGE1_FINDINGS_SHOWN]:
        where = f" ({', '.join(finding.locations[:2])})" if finding.locations else ""
        lines.append(f"- {finding.severity} {finding.title}{where} - {', '.join(finding.agents)}")
    if len(findings) > STAGE1_FINDINGS_SHOWN:
        lines.append(f"- ... and {len(findings) - STAGE1_FINDINGS_SHOWN} more (see the Stage 1 reports)")
    return "\n".join(lines)


def research_text(output_dir: Path, outcomes: Sequence[ResearchOutcome]) -> str:
    """The answered research questions, for a Stage 2 prompt."""
    parts = []
    for outcome in outcomes:
        if outcome.status != "completed" or not outcome.output:
            continue
        try:
            text = (output_dir / outcome.output).read_text(encoding="utf-8")
        except OSError:
            continue
        parts.append(f"#### {outcome.agent}: {outcome.question}\n\n{text.strip()}\n")
    return "\n".join(parts)


def ask_expansion(decision: Decision, ask: Ask, say: Callable[[str], None]) -> list[str]:
    """The person's choice: all, recommended, a subset, or stop (asked once)."""
    default = "recommended" if decision.kind in ("recommend", "fallback") else "stop" if decision.kind == "stop" else ""
    choices = "all / recommended / stop / agent,agent" if decision.recommended else "all / stop / agent,agent"
    prompt = f"Launch Stage 2? [{choices}]" + (f" (default: {default})" if default else "") + " > "
    while True:
        try:
            answer = ask(prompt).strip().lower()
        except EOFError:
            answer = "stop"
        if not answer and default:
            answer = default
        if answer in ("stop", "none", "no", "n"):
            return []
        if answer in ("all", "a"):
            return choose(decision, "all")
        if answer in ("recommended", "r", "yes", "y") and decision.recommended:
            return list(decision.recommended)
        names = [n.strip() for n in answer.split(",") if n.strip()]
        known = set(decision.names)
        picked = [n if n in known else f"fd-{n}" for n in names]
        if names and all(p in known for p in picked):
            return picked
        say(f"not understood: {answer!r}; answer {choices}")
