"""One review, end to end: triage, approval, launch, research, dropout, expansion, Stage 2, synthesis.

:func:`run_review` is what ``fluxdrive review`` and the library's
``fluxdrive.review()`` call. Each phase leaves its artifact in OUTPUT_DIR
(triage.json, prompts/, content/, the agents' reports, research/, run.json,
findings.json, summary.md), so any of them can be inspected or re-run.

Interruption is a normal ending: Ctrl-C cancels the running agents (each
gets its "cancelled" stub, so every launched agent still has exactly one
report), run.json records what happened, and what finished is synthesized.
A second Ctrl-C stops at once.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from fluxdrive._atomic import atomic_write_text
from fluxdrive._clock import utc_timestamp
from fluxdrive._masking import scrub, scrub_json
from fluxdrive._threads import in_daemon_thread
from fluxdrive.agents import AgentDefinition
from fluxdrive.config.model import Config
from fluxdrive.contracts.run_manifest import RUN_FILE, SCHEMA_VERSION, RunManifest
from fluxdrive.errors import ReviewError, UsageError
from fluxdrive.launch.content import ContentBuilder
from fluxdrive.launch.criteria import merged_criteria, render_criteria
from fluxdrive.launch.dispatcher import Launch, StageResult, run_stage
from fluxdrive.launch.dropout import Dropout, assess_dropout, render_dropout
from fluxdrive.launch.expansion import Decision, choose, decide, render_decision
from fluxdrive.launch.knowledge import ReviewKnowledge
from fluxdrive.launch.monitor import Monitor
from fluxdrive.launch.plan import apply_cost_model, enforce_budget, explicit_roster, skip_model_only
from fluxdrive.launch.progress import Progress, Recorder
from fluxdrive.launch.prompts import PromptContext, render_prompt, save_prompt
from fluxdrive.launch.research import EXECUTORS, ResearchExecutor, ResearchOutcome, find_triggers, run_research
from fluxdrive.launch.runtimes import RuntimePool
from fluxdrive.launch.slicing import ContentPlan, route_content
from fluxdrive.runtimes import AgentResult, AgentTask, Runtime, runtime_class
from fluxdrive.synthesis import Finding, Synthesis, synthesize
from fluxdrive.triage import Triage, triage_target, write_outputs
from fluxdrive.triage.gate import Decision as GateDecision
from fluxdrive.triage.gate import run_gate
from fluxdrive.workspace import (
    Target,
    claim_output_dir,
    isolate,
    output_dir_for,
    resolve_target,
    run_lock,
    write_input_copy,
)

ExpandChoice = Literal["ask", "recommended", "all", "none"]
Ask = Callable[[str], str]
STAGE1_FINDINGS_SHOWN = 40


@dataclass
class ReviewOptions:
    """Everything ``fluxdrive review`` accepts, as a library call.

    ``ask`` reads a person's answer (the approval gate and the expansion
    choice); without it the review is non-interactive and needs ``yes`` and
    an ``expand`` choice (``yes`` alone accepts the expansion recommendation).
    """

    yes: bool = False
    expand: ExpandChoice | None = None
    agents: Sequence[str] | None = None
    runtime: str | Runtime = "static"
    model: str | None = None
    over_budget: bool = False
    llm_triage: bool = False
    output_dir: Path | None = None
    timeout_s: float | None = None
    max_concurrency: int | None = None
    research: bool = True
    dropout: bool = True
    diff_ref: str | None = None
    staged: bool = False
    project: Path | None = None
    stdin_text: str | None = None
    cwd: Path | None = None
    config: Config | None = None
    settings: dict[str, Any] = field(default_factory=dict)
    progress: Progress | None = None
    ask: Ask | None = None
    say: Callable[[str], None] | None = None


@dataclass
class ReviewRun:
    """What a review produced."""

    synthesis: Synthesis | None
    output_dir: Path
    files: list[Path] = field(default_factory=list)
    triage: Triage | None = None
    manifest: RunManifest | None = None
    approved: bool = True
    interrupted: bool = False
    notes: list[str] = field(default_factory=list)


def _mode(options: ReviewOptions) -> ExpandChoice:
    if options.expand is not None:
        if options.expand == "ask" and options.ask is None:
            raise UsageError(
                "--expand ask needs a terminal", hint="pass --expand recommended, all or none in scripts and CI"
            )
        return options.expand
    if options.yes:
        return "recommended"
    if options.ask is not None:
        return "ask"
    raise UsageError(
        "a non-interactive review must choose how to expand",
        hint="pass --yes (accept the recommendations) or --expand recommended|all|none",
    )


def _config(options: ReviewOptions, root: Path) -> Config:
    from fluxdrive.config import load_config

    flags = dict(options.settings)
    config = options.config or load_config(root, flags=flags, flag_labels={k: f"flag --set {k}" for k in flags}).config
    dispatch: dict[str, Any] = {}
    if options.timeout_s is not None:
        dispatch |= {"timeout_local_s": options.timeout_s, "timeout_remote_s": options.timeout_s}
    if options.max_concurrency is not None:
        dispatch["max_concurrency"] = options.max_concurrency
    update: dict[str, Any] = {}
    if dispatch:
        update["dispatch"] = config.dispatch.model_copy(update=dispatch)
    if not options.research:
        update["research"] = config.research.model_copy(update={"enabled": False})
    if not options.dropout:
        update["dropout"] = config.dropout.model_copy(update={"enabled": False})
    return config.model_copy(update=update) if update else config


def _runtimes(options: ReviewOptions) -> RuntimePool:
    if isinstance(options.runtime, str):
        runtime_class(options.runtime)  # an unknown name fails now, with a suggestion
    return RuntimePool(options.runtime, options.model)


def _fingerprint(root: Path, files: Sequence[str]) -> str:
    """Sizes and modification times of the reviewed files: cheap change detection."""
    digest = hashlib.sha256()
    for name in files:
        try:
            stat = os.stat(root / name)
        except OSError:
            digest.update(f"{name}:missing\n".encode())
            continue
        digest.update(f"{name}:{stat.st_size}:{stat.st_mtime_ns}\n".encode())
    return digest.hexdigest()


class _Launcher:
    """The launch phase of one review (holds its state between the stages)."""

    def __init__(
        self,
        result: Triage,
        target: Target,
        config: Config,
        pool: RuntimePool,
        output_dir: Path,
        options: ReviewOptions,
    ) -> None:
        self.triage = result
        self.target = target
        self.config = config
        self.runtimes = pool
        self.output_dir = output_dir
        self.options = options
        self.progress: Progress = options.progress or Recorder()
        self.channel_path = output_dir / "peer-findings.jsonl"
        self.stage1 = [a.name for a in result.in_stage(1)]
        self.stage2 = [a.name for a in result.in_stage(2)]
        self.pool = [a.name for a in result.in_stage("pool")]
        self.evidence = {a.name: tuple(a.evidence) for a in result.agents if a.evidence_units and not a.prefiltered}
        everyone = [result.roster.agents[n] for n in [*self.stage1, *self.stage2, *self.pool]]
        self.plan: ContentPlan = route_content(target, result.profile, everyone, output_dir, config.slicing)
        self.content = ContentBuilder(target, self.plan)
        self.results: dict[str, AgentResult] = {}
        self.launched: dict[str, int] = {}
        self.research: list[ResearchOutcome] = []
        self.dropout: Dropout | None = None
        self.decision: Decision | None = None
        self.chosen: list[str] = []
        self.phases: dict[str, float] = {}
        self.notes: list[str] = []
        self.stage1_findings: list[Finding] = []
        self.model_calls: list[dict[str, Any]] = []  # model calls that are not reviews (--llm-triage)
        self.knowledge = ReviewKnowledge(Path(target.root), config, result.profile, result.domains)
        self.notes.extend(self.knowledge.notes)

    def learn(self, synthesis: Synthesis) -> bool:
        """The knowledge lifecycle after synthesis: confirm, decay, archive, compound (never after an interrupt).

        Says so in the synthesis notes only when something changed or was shown to an agent; True when it ran.
        """
        agents = self.triage.roster.agents
        reads = {n: self.runtimes.for_agent(agents[n], self.config).reads_prompt for n in self.launched}
        learned = self.knowledge.after_review(synthesis.findings, reads)
        if learned is not None and (learned.changed or self.knowledge.injected):
            synthesis.notes.append(learned.line())
        return learned is not None

    def _timeout(self, runtime: Runtime) -> float:
        dispatch = self.config.dispatch
        return dispatch.timeout_remote_s if runtime.remote else dispatch.timeout_local_s

    def _launch(self, agent: AgentDefinition, stage: int, context: PromptContext) -> Launch:
        piece = self.plan.slices.get(agent.name)
        content_path = piece.content_path if piece else self.plan.shared_path
        note = piece.reason if piece and piece.mode == "sliced" else "You receive the full content."
        criteria = merged_criteria(agent.name, self.triage.domains, self.config.domains.max_injected)
        prompt = scrub(  # what reaches a provider, or a CLI, carries no credential
            render_prompt(
                agent,
                context,
                content_path=content_path,
                slice_note=note,
                domain_criteria=render_criteria(criteria),
                knowledge=self.knowledge.for_agent(agent),
            )
        )
        save_prompt(self.output_dir, agent.name, prompt)
        runtime = self.runtimes.for_agent(agent, self.config)
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

    def _context(self, stage: int) -> PromptContext:
        return PromptContext(
            input_label=self.target.label,
            input_type=self.target.kind,
            project_root=Path(self.target.root),
            output_dir=self.output_dir,
            channel_path=self.channel_path,
            stage=stage,
            stage1_findings=_findings_text(self.stage1_findings),
            research=_research_text(self.output_dir, self.research),
        )

    async def _stage(self, stage: int, names: Sequence[str], monitor: Monitor) -> StageResult:
        context = self._context(stage)
        launches = [self._launch(self.triage.roster.agents[n], stage, context) for n in names]
        for name in names:
            self.launched[name] = stage
        done = await run_stage(
            stage,
            launches,
            concurrency=self.config.dispatch.max_concurrency,
            retries=self.config.dispatch.retries,
            progress=self.progress,
            monitor=monitor,
        )
        self.results.update(done.results)
        return done

    def _stage1_synthesis(self) -> None:
        try:
            self.stage1_findings = synthesize(self.output_dir, self.config).findings
        except ReviewError:
            self.stage1_findings = []

    def _research(self) -> None:
        settings = self.config.research
        if not settings.enabled:
            self.progress.phase("Research: disabled")
            return
        if not (self.stage2 or self.pool):
            self.progress.phase("Research: skipped (there is no Stage 2)")
            return
        if not any(f.severity in ("P0", "P1") and not f.improvement for f in self.stage1_findings):
            self.progress.phase("Research: skipped (no P0/P1 finding in Stage 1)")
            return
        triggers = find_triggers(self.stage1_findings, self.triage.roster, limit=settings.max_agents)
        if not triggers:
            self.progress.phase("Research: skipped (no P0/P1 finding refers outward)")
            return
        executors, offline = self._research_executors()
        self.research = run_research(
            triggers,
            root=Path(self.target.root),
            output_dir=self.output_dir,
            timeout_s=settings.timeout_s,
            offline=offline,
            executors=executors,
        )
        for outcome in self.research:
            self.progress.phase(f"Research: {outcome.agent} {outcome.status} ({outcome.seconds:.1f} s) {outcome.note}")

    def _research_executors(self) -> tuple[dict[str, ResearchExecutor], bool]:
        """Who answers research: the offline executors, learnings from the knowledge store when there is one,
        and - with the llm runtime in use - framework-docs and best-practices on its model. Also: offline?"""
        table: dict[str, ResearchExecutor] = dict(EXECUTORS)
        store = self.knowledge.store
        if store is not None and (store.active or store.archived):
            from fluxdrive.launch.research.learnings import learnings_executor

            table["learnings"] = learnings_executor(store)
        model = self.runtimes.model or self.config.llm.model
        if "llm" not in self.runtimes.names or not model:
            return table, True
        from fluxdrive.launch.research.on_model import MODEL_AGENTS, model_executor

        roster = self.triage.roster.agents
        table.update(
            {name: model_executor(roster[name], model, self.config) for name in MODEL_AGENTS if name in roster}
        )
        return table, False

    def _tokens_for(self, name: str) -> int:
        estimate = self.config.budget.review_agent_default
        piece = self.plan.slices.get(name)
        if piece is not None and piece.mode == "sliced":
            estimate = int(estimate * self.config.budget.slicing_multiplier)
        return estimate

    def _decide(self) -> None:
        candidates = [*self.stage2, *self.pool]
        trust = {a.name: a.trust_multiplier for a in self.triage.agents}
        self.dropout = assess_dropout(
            candidates,
            self.stage1,
            self.stage1_findings,
            self.triage.roster,
            trust,
            self.config.dropout,
            tokens_for=self._tokens_for,
            evidence=self.evidence,
        )
        self.progress.phase(render_dropout(self.dropout))
        failed = all(r.outcome.value != "completed" for n, r in self.results.items() if self.launched.get(n) == 1)
        boosted = {a.name for a in self.triage.agents if a.domain_boost}
        self.decision = decide(
            self.stage2,
            self.pool,
            self.stage1_findings,
            stage1_failed=failed,
            roster=self.triage.roster,
            boosted=boosted,
            dropped=self.dropout.dropped,
            config=self.config.expansion,
            evidence=self.evidence,
            base_scores={a.name: a.base_score for a in self.triage.agents},
        )
        self.progress.phase(render_decision(self.decision))

    def _choose(self, mode: ExpandChoice) -> list[str]:
        assert self.decision is not None
        if not self.decision.candidates:
            return []
        if mode != "ask":
            chosen = choose(self.decision, mode)
            self.progress.phase(f"Expansion: --expand {mode} -> {', '.join(chosen) or 'stop after Stage 1'}")
            return chosen
        assert self.options.ask is not None
        return _ask_expansion(self.decision, self.options.ask, self.options.say or self.progress.phase)

    async def run(self, mode: ExpandChoice) -> None:
        async with Monitor(self.output_dir, poll_interval_s=self.config.dispatch.poll_interval_s) as monitor:
            if monitor.note:
                self.notes.append(monitor.note)
            started = time.monotonic()
            await self._stage(1, self.stage1, monitor)
            self.phases["stage1"] = round(time.monotonic() - started, 3)
            started = time.monotonic()
            self._stage1_synthesis()
            await in_daemon_thread(self._research)
            self.phases["research"] = round(time.monotonic() - started, 3)
            self._decide()
            if mode == "ask":
                self.progress.suspend()
                # In a thread, so Ctrl-C at the question still cancels the review at once.
                self.chosen = await in_daemon_thread(self._choose, mode)
            else:
                self.chosen = self._choose(mode)
            if self.chosen:
                started = time.monotonic()
                await self._stage(2, self.chosen, monitor)
                self.phases["stage2"] = round(time.monotonic() - started, 3)
        await self.runtimes.aclose()
        self.notes.extend(self.runtimes.notes())

    def manifest(self, run_id: str, started_at: str, *, interrupted: bool) -> dict[str, Any]:
        """run.json (PROTOCOL section 5 reads it; fluxdrive schema run prints its schema)."""
        stages: list[dict[str, Any]] = [{"stage": 1, "agents": list(self.stage1)}]
        launched2 = [n for n in self.chosen if self.launched.get(n) == 2]
        if launched2:
            stages.append({"stage": 2, "agents": launched2, "launched": True})
        not_launched = [n for n in self.stage2 if n not in launched2]
        if not_launched:
            stages.append({"stage": 2, "agents": not_launched, "launched": False})
        dropped = set(self.dropout.dropped) if self.dropout else set()
        agents: dict[str, Any] = {}
        for record in self.triage.agents:
            name = record.name
            if name not in self.launched and name not in self.stage2 and name not in self.pool:
                continue
            result = self.results.get(name)
            piece = self.plan.slices.get(name)
            entry: dict[str, Any] = {
                "stage": self.launched.get(name, 2 if name in self.stage2 else None),
                "category": record.category,
                "outcome": result.outcome.value if result else _unfinished(name, self.launched, dropped),
                "slice": piece.record().model_dump() if piece else {"mode": "full", "files": [], "sections": []},
            }
            if result is not None:
                entry["provenance"] = result.provenance.record()
                entry["usage"] = result.usage.record()
                if result.report_sha256:
                    entry["report_sha256"] = result.report_sha256
                if result.error:
                    entry["error"] = result.error
            agents[name] = entry
        data: dict[str, Any] = {
            "schema_version": SCHEMA_VERSION,
            "run_id": run_id,
            "input": {
                "path": self.target.label,
                "type": self.target.kind,
                "stem": self.target.stem,
                "project_root": str(self.target.root),
            },
            "started_at": started_at,
            "finished_at": utc_timestamp(),
            "runtime": self.runtimes.provenance_label(),
            "stages": stages,
            "early_stop": bool(self.stage2) and not launched2 and not interrupted,
            "content_routing_active": self.plan.active,
            "content_routing": list(self.plan.log),
            "agents": dict(sorted(agents.items())),
            "research": [
                {k: v for k, v in r.record().items() if k not in ("seconds", "finding_id")} for r in self.research
            ],
            "model_calls": self.model_calls,
            "knowledge": self.knowledge.record(),
            "dropout": _dropout_json(self.dropout),
            "expansion": _decision_json(self.decision, self.chosen),
            "phases": self.phases,
            "interrupted": interrupted,
            "files": {"reviewed": len(self.content.files), "skipped": self._skipped_files()},
            "notes": [*self.notes, *self.content.notes],
        }
        return data

    def _skipped_files(self) -> list[dict[str, Any]]:
        """Every file left out (before dispatch, or by an agent that could not read it), with who and why."""
        found: dict[tuple[str, str], set[str]] = {(path, why): set() for path, why in self.content.skipped}
        for name, result in self.results.items():
            for path, why in result.skipped:
                found.setdefault((path, why), set()).add(name)
        return [{"path": p, "reason": r, "agents": sorted(a)} for (p, r), a in sorted(found.items())]


def _unfinished(name: str, launched: Mapping[str, int], dropped: set[str]) -> str:
    """The outcome of an agent without a result: launched and then interrupted, dropped, or never launched."""
    if name in launched:
        return "cancelled"
    return "dropped" if name in dropped else "not-launched"


def _dropout_json(dropout: Dropout | None) -> dict[str, Any] | None:
    if dropout is None:
        return None
    return {
        "skipped": dropout.skipped,
        "rows": [
            {"agent": r.agent, "score": r.score, "dropped": r.dropped, "exempt": r.exempt, "reasons": list(r.reasons)}
            for r in dropout.rows
        ],
        "tokens_saved": dropout.tokens_saved,
    }


def _decision_json(decision: Decision | None, chosen: Sequence[str]) -> dict[str, Any] | None:
    if decision is None:
        return None
    return {
        "kind": decision.kind,
        "recommended": list(decision.recommended),
        "candidates": [
            {"agent": c.agent, "score": c.score, "reasons": list(c.reasons), "dropped": c.dropped, "planned": c.planned}
            for c in decision.candidates
        ],
        "chosen": list(chosen),
        "message": decision.message,
    }


def _findings_text(findings: Sequence[Finding]) -> str:
    lines = []
    for finding in findings[:STAGE1_FINDINGS_SHOWN]:
        where = f" ({', '.join(finding.locations[:2])})" if finding.locations else ""
        lines.append(f"- {finding.severity} {finding.title}{where} - {', '.join(finding.agents)}")
    if len(findings) > STAGE1_FINDINGS_SHOWN:
        lines.append(f"- ... and {len(findings) - STAGE1_FINDINGS_SHOWN} more (see the Stage 1 reports)")
    return "\n".join(lines)


def _research_text(output_dir: Path, outcomes: Sequence[ResearchOutcome]) -> str:
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


def _ask_expansion(decision: Decision, ask: Ask, say: Callable[[str], None]) -> list[str]:
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


def _gate(result: Triage, options: ReviewOptions) -> bool:
    if options.yes:
        return True
    if options.ask is None:
        raise UsageError(
            "the triage needs approval, and there is no terminal to ask in",
            hint="run it in a terminal, or pass --yes to approve the plan as computed",
        )
    say = options.say or _write_stdout
    return run_gate(result, options.ask, say) is GateDecision.APPROVED


def _record_history(manifest: RunManifest, target: Target, synthesis: Synthesis | None, notes: list[str]) -> None:
    """Add the run and its agent calls to the history database (a failure to record is a note, not an error)."""
    from fluxdrive.history import HistoryUnavailableError, open_history, record_run

    try:
        with open_history() as connection:
            record_run(
                connection,
                manifest,
                project=str(Path(target.root).resolve()),
                verdict=synthesis.verdict if synthesis else None,
            )
    except HistoryUnavailableError as exc:
        if not any(exc.message in note for note in notes):  # warned once already, at triage
            notes.append(f"history not recorded: {exc.message}")


def _write_manifest(output_dir: Path, data: dict[str, Any]) -> None:
    """run.json, scrubbed: agents' error messages may quote a provider's answer (and the key it echoed)."""
    atomic_write_text(output_dir / RUN_FILE, scrub_json(json.dumps(data, indent=2, ensure_ascii=False)) + "\n")


def _write_stdout(text: str) -> None:
    sys.stdout.write(text if text.endswith("\n") else text + "\n")


def run_review(target: str | Path | None, options: ReviewOptions | None = None) -> ReviewRun:
    """Review ``target`` (a path, ``-`` with ``options.stdin_text``, or None with ``diff_ref``/``staged``)."""
    options = options or ReviewOptions()
    mode = _mode(options)
    began = time.monotonic()
    resolved = resolve_target(
        None if target is None else str(target),
        diff_ref=options.diff_ref,
        staged=options.staged,
        stdin_text=options.stdin_text,
        cwd=options.cwd,
        project=options.project,
    )
    config = _config(options, Path(resolved.root))
    pool = _runtimes(options)
    pool.preflight(config, Path(resolved.root))  # the common case fails before anything is written
    output_dir = claim_output_dir(output_dir_for(resolved, options.output_dir), resolved)
    progress = options.progress or Recorder()
    model_calls: list[dict[str, Any]] = []
    with run_lock(output_dir, command="review"):
        result = triage_target(resolved, config)
        if options.llm_triage:
            from fluxdrive.launch.llm_triage import refine

            refined = refine(result, options.model or config.llm.model)
            progress.phase(refined.note)
            if refined.call is not None:
                model_calls.append(refined.call)
        chosen_notes = explicit_roster(result, options.agents) if options.agents else []
        skipped = skip_model_only(result, pool, config)
        planned = [result.roster.agents[a.name] for a in result.agents if a.stage in (1, 2, "pool")]
        pool.check(planned, config, Path(resolved.root))  # unknown runtime, model, key or CLI: fail before asking
        progress.phase(apply_cost_model(result, pool, config, options.model))
        budget_line = enforce_budget(
            result,
            pool,
            config,
            model=options.model,
            over_budget=options.over_budget,
            ask=None if options.yes else options.ask,
        )
        if budget_line:
            progress.phase(budget_line)
        triage_seconds = time.monotonic() - began
        if not _gate(result, options):
            write_outputs(result, output_dir)
            progress.close()
            return ReviewRun(None, output_dir, triage=result, approved=False)
        isolate(output_dir, keep=[resolved.path] if resolved.path is not None else [])
        write_outputs(result, output_dir)
        write_input_copy(output_dir, resolved)
        progress.phase(
            f"Triage: {len(result.in_stage(1))} agent(s) in Stage 1, {len(result.in_stage(2))} in Stage 2, "
            f"{len(result.in_stage('pool'))} in the pool (ceiling {result.ceiling.total}; "
            f"domains: {', '.join(result.domains) or 'none'})"
        )
        if not result.in_stage(1):
            progress.close()
            raise ReviewError(
                "triage selected no agent for this input",
                hint="nothing in it matches any agent's concerns; pass --agents to choose reviewers",
            )
        launcher = _Launcher(result, resolved, config, pool, output_dir, options)
        launcher.model_calls.extend(model_calls)
        # said once, with the verdict (also under --quiet)
        launcher.notes.extend([*result.notes, *chosen_notes, *skipped])
        launcher.phases["triage"] = round(triage_seconds, 3)
        before = _fingerprint(Path(resolved.root), launcher.content.files)
        run_id = hashlib.sha256(f"{output_dir}:{utc_timestamp()}:{os.getpid()}".encode()).hexdigest()[:12]
        started_at = utc_timestamp()
        interrupted = False
        try:
            asyncio.run(launcher.run(mode))
        except KeyboardInterrupt:
            interrupted = True
        finally:
            progress.close()
        if _fingerprint(Path(resolved.root), launcher.content.files) != before:
            launcher.notes.append(
                "the input changed while the agents ran: some findings may point at lines that have moved"
            )
        data = launcher.manifest(run_id, started_at, interrupted=interrupted)
        started = time.monotonic()
        synthesis: Synthesis | None = None
        files: list[Path] = []
        if any(launcher.launched):
            _write_manifest(output_dir, data)
            from fluxdrive.reports import write_reports

            synthesis = synthesize(output_dir, config)
            synthesis.notes.extend(data["notes"])
            if not interrupted and launcher.learn(synthesis):
                data["knowledge"] = launcher.knowledge.record()
            files = write_reports(synthesis)
        data["phases"]["synthesis"] = round(time.monotonic() - started, 3)
        data["phases"]["total"] = round(time.monotonic() - began, 3)
        _write_manifest(output_dir, data)
        manifest = RunManifest.model_validate(data)
        _record_history(manifest, resolved, synthesis, data["notes"])
        return ReviewRun(
            synthesis,
            output_dir,
            files,
            triage=result,
            manifest=manifest,
            approved=True,
            interrupted=interrupted,
            notes=list(data["notes"]),
        )


def review(target: str | Path | None, options: ReviewOptions | None = None) -> Synthesis:
    """Review ``target`` and return the synthesis (the library's one-call entry point).

    Non-interactive unless ``options.ask`` is given: pass ``yes=True`` (and
    an ``expand`` choice to override the recommendation). Raises
    :class:`~fluxdrive.errors.ReviewError` when there is nothing to return:
    the plan was rejected, or no agent ran.
    """
    run = run_review(target, options)
    if run.synthesis is None:
        reason = "the plan was rejected at the approval gate" if not run.approved else "no agent report was written"
        raise ReviewError(f"no review result: {reason}", hint=f"see {run.output_dir}")
    return run.synthesis
