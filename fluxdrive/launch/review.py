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
import dataclasses
import hashlib
import os
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fluxdrive.config.model import Config
from fluxdrive.contracts.run_manifest import RunManifest
from fluxdrive.core import git as _git
from fluxdrive.core.clock import utc_timestamp
from fluxdrive.core.interrupt import Interrupt
from fluxdrive.core.masking import KnownSecrets, known_secrets
from fluxdrive.core.project import find_project_root
from fluxdrive.core.secret_values import collect as collect_secrets
from fluxdrive.errors import FluxdriveError, ReviewError, UsageError
from fluxdrive.imports.sarif import SarifImport
from fluxdrive.launch.knowledge import ReviewKnowledge
from fluxdrive.launch.manifest import RunFacts, build_manifest, finish, write_manifest
from fluxdrive.launch.plan import apply_cost_model, enforce_budget, explicit_roster, make_plan, skip_model_only
from fluxdrive.launch.progress import Progress, Recorder
from fluxdrive.launch.runtimes import RuntimePool
from fluxdrive.launch.stages import Ask, ExpandChoice, Launcher, LaunchRecord, ReviewDeps
from fluxdrive.runs.baseline import (
    Baseline,
    apply_baseline,
    current_branch,
    load_baseline,
    remember_reviewed,
    since_last,
)
from fluxdrive.runtimes import Runtime, runtime_class
from fluxdrive.runtimes.registry import require_llm_extra
from fluxdrive.synthesis import Synthesis, synthesize
from fluxdrive.triage import Triage, triage_target, write_outputs
from fluxdrive.triage.gate import Decision as GateDecision
from fluxdrive.triage.gate import run_gate
from fluxdrive.workspace import (
    Target,
    claim_output_dir,
    output_dir_for,
    resolve_target,
    run_lock,
    write_input_copy,
)


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
    agents_chosen_by: str = "--agents"  # who chose ``agents`` (the quality gate's plan), as notes say it
    runtime: str | Runtime = "static"
    model: str | None = None
    over_budget: bool = False
    llm_triage: bool = False
    output_dir: Path | None = None
    timeout_s: float | None = None
    max_concurrency: int | None = None
    cluster: str | None = None  # a Ray address: agents and analysis shards run on that cluster
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
    baseline: Path | None = None  # report only findings not in this baseline (fluxdrive baseline write)
    since_last: bool = False  # review what changed since the last reviewed commit of this branch
    interrupt: Interrupt | None = None  # interrupts the review from another thread (the MCP server's cancel)
    import_sarif: Sequence[Path | str] = ()  # other analyzers' SARIF files merged into the findings (--import-sarif)


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


def _config(options: ReviewOptions, target: Target) -> tuple[Config, list[str]]:
    """The effective config (a diff under its base commit's project settings) and what was ignored from it."""
    from fluxdrive.config import load_config

    notes: list[str] = []
    config = options.config
    if config is None:
        flags = dict(options.settings)
        loaded = load_config(
            Path(target.root),
            flags=flags,
            flag_labels={k: f"flag --set {k}" for k in flags},
            revision=target.settings_revision,
        )
        config, notes = loaded.config, loaded.notes()
    dispatch: dict[str, Any] = {}
    if options.timeout_s is not None:
        dispatch |= {"timeout_local_s": options.timeout_s, "timeout_remote_s": options.timeout_s}
    if options.max_concurrency is not None:
        dispatch["max_concurrency"] = options.max_concurrency
    dispatch |= _backend(options.cluster, config)
    update: dict[str, Any] = {}
    if dispatch:
        update["dispatch"] = config.dispatch.model_copy(update=dispatch)
    if not options.research:
        update["research"] = config.research.model_copy(update={"enabled": False})
    if not options.dropout:
        update["dropout"] = config.dropout.model_copy(update={"enabled": False})
    return (config.model_copy(update=update) if update else config), notes


