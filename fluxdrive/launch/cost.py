"""The up-front estimate in money, per agent and per phase, against the hard ceiling (``budget.max_usd``).

The token estimate (:mod:`fluxdrive.launch.budget`) says how much a review
will read and write; a person deciding whether to run it wants dollars.
Each agent's tokens are priced at its model's ``llm.prices`` through the
runtime's own :func:`~fluxdrive.runtimes.llm.runtime.cost_of`, so the
estimate and the bill use one table. History records an agent's tokens as
one number, so the split is an assumption: :data:`OUTPUT_SHARE` of them are
output (a reviewer reads far more than it writes; output is the dearer
side, so a larger share would only raise the estimate).

Phases are a name -> amount mapping: ``stage1`` and ``stage2`` from the
plan, and any later phase (the reaction round, validation) adds itself with
:meth:`CostEstimate.with_phase` without this module knowing it. Over the
cap, the review stops before dispatch; ``--over-budget`` lifts the token
budget only, never the money ceiling.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from fluxdrive.config.model import Config
from fluxdrive.errors import UsageError
from fluxdrive.launch.budget import Estimate
from fluxdrive.runs.decisions import DecisionLog
from fluxdrive.runtimes.llm.models import ModelSpec
from fluxdrive.runtimes.llm.runtime import cost_of
from fluxdrive.runtimes.llm.spend import SpendMeter, Stop

OUTPUT_SHARE = 0.2  # of an agent's estimated tokens, the share assumed to be output


@dataclass(frozen=True, slots=True)
class AgentCost:
    """One agent's expected tokens and dollars, and the phase it runs in."""

    agent: str
    phase: str
    model: str | None
    tokens: int
    usd: float
    source: str


@dataclass(frozen=True)
class CostEstimate:
    """What a review is expected to cost, by agent and by phase, and the cap it must stay under."""

    agents: tuple[AgentCost, ...]
    cap: float | None
    extra: Mapping[str, tuple[int, float]] = field(default_factory=dict)  # phase -> (tokens, usd) added later
    unpriced: tuple[str, ...] = ()  # models llm.prices does not list (priced at 0)

    @property
    def phases(self) -> dict[str, dict[str, float | int]]:
        """Phase name -> tokens and dollars, stage 1 first."""
        out: dict[str, dict[str, float | int]] = {}
        for row in self.agents:
            phase = out.setdefault(row.phase, {"tokens": 0, "usd": 0.0})
            phase["tokens"] = int(phase["tokens"]) + row.tokens
            phase["usd"] = round(float(phase["usd"]) + row.usd, 6)
        for name, (tokens, usd) in self.extra.items():
            out[name] = {"tokens": tokens, "usd": round(usd, 6)}
        return out

    @property
    def tokens(self) -> int:
        """Every phase's tokens."""
        return sum(int(p["tokens"]) for p in self.phases.values())

    @property
    def usd(self) -> float:
        """Every phase's dollars."""
        return round(sum(float(p["usd"]) for p in self.phases.values()), 6)

    @property
    def over(self) -> bool:
        """True when the estimate alone passes the cap."""
        return self.cap is not None and self.usd > self.cap

    def with_phase(self, name: str, tokens: int, usd: float) -> CostEstimate:
        """This estimate with one more phase (the reaction round, validation)."""
        return dataclasses.replace(self, extra={**self.extra, name: (tokens, usd)})

    def line(self) -> str:
        """One line before dispatch."""
        phases = ", ".join(f"{name} ${float(p['usd']):.4f}" for name, p in self.phases.items())
        cap = f"cap ${self.cap:.4f} (budget.max_usd)" if self.cap is not None else "no cap (budget.max_usd)"
        unpriced = f"; no price for {', '.join(self.unpriced)}: counted as $0" if self.unpriced else ""
        return f"Cost: about ${self.usd:.4f} estimated ({phases or 'nothing paid'}), {cap}{unpriced}"

    def record(self) -> dict[str, Any]:
        """triage.json's ``estimate`` object and the cost-estimate decision's inputs."""
        return {
            "agents": [
                {
                    "agent": a.agent,
                    "phase": a.phase,
                    "model": a.model,
                    "tokens": a.tokens,
                    "usd": a.usd,
                    "source": a.source,
                }
                for a in self.agents
            ],
            "phases": self.phases,
            "total": {"tokens": self.tokens, "usd": self.usd},
            "cap_usd": self.cap,
            "output_share": OUTPUT_SHARE,
        }


def usd(config: Config, model: str | None, tokens: int) -> tuple[float, bool]:
    """Dollars for ``tokens`` on ``model`` (split by :data:`OUTPUT_SHARE`), and whether the model has a price."""
    provider, _sep, name = (model or "").partition(":")
    if not tokens or not name:
        return 0.0, True
    tokens_out = round(tokens * OUTPUT_SHARE)
    cost, missing = cost_of(config, ModelSpec(provider, name, None, None, None), tokens - tokens_out, tokens_out)
    return cost, missing is None


def money(
    found: Estimate, config: Config, phase_of: Callable[[str], str], model_of: Callable[[str], str | None]
) -> CostEstimate:
    """The token estimate ``found`` in dollars (``phase_of``/``model_of``: each agent's phase and model)."""
    rows, unpriced = [], []
    for agent, tokens, source in found.per_agent:
        model = model_of(agent) if tokens else None
        cost, priced = usd(config, model, tokens)
        if not priced and model is not None:
            unpriced.append(model)
        rows.append(AgentCost(agent, phase_of(agent), model, tokens, cost, source))
    return CostEstimate(tuple(rows), config.budget.max_usd, unpriced=tuple(dict.fromkeys(unpriced)))


def refuse_over_cap(found: CostEstimate) -> None:
    """Stop before dispatch when the estimate alone passes the cap (one line, exit 2; ``--over-budget`` does not
    lift it)."""
    if found.over and found.cap is not None:
        raise UsageError(
            f"the planned agents would cost about ${found.usd:.4f}, over the cost ceiling of ${found.cap:.4f}",
            hint="raise budget.max_usd or --max-cost, or review with fewer --agents (--over-budget does not lift it)",
        )


def record_decision(found: CostEstimate, log: DecisionLog) -> None:
    """decisions.jsonl: the estimate against the cap, and whether the review went on."""
    log.record("cost-estimate", {"within_cap": not found.over, "dispatch": not found.over}, found.record())


def plan_cost(
    found: Estimate,
    config: Config,
    phase_of: Callable[[str], str],
    model_of: Callable[[str], str | None],
    log: DecisionLog,
) -> CostEstimate:
    """The plan's money estimate; over the cap, the decision is recorded and the review stops here."""
    cost = money(found, config, phase_of, model_of)
    if cost.over:  # the run's directory is claimed, not yet made: the refusal is its one record
        log.path.parent.mkdir(parents=True, exist_ok=True)
        record_decision(cost, log)
    refuse_over_cap(cost)
    return cost


def run_meter(config: Config, log: DecisionLog) -> SpendMeter:
    """The run's money meter on ``budget.max_usd``; each agent it stops is a cost-ceiling decision."""

    def stopped(stop: Stop) -> None:
        log.record(
            "cost-ceiling",
            {"agent": stop.agent, "stopped": True, "reason": stop.reason},
            {"spent_usd": stop.spent, "cap_usd": stop.cap, "worst_case_usd": stop.worst_case},
        )

    return SpendMeter(config.budget.max_usd, on_stop=stopped)
