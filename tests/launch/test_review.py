"""A whole review through the library: real triage, real static analyzers or the scripted runtime, real files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fluxdrive.api import ReviewOptions, ReviewRun, run_review
from fluxdrive.contracts import OutputStatus, classify_output
from fluxdrive.contracts.run_manifest import load_manifest
from fluxdrive.errors import InputError, UsageError
from fluxdrive.launch.progress import Recorder
from fluxdrive.runtimes import AgentTask
from fluxdrive.runtimes.testing import (
    CLEAN,
    Crash,
    FunctionRuntime,
    Garbage,
    Hang,
    Report,
    ScriptedRuntime,
    findings_report,
)
from fluxdrive.workspace import BusyError, claim_output_dir, run_lock
from tests.conftest import committed_copy, hold_lock

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "projects" / "py-webapp"
# Triage of the fixture, staged (tests/triage covers why): a web-api project where four agents score 5 and take
# Stage 1; fd-performance (4) and fd-architecture (3) wait in Stage 2.
STAGE1 = ["fd-correctness", "fd-quality", "fd-safety", "fd-user-product"]
STAGE2 = ["fd-architecture", "fd-performance"]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return committed_copy(FIXTURE, tmp_path / "shop")


def _review(root: Path, **options: object) -> ReviewRun:
    """A review with the protocol's two stages (``selection.staging = always``): these tests are about them.

    Offline, the cost model would run every candidate in Stage 1 (tests/launch/test_never_hide.py).
    """
    options.setdefault("settings", {"selection.staging": "always"})
    settings = ReviewOptions(cwd=root, output_dir=root / "out", **options)  # type: ignore[arg-type]
    return run_review(".", settings)


def _reports(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.glob("*.md") if p.name not in ("summary.md", "triage-table.md"))


def test_static_review_end_to_end(project: Path) -> None:
    progress = Recorder()
    run = _review(project, yes=True, progress=progress)
    out = project / "out"
    assert run.synthesis is not None and run.synthesis.verdict == "risky"
    manifest = load_manifest(out)
    assert manifest is not None and manifest.stages[0].agents == STAGE1
    # fd-performance: fd-correctness (adjacent) found P1s and the input shows its lane (loops); fd-architecture
    # has neither, so it is not recommended.
    assert manifest.launched == sorted([*STAGE1, "fd-performance"])
    assert [(s.stage, s.launched) for s in manifest.stages] == [(1, True), (2, True), (2, False)]
    assert not manifest.early_stop and manifest.skipped == ["fd-architecture"]
    assert _reports(out) == [f"{a}.md" for a in manifest.launched], "exactly one report per launched agent"
    for agent in manifest.launched:
        prompt = (out / "prompts" / f"{agent}.md").read_text()
        assert prompt.startswith(f"# Review task for {agent}")
        assert str(out / f"{agent}.md") in prompt and "{{" not in prompt
        assert manifest.agents[agent].provenance is not None
        assert manifest.agents[agent].provenance.provider == "static"
    data = json.loads((out / "run.json").read_text())
    assert set(data["phases"]) >= {"triage", "stage1", "research", "stage2", "synthesis", "total"}
    assert data["expansion"]["kind"] == "recommend" and data["expansion"]["chosen"] == ["fd-performance"]
    assert "by fd-correctness (adjacent)" in data["expansion"]["message"]
    assert "the input shows its lane (for )" in data["expansion"]["message"]
    assert data["agents"]["fd-architecture"]["outcome"] == "not-launched"
    assert (out / "findings.json").is_file() and (out / "summary.md").is_file() and (out / "findings.sarif").is_file()
    phases = [e[1] for e in progress.events if e[0] == "phase"]
    assert any(p.startswith("Expansion decision:") for p in phases), "the decision is always shown"
    assert any(p.startswith("Dropout (redundancy after Stage 1):") for p in phases)
    assert {row["agent"] for row in data["dropout"]["rows"]} == set(STAGE2)
    assert not any(row["dropped"] for row in data["dropout"]["rows"]), "an agent whose lane the input shows stays"


def test_expand_none_stops_after_stage1(project: Path) -> None:
    run = _review(project, yes=True, expand="none")
    assert run.synthesis is not None
    assert run.synthesis.early_stop and run.synthesis.skipped_agents == STAGE2
    assert run.manifest is not None and run.manifest.agents["fd-performance"].outcome == "not-launched"
    assert not (project / "out" / "fd-performance.md").exists()


def test_faults_become_stubs_and_prose(project: Path) -> None:
    runtime = ScriptedRuntime(
        {"fd-safety": [Crash("provider exploded")], "fd-quality": [Hang()], "fd-correctness": [Garbage()]}
    )
    run = _review(project, yes=True, expand="none", runtime=runtime, timeout_s=0.3)
    out = project / "out"
    assert _reports(out) == [f"{a}.md" for a in STAGE1]
    assert classify_output(out / "fd-safety.md").status is OutputStatus.ERROR
    assert "provider exploded" in classify_output(out / "fd-safety.md").reason
    assert "timed out after 0.3 s" in classify_output(out / "fd-quality.md").reason
    assert classify_output(out / "fd-correctness.md").status is OutputStatus.MALFORMED
    assert run.synthesis is not None
    assert run.synthesis.agents_failed == ["fd-quality", "fd-safety"]
    assert "1/3 agents" not in run.synthesis.validation_line
    assert run.manifest is not None and run.manifest.agents["fd-quality"].outcome == "timeout"
    assert [c.agent for c in runtime.calls].count("fd-safety") == 2, "retried once"


def test_research_feeds_stage2(project: Path) -> None:
    safety = findings_report(
        "SF",
        (
            "P0",
            "shop/db.py",
            "SQL built with % formatting; the usual best practice is a parameterized query",
            "shop/db.py:15",
        ),
    )
    runtime = ScriptedRuntime({"fd-safety": [Report(safety)]})
    run = _review(project, yes=True, runtime=runtime)
    out = project / "out"
    assert run.manifest is not None and run.manifest.research
    answered = [r for r in run.manifest.research if r.status == "completed"]
    assert answered and all((out / str(r.output)).is_file() for r in answered)
    # fd-performance has direct evidence in the input: it is recommended, and reads Stage 1 and the research.
    assert "fd-performance" in run.manifest.stages[1].agents and run.manifest.stages[1].launched
    prompt = (out / "prompts" / "fd-performance.md").read_text()
    assert "## Stage 1 findings" in prompt and "SQL built with % formatting" in prompt
    assert "## Research results" in prompt and "### Sources" in prompt


def test_explicit_agents(project: Path) -> None:
    run = _review(project, yes=True, agents=["fd-safety", "performance"], runtime=ScriptedRuntime())
    assert run.manifest is not None
    assert sorted(run.manifest.agents) == ["fd-performance", "fd-safety"]
    with pytest.raises(UsageError, match="research agent"):
        _review(project, yes=True, agents=["git-history"])


def test_interactive_gate_and_expansion_through_ask(project: Path) -> None:
    answers = iter(["demote fd-safety", "approve", "all"])
    asked: list[str] = []

    def ask(prompt: str) -> str:
        asked.append(prompt)
        return next(answers)

    said: list[str] = []
    run = _review(project, ask=ask, say=said.append, runtime=ScriptedRuntime())
    assert run.manifest is not None
    assert "fd-safety" not in run.manifest.stages[0].agents
    assert asked[-1].startswith("Launch Stage 2? [")
    planned = json.loads((project / "out" / "triage.json").read_text())["stages"]["2"]
    assert "fd-safety" in planned
    assert sorted(run.manifest.launched) == sorted([*run.manifest.stages[0].agents, *planned])


def test_non_interactive_review_must_choose(project: Path) -> None:
    with pytest.raises(UsageError, match="non-interactive review must choose how to expand"):
        _review(project)
    with pytest.raises(UsageError, match="no terminal to ask in"):
        _review(project, expand="none")


def test_rejected_at_the_gate_dispatches_nothing(project: Path) -> None:
    run = _review(project, ask=lambda prompt: "reject", say=lambda text: None)
    assert not run.approved and run.synthesis is None
    assert _reports(project / "out") == []
    assert not (project / "out" / ".fluxdrive.lock").exists()


def test_input_that_changes_during_the_run_is_noted(project: Path) -> None:
    def edit_while_reviewing(task: AgentTask) -> str:
        if task.agent.name == "fd-quality":
            (project / "shop" / "models.py").write_text("# rewritten while the review ran\n")
        return CLEAN

    run = _review(project, yes=True, expand="none", runtime=FunctionRuntime(edit_while_reviewing))
    assert any("the input changed while the agents ran" in n for n in run.notes)
    assert run.synthesis is not None and any("the input changed" in n for n in run.synthesis.notes)


def test_a_second_run_on_the_same_output_dir_is_refused(project: Path) -> None:
    out = project / "out"
    with run_lock(claim_output_dir(out)):  # an earlier run: out is now the link fluxdrive swings to each run
        pass
    with hold_lock(out) as holder, pytest.raises(BusyError, match=f"pid {holder.pid}"):
        _review(project, yes=True)
    assert not list(out.glob("*.md")), "nothing was written beside the live run"


def test_unwritable_output_directory(project: Path) -> None:
    blocker = project / "not-a-dir"
    blocker.write_text("a file where the output directory should go\n")
    with pytest.raises(InputError, match="cannot create output directory"):
        run_review(".", ReviewOptions(cwd=project, output_dir=blocker / "out", yes=True))


def test_diff_review_reports_only_changed_lines(project: Path) -> None:
    routes = project / "shop" / "routes.py"
    routes.write_text(routes.read_text() + "\n\ndef ping(host):\n    import os\n    return os.system('ping ' + host)\n")
    run = run_review(None, ReviewOptions(cwd=project, diff_ref="HEAD", yes=True, expand="none"))
    assert run.synthesis is not None
    locations = [loc for f in run.synthesis.findings for loc in f.locations]
    assert locations and all(loc.startswith("shop/routes.py:") for loc in locations)
    first_new = len(routes.read_text().splitlines()) - 3
    assert all(int(loc.split(":")[1]) >= first_new for loc in locations), locations


def test_library_one_call(project: Path) -> None:
    import fluxdrive
    from fluxdrive.errors import ReviewError

    result = fluxdrive.review("shop/db.py", fluxdrive.ReviewOptions(cwd=project, yes=True, expand="none"))
    assert result.verdict == "risky" and any(f.locations[0].startswith("shop/db.py:") for f in result.findings)
    options = fluxdrive.ReviewOptions(cwd=project, ask=lambda prompt: "reject", say=lambda text: None)
    with pytest.raises(ReviewError, match="rejected at the approval gate"):
        fluxdrive.review(".", options)