def _backend(flag: str | None, config: Config) -> dict[str, Any]:
    """``--cluster`` (or config/``RAY_ADDRESS`` with ``dispatch.backend = "ray"``): the resolved Ray address."""
    from fluxdrive.scale.ray_session import cluster_address

    wanted = flag is not None or config.dispatch.backend == "ray"
    if not wanted:
        return {}
    address = cluster_address(flag, config.dispatch.cluster)
    if address is None:
        raise UsageError(
            'dispatch.backend = "ray" needs a cluster address',
            hint="pass --cluster ADDRESS, set dispatch.cluster, or export RAY_ADDRESS",
        )
    return {"backend": "ray", "cluster": address}


def _runtimes(options: ReviewOptions, config: Config) -> RuntimePool:
    if isinstance(options.runtime, str):
        runtime_class(options.runtime)  # an unknown name fails now, with a suggestion
    backend = None
    if config.dispatch.backend == "ray" and config.dispatch.cluster:
        from fluxdrive.scale.ray_backend import RayBackend

        backend = RayBackend.connect(config)  # an unreachable cluster fails now: one line, exit 2
    return RuntimePool(options.runtime, options.model, backend=backend)


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


def run_review(target: str | Path | Sequence[str | Path] | None, options: ReviewOptions | None = None) -> ReviewRun:
    """Review ``target`` (a path; several paths, reviewed together; ``-`` with ``options.stdin_text``; or None
    with ``diff_ref``/``staged``)."""
    with known_secrets() as secrets:  # the tree's secret values, masked in every output of this run
        return _run_review(target, options, secrets)


def _run_review(
    target: str | Path | Sequence[str | Path] | None, options: ReviewOptions | None, secrets: KnownSecrets
) -> ReviewRun:
    options = _since_last(options or ReviewOptions(), target)
    mode = _mode(options)
    began = time.monotonic()
    baseline = load_baseline(Path(options.baseline)) if options.baseline is not None else None
    given = target if target is None or isinstance(target, str | Path) else [str(t) for t in target]
    resolved = resolve_target(
        given if given is None or isinstance(given, list) else str(given),
        diff_ref=options.diff_ref,
        staged=options.staged,
        stdin_text=options.stdin_text,
        cwd=options.cwd,
        project=options.project,
    )
    secrets.add(collect_secrets(Path(resolved.root), extra_texts=[t for t in (resolved.diff_text,) if t]))
    config, config_notes = _config(options, resolved)
    imports = _imports(options, config, resolved)  # a bad SARIF file ends the review here: one line, exit 2
    pool = _runtimes(options, config)
    pool.preflight(config, Path(resolved.root))  # the common case fails before anything is written
    if options.llm_triage:
        require_llm_extra()
    output_dir = claim_output_dir(output_dir_for(resolved, options.output_dir), resolved)
    progress = options.progress or Recorder()
    with run_lock(output_dir, command="review"):
        planned = _triage(resolved, config, pool, options, progress)
        planned.notes[:0] = config_notes
        result = planned.triage
        if not _gate(result, options):
            write_outputs(result, output_dir)
            progress.close()
            return ReviewRun(None, output_dir, triage=result, approved=False)
        _prepare(output_dir, resolved, result, progress)
        channel_notes = _bind_channel(output_dir, config)
        plan = make_plan(result, resolved, config, output_dir)
        knowledge = ReviewKnowledge(Path(resolved.root), config, result.profile, result.domains)
        deps = ReviewDeps(pool, progress, knowledge, options.ask, options.say)
        launcher = Launcher(result, resolved, config, plan, deps, output_dir)
        triage_seconds = round(time.monotonic() - began, 3)
        record, interrupted, started_at = _launch(launcher, mode, progress, options.interrupt or Interrupt())
        channel_notes += _mirror_channel(output_dir, config)
        facts = RunFacts(
            run_id=hashlib.sha256(f"{output_dir}:{utc_timestamp()}:{os.getpid()}".encode()).hexdigest()[:12],
            started_at=started_at,
            interrupted=interrupted,
            phases={"triage": triage_seconds, **record.phases()},
            model_calls=planned.model_calls,
            # said once, with the verdict
            notes=[*record.notes, *planned.notes, *launcher.content.notes, *channel_notes],
        )
        manifest = build_manifest(launcher, facts).model_copy(update={"placement": record.placement})
        synthesis, files, manifest = _synthesize(
            launcher, manifest, interrupted=interrupted, began=began, baseline=baseline, imports=imports
        )
        notes = list(manifest.notes)
        if synthesis is not None and not interrupted:
            _remember_reviewed(Path(resolved.root), notes)
        _record_history(manifest, resolved, synthesis, notes)  # a failure to record adds a note
        return ReviewRun(
            synthesis,
            output_dir,
            files,
            triage=result,
            manifest=manifest,
            approved=True,
            interrupted=interrupted,
            notes=notes,
        )


