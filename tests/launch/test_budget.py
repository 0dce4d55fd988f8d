"""Token budgets before dispatch: which budget applies, how agents are estimated, who may go over.

Real inputs are profiled, a real history database supplies the medians and
real reviews are stopped (or let through) before anything is dispatched.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from fluxdrive.agents import load_roster
from fluxdrive.api import ReviewOptions, run_review
from fluxdrive.config import Config
from fluxdrive.contracts.run_manifest import RunManifest
from fluxdrive.errors import UsageError
from fluxdrive.launch.budget import budget_key, estimate
from fluxdrive.launch.slicing import may_slice
from fluxdrive.runs.history import database_path, estimate_tokens, open_history, record_run
from fluxdrive.triage.profile import build_profile
from fluxdrive.workspace import resolve_target
from tests.conftest import committed_copy

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "projects" / "py-webapp"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return committed_copy(FIXTURE, tmp_path / "shop")


def _diff(lines: int) -> str:
    body = "".join(f"+line {n}\n" for n in range(lines))
    return f"diff --git a/x.py b/x.py\n--- a/x.py\n+++ b/x.py\n@@ -0,0 +1,{lines} @@\n{body}"


def test_the_budget_follows_the_input(project: Path) -> None:
    config = Config()
    plan = project / "docs" / "plan.md"
    plan.parent.mkdir()
    plan.write_text("# Migration plan\n\n## Goals\n\nMove the shop to Postgres.\n\n## Rollout\n\nIn two steps.\n")

    assert budget_key(build_profile(resolve_target(str(project))), config) == "repo"
    assert budget_key(build_profile(resolve_target(str(plan))), config) == "plan"
    assert budget_key(build_profile(resolve_target(str(project / "shop" / "db.py"))), config) == "other"
    small = build_profile(resolve_target("-", stdin_text=_diff(20), cwd=project))
    large = build_profile(resolve_target("-", stdin_text=_diff(1200), cwd=project))
    assert (budget_key(small, config), budget_key(large, config)) == ("diff-small", "diff-large")


def _run(run_id: str, tokens: int) -> RunManifest:
    """A recorded run in which fd-safety on gpt-4o used ``tokens``."""
    return RunManifest.model_validate(
        {
            "schema_version": 1,
            "run_id": run_id,
            "started_at": "2026-11-21T10:00:00.000Z",
            "agents": {
                "fd-safety": {
                    "stage": 1,
                    "outcome": "completed",
                    "provenance": {"provider": "openai", "model_family": "gpt", "model_id": "gpt-4o"},
                    "usage": {"tokens_in": tokens - 500, "tokens_out": 500, "cost_usd": 0.01, "wall_s": 9.0},
                }
            },
        }
    )


def test_estimates_come_from_history_medians_then_defaults(project: Path) -> None:
    config = Config()
    roster = load_roster(project)
    agents = [roster.get("fd-safety"), roster.get("fd-quality"), roster.get("fd-correctness")]
    database = database_path()
    database.parent.mkdir(parents=True, exist_ok=True)
    with open_history(database) as connection:
        for number, tokens in enumerate((10_000, 30_000, 20_000)):
            record_run(connection, _run(f"run{number}", tokens), project=str(project), verdict="safe")

    def past(agent: str, model: str | None, default: int) -> tuple[int, str]:
        with open_history(database) as connection:
            return estimate_tokens(connection, agent, model, default=default)

    runtimes = {"fd-safety": (True, "gpt-4o"), "fd-quality": (False, None), "fd-correctness": (True, "gpt-4o")}
    found = estimate(
        build_profile(resolve_target(str(project))),
        agents,
        config,
        runtime_of=lambda a: runtimes[a.name],
        sliced=lambda name: name == "fd-correctness",
        past=past,
    )

    assert found.per_agent == (
        ("fd-safety", 20_000, "median of 3 past calls"),
        ("fd-quality", 0, "static: no tokens"),
        ("fd-correctness", 20_000, "default, sliced"),  # 40,000 default x 0.5
    )
    assert (found.tokens, found.budget_key, found.budget, found.over) == (40_000, "repo", 300_000, False)


def test_only_long_diffs_and_documents_slice_and_never_cross_cutting_agents(project: Path) -> None:
    config = Config().slicing
    roster = load_roster(project)
    safety, quality = roster.get("fd-safety"), roster.get("fd-quality")
    large = build_profile(resolve_target("-", stdin_text=_diff(1200), cwd=project))
    small = build_profile(resolve_target("-", stdin_text=_diff(20), cwd=project))
    assert may_slice("diff", large, safety, config) and not may_slice("diff", large, quality, config)
    assert not may_slice("diff", small, safety, config)
    assert not may_slice("directory", build_profile(resolve_target(str(project))), safety, config)


def _over_budget(project: Path, answers: list[str]) -> tuple[list[str], ReviewOptions]:
    asked: list[str] = []

    def ask(question: str) -> str:
        asked.append(question)
        return answers.pop(0)

    options = ReviewOptions(
        runtime="llm",
        model="openai:gpt-4o",
        settings={"budget.per_input.repo": 1_000},
        ask=ask,
        say=lambda _line: None,
        cwd=project,
    )
    return asked, options


def test_at_a_terminal_the_person_decides_to_go_over_budget(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-sent-anywhere")
    asked, options = _over_budget(project, ["n"])
    with pytest.raises(UsageError, match="over the repo budget of 1,000"):
        run_review(project, options)
    assert len(asked) == 1 and asked[0].startswith("Over the repo budget (")

    asked, options = _over_budget(project, ["y", "reject"])  # go over, then reject the plan at the gate
    run = run_review(project, options)
    assert run.approved is False and run.synthesis is None
    assert asked[0].startswith("Over the repo budget") and len(asked) == 2
    assert not any(run.output_dir.glob("fd-*.md")), "nothing was dispatched"
