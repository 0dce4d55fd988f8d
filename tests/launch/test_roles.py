"""Model roles (issue 31, item 2): families, tiers, and the floor an agent's model may not go below.

Pure units over the shipped agent-roles.yaml and typed config; the end-to-end floor (a real review whose
fd-safety is moved to its floor model) is in tests/launch/test_validation.py.
"""

from __future__ import annotations

import pytest

from fluxdrive.config.model import AgentRuntime, Config, RolesConfig
from fluxdrive.errors import UsageError
from fluxdrive.launch.roles import UNKNOWN, apply_floors, below, family_of, floor, role_table, tier_of


@pytest.mark.parametrize(
    ("model", "family"),
    [
        ("anthropic:claude-sonnet-4-6", "anthropic"),
        ("claude-haiku-4-5", "anthropic"),
        ("openai:gpt-4o-mini", "openai"),
        ("openai:o3-mini", "openai"),
        ("openrouter:openai/gpt-5", "openai"),
        ("openai:llama3.1", "llama"),  # an OpenAI-compatible server does not make a model OpenAI's
        ("ollama:qwen2.5-coder:32b", "qwen"),
    ],
)
def test_family_is_the_models_not_the_endpoints(model: str, family: str) -> None:
    assert family_of(model) == family


@pytest.mark.parametrize(
    ("model", "tier"),
    [
        ("anthropic:claude-haiku-4-5", "small"),
        ("anthropic:claude-sonnet-4-6", "standard"),
        ("anthropic:claude-opus-4-1", "frontier"),
        ("openai:gpt-4o-mini", "small"),  # the longest prefix wins over gpt-4o
        ("openai:gpt-4o", "standard"),
        ("openai:gpt-5-mini", "small"),
        ("openai:gpt-5", "frontier"),
        ("openai:test-model", UNKNOWN),
        ("ollama:qwen2.5-coder", UNKNOWN),
    ],
)
def test_tiers_by_longest_prefix(model: str, tier: str) -> None:
    assert tier_of(model) == tier


def test_tier_order_and_unknown_is_never_below() -> None:
    assert below("small", "standard") and below("standard", "frontier")
    assert not below("standard", "standard") and not below("frontier", "small")
    assert not below(UNKNOWN, "frontier")


def test_roles_are_documented_and_floor_agents_are_challengers() -> None:
    table = role_table()
    assert set(table.roles) == {"reviewer", "checker", "challenger"}
    assert all(role.description for role in table.roles.values())
    assert table.role_of("fd-safety").name == "challenger" and table.role_of("fd-quality").name == "reviewer"


def test_a_floor_agent_below_its_floor_runs_on_the_floor_model() -> None:
    decided = floor("fd-correctness", "anthropic:claude-haiku-4-5", Config())
    assert decided.floored and decided.model == "anthropic:claude-sonnet-4-6"
    assert (decided.role, decided.tier, decided.minimum) == ("challenger", "small", "standard")
    assert "below the challenger floor (standard)" in decided.note
    kept = floor("fd-quality", "anthropic:claude-haiku-4-5", Config())  # a reviewer may be small
    assert not kept.floored and kept.note == ""
    frontier = Config(roles=RolesConfig(floor="frontier", floor_model={"default": "openai:gpt-5"}))
    assert floor("fd-safety", "openai:gpt-4o", frontier).model == "openai:gpt-5"


def test_an_unknown_tier_is_noted_not_floored() -> None:
    decided = floor("fd-safety", "openai:test-model", Config())
    assert not decided.floored and "is unknown" in decided.note


def test_no_floor_model_refuses_with_how_to_fix_it() -> None:
    config = Config(roles=RolesConfig(floor_model={}))
    with pytest.raises(UsageError) as raised:
        floor("fd-safety", "openai:gpt-4o-mini", config)
    assert "fd-safety may not run on openai:gpt-4o-mini" in raised.value.one_line()
    assert "roles.floor_model.openai" in raised.value.one_line()


def test_apply_floors_overrides_only_the_floored_agents() -> None:
    config = Config(agents={"fd-safety": AgentRuntime(runtime="llm")})
    floored, decided = apply_floors({"fd-safety": None, "fd-quality": None}, "openai:gpt-4o-mini", config)
    assert [d.agent for d in decided] == ["fd-safety"]
    assert floored.agents["fd-safety"] == AgentRuntime(runtime="llm", model="openai:gpt-4o")
    assert "fd-quality" not in floored.agents
    same, none = apply_floors({"fd-safety": "anthropic:claude-opus-4-1"}, None, config)
    assert same is config and none == []
