"""Runtimes register by name through the entry-point hook, with checked capabilities."""

from __future__ import annotations

import pytest

from fluxdrive.errors import UsageError
from fluxdrive.runtimes import available, register, runtime_class
from fluxdrive.runtimes.base import AgentResult, AgentTask, Runtime
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
