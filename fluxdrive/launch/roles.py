"""Model roles: which job an agent does, which family a model is of, and the weakest model a job may use.

Why: a review that runs fd-safety on the cheapest model saves cents and
loses the findings that block merges; and a finding checked by a model of
the family that wrote it is checked by the same blind spots. The policy is
data (``fluxdrive/data/agent-roles.yaml``: roles, tiers per family, which
agents hold which role) plus config (``[roles]``: the floor agents, the
floor tier, the model to run on instead); this module only reads and
compares them. It is pure apart from reading that shipped file once.

- **family** - ``anthropic`` (claude), ``openai`` (gpt, o-series), else the
  model's own family (``llama``, ``qwen``...): a model served through
  ``openai:`` from a local server is not an OpenAI model.
- **tier** - ``small`` < ``standard`` < ``frontier``, by the longest id
  prefix the family lists; ``unknown`` when no list names it (never floored,
  since there is nothing to compare, but said in a note).
- **floor** - an agent runs on at least its role's minimum tier, and a floor
  agent (fd-safety, fd-correctness) at least on ``roles.floor``; below that it
  runs on ``roles.floor_model[family]`` (or ``[default]``). Without one the
  review is refused before dispatch (one line, exit 2).
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from typing import Any

from fluxdrive.config.model import AgentRuntime, Config
from fluxdrive.core.structured import load_yaml
from fluxdrive.errors import UsageError
from fluxdrive.launch.plan import ReviewPlan
from fluxdrive.runs.decisions import DecisionLog
from fluxdrive.runtimes.families import model_family

UNKNOWN = "unknown"
DEFAULT_ROLE = "reviewer"
_PROVIDER_FAMILY = {"claude": "anthropic", "gpt": "openai"}


@dataclass(frozen=True)
class Role:
    """One job: what it is for and the weakest tier allowed to do it."""

    name: str
    description: str
    minimum: str


@dataclass(frozen=True)
class RoleTable:
    """``agent-roles.yaml`` as data."""

    tiers: tuple[str, ...]
    roles: Mapping[str, Role]
    agents: Mapping[str, str]  # agent -> role (agents not named are reviewers)
    families: Mapping[str, Mapping[str, tuple[str, ...]]]  # family -> tier -> id prefixes

    def role_of(self, agent: str) -> Role:
        """The role ``agent`` holds (reviewer unless the table names another)."""
        return self.roles[self.agents.get(agent, DEFAULT_ROLE)]

    def rank(self, tier: str) -> int | None:
        """0 for the weakest tier; None for ``unknown``."""
        return self.tiers.index(tier) if tier in self.tiers else None


@functools.cache
def role_table() -> RoleTable:
    """The shipped table (read once per process)."""
    path = resources.files("fluxdrive") / "data" / "agent-roles.yaml"
    return parse_table(load_yaml(path.read_text(encoding="utf-8"), "agent-roles.yaml"))


def parse_table(data: Mapping[str, Any]) -> RoleTable:
    """A role table from its YAML data."""
    tiers = tuple(data["tiers"])
    roles = {
        name: Role(name, " ".join(str(spec.get("description", "")).split()), spec["minimum"])
        for name, spec in data["roles"].items()
    }
    agents = {agent: role for role, names in data.get("agents", {}).items() for agent in names}
    families = {
        family: {tier: tuple(prefixes) for tier, prefixes in table.items()}
        for family, table in data["families"].items()
    }
    return RoleTable(tiers, roles, agents, families)


def family_of(model: str) -> str:
    """``anthropic`` / ``openai`` / the model's own family, for ``provider:model`` or a bare id."""
    family = model_family(model)
    return _PROVIDER_FAMILY.get(family, family)


def _model_id(model: str) -> str:
    provider, sep, name = model.partition(":")
    return (name if sep and provider in ("anthropic", "openai", "ollama", "openrouter") else model).lower()


def tier_of(model: str, table: RoleTable | None = None) -> str:
    """The tier of ``model`` (longest matching prefix of its family's lists), or ``unknown``."""
    table = table or role_table()
    name = _model_id(model).rsplit("/", 1)[-1]
    found = [
        (len(prefix), tier)
        for tier, prefixes in table.families.get(family_of(model), {}).items()
        for prefix in prefixes
        if name.startswith(prefix)
    ]
    return max(found)[1] if found else UNKNOWN


def below(tier: str, minimum: str, table: RoleTable | None = None) -> bool:
    """Is ``tier`` weaker than ``minimum``? (An unknown tier is never below: nothing to compare.)"""
    table = table or role_table()
    have, need = table.rank(tier), table.rank(minimum)
    return have is not None and need is not None and have < need


