"""Run an approved :class:`~fluxdrive.launch.plan.ReviewPlan`: launch, research, expansion, Stage 2, synthesis.

:func:`execute` is the second half of every review, whichever front door
planned it. The backend that runs the agents (this process, or a Ray
cluster) is passed in, the way ``httpx.Client(transport=...)`` takes its
transport, so the engine never builds one. Each phase leaves its artifact
in the run's directory (triage.json, prompts/, content/, the agents'
reports, research/, run.json, findings.json, summary.md).

Interruption is a normal ending: Ctrl-C cancels the running agents (each
gets its "cancelled" stub, so every launched agent still has exactly one
report), run.json records what happened, and what finished is synthesized.
A second Ctrl-C stops at once.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from fluxdrive.config.model import Config
from fluxdrive.contracts.run_manifest import RunManifest
from fluxdrive.core import git
from fluxdrive.core.clock import utc_timestamp
from fluxdrive.core.interrupt import Interrupt
from fluxdrive.core.masking import known_secrets
from fluxdrive.errors import FluxdriveError, ReviewError, UsageError
from fluxdrive.fixes import attach_suggestions
from fluxdrive.launch.cost import record_decision, run_meter
from fluxdrive.launch.knowledge import ReviewKnowledge
from fluxdrive.launch.manifest import RunFacts, build_manifest, finish, write_manifest
from fluxdrive.launch.plan import Ask, ReviewPlan, stage_plan, verify
from fluxdrive.launch.progress import Progress, Recorder
from fluxdrive.launch.roles import floored_plan, record_floors
from fluxdrive.launch.settings import ExpandChoice, ReviewSettings
from fluxdrive.launch.stages import Launcher, LaunchRecord, ReviewDeps
from fluxdrive.launch.validation import refuse_unusable_checkers
from fluxdrive.reports.diff_filter import DEFAULT_MODE, DiffLines, FilterMode, apply_filter, check_mode
from fluxdrive.runs.baseline import apply_baseline, current_branch, remember_reviewed
from fluxdrive.runs.decisions import DecisionLog
from fluxdrive.runtimes import Backend
from fluxdrive.synthesis import Synthesis, synthesize
from fluxdrive.triage import Triage, write_outputs
from fluxdrive.workspace import run_lock, write_input_copy


@dataclass
class ReviewRun:
    """What a review produced: its directory, and what the run knows without reading it back."""

    synthesis: Synthesis | None
    output_dir: Path
    files: list[Path] = field(default_factory=list)
    triage: Triage | None = None
    manifest: RunManifest | None = None
    approved: bool = True
    interrupted: bool = False
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Interaction:
    """How a running review reaches a person: progress lines, questions (the expansion choice), answers it
    prints, and an interrupt another thread may set (the MCP server's cancel)."""

    progress: Progress | None = None
    ask: Ask | None = None
    say: Callable[[str], None] | None = None
    interrupt: Interrupt | None = None


def expand_mode(settings: ReviewSettings, ask: Ask | None) -> ExpandChoice:
    """After Stage 1: the settings' choice, else the recommendation (--yes), else ask a person."""
    if settings.expand is not None:
        if settings.expand == "ask" and ask is None:
            raise UsageError(
                "--expand ask needs a terminal", hint="pass --expand recommended, all or none in scripts and CI"
            )
        return settings.expand
    if settings.yes:
        return "recommended"
    if ask is not None:
        return "ask"
    raise UsageError(
        "a non-interactive review must choose how to expand",
        hint="pass --yes (accept the recommendations) or --expand recommended|all|none",
    )


def write_plan(plan: ReviewPlan, command: str = "review") -> Path:
    """The plan's triage in a fresh run directory (``fluxdrive triage``; a plan rejected at the gate)."""
    with run_lock(plan.output_dir, command=command):
        write_outputs(plan.triage, plan.output_dir)
    return plan.output_dir


def reject(plan: ReviewPlan) -> ReviewRun:
    """A plan rejected at the approval gate: its triage is written, nothing is dispatched."""
    return ReviewRun(None, write_plan(plan), triage=plan.triage, approved=False)


def execute(plan: ReviewPlan, backend: Backend | None = None, interaction: Interaction | None = None) -> ReviewRun:
    """Run ``plan`` (approved) on ``backend`` (None: this process) and synthesize what the agents wrote."""
    talk = interaction or Interaction()
    mode = expand_mode(plan.settings, talk.ask)
    verify(plan)
    plan, floors = floored_plan(plan)  # an agent below its role's model floor: a floor model, or refused here
    refuse_unusable_checkers(plan)  # a checker whose key is missing: refused here, before anything is spent
    if backend is not None:
        plan.runtimes.use(backend)
    began = time.monotonic() - plan.seconds  # the run's clock starts when planning did
    progress = talk.progress or Recorder()
    with known_secrets(plan.secrets), run_lock(plan.output_dir, command="review"):
        for line in plan.steps:  # what planning decided, said once the run holds its directory
            progress.phase(line)
        decisions = DecisionLog(plan.output_dir)
        record_floors(decisions, floors)
        _prepare(plan.output_dir, plan, progress, decisions)
        return _run(plan, plan.output_dir, mode, talk, progress, began, decisions)


def _run(
    plan: ReviewPlan,
    output_dir: Path,
    mode: ExpandChoice,
    talk: Interaction,
    progress: Progress,
    began: float,
    decisions: DecisionLog,
) -> ReviewRun:
    """The launch and synthesis, in the run's locked directory."""
    target, config, result = plan.target, plan.config, plan.triage
    channel_notes = _bind_channel(output_dir, config)
    stages = stage_plan(result, target, config, output_dir, _line_filter(plan))
    knowledge = ReviewKnowledge(Path(target.root), config, result.profile, result.domains)
    meter = run_meter(config, decisions)
    plan.runtimes.bind_meter(meter)  # every model call of the run, the later phases' included, charges it
    deps = ReviewDeps(plan.runtimes, progress, knowledge, talk.ask, talk.say, decisions)
    launcher = Launcher(result, target, config, stages, deps, output_dir)
    triage_seconds = round(time.monotonic() - began, 3)
    record, interrupted, started_at = _launch(launcher, mode, progress, talk.interrupt or Interrupt())
    channel_notes += _mirror_channel(output_dir, config)
    facts = RunFacts(
        run_id=hashlib.sha256(f"{output_dir}:{utc_timestamp()}:{os.getpid()}".encode()).hexdigest()[:12],
        started_at=started_at,
        interrupted=interrupted,
        phases={"triage": triage_seconds, **record.phases()},
        model_calls=[*plan.model_calls, *record.model_calls],
        notes=list(
            dict.fromkeys([*record.notes, *plan.notes, *launcher.content.notes, *channel_notes, *meter.notes()])
        ),
    )
    manifest = build_manifest(launcher, facts).model_copy(update={"placement": record.placement})
    synthesis, files, manifest = _synthesize(launcher, plan, manifest, interrupted=interrupted, began=began)
    notes = list(manifest.notes)
    if synthesis is not None and not interrupted:
        _remember_reviewed(Path(target.root), notes)
    _record_history(manifest, target.root, synthesis, notes)  # a failure to record adds a note
    return ReviewRun(synthesis, output_dir, files, result, manifest, True, interrupted, notes)


def _prepare(output_dir: Path, plan: ReviewPlan, progress: Progress, decisions: DecisionLog) -> None:
    """The approved plan on disk (in this run's fresh directory), or a ReviewError when nobody would run."""
    result = plan.triage
    write_outputs(result, output_dir, plan.cost.record() if plan.cost is not None else None)
    _record_triage(result, plan, decisions)
    if plan.cost is not None:
        record_decision(plan.cost, decisions)
    write_input_copy(output_dir, plan.target)
    progress.phase(triage_line(result))
    if not result.in_stage(1):
        progress.close()
        raise ReviewError(
            "triage selected no agent for this input",
            hint="nothing in it matches any agent's concerns; pass --agents to choose reviewers",
        )


def _record_triage(result: Triage, plan: ReviewPlan, decisions: DecisionLog) -> None:
    """Triage's scores and the staging, with what they were computed from (decisions.jsonl)."""
    profile = result.profile
    decisions.record(
        "triage",
        {
            "agents": [
                {"name": a.name, "score": a.final_score, "stage": a.stage, "why": a.rationale} for a in result.agents
            ]
        },
        {
            "input": {"type": result.target.kind, "label": result.target.label},
            "profile": {"files": profile.file_count, "languages": profile.languages},
            "domains": [{"profile": d.profile, "confidence": d.confidence} for d in result.detection.detected],
            "scores": [
                {
                    "name": a.name,
                    "base": a.base_score,
                    "domain_boost": a.domain_boost,
                    "project_bonus": a.project_bonus,
                    "trust": a.trust_multiplier,
                    "matched": a.matched,
                }
                for a in result.agents
            ],
            "steps": list(plan.steps),
        },
    )
    decisions.record(
        "staging",
        {
            "staged": result.staged,
            "why": result.staging_note,
            "stage1": [a.name for a in result.in_stage(1)],
            "stage2": [a.name for a in result.in_stage(2)],
            "pool": [a.name for a in result.in_stage("pool")],
        },
        {"ceiling": result.ceiling, "free": result.free},
    )


def triage_line(result: Triage) -> str:
    """What triage decided, in one line that never contradicts itself.

    Why two shapes: the slot ceiling bounds the agents a staged review picks
    for Stage 1 and 2. Unstaged (offline, no tokens; or the whole roster fits
    the budget) every candidate runs in Stage 1 whatever the ceiling, so
    "12 agents in Stage 1 (ceiling 4)" read as a contradiction: the line says
    there is no ceiling instead, and leaves out stages that hold nobody.
    """
    domains = f"domains: {', '.join(result.domains) or 'none'}"
    first, second, pool = len(result.in_stage(1)), len(result.in_stage(2)), len(result.in_stage("pool"))
    if result.staged:
        return (
            f"Triage: {first} agent(s) in Stage 1, {second} in Stage 2, {pool} in the pool "
            f"(ceiling {result.ceiling.total}; {domains})"
        )
    later = "".join(f", {n} in {where}" for n, where in ((second, "Stage 2"), (pool, "the pool")) if n)
    return f"Triage: {first} agent(s) in Stage 1{later} (unstaged: no slot ceiling; {domains})"


def _bind_channel(output_dir: Path, config: Config) -> list[str]:
    """``channel.url``: the run's peer channel in a Redis stream; unreachable Redis is a note, not a failure."""
    if not config.channel.url:
        return []
    from fluxdrive.exchange import stream

    try:
        stream.bind(output_dir, config.channel.url, maxlen=config.channel.maxlen)
    except FluxdriveError as exc:
        return [f"{exc.message}: the agents share findings through the local file"]
    return []


def _mirror_channel(output_dir: Path, config: Config) -> list[str]:
    """The stream's findings into peer-findings.jsonl, where synthesis and every reader find them."""
    if not config.channel.url:
        return []
    from fluxdrive.exchange import stream

    try:
        return stream.mirror(output_dir)
    except (OSError, FluxdriveError) as exc:
        return [f"the peer channel could not be mirrored to peer-findings.jsonl: {exc}"]


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


def _launch(
    launcher: Launcher, mode: ExpandChoice, progress: Progress, interrupt: Interrupt
) -> tuple[LaunchRecord, bool, str]:
    """Run the phases; Ctrl-C, SIGTERM or ``interrupt`` (from any thread) is a normal ending. The record,
    whether it was interrupted, when it started."""
    root = Path(launcher.target.root)
    before = _fingerprint(root, launcher.content.files)
    started_at = utc_timestamp()
    interrupted = False

    async def phases() -> None:
        with interrupt.bound():
            await launcher.run(mode)

    try:
        asyncio.run(phases())
    except KeyboardInterrupt:
        interrupted = True
    except asyncio.CancelledError:  # cancelled through ``interrupt`` (also when a signal cancelled it too)
        if not interrupt.requested:
            raise
        interrupted = True
    finally:
        progress.close()
    if _fingerprint(root, launcher.content.files) != before:
        launcher.record.notes.append(
            "the input changed while the agents ran: some findings may point at lines that have moved"
        )
    return launcher.record, interrupted, started_at


def _synthesize(
    launcher: Launcher, plan: ReviewPlan, manifest: RunManifest, *, interrupted: bool, began: float
) -> tuple[Synthesis | None, list[Path], RunManifest]:
    """Phase 3 over what the agents wrote, the knowledge lifecycle, and the final run.json."""
    output_dir = launcher.output_dir
    started = time.monotonic()
    synthesis: Synthesis | None = None
    files: list[Path] = []
    if launcher.record.launched:
        from fluxdrive.reports import write_reports

        _measured_snapshot(output_dir, launcher.config, manifest.notes)
        synthesis = synthesize(output_dir, launcher.config, manifest=manifest)
        synthesis.notes.extend(manifest.notes)
        synthesis.info.extend(manifest.placement)
        if not interrupted:
            _learn(launcher, synthesis)  # from the agents' own findings: imported results teach them nothing
        if plan.imports:
            synthesis = _merge_imports(launcher, synthesis, plan)
        if plan.baseline is not None:  # learning saw every finding; the reports and the verdict see the new ones
            synthesis = apply_baseline(synthesis, plan.baseline, Path(launcher.target.root)).synthesis
        synthesis = _finish_findings(launcher, plan, synthesis)
        files = write_reports(synthesis)
        if launcher.config.verdicts.format != "fluxdrive":
            _write_clavain(launcher, synthesis)
    phases = {**manifest.phases, "synthesis": round(time.monotonic() - started, 3)}
    phases["total"] = round(time.monotonic() - began, 3)
    manifest = finish(manifest, launcher, phases)
    write_manifest(output_dir, manifest)
    return synthesis, files, manifest


def _measured_snapshot(output_dir: Path, config: Config, notes: list[str]) -> None:
    """The measured precision synthesis reads, taken once from the history (runs/precision.py; a failure is a
    note: the findings keep their convergence confidence). None with ``synthesis.measured`` off: an eval run
    measures the configuration itself, so what earlier runs measured must not feed back into it."""
    from fluxdrive.runs.history import HistoryUnavailableError
    from fluxdrive.runs.precision import snapshot

    if not config.synthesis.measured:
        return
    try:
        snapshot(output_dir, config.synthesis)
    except HistoryUnavailableError as exc:
        if not any(exc.message in note for note in notes):  # warned once already, at triage
            notes.append(f"no measured precision: {exc.message}")


def _line_filter(plan: ReviewPlan) -> FilterMode:
    """The diff review's --filter mode (checked: a bad one is one line, exit 2)."""
    return check_mode(plan.settings.line_filter or DEFAULT_MODE)


def _finish_findings(launcher: Launcher, plan: ReviewPlan, synthesis: Synthesis) -> Synthesis:
    """A diff review's findings filtered to the change (--filter, verdict re-derived); suggested fixes attached."""
    if launcher.target.kind == "diff":
        mode = _line_filter(plan)
        synthesis = apply_filter(synthesis, DiffLines.from_diff(launcher.target.diff_text or ""), mode)
    return attach_suggestions(synthesis, Path(launcher.target.root))


def _merge_imports(launcher: Launcher, synthesis: Synthesis, plan: ReviewPlan) -> Synthesis:
    """The imported results merged into the findings, limited to what this review covered (a diff: added lines)."""
    from fluxdrive.imports import ImportScope, apply_imports

    content = launcher.content
    diff = launcher.target.kind == "diff"
    scope = ImportScope(files=frozenset(content.files), changed=content.changed if diff else None)
    return apply_imports(synthesis, plan.imports, scope, launcher.config.synthesis)


def _remember_reviewed(root: Path, notes: list[str]) -> None:
    """Record the commit this review saw for its branch (what the next --since-last starts from)."""
    branch = current_branch(root)
    commit = git.head(root)
    if branch is None or commit is None:
        return
    try:
        remember_reviewed(root, branch, commit)
    except (OSError, FluxdriveError) as exc:
        notes.append(f"the reviewed commit was not recorded for --since-last: {exc}")


def _write_clavain(launcher: Launcher, synthesis: Synthesis) -> None:
    """Clavain verdict records (config verdicts.format clavain|both); a failure to write is a note."""
    from fluxdrive.reports.clavain import write_run

    try:
        written = write_run(launcher.output_dir, Path(launcher.target.root), synthesis)
    except (OSError, FluxdriveError) as exc:
        synthesis.notes.append(
            f"Clavain verdict records not written: {exc.one_line() if isinstance(exc, FluxdriveError) else exc}"
        )
        return
    synthesis.notes.extend(f"Clavain verdict records: {problem}" for problem in written.problems)


def _learn(launcher: Launcher, synthesis: Synthesis) -> None:
    """The knowledge lifecycle after synthesis: confirm, decay, archive, compound (never after an interrupt).

    Says so (as information, not a warning) only when something changed or was shown to an agent.
    """
    knowledge = launcher.deps.knowledge
    learned = knowledge.after_review(synthesis.findings, launcher.reads_prompt())
    if learned is not None and (learned.changed or knowledge.injected):
        synthesis.info.append(learned.line())


def _record_history(manifest: RunManifest, root: str | Path, synthesis: Synthesis | None, notes: list[str]) -> None:
    """Add the run and its agent calls to the history database (a failure to record is a note, not an error)."""
    from fluxdrive.runs.history import HistoryUnavailableError, open_history, record_run

    try:
        with open_history() as connection:
            record_run(
                connection,
                manifest,
                project=str(Path(root).resolve()),
                verdict=synthesis.verdict if synthesis else None,
            )
    except HistoryUnavailableError as exc:
        if not any(exc.message in note for note in notes):  # warned once already, at triage
            notes.append(f"history not recorded: {exc.message}")
