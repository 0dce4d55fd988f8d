"""The review plan: who runs, in which stage, at what cost - decided once, before anything is dispatched.

Triage scores the agents; this module turns that into a plan a launch can
follow. In order:

1. An explicit ``--agents`` roster is honoured exactly: those agents, all
   in Stage 1, whatever their scores (a note says when one scored 0).
2. Agents that need a model leave a static run, each with a note.
3. **The cost model decides whether stages exist at all.** Stages and
   expansion save money and time on paid runtimes; they never improve a
   review. Each candidate is priced on the runtime it would run on (static:
   no tokens; llm and cli-agent: the median of its past calls on that model
   from the history database, else ``budget.review_agent_default``, halved
   for an agent that receives a slice). When every agent with base >= 1 fits
   the input's budget they all run in Stage 1. Offline, where nothing costs
   tokens, every review agent runs - base 0 included: a score is a guess
   from words, and the agent's own checks decide better what applies (a
   plan without a rollback section never says "rollback"). Otherwise the
   protocol's staging applies (see :mod:`fluxdrive.triage.scoring`).
4. The soft budget is enforced on what will actually run: over it, a
   terminal asks and a script needs ``--over-budget``.

:class:`ReviewPlan` is the frozen result: the stages, whether staging
applies, every agent's direct evidence (which expansion counts), and the
routed content.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from fluxdrive.agents import AgentDefinition
from fluxdrive.config.model import Config
from fluxdrive.errors import UsageError
from fluxdrive.launch.budget import Estimate, estimate
from fluxdrive.launch.runtimes import RuntimePool
from fluxdrive.launch.slicing import ContentPlan, may_slice, route_content
from fluxdrive.triage import Triage
from fluxdrive.triage.scoring import not_prose
from fluxdrive.workspace import Target

Ask = Callable[[str], str]


@dataclass(frozen=True)
class ReviewPlan:
    """What a launch runs: stages from triage after the gate and the cost model, and the routed content."""

    stage1: tuple[str, ...]
    stage2: tuple[str, ...]
    pool: tuple[str, ...]
    staged: bool
    evidence: Mapping[str, tuple[str, ...]]  # agent -> direct signals the input holds for its lane
    content: ContentPlan

    @property
    def candidates(self) -> tuple[str, ...]:
        """Everyone who may run after Stage 1."""
        return (*self.stage2, *self.pool)


def make_plan(result: Triage, target: Target, config: Config, output_dir: Path) -> ReviewPlan:
    """Freeze the approved triage into a plan and route each agent's content."""
    stage1 = tuple(a.name for a in result.in_stage(1))
    stage2 = tuple(a.name for a in result.in_stage(2))
    pool = tuple(a.name for a in result.in_stage("pool"))
    everyone = [result.roster.agents[n] for n in (*stage1, *stage2, *pool)]
    content = route_content(target, result.profile, everyone, output_dir, config.slicing)
    evidence = {a.name: tuple(a.evidence) for a in result.agents if a.evidence_units and not a.prefiltered}
    return ReviewPlan(stage1, stage2, pool, result.staged, evidence, content)


def explicit_roster(result: Triage, names: Sequence[str], chosen_by: str = "--agents") -> list[str]:
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
    result.overrides.removed = {a.name for a in result.agents if a.name not in wanted}
    result.overrides.added = {n: max(scores[n].final_score if n in scores else 0.0, 1.0) for n in wanted}
    result.overrides.promoted = set(wanted)
    result.unstage(f"the agents were chosen by {chosen_by}")
    return notes


def skip_model_only(result: Triage, pool: RuntimePool, config: Config) -> list[str]:
    """Agents that need a model (``static: {offline: false}``, e.g. generated domain agents) cannot run on
    the static runtime: they leave the plan before anything is asked or dispatched, each with a note."""
    skipped = []
    for record in result.agents:
        agent = result.roster.agents[record.name]
        if record.stage in (1, 2, "pool") and not agent.static.offline and pool.name_for(agent, config) == "static":
            skipped.append(agent.name)
    if skipped:
        result.overrides.removed.update(skipped)
        result.recompute()
    return [f"{n} needs a model: not run on the static runtime (use --runtime llm or [agents.{n}])" for n in skipped]


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
        runtime_of=lambda a: (pool.name_for(a, config), model_of(a, config, model)),
        sliced=lambda name: may_slice(kind, result.profile, result.roster.agents[name], config.slicing),
        past=past,
    )


def apply_cost_model(result: Triage, pool: RuntimePool, config: Config, model: str | None = None) -> str:
    """Unstage the triage when every candidate fits the budget; the line saying what was decided."""
    if not result.staged:
        return f"Staging: none ({result.staging_note})"
    if config.selection.staging == "always":
        result.staging_note = "selection.staging = always"
        return f"Staging: {result.staging_note}"
    if config.selection.staging == "never":
        result.unstage("selection.staging = never")
        return f"Staging: none ({result.staging_note})"
    candidates = [
        result.roster.agents[a.name]
        for a in result.agents
        if a.base_score >= 1 and a.name not in result.overrides.removed
    ]
    found = price(result, candidates, pool, config, model)
    if found.tokens == 0:
        free = _free_agents(result, pool, config)
        result.unstage(f"offline, no tokens: all {len(free)} reviewers run, whatever they scored", free=free)
    elif not found.over:
        result.unstage(
            f"all {len(candidates)} candidates fit the {found.budget_key} budget: "
            f"about {found.tokens:,} of {found.budget:,} tokens"
        )
    else:
        result.staging_note = (
            f"all {len(candidates)} candidates would use about {found.tokens:,} tokens, "
            f"over the {found.budget_key} budget of {found.budget:,}"
        )
        return f"Staging: {result.staging_note}"
    return f"Staging: none ({result.staging_note})"


def _free_agents(result: Triage, pool: RuntimePool, config: Config) -> frozenset[str]:
    """Review agents that cost nothing here: on the static runtime, runnable offline, not removed.

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
        and result.roster.agents[a.name].static.offline
        and pool.name_for(result.roster.agents[a.name], config) == "static"
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
    if config.budget.enforcement == "off" or all(pool.name_for(a, config) == "static" for a in planned):
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