@dataclass(frozen=True)
class Floor:
    """What the role policy decided for one agent's model."""

    agent: str
    role: str
    chosen: str
    tier: str
    minimum: str
    model: str  # what the agent runs on (``chosen`` unless floored)
    note: str = ""

    @property
    def floored(self) -> bool:
        return self.model != self.chosen

    def record(self) -> dict[str, str]:
        """The decisions.jsonl inputs."""
        return {"agent": self.agent, "role": self.role, "chosen": self.chosen, "tier": self.tier,
                "minimum": self.minimum}  # fmt: skip


def minimum_for(agent: str, config: Config, table: RoleTable | None = None) -> tuple[str, str]:
    """(role, the weakest tier ``agent`` may run on): its role's minimum, raised to the floor for floor agents."""
    table = table or role_table()
    role = table.role_of(agent)
    minimum = role.minimum
    if agent in config.roles.floor_agents and (table.rank(config.roles.floor) or 0) > (table.rank(minimum) or 0):
        minimum = config.roles.floor
    return role.name, minimum


def floor(agent: str, chosen: str, config: Config, table: RoleTable | None = None) -> Floor:
    """The model ``agent`` runs on, given the model it was given; a UsageError when it is too weak and no
    floor model is configured for its family."""
    table = table or role_table()
    role, minimum = minimum_for(agent, config, table)
    tier = tier_of(chosen, table)
    if tier == UNKNOWN:
        note = f"{agent}: the tier of {chosen} is unknown, so its {role} floor ({minimum}) is not checked"
        return Floor(agent, role, chosen, tier, minimum, chosen, note if minimum != table.tiers[0] else "")
    if not below(tier, minimum, table):
        return Floor(agent, role, chosen, tier, minimum, chosen)
    family = family_of(chosen)
    models = config.roles.floor_model
    instead = models.get(family) or models.get("default")
    if not instead:
        raise UsageError(
            f"{agent} may not run on {chosen} ({tier}): its {role} floor is {minimum}",
            hint=f"set roles.floor_model.{family} (or roles.floor_model.default) to a {minimum} model, or give "
            f"{agent} a stronger model with agents.{agent}.model",
        )
    note = f"{agent} runs on {instead}, not {chosen}: {chosen} is {tier}, below the {role} floor ({minimum})"
    return Floor(agent, role, chosen, tier, minimum, instead, note)


def chosen_model(agent: str, defined: str | None, command_line: str | None, config: Config) -> str | None:
    """The model the llm runtime would give ``agent``: config per agent, its definition, --model, llm.model."""
    override = config.agents.get(agent)
    return (override.model if override else None) or defined or command_line or config.llm.model


def apply_floors(
    agents: Mapping[str, str | None], command_line: str | None, config: Config
) -> tuple[Config, list[Floor]]:
    """``agents`` (name -> its definition's model) on the llm runtime floored: the config whose per-agent
    models carry each floor model (the runtime's first choice), and every decision that was not trivial.

    Raises the UsageError of :func:`floor` before anything is dispatched.
    """
    decided: list[Floor] = []
    overrides = dict(config.agents)
    for agent, defined in sorted(agents.items()):
        chosen = chosen_model(agent, defined, command_line, config)
        if not chosen:
            continue  # the runtime's own check says there is no model
        decision = floor(agent, chosen, config)
        if decision.floored:
            current = overrides.get(agent)
            update = {"model": decision.model}
            overrides[agent] = current.model_copy(update=update) if current else AgentRuntime(model=decision.model)
        if decision.note:
            decided.append(decision)
    if not any(d.floored for d in decided):
        return config, decided
    return config.model_copy(update={"agents": overrides}), decided


def on_models(plan: ReviewPlan) -> dict[str, str | None]:
    """The plan's agents that run on the llm runtime: name -> the model their definition names (if any)."""
    agents = plan.triage.roster.agents
    return {
        a.name: agents[a.name].model
        for a in plan.triage.agents
        if a.stage in (1, 2, "pool") and plan.runtimes.name_for(agents[a.name], plan.config) == "llm"
    }


def floored_plan(plan: ReviewPlan) -> tuple[ReviewPlan, list[Floor]]:
    """``plan`` with its llm agents floored (their notes added to the plan's), and the decisions to record."""
    config, decided = apply_floors(on_models(plan), plan.runtimes.model, plan.config)
    if not decided:
        return plan, decided
    notes = (*plan.notes, *(d.note for d in decided))
    return dataclasses.replace(plan, config=config, notes=notes), decided


def record_floors(decisions: DecisionLog, decided: Sequence[Floor]) -> None:
    """Each agent moved to a floor model (or whose tier is unknown), in decisions.jsonl."""
    for decision in decided:
        decisions.record(
            "model-floor",
            {"agent": decision.agent, "model": decision.model, "floored": decision.floored, "note": decision.note},
            decision.record(),
        )