@dataclass
class _Planned:
    """Triage after the flags, the cost model and the budget: what the gate is shown."""

    triage: Triage
    notes: list[str]
    model_calls: list[dict[str, Any]]


def _triage(target: Target, config: Config, pool: RuntimePool, options: ReviewOptions, progress: Progress) -> _Planned:
    """Phase 1 and the plan around it: --llm-triage, --agents, model-only agents, the cost model, the budget."""
    result = triage_target(target, config)
    model_calls: list[dict[str, Any]] = []
    if options.llm_triage:
        from fluxdrive.launch.llm_triage import refine

        refined = refine(result, options.model or config.llm.model)
        progress.phase(refined.note)
        if refined.call is not None:
            model_calls.append(refined.call)
    notes = explicit_roster(result, options.agents, options.agents_chosen_by) if options.agents else []
    notes += skip_model_only(result, pool, config)
    planned = [result.roster.agents[a.name] for a in result.agents if a.stage in (1, 2, "pool")]
    pool.check(planned, config, Path(target.root))  # unknown runtime, model, key or CLI: fail before asking
    progress.phase(apply_cost_model(result, pool, config, options.model))
    ask = None if options.yes else options.ask
    budget = enforce_budget(result, pool, config, model=options.model, over_budget=options.over_budget, ask=ask)
    if budget:
        progress.phase(budget)
    return _Planned(result, [*result.notes, *notes], model_calls)


def _prepare(output_dir: Path, target: Target, result: Triage, progress: Progress) -> None:
    """The approved plan on disk (in this run's fresh directory), or a ReviewError when nobody would run."""
    write_outputs(result, output_dir)
    write_input_copy(output_dir, target)
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


def _bind_channel(output_dir: Path, config: Config) -> list[str]:
    """``channel.url``: the run's peer channel in a Redis stream; unreachable Redis is a note, not a failure."""
    if not config.channel.url:
        return []
    from fluxdrive.exchange import stream as channel_stream

    try:
        channel_stream.bind(output_dir, config.channel.url, maxlen=config.channel.maxlen)
    except FluxdriveError as exc:
        return [f"{exc.message}: the agents share findings through the local file"]
    return []


