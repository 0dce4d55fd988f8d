"""Token budgets, soft-enforced before anything is dispatched.

Each input type has a budget (config ``budget.per_input``: plan, brainstorm,
prd, spec, diff-small, diff-large, repo, other). Before Stage 1 starts, the
planned agents' tokens are estimated - the median of the agent's past calls
on the same model from the history database, else the configured default,
halved-ish (``slicing_multiplier``) for agents that receive a slice - and
agents on a runtime that spends no tokens (the offline static runtime) cost nothing. Over budget, the review
stops with the numbers and asks for ``--over-budget``; it never spends
silently.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from fluxdrive.agents import AgentDefinition
from fluxdrive.config.model import Config
from fluxdrive.triage.profile import InputProfile

DOCUMENT_BUDGETS = ("plan", "brainstorm", "prd", "spec")


@dataclass(frozen=True, slots=True)
class Estimate:
    """What the planned agents are expected to cost, against the input's budget."""

    budget_key: str
    budget: int
    tokens: int
    per_agent: tuple[tuple[str, int, str], ...]  # (agent, tokens, where the number comes from)

    @property
    def over(self) -> bool:
        """True when the estimate exceeds the budget."""
        return self.tokens > self.budget

    def line(self) -> str:
        """One line for the log."""
        state = "over" if self.over else "within"
        return (
            f"Budget: about {self.tokens:,} tokens estimated, {state} the {self.budget_key} budget of {self.budget:,}"
        )


def budget_key(profile: InputProfile, config: Config) -> str:
    """Which budget applies to this input."""
    if profile.kind == "directory":
        return "repo"
    if profile.kind == "diff":
        changed = profile.diff.changed if profile.diff else 0
        return "diff-large" if changed >= config.ceiling.diff_large_lines else "diff-small"
    if profile.document_type in DOCUMENT_BUDGETS:
        return str(profile.document_type)
    return "other"


def estimate(
    profile: InputProfile,
    agents: list[AgentDefinition],
    config: Config,
    *,
    runtime_of: Callable[[AgentDefinition], tuple[bool, str | None]],
    sliced: Callable[[str], bool],
    past: Callable[[str, str | None, int], tuple[int, str]],
) -> Estimate:
    """Estimate the planned agents' tokens (``runtime_of``: whether each agent's runtime costs tokens, and its
    model)."""
    key = budget_key(profile, config)
    rows = []
    for agent in agents:
        costs_tokens, model = runtime_of(agent)
        if not costs_tokens:
            rows.append((agent.name, 0, "static: no tokens"))
            continue
        default = config.budget.review_agent_default if agent.kind == "review" else config.budget.research_agent_default
        tokens, source = past(agent.name, model, default)
        if sliced(agent.name):
            tokens = int(tokens * config.budget.slicing_multiplier)
            source += ", sliced"
        rows.append((agent.name, tokens, source))
    budget = config.budget.per_input.get(key, config.budget.per_input.get("other", 150_000))
    return Estimate(key, budget, sum(t for _a, t, _s in rows), tuple(rows))
