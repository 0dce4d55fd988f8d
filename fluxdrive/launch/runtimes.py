"""Which runtime runs which agent, in one review (mixed runs: static, llm, cli-agent side by side).

Precedence, most specific first: ``[agents.<name>] runtime = ...`` in config,
the agent definition's ``runtime:``, then ``--runtime`` (default ``static``).
Each runtime is created once per review (``Runtime.create(model)``) and
shared by its agents (the llm runtime's HTTP clients and rate-limit state
are per review); its lifecycle (check, aclose, notes) is the protocol's, so
the pool never asks which runtime it holds. Model strings
API keys and CLI executables are checked for every agent before anything is
dispatched, so a missing key or CLI is one line and exit 2, not seven error
stubs.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from fluxdrive.agents import AgentDefinition
from fluxdrive.config.model import Config
from fluxdrive.runtimes import Backend, Runtime, runtime_class
from fluxdrive.runtimes.llm.spend import SpendMeter


@dataclass
class RuntimePool:
    """The runtimes of one review."""

    default: str | Runtime = "static"
    model: str | None = None
    backend: Backend | None = None  # None: every runtime runs its agents in this process
    meter: SpendMeter | None = None  # the run's money meter: every runtime made here charges it
    _made: dict[str, Runtime] = field(default_factory=dict)

    def bind_meter(self, meter: SpendMeter) -> None:
        """Charge every runtime of this review, made now or later, to ``meter`` (``budget.max_usd``)."""
        self.meter = meter
        for runtime in self._made.values():
            runtime.bind_meter(meter)

    def use(self, backend: Backend) -> None:
        """Run on ``backend`` from now on; each runtime decides what it distributes there
        (:meth:`~fluxdrive.runtimes.Runtime.distribute`)."""
        self.backend = backend
        self._made = {name: runtime.distribute(backend, self.model) for name, runtime in self._made.items()}

    def name_for(self, agent: AgentDefinition, config: Config) -> str:
        """The runtime name that runs ``agent``."""
        override = config.agents.get(agent.name)
        if override is not None and override.runtime:
            return override.runtime
        if agent.runtime:
            return agent.runtime
        return self.default.name if isinstance(self.default, Runtime) else self.default

    def get(self, name: str) -> Runtime:
        """The review's instance of runtime ``name``."""
        if name not in self._made:
            if isinstance(self.default, Runtime) and self.default.name == name:
                made = self.default
            else:
                made = runtime_class(name).create(self.model)
            self._made[name] = made if self.backend is None else made.distribute(self.backend, self.model)
            if self.meter is not None:
                self._made[name].bind_meter(self.meter)
        return self._made[name]

    def for_agent(self, agent: AgentDefinition, config: Config) -> Runtime:
        """The runtime instance that runs ``agent``."""
        return self.get(self.name_for(agent, config))

    def preflight(self, config: Config, root: Path) -> None:
        """Check the default runtime before anything is written (a missing key or CLI: one line, exit 2)."""
        self.get(self.default.name if isinstance(self.default, Runtime) else self.default).check(config, root)

    def check(self, agents: Iterable[AgentDefinition], config: Config, root: Path) -> None:
        """Resolve every agent's runtime now: unknown runtimes, models, missing keys and CLIs fail here."""
        for agent in agents:
            self.for_agent(agent, config).check(config, root, agent)

    @property
    def offline(self) -> bool:
        """True when every runtime used so far works without the network."""
        return all(r.offline for r in self._made.values()) if self._made else True

    @property
    def names(self) -> list[str]:
        """Runtimes in use, sorted."""
        return sorted(self._made)

    def provenance_label(self) -> str:
        """``static`` or ``static+llm`` for run records."""
        return "+".join(self.names) or (self.default if isinstance(self.default, str) else self.default.name)

    async def aclose(self) -> None:
        """Release what runtimes hold (HTTP clients)."""
        for runtime in self._made.values():
            await runtime.aclose()

    def notes(self) -> list[str]:
        """What runtimes want recorded (e.g. a concurrency cap lowered by rate limiting)."""
        return [note for runtime in self._made.values() for note in runtime.notes()]

    def placement(self) -> list[str]:
        """Where the runtimes' work ran (a cluster's nodes), for run.json."""
        return [line for runtime in self._made.values() for line in runtime.placement()]
