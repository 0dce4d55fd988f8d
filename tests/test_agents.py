"""Agent definitions: the built-in roster, project overrides, invalid files."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from fluxdrive.agents import builtin_agents, load_roster
from fluxdrive.errors import AgentDefinitionError

REVIEW = {
    "fd-architecture": "AR",
    "fd-safety": "SF",
    "fd-correctness": "CR",
    "fd-quality": "QS",
    "fd-user-product": "UP",
    "fd-performance": "PF",
    "fd-game-design": "GD",
    "fd-systems": "SY",
    "fd-decisions": "DC",
    "fd-people": "PE",
    "fd-resilience": "RS",
    "fd-perception": "PR",
}
RESEARCH = {"best-practices", "framework-docs", "git-history", "learnings", "repo-research"}

# PROTOCOL.md section 4.9, directed (the seven technical reviewers).
ADJACENCY = {
    "architecture": ["performance", "quality"],
    "correctness": ["safety", "performance"],
    "safety": ["correctness", "architecture"],
    "quality": ["architecture", "user-product"],
    "user-product": ["quality", "game-design"],
    "performance": ["architecture", "correctness"],
    "game-design": ["user-product", "correctness", "performance"],
    # The cognitive reviewers (issue 15; the reference leaves them out of adjacency): our decision.
    "systems": ["architecture", "decisions", "resilience"],
    "decisions": ["architecture", "systems", "user-product"],
    "people": ["user-product", "decisions", "resilience"],
    "resilience": ["correctness", "safety", "systems"],
    "perception": ["user-product", "quality", "decisions"],
}

GOOD = """---
name: fd-api-contract
prefix: AC
description: Checks that the HTTP API keeps its published contract.
domains: [web-api]
concerns: [endpoint, status code, schema]
adjacent: [fd-architecture]
---
You review API contracts. Compare every handler against the OpenAPI document and report
mismatches in status codes, field names and error shapes, with the file and line of each,
and say which client would break and how to fix it without breaking the others.

