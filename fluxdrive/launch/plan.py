"""The review plan: who runs, in which stage, at what cost - decided once, before anything is dispatched.

:func:`plan_review` is the one way any front door (the CLI's review, triage
and gate, the MCP server, fleet, eval) turns a target and
:class:`~fluxdrive.launch.settings.ReviewSettings` into a frozen
:class:`ReviewPlan`. It resolves the input, loads the effective config,
checks the runtimes, runs triage, and then applies the planning steps, each
a pure function from one frozen :class:`~fluxdrive.triage.Triage` to the
next, in this order:

1. ``--llm-triage``: a model refines the base scores (0 stays absolute).
2. An explicit ``--agents`` roster is honoured exactly: those agents, all
   in Stage 1, whatever their scores (a note says when one scored 0).
3. Agents the chosen runtime cannot run leave the plan (``Runtime.can_run``:
   an agent that needs a model, on the static runtime), each with a note.
4. **The cost model decides whether stages exist at all.** Stages and
   expansion save money and time on paid runtimes; they never improve a
   review. Each candidate is priced on the runtime it would run on (one
   that does not cost tokens: none; llm and cli-agent: the median of its
   past calls on that model from the history database, else
   ``budget.review_agent_default``, halved for an agent that receives a
   slice). When every agent with base >= 1 fits the input's budget they all
   run in Stage 1. Where nothing costs tokens, every review agent runs -
   base 0 included: a score is a guess from words, and the agent's own
   checks decide better what applies (a plan without a rollback section
   never says "rollback"). Otherwise the protocol's staging applies (see
   :mod:`fluxdrive.triage.scoring`).
5. The soft budget is checked on what will actually run: over it, a
   terminal asks and a script needs ``--over-budget``.

The approval gate, when a person edits the plan, is one more step of the
same kind (:func:`with_triage`). :class:`StagePlan` is what a launch then
follows: the stages, every agent's direct evidence (which expansion counts)
and the routed content.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fluxdrive.agents import AgentDefinition
from fluxdrive.config.model import Config
from fluxdrive.core.masking import known_secrets
from fluxdrive.core.project import find_project_root
from fluxdrive.core.secret_values import collect as collect_secrets
from fluxdrive.errors import UsageError
from fluxdrive.imports.sarif import SarifImport
from fluxdrive.launch.budget import Estimate, estimate
from fluxdrive.launch.cost import CostEstimate, plan_cost
from fluxdrive.launch.runtimes import RuntimePool
from fluxdrive.launch.settings import ReviewSettings
from fluxdrive.launch.slicing import ContentPlan, may_slice, route_content
from fluxdrive.runs.baseline import Baseline, current_branch, load_baseline, since_last
from fluxdrive.runs.decisions import DecisionLog
from fluxdrive.runtimes import runtime_class
from fluxdrive.triage import Triage, triage_target
from fluxdrive.triage.scoring import not_prose
from fluxdrive.workspace import Target, claim_output_dir, output_dir_for, resolve_target

Ask = Callable[[str], str]
TargetArg = str | Path | Sequence[str | Path] | None


@dataclass(frozen=True)
class ReviewPlan:
    """A review decided and not yet run: what :func:`~fluxdrive.launch.execute.execute` runs."""

    target: Target
    settings: ReviewSettings
    config: Config
    triage: Triage
    runtimes: RuntimePool  # the runtimes the plan was checked against, created once for this review
    output_dir: Path  # claimed for this run before triage wrote anything (a refused directory fails first)
    notes: tuple[str, ...] = ()  # said once, with the verdict: the config's, triage's and the steps'
    steps: tuple[str, ...] = ()  # what planning decided, one line each (the staging, the budget)
    model_calls: tuple[dict[str, Any], ...] = ()  # calls made while planning (--llm-triage)
    secrets: frozenset[str] = frozenset()  # the tree's secret values, masked in every output of the run
    baseline: Baseline | None = None
    imports: tuple[SarifImport, ...] = ()
    seconds: float = 0.0  # how long planning took (run.json counts it as the triage phase)
    cost: CostEstimate | None = None  # the money estimate per agent and phase, against budget.max_usd

    @property
    def stage1(self) -> list[str]:
        """The agents that run first."""
        return [a.name for a in self.triage.in_stage(1)]

    def with_triage(self, triage: Triage) -> ReviewPlan:
        """The plan after a person edited its triage at the approval gate."""
        return dataclasses.replace(self, triage=triage)


def plan_review(
    target: TargetArg,
    settings: ReviewSettings | None = None,
    *,
    ask: Ask | None = None,
    check_runtimes: bool = True,
    before_writing: Callable[[Config], None] | None = None,
) -> ReviewPlan:
    """Decide the review of ``target`` (a path; several paths, reviewed together; ``-`` with
    ``settings.stdin_text``; or None with a diff). ``ask`` answers the budget question on a terminal.

    ``check_runtimes`` (a review): a missing key, CLI or model fails before anything is written; showing a
    plan (``fluxdrive triage``, the MCP tool) prices it without needing them. ``before_writing`` is the
    front door's own check once the config is known and before the run's directory is claimed (connecting
    to a cluster: an unreachable one leaves nothing behind)."""
    began = time.monotonic()
    settings = _since_last(settings or ReviewSettings(), target)
    with known_secrets() as secrets:
        given = target if target is None or isinstance(target, str | Path) else [str(t) for t in target]
        resolved = resolve_target(
            given if given is None or isinstance(given, list) else str(given),
            diff_ref=settings.diff_ref,
            staged=settings.staged,
            stdin_text=settings.stdin_text,
            cwd=settings.cwd,
            project=settings.project,
        )
        found = collect_secrets(Path(resolved.root), extra_texts=[t for t in (resolved.diff_text,) if t])
        secrets.add(found)
        config, config_notes = effective_config(settings, resolved)
        baseline = load_baseline(Path(settings.baseline)) if settings.baseline is not None else None
        imports = _imports(settings, config, resolved)  # a bad SARIF file ends the review here: one line, exit 2
        runtimes = runtime_pool(settings)
        if check_runtimes:
            runtimes.preflight(config, Path(resolved.root))  # the common case fails before anything is written
        if before_writing is not None:
            before_writing(config)
        if settings.llm_triage:
            from fluxdrive.runtimes.registry import require_llm_extra

            require_llm_extra()
        output_dir = claim_output_dir(output_dir_for(resolved, settings.output_dir), resolved)
        result = triage_target(resolved, config, use_cache=settings.use_cache)
        plan = ReviewPlan(resolved, settings, config, result, runtimes, output_dir, secrets=found, baseline=baseline)
        plan = _steps(dataclasses.replace(plan, imports=tuple(imports)), list(config_notes), ask)
        if check_runtimes:
            verify(plan)  # unknown runtime, model, key or CLI of any planned agent: fail before asking
        return dataclasses.replace(plan, seconds=time.monotonic() - began)


def _steps(plan: ReviewPlan, config_notes: list[str], ask: Ask | None) -> ReviewPlan:
    """The planning steps, in order, over the frozen triage."""
    settings, config, runtimes = plan.settings, plan.config, plan.runtimes
    result, steps, calls = plan.triage, [], []
    if settings.llm_triage:
        from fluxdrive.launch.llm_triage import refine

        refined = refine(result, settings.model or config.llm.model)
        result, steps = refined.triage, [refined.note]
        calls += [refined.call] if refined.call is not None else []
    notes: list[str] = []
    if settings.agents:
        result, notes = explicit_roster(result, settings.agents, settings.agents_chosen_by)
    result, unrunnable = drop_unrunnable(result, runtimes, config)
    result, staging = apply_cost_model(result, runtimes, config, settings.model)
    steps.append(staging)
    cost = _cost(result, plan, config)  # over budget.max_usd: stops here, before the budget question
    steps += [cost.line()] if cost.tokens or cost.cap is not None else []
    budget = enforce_budget(
        result,
        runtimes,
        config,
        model=settings.model,
        over_budget=settings.over_budget,
        ask=None if settings.yes else ask,
    )
    steps += [budget] if budget else []
    return dataclasses.replace(
        plan,
        triage=result,
        notes=(*config_notes, *result.notes, *notes, *unrunnable),
        steps=tuple(steps),
        model_calls=tuple(calls),
        cost=cost,
    )


def _cost(result: Triage, plan: ReviewPlan, config: Config) -> CostEstimate:
    """The planned agents (stages 1 and 2) in dollars; over the cost ceiling, one line and exit 2."""
    planned = [result.roster.agents[a.name] for a in result.agents if a.stage in (1, 2)]
    stage = {a.name: f"stage{a.stage}" for a in result.agents}
    found = price(result, planned, plan.runtimes, config, plan.settings.model)
    agents = result.roster.agents
    return plan_cost(
        found,
        config,
        stage.__getitem__,
        lambda name: model_of(agents[name], config, plan.settings.model),
        DecisionLog(plan.output_dir),
    )


def verify(plan: ReviewPlan) -> None:
    """Every planned agent's runtime can run here: an unknown model, a missing key or CLI is one line and
    exit 2 before anything is asked or written (planning alone, ``fluxdrive triage``, needs none of them)."""
    root = Path(plan.target.root)
    plan.runtimes.preflight(plan.config, root)
    planned = [plan.triage.roster.agents[a.name] for a in plan.triage.agents if a.stage in (1, 2, "pool")]
    plan.runtimes.check(planned, plan.config, root)


def effective_config(settings: ReviewSettings, target: Target) -> tuple[Config, list[str]]:
    """The config a review runs with (a diff: under its base commit's project settings) and what was ignored
    from it: the settings' own Config, else the project's files, with the settings' overrides on top."""
    from fluxdrive.config import load_config
    from fluxdrive.config.loader import with_flags

    flags = dict(settings.overrides)
    labels = {k: f"flag --set {k}" for k in flags}
    if settings.max_usd is not None:
        flags["budget.max_usd"], labels["budget.max_usd"] = settings.max_usd, "flag --max-cost"
    if settings.config is not None:
        return with_flags(settings.config, flags), []
    loaded = load_config(
        Path(target.root),
        flags=flags,
        flag_labels=labels,
        revision=target.settings_revision,
    )
    return loaded.config, loaded.notes()


def runtime_pool(settings: ReviewSettings) -> RuntimePool:
    """The review's runtimes (an unknown runtime name fails now, with a suggestion)."""
    if isinstance(settings.runtime, str):
        runtime_class(settings.runtime)
    return RuntimePool(settings.runtime, settings.model)


def _imports(settings: ReviewSettings, config: Config, target: Target) -> list[SarifImport]:
    """``--import-sarif`` and ``imports.sarif``, read now: a missing or invalid file fails before anything runs."""
    if not settings.import_sarif and not config.imports.sarif:
        return []
    from fluxdrive.imports import load_imports

    cwd = Path(settings.cwd) if settings.cwd is not None else Path.cwd()
    return load_imports(settings.import_sarif, config.imports.sarif, Path(target.root), cwd)


def _since_last(settings: ReviewSettings, target: object) -> ReviewSettings:
    """``--since-last``: the diff since the commit this branch's last review saw (refused with a target or ref)."""
    if not settings.since_last:
        return settings
    if target is not None or settings.diff_ref is not None or settings.staged:
        raise UsageError("--since-last picks the diff itself; do not also pass a TARGET, --diff or --staged")
    start = Path(settings.cwd or Path.cwd()) if settings.project is None else Path(settings.project)
    root = find_project_root(start)
    branch = current_branch(root)
    if branch is None:
        raise UsageError("--since-last needs a branch, and HEAD is detached", hint="check out a branch, or use --diff")
    commit = since_last(root, branch)
    if commit is None:
        raise UsageError(
            f"no earlier review of branch {branch} is recorded", hint="review once without --since-last first"
        )
    return settings.but(diff_ref=commit, project=root)


@dataclass(frozen=True)
class StagePlan:
    """What a launch runs: stages from the approved plan, and the routed content."""

    stage1: tuple[str, ...]
    stage2: tuple[str, ...]
    pool: tuple[str, ...]
    staged: bool
    evidence: Mapping[str, tuple[str, ...]]  # agent -> direct signals the input holds for its lane
    content: ContentPlan
    line_filter: str = "added"  # a diff's --filter: which lines findings may be reported on

    @property
    def candidates(self) -> tuple[str, ...]:
        """Everyone who may run after Stage 1."""
        return (*self.stage2, *self.pool)


def stage_plan(
    result: Triage, target: Target, config: Config, output_dir: Path, line_filter: str = "added"
) -> StagePlan:
    """Freeze the approved triage into stages and route each agent's content."""
    stage1 = tuple(a.name for a in result.in_stage(1))
    stage2 = tuple(a.name for a in result.in_stage(2))
    pool = tuple(a.name for a in result.in_stage("pool"))
    everyone = [result.roster.agents[n] for n in (*stage1, *stage2, *pool)]
    content = route_content(target, result.profile, everyone, output_dir, config.slicing)
    evidence = {a.name: tuple(a.evidence) for a in result.agents if a.evidence_units and not a.prefiltered}
    return StagePlan(stage1, stage2, pool, result.staged, evidence, content, line_filter)


def explicit_roster(result: Triage, names: Sequence[str], chosen_by: str = "--agents") -> tuple[Triage, list[str]]:
    """``--agents a,b,c`` (or the gate's plan, ``chosen_by``): exactly these agents, all in Stage 1; notes for
    those that scored 0."""
    wanted = [result.roster.get(f"fd-{n}" if f"fd-{n}" in result.roster.agents else n).name for n in names]
    for name in wanted:
        if result.roster.agents[name].kind != "review":
            raise UsageError(f"{name} is a research agent", hint="--agents takes review agents")
    scores = {a.name: a for a in result.agents}
    notes = [
        f"{name} was chosen by {chosen_by} although nothing in the input matched its lane (score 0)"
        for name in wanted
        if name not in scores or scores[name].base_score == 0
    ]
    overrides = dataclasses.replace(
        result.overrides,
        removed=frozenset(a.name for a in result.agents if a.name not in wanted),
        added={n: max(scores[n].final_score if n in scores else 0.0, 1.0) for n in wanted},
        promoted=frozenset(wanted),
    )
    chosen = dataclasses.replace(result, overrides=overrides)
    return chosen.unstaged(f"the agents were chosen by {chosen_by}"), notes


def drop_unrunnable(result: Triage, runtimes: RuntimePool, config: Config) -> tuple[Triage, list[str]]:
    """Agents their runtime cannot run (``Runtime.can_run``: e.g. a generated domain agent that needs a model,
    on the static runtime) leave the plan before anything is asked or dispatched, each with a note."""
    dropped = []
    for record in result.agents:
        agent = result.roster.agents[record.name]
        if record.stage in (1, 2, "pool") and not runtimes.for_agent(agent, config).can_run(agent):
            dropped.append((agent.name, runtimes.name_for(agent, config)))
    if not dropped:
        return result, []
    result = result.with_overrides(result.overrides.remove(*(name for name, _runtime in dropped)))
    return result, [
        f"{name} needs a model: not run on the {runtime} runtime (use --runtime llm or [agents.{name}])"
        for name, runtime in dropped
    ]


def model_of(agent: AgentDefinition, config: Config, model: str | None) -> str | None:
    """The model an agent runs on: its config override, its definition, the flag, the config default."""
    override = config.agents.get(agent.name)
    return (override.model if override else None) or agent.model or model or config.llm.model


def price(
    result: Triage, agents: Sequence[AgentDefinition], pool: RuntimePool, config: Config, model: str | None
) -> Estimate:
    """What ``agents`` would cost on their runtimes (past calls from the history database, else defaults)."""
    from fluxdrive.runs.history import HistoryUnavailableError, database_path, estimate_tokens, open_history

    database = database_path()

    def past(agent: str, model: str | None, default: int) -> tuple[int, str]:
        if not database.exists():
            return default, "default"
        try:
            with open_history(database) as connection:
                return estimate_tokens(connection, agent, model.partition(":")[2] if model else None, default=default)
        except HistoryUnavailableError:  # already said once by triage; estimate from the defaults
            return default, "default"

    kind = result.target.kind
    return estimate(
        result.profile,
        list(agents),
        config,
        runtime_of=lambda a: (pool.for_agent(a, config).costs_tokens, model_of(a, config, model)),
        sliced=lambda name: may_slice(kind, result.profile, result.roster.agents[name], config.slicing),
        past=past,
    )


def apply_cost_model(
    result: Triage, runtimes: RuntimePool, config: Config, model: str | None = None
) -> tuple[Triage, str]:
    """The triage unstaged when every candidate fits the budget, and the line saying what was decided."""
    if not result.staged:
        return result, f"Staging: none ({result.staging_note})"
    if config.selection.staging == "always":
        result = result.with_staging_note("selection.staging = always")
        return result, f"Staging: {result.staging_note}"
    if config.selection.staging == "never":
        result = result.unstaged("selection.staging = never")
        return result, f"Staging: none ({result.staging_note})"
    candidates = [
        result.roster.agents[a.name]
        for a in result.agents
        if a.base_score >= 1 and a.name not in result.overrides.removed
    ]
    found = price(result, candidates, runtimes, config, model)
    if found.tokens == 0:
        free = _free_agents(result, runtimes, config)
        result = result.unstaged(f"offline, no tokens: all {len(free)} reviewers run, whatever they scored", free=free)
    elif not found.over:
        result = result.unstaged(
            f"all {len(candidates)} candidates fit the {found.budget_key} budget: "
            f"about {found.tokens:,} of {found.budget:,} tokens"
        )
    else:
        result = result.with_staging_note(
            f"all {len(candidates)} candidates would use about {found.tokens:,} tokens, "
            f"over the {found.budget_key} budget of {found.budget:,}"
        )
        return result, f"Staging: {result.staging_note}"
    return result, f"Staging: none ({result.staging_note})"


def _costless(agent: AgentDefinition, runtimes: RuntimePool, config: Config) -> bool:
    """True when ``agent``'s runtime spends no tokens on it (and can run it at all)."""
    runtime = runtimes.for_agent(agent, config)
    return not runtime.costs_tokens and runtime.can_run(agent)


def _free_agents(result: Triage, runtimes: RuntimePool, config: Config) -> frozenset[str]:
    """Review agents that cost nothing here: on a runtime that spends no tokens and can run them, not removed.

    Offline, relevance is decided by each agent's own checks, not by words: a
    plan with no rollback section never says "rollback", and fd-user-product's
    document checks are what notice it. Scores still order paid runs. A
    reviewer of prose (``documents_only``) filtered out because the input is
    code is not free: it has nothing to judge there, and its checks would
    only read the README.
    """
    code = not_prose(result.profile) is not None
    return frozenset(
        a.name
        for a in result.agents
        if a.name not in result.overrides.removed
        and not (code and result.roster.agents[a.name].prefilter.documents_only)
        and _costless(result.roster.agents[a.name], runtimes, config)
    )


def enforce_budget(
    result: Triage,
    pool: RuntimePool,
    config: Config,
    *,
    model: str | None,
    over_budget: bool,
    ask: Ask | None,
) -> str | None:
    """Soft budget enforcement on the planned agents; the budget line, or None when nothing costs tokens.

    Over budget, a terminal asks (``ask``) and a script needs ``over_budget``.
    """
    planned = [result.roster.agents[a.name] for a in result.agents if a.stage in (1, 2)]
    if config.budget.enforcement == "off" or not any(pool.for_agent(a, config).costs_tokens for a in planned):
        return None
    found = price(result, planned, pool, config, model)
    if found.over and not over_budget:
        question = f"Over the {found.budget_key} budget ({found.tokens:,} > {found.budget:,} tokens). Go on? [y/N] "
        if ask is not None and ask(question).strip().lower() in ("y", "yes"):
            return found.line()
        raise UsageError(
            f"the planned agents would use about {found.tokens:,} tokens, over the {found.budget_key} budget of "
            f"{found.budget:,}",
            hint=f"pass --over-budget, review with fewer --agents, or raise budget.per_input.{found.budget_key}",
        )
    return found.line()
