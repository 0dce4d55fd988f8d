"""Which agent reports which analyzer hit, read from the agents' ``static`` sections.

Every hit has exactly one owner so that two agents never "converge" on the
same analyzer output: ruff codes go to the agent with the longest matching
prefix, pattern rules by their first tag (or id), fluxdrive checks by name,
lizard and detect-secrets to the agent that asks for them.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from fluxdrive.agents import AgentDefinition
from fluxdrive.runtimes.static.agent_section import static_section
from fluxdrive.runtimes.static.hits import Claim

ANALYZER_ORDER = ("secrets", "ruff", "patterns", "flows", "lizard", "checks", "architecture")
ARCHITECTURE_CHECKS = frozenset({"import-cycles", "module-fan-in-out", "oversized-module", "layering-rules"})


@dataclass(frozen=True)
class Ownership:
    """The claim table built from a roster."""

    ruff: tuple[tuple[str, str], ...] = ()
    rules: dict[str, str] = field(default_factory=dict)
    checks: dict[str, str] = field(default_factory=dict)
    lizard: str | None = None
    secrets: str | None = None
    conflicts: tuple[str, ...] = ()

    @classmethod
    def from_agents(cls, agents: Iterable[AgentDefinition]) -> Ownership:
        """Build the table; on a clash the alphabetically first agent keeps the claim."""
        ruff: dict[str, str] = {}
        rules: dict[str, str] = {}
        checks: dict[str, str] = {}
        lizard = secrets = None
        conflicts: list[str] = []

        def claim(table: dict[str, str], key: str, agent: str, what: str) -> None:
            if key in table and table[key] != agent:
                conflicts.append(f"{what} {key!r} is claimed by {table[key]} and {agent}; {table[key]} keeps it")
                return
            table[key] = agent

        for agent in sorted(agents, key=lambda a: a.name):
            if agent.kind != "review":
                continue
            section = static_section(agent)
            for prefix in section.ruff:
                claim(ruff, prefix, agent.name, "ruff prefix")
            for key in section.ast_grep:
                claim(rules, key, agent.name, "rule tag")
            for name in section.checks:
                claim(checks, name, agent.name, "check")
            if section.lizard and lizard is None:
                lizard = agent.name
            if section.secrets and secrets is None:
                secrets = agent.name
        ordered = tuple(sorted(ruff.items(), key=lambda item: (-len(item[0]), item[0])))
        return cls(ordered, rules, checks, lizard, secrets, tuple(conflicts))

    def owner(self, claim: Claim, rule_id: str = "") -> str | None:
        """The agent that reports a hit with this claim."""
        if claim.analyzer == "ruff":
            return next((agent for prefix, agent in self.ruff if claim.key.startswith(prefix)), None)
        if claim.analyzer in ("rules", "flows"):
            by_id = self.rules.get(rule_id.split(":", 1)[-1])
            return by_id or self.rules.get(claim.key)
        if claim.analyzer == "fluxdrive":
            return self.checks.get(claim.key)
        if claim.analyzer == "lizard":
            return self.lizard
        if claim.analyzer == "secrets":
            return self.secrets
        return None

    @property
    def ruff_select(self) -> tuple[str, ...]:
        """Every ruff prefix any agent asks for."""
        return tuple(sorted(prefix for prefix, _agent in self.ruff))

    def analyzers_for(self, agent: AgentDefinition) -> tuple[str, ...]:
        """The analyzers whose hits the agent may own (secrets always: it feeds masking)."""
        spec = static_section(agent)
        wanted = {"secrets"}
        if spec.ruff:
            wanted.add("ruff")
        if spec.ast_grep:
            wanted.add("patterns")
            if "security" in spec.ast_grep:
                wanted.add("flows")  # data flow's hits are claimed as security rules
        if spec.lizard:
            wanted.add("lizard")
        if set(spec.checks) - ARCHITECTURE_CHECKS:
            wanted.add("checks")
        if set(spec.checks) & ARCHITECTURE_CHECKS:
            wanted.add("architecture")
        return tuple(name for name in ANALYZER_ORDER if name in wanted)