{{> output-contract}}
"""


def test_builtin_roster_is_complete() -> None:
    agents = builtin_agents()
    assert {n: a.prefix for n, a in agents.items() if a.kind == "review"} == REVIEW
    assert {n for n, a in agents.items() if a.kind == "research"} == RESEARCH
    assert all(a.category == "builtin" and a.origin == "builtin" for a in agents.values())


def test_adjacency_matches_the_protocol() -> None:
    agents = builtin_agents()
    got = {a.short_name: [n.removeprefix("fd-") for n in a.adjacent] for a in agents.values() if a.kind == "review"}
    assert got == ADJACENCY


def test_dropout_exemption_and_cross_cutting() -> None:
    agents = builtin_agents()
    assert {n for n, a in agents.items() if a.exempt_from_dropout} == {
        "fd-safety",
        "fd-correctness",
    }
    assert {n for n, a in agents.items() if a.routing.cross_cutting} == {
        "fd-architecture",
        "fd-quality",
    }
    assert {n for n, a in agents.items() if a.kind == "review" and a.prefilter.always} == {
        "fd-architecture",
        "fd-quality",
        "fd-performance",
    }


@pytest.mark.parametrize("name", sorted(REVIEW))
def test_review_agents_carry_real_instructions(name: str) -> None:
    agent = builtin_agents()[name]
    text = agent.instructions
    for severity in ("P0", "P1", "P2", "P3"):
        assert re.search(rf"\*\*{severity}\*\*|{severity}\b", text), severity
    assert "## Severity guide" in text and "## Focus areas" in text
    assert "### Findings Index" in text, "output contract included"
    assert f"{agent.prefix}-001" in text, "the contract uses the agent's own prefix"
    assert "peer-findings" in text.lower() or "read_peer_findings" in text, "peer checkpoint included"
    leftovers = set(re.findall(r"\{\{\s*([^}]+?)\s*\}\}", text))
    assert leftovers <= {"output_path", "channel_path"}, leftovers
    assert not agent.needs_model
    assert len(agent.concerns) >= 10


@pytest.mark.parametrize("name", sorted(RESEARCH))
def test_research_agents_have_their_contract(name: str) -> None:
    agent = builtin_agents()[name]
    assert "### Sources" in agent.instructions and "### Gaps" in agent.instructions
    offline = {"git-history", "repo-research", "learnings"}
    assert (not agent.needs_model) == (name in offline)


def test_project_agent_is_added_and_overrides_builtin(tmp_path: Path) -> None:
    agents_dir = tmp_path / ".fluxdrive" / "agents"
    agents_dir.mkdir(parents=True)
    (agents_dir / "fd-api-contract.md").write_text(GOOD)
    override = GOOD.replace("fd-api-contract", "fd-quality").replace("prefix: AC", "prefix: QS")
    (agents_dir / "fd-quality.md").write_text(override)
    roster = load_roster(tmp_path)
    added = roster.get("fd-api-contract")
    assert added.category == "project" and added.origin == "project"
    assert "AC-001" in added.instructions
    assert roster.get("fd-quality").origin == "project"
    assert roster.overridden == ("fd-quality",)
    assert list(roster.agents) == sorted(roster.agents)


@pytest.mark.parametrize(
    ("mutate", "field", "problem"),
    [
        (lambda t: t.replace("---\nname", "name", 1), None, "no YAML front matter"),
        (
            lambda t: t.replace("concerns: [endpoint, status code, schema]", "concerns: [unclosed"),
            None,
            "invalid YAML front matter at line",
        ),
        (lambda t: t.replace("prefix: AC\n", ""), "prefix", "Field required"),
        (lambda t: t.replace("prefix: AC", "prefix: acx"), "prefix", "String should match pattern"),
        (
            lambda t: t.replace("name: fd-api-contract", "name: fd-other"),
            "name",
            "does not match the file name",
        ),
        (
            lambda t: t.replace("domains: [web-api]", "domains: [web-api]\ncolour: blue"),
            "colour",
            "Extra inputs are not permitted",
        ),
        (
            lambda t: t.replace("[fd-architecture]", "[fd-nobody]"),
            "adjacent",
            "unknown agent 'fd-nobody'",
        ),
        (
            lambda t: t.replace("prefix: AC", "prefix: SF"),
            "prefix",
            "'SF' is already used by fd-safety",
        ),
        (lambda t: t.replace("output-contract", "no-such-partial"), "body", "unknown partial"),
        (
            lambda t: t.split("\n---\n", 1)[0] + "\n---\nToo short.\n",
            "body",
            "at least 200 characters",
        ),
    ],
)
def test_invalid_definition_names_file_and_field(tmp_path: Path, mutate, field: str | None, problem: str) -> None:  # type: ignore[no-untyped-def]
    agents_dir = tmp_path / ".fluxdrive" / "agents"
    agents_dir.mkdir(parents=True)
    path = agents_dir / "fd-api-contract.md"
    path.write_text(mutate(GOOD))
    with pytest.raises(AgentDefinitionError) as caught:
        load_roster(tmp_path)
    error = caught.value
    assert error.path == str(path)
    assert error.field == field
    assert problem in error.problem
    assert "\n" not in error.one_line()


def test_non_utf8_definition(tmp_path: Path) -> None:
    agents_dir = tmp_path / ".fluxdrive" / "agents"
    agents_dir.mkdir(parents=True)
    (agents_dir / "fd-x.md").write_bytes(b"---\nname: fd-x\n\xff\n---\n")
    with pytest.raises(AgentDefinitionError, match="not UTF-8"):
        load_roster(tmp_path)


def test_cli_list_and_show(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    listing = cli("agents", "list", "--project", tmp_path)
    assert listing.code == 0
    names = [line.split()[0] for line in listing.out.splitlines()[1:]]
    assert names[:12] == sorted(REVIEW) and sorted(names[12:]) == sorted(RESEARCH)
    data = json.loads(cli("agents", "list", "--project", tmp_path, "--json").out)
    assert len(data["agents"]) == 17
    shown = cli("agents", "show", "fd-safety", "--project", tmp_path)
    assert shown.code == 0 and "prefix: SF" in shown.out and "## Severity guide" in shown.out
    typo = cli("agents", "show", "fd-saftey", "--project", tmp_path)
    assert typo.code == 2
    assert typo.err == "fluxdrive: error: unknown agent 'fd-saftey' (hint: did you mean 'fd-safety'?)\n"


def test_cli_bad_project_agent_is_one_line(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    agents_dir = tmp_path / ".fluxdrive" / "agents"
    agents_dir.mkdir(parents=True)
    (agents_dir / "fd-api-contract.md").write_text(GOOD.replace("prefix: AC\n", ""))
    result = cli("agents", "list", "--project", tmp_path)
    assert result.code == 2
    assert result.err == f"fluxdrive: error: {agents_dir / 'fd-api-contract.md'}: field 'prefix': Field required\n"