def _mirror_channel(output_dir: Path, config: Config) -> list[str]:
    """The stream's findings into peer-findings.jsonl, where synthesis and every reader find them."""
    if not config.channel.url:
        return []
    from fluxdrive.exchange import stream as channel_stream

    try:
        return channel_stream.mirror(output_dir)
    except (OSError, FluxdriveError) as exc:
        return [f"the peer channel could not be mirrored to peer-findings.jsonl: {exc}"]


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
    launcher: Launcher,
    manifest: RunManifest,
    *,
    interrupted: bool,
    began: float,
    baseline: Baseline | None = None,
    imports: Sequence[SarifImport] = (),
) -> tuple[Synthesis | None, list[Path], RunManifest]:
    """Phase 3 over what the agents wrote, the knowledge lifecycle, and the final run.json."""
    output_dir = launcher.output_dir
    started = time.monotonic()
    synthesis: Synthesis | None = None
    files: list[Path] = []
    if launcher.record.launched:
        write_manifest(output_dir, manifest)  # synthesis reads it
        from fluxdrive.reports import write_reports

        synthesis = synthesize(output_dir, launcher.config)
        synthesis.notes.extend(manifest.notes)
        synthesis.info.extend(manifest.placement)
        if not interrupted:
            _learn(launcher, synthesis)  # from the agents' own findings: imported results teach them nothing
        if imports:
            synthesis = _merge_imports(launcher, synthesis, imports)
        if baseline is not None:  # learning saw every finding; the reports and the verdict see the new ones
            synthesis = apply_baseline(synthesis, baseline, Path(launcher.target.root)).synthesis
        files = write_reports(synthesis)
        if launcher.config.verdicts.format != "fluxdrive":
            _write_clavain(launcher, synthesis)
    phases = {**manifest.phases, "synthesis": round(time.monotonic() - started, 3)}
    phases["total"] = round(time.monotonic() - began, 3)
    manifest = finish(manifest, launcher, phases)
    write_manifest(output_dir, manifest)
    return synthesis, files, manifest


def _imports(options: ReviewOptions, config: Config, target: Target) -> list[SarifImport]:
    """``--import-sarif`` and ``imports.sarif``, read now: a missing or invalid file fails before anything runs."""
    if not options.import_sarif and not config.imports.sarif:
        return []
    from fluxdrive.imports import load_imports

    cwd = Path(options.cwd) if options.cwd is not None else Path.cwd()
    return load_imports(options.import_sarif, config.imports.sarif, Path(target.root), cwd)


def _merge_imports(launcher: Launcher, synthesis: Synthesis, imports: Sequence[SarifImport]) -> Synthesis:
    """The imported results merged into the findings, limited to what this review covered (a diff: added lines)."""
    from fluxdrive.imports import ImportScope, apply_imports

    content = launcher.content
    diff = launcher.target.kind == "diff"
    scope = ImportScope(files=frozenset(content.files), changed=content.changed if diff else None)
    return apply_imports(synthesis, imports, scope, launcher.config.synthesis)


def _since_last(options: ReviewOptions, target: object) -> ReviewOptions:
    """``--since-last``: the diff since the commit this branch's last review saw (refused with a target or ref)."""
    if not options.since_last:
        return options
    if target is not None or options.diff_ref is not None or options.staged:
        raise UsageError("--since-last picks the diff itself; do not also pass a TARGET, --diff or --staged")
    root = find_project_root(Path(options.cwd or Path.cwd()) if options.project is None else Path(options.project))
    branch = current_branch(root)
    if branch is None:
        raise UsageError("--since-last needs a branch, and HEAD is detached", hint="check out a branch, or use --diff")
    commit = since_last(root, branch)
    if commit is None:
        raise UsageError(
            f"no earlier review of branch {branch} is recorded", hint="review once without --since-last first"
        )
    return dataclasses.replace(options, diff_ref=commit, project=root)


def _remember_reviewed(root: Path, notes: list[str]) -> None:
    """Record the commit this review saw for its branch (what the next --since-last starts from)."""
    branch = current_branch(root)
    commit = _git.head(root)
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


def _gate(result: Triage, options: ReviewOptions) -> bool:
    if options.yes:
        return True
    if options.ask is None:
        raise UsageError(
            "the triage needs approval, and there is no terminal to ask in",
            hint="run it in a terminal, or pass --yes to approve the plan as computed",
        )
    say = options.say or _write_stdout
    import shutil

    width = shutil.get_terminal_size((120, 24)).columns
    return run_gate(result, options.ask, say, width=width) is GateDecision.APPROVED


def _record_history(manifest: RunManifest, target: Target, synthesis: Synthesis | None, notes: list[str]) -> None:
    """Add the run and its agent calls to the history database (a failure to record is a note, not an error)."""
    from fluxdrive.runs.history import HistoryUnavailableError, open_history, record_run

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


def _write_stdout(text: str) -> None:
    sys.stdout.write(text if text.endswith("\n") else text + "\n")


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
