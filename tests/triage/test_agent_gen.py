"""``fluxdrive agents new``: domain specialists generated from the shipped profiles, on real projects."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fluxdrive.agents import load_roster
from fluxdrive.api import ReviewOptions, run_review
from fluxdrive.cli.examples import clean_copy
from fluxdrive.errors import UsageError
from fluxdrive.triage.agent_gen import NOT_GENERATED, generate_agent
from fluxdrive.triage.domains import load_index
from fluxdrive.triage.profiles import load_profiles
from tests.conftest import run_fluxdrive
from tests.triage.conftest import git

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
DOMAINS = sorted(d for d in load_profiles() if d in load_index() and d not in NOT_GENERATED)


@pytest.mark.parametrize("domain", DOMAINS)
def test_every_domain_gives_an_agent_that_loads(tmp_path: Path, domain: str) -> None:
    roster = load_roster(tmp_path)
    name, text = generate_agent(domain, roster)
    (tmp_path / ".fluxdrive" / "agents").mkdir(parents=True)
    (tmp_path / ".fluxdrive" / "agents" / f"{name}.md").write_text(text)

    agent = load_roster(tmp_path).get(name)

    assert agent.category == "project" and agent.domains == [domain] and agent.needs_model
    assert agent.prefix not in {a.prefix for a in roster.agents.values()}, "its finding ids cannot collide"
    assert "### Findings Index" in agent.instructions, "the shared output contract is included"
    p0 = load_profiles()[domain].review_criteria["P0"]
    assert p0[:60] in agent.instructions


def test_unknown_domains_are_one_line_errors(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="no domain profile 'blockchain'"):
        generate_agent("blockchain", load_roster(tmp_path))


def test_the_cli_writes_agents_for_detected_domains_and_triage_favours_them(tmp_path: Path) -> None:
    project = tmp_path / "api"
    clean_copy(FIXTURES / "worked-examples" / "go-api-plan", project)
    git(project, "init", "-q", "-b", "main")

    first = run_fluxdrive("agents", "new", cwd=project)
    again = run_fluxdrive("agents", "new", cwd=project)

    assert first.code == 0 and first.out.startswith("fd-web-api: wrote ")
    assert again.code == 0 and "exists (pass --force to overwrite)" in again.out
    triage = json.loads(run_fluxdrive("triage", ".", "--yes", "--json", cwd=project).out)
    record = next(a for a in triage["agents"] if a["name"] == "fd-web-api")
    assert record["domain_agent_bonus"] == 1 and record["project_bonus"] == 1


def test_an_offline_review_skips_an_agent_that_needs_a_model(tmp_path: Path) -> None:
    project = tmp_path / "shop"
    clean_copy(FIXTURES / "projects" / "py-webapp", project)
    git(project, "init", "-q", "-b", "main")
    assert run_fluxdrive("agents", "new", "web-api", cwd=project).code == 0

    run = run_review(project, ReviewOptions(yes=True, expand="all", cwd=project))

    assert run.manifest is not None
    record = run.manifest.agents.get("fd-web-api")
    assert record is None or record.outcome == "not-launched"
    assert any(n.startswith("fd-web-api needs a model: not run on the static runtime") for n in run.notes)
    assert not (run.output_dir / "fd-web-api.md").exists()
