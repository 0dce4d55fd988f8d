"""Runtimes register by name through the entry-point hook, with checked capabilities."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import ClassVar

import pytest

from fluxdrive.agents import AgentDefinition, builtin_agents
from fluxdrive.config.model import Config
from fluxdrive.errors import UsageError
from fluxdrive.launch.runtimes import RuntimePool
from fluxdrive.runtimes import available, register, runtime_class
from fluxdrive.runtimes.base import AgentResult, AgentTask, Runtime
from fluxdrive.runtimes.cli_agent import CliAgentRuntime
from fluxdrive.runtimes.llm import LlmRuntime
from fluxdrive.runtimes.static import StaticRuntime


def test_static_is_registered_through_its_entry_point() -> None:
    assert available()["static"] is StaticRuntime
    assert StaticRuntime.offline and not StaticRuntime.needs_key


def test_unknown_runtime_suggests_the_closest() -> None:
    with pytest.raises(UsageError) as caught:
        runtime_class("statc")
    assert caught.value.one_line() == "unknown runtime 'statc' (hint: did you mean 'static'?)"


def test_capabilities_are_checked_on_registration() -> None:
    class NeedsKey(Runtime):
        name = "needs-key"
        needs_key = True

        async def run(self, task: AgentTask) -> AgentResult:
            raise NotImplementedError

    with pytest.raises(TypeError, match="names no key_env_var"):
        register(NeedsKey)

    class BadName(Runtime):
        name = "Bad Name"

        async def run(self, task: AgentTask) -> AgentResult:
            raise NotImplementedError

    with pytest.raises(TypeError, match="lowercase identifier"):
        register(BadName)

    class Impostor(Runtime):
        name = "static"

        async def run(self, task: AgentTask) -> AgentResult:
            raise NotImplementedError

    with pytest.raises(TypeError, match="taken by StaticRuntime"):
        register(Impostor)


class _Probe(Runtime):
    """A plugin runtime that records every lifecycle call the review's pool makes."""

    name = "lifecycle-probe"
    calls: ClassVar[list[tuple[str, object]]] = []

    def __init__(self, model: str | None) -> None:
        self.model = model

    @classmethod
    def create(cls, model: str | None = None) -> _Probe:
        cls.calls.append(("create", model))
        return cls(model)

    def check(self, config: Config, root: Path, agent: AgentDefinition | None = None) -> None:
        self.calls.append(("check", agent.name if agent else None))

    async def aclose(self) -> None:
        self.calls.append(("aclose", None))

    def notes(self) -> list[str]:
        return [f"probe ran on {self.model}"]

    async def run(self, task: AgentTask) -> AgentResult:
        raise NotImplementedError


def test_the_pool_drives_any_runtime_through_the_protocols_lifecycle(tmp_path: Path) -> None:
    register(_Probe)
    _Probe.calls.clear()
    config, agents = Config(), builtin_agents()
    pool = RuntimePool("lifecycle-probe", "some:model")
    pool.preflight(config, tmp_path)
    pool.check([agents["fd-safety"], agents["fd-quality"]], config, tmp_path)
    asyncio.run(pool.aclose())
    assert _Probe.calls == [
        ("create", "some:model"),  # once per review, shared by its agents
        ("check", None),
        ("check", "fd-safety"),
        ("check", "fd-quality"),
        ("aclose", None),
    ]
    assert pool.notes() == ["probe ran on some:model"]


def test_lifecycle_defaults_are_no_ops_and_built_ins_take_the_model() -> None:
    static = StaticRuntime.create("ignored:model")
    assert isinstance(static, StaticRuntime) and static.notes() == []
    asyncio.run(static.aclose())
    assert LlmRuntime.create("openai:gpt-4o").default_model == "openai:gpt-4o"
    assert CliAgentRuntime.create("opus").default_model == "opus"
