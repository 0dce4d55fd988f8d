"""Protocol conformance left over from the seeds (issue 31, item 7), on real projects and real processes.

- The MCP server serves the seeds' ``fetch_peer_findings`` and keeps
  ``peer_findings`` as an alias: both listed, both answering the same, through
  the MCP SDK's own client over stdio.
- Every multi-agent dispatch writes its write-behind verdict records
  (PROTOCOL.md section 11): the review, the research command, the research
  between review stages, the quality gate and the knowledge base's
  inquisitors. Each is run for real (offline runtimes) and its records are
  read back with the one reader, ``RunDirectory(...).verdicts()``, or the
  ``fluxdrive verdicts`` command.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from fluxdrive import api
from fluxdrive.exchange.channel import append
from fluxdrive.exchange.verdicts import VerdictSet
from fluxdrive.kb import analyze, process_queue, remember
from fluxdrive.kb.analysis import ANALYSIS_DIR
from fluxdrive.launch.research import Trigger, run_research
from fluxdrive.research import research
from fluxdrive.runs.directory import RunDirectory
from tests.conftest import committed_copy, run_fluxdrive

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "projects" / "py-webapp"
FLUXDRIVE = Path(sys.executable).parent / "fluxdrive"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return committed_copy(FIXTURE, tmp_path / "shop")


def _details_exist(output_dir: Path, found: VerdictSet) -> None:
    """Every record is readable and points at a file that exists in its output directory."""
    assert not found.problems, found.problems
    for record in found.records:
        assert record.status in ("CLEAN", "NEEDS_ATTENTION", "ERROR")
        assert record.detail_path and (output_dir / record.detail_path).is_file(), record


# --- MCP: fetch_peer_findings and its alias --------------------------------------------------------------


def test_fetch_peer_findings_is_served_and_peer_findings_is_an_alias(project: Path) -> None:
    run = project / "runs" / "r1"
    run.mkdir(parents=True)
    channel = run / "peer-findings.jsonl"
    append(channel, "blocking", "fd-safety", "injection", "SQL built by concatenation", ["shop/db.py:12"])
    append(channel, "notable", "fd-quality", "naming", "find_user shadows a builtin name")
    tools: dict[str, Any] = {}
    answers: dict[tuple[str, str], tuple[bool, str]] = {}

    async def go() -> None:
        params = StdioServerParameters(command=str(FLUXDRIVE), args=["mcp"], cwd=str(project))
        async with Client(params, read_timeout_seconds=60) as client:
            tools.update({tool.name: tool for tool in (await client.list_tools()).tools})
            for name in ("fetch_peer_findings", "peer_findings"):
                for severity in ("all", "blocking"):
                    result = await client.call_tool(name, {"output_dir": "runs/r1", "severity": severity})
                    text = "".join(getattr(part, "text", "") for part in result.content)
                    answers[(name, severity)] = (bool(result.is_error), text)
                result = await client.call_tool(name, {"output_dir": "nowhere"})
                answers[(name, "missing")] = (
                    bool(result.is_error),
                    "".join(getattr(p, "text", "") for p in result.content),
                )

    asyncio.run(go())

    fetch, alias = tools["fetch_peer_findings"], tools["peer_findings"]
    assert fetch.description.startswith("Fetch peer findings from a flux-drive review session.")
    assert "alias of fetch_peer_findings" in alias.description
    assert fetch.input_schema == alias.input_schema
    assert fetch.input_schema["required"] == ["output_dir"]
    severity = fetch.input_schema["properties"]["severity"]
    assert severity["default"] == "all" and severity["enum"] == ["blocking", "notable", "all"]
    assert fetch.annotations.read_only_hint is True and alias.annotations.read_only_hint is True

    error, everything = answers[("fetch_peer_findings", "all")]
    assert (
        not error and " fd-safety blocking injection: SQL built" in everything and " fd-quality notable " in everything
    )
    error, blocking = answers[("fetch_peer_findings", "blocking")]
    assert not error and "fd-safety" in blocking and "fd-quality" not in blocking
    for severity in ("all", "blocking", "missing"):
        assert answers[("peer_findings", severity)] == answers[("fetch_peer_findings", severity)]
    assert answers[("fetch_peer_findings", "missing")][0] is True


# --- write-behind verdicts, one test per dispatch kind --------------------------------------------------


def test_a_review_writes_one_verdict_record_per_agent(project: Path) -> None:
    settings = api.ReviewSettings(yes=True, agents=("fd-safety", "fd-quality"), cwd=project)
    run = api.run(project / "shop", settings)
    found = RunDirectory(run.output_dir).verdicts()
    agents = {r.agent for r in found.records}
    assert {"fd-safety", "fd-quality"} <= agents
    _details_exist(run.output_dir, found)
    assert next(r for r in found.records if r.agent == "fd-safety").status == "NEEDS_ATTENTION"


def test_the_research_command_writes_one_verdict_record_per_launched_agent(project: Path) -> None:
    result = research("where are users looked up by name?", project=project)
    launched = {run.agent for run in result.runs if run.status != "skipped"}
    assert launched, result.runs
    found = RunDirectory(result.output_dir).verdicts()
    assert {r.agent for r in found.records} == launched
    _details_exist(result.output_dir, found)


def test_research_between_stages_writes_its_records_in_its_own_directory(project: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    trigger = Trigger(
        finding_id="P0-1",
        severity="P0",
        agents=("fd-safety",),
        location="shop/db.py:5",
        matched="regression",
        research_agent="git-history",
        question="Is the string-built query in shop/db.py a regression?",
        locations=("shop/db.py:5",),
    )
    outcomes = run_research([trigger], root=project, output_dir=out)
    assert [(o.agent, o.status) for o in outcomes] == [("git-history", "completed")]
    found = RunDirectory(out / "research").verdicts()
    assert [(r.agent, r.status) for r in found.records] == [("git-history", "CLEAN")]
    _details_exist(out / "research", found)
    assert not (out / "verdicts").exists(), "the review's own table stays its reviewers'"

    def crash(request: object) -> object:
        raise RuntimeError("the researcher fell over")

    crashed = tmp_path / "crashed"
    run_research([trigger], root=project, output_dir=crashed, executors={"git-history": crash})  # type: ignore[dict-item]
    (record,) = RunDirectory(crashed / "research").verdicts().records
    assert (record.agent, record.status, record.detail_path) == ("git-history", "ERROR", None)
    assert "the researcher fell over" in record.summary


def test_the_quality_gate_writes_verdict_records(project: Path, monkeypatch: pytest.MonkeyPatch, cli) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.chdir(project)
    util = project / "shop" / "db.py"
    util.write_text(util.read_text() + "\n\ndef ping():\n    return 1\n")
    result = cli("gate", "-q")
    assert result.code in (0, 1), result.out + result.err
    output_dir = next((project / "docs" / "research" / "flux-drive").glob("gate-*/"))
    found = RunDirectory(output_dir).verdicts()
    reviewers = {r.agent for r in found.records if r.agent != "synthesis"}
    assert "fd-quality" in reviewers
    _details_exist(output_dir, found)


def test_the_kb_inquisitors_write_verdict_records(project: Path) -> None:
    kb = project / ".fluxdrive" / "kb"
    remember(kb, "Users are looked up by name", "find_user() queries by name.", "architecture", ["shop/db.py"])
    remember(kb, "Settings module", "Configuration lives in one module.", "patterns", ["shop/settings_gone.py"])
    process_queue(kb)
    analyze(project, kb)
    output_dir = kb / ANALYSIS_DIR
    found = RunDirectory(output_dir).verdicts()
    statuses = {r.agent: r.status for r in found.records}
    assert statuses == {
        "inquisitor-users-are-looked-up-by-name": "CLEAN",
        "inquisitor-settings-module": "NEEDS_ATTENTION",
    }
    _details_exist(output_dir, found)
    stale = next(r for r in found.records if r.status == "NEEDS_ATTENTION")
    assert stale.summary.startswith("stale: Settings module: shop/settings_gone.py no longer exists")
    assert "Review: pending-review/" in (output_dir / stale.detail_path).read_text()  # type: ignore[operator]

    listed = run_fluxdrive("verdicts", str(output_dir), cwd=project)
    assert listed.code == 0 and "1 CLEAN, 1 NEEDS_ATTENTION" in listed.out

    # the next analysis replaces this one's records: an item removed since has none
    (kb / "patterns.md").unlink()
    subprocess.run(["git", "add", "-A"], cwd=project, check=True, capture_output=True)
    analyze(project, kb, force=True)
    again = RunDirectory(output_dir).verdicts()
    assert [r.agent for r in again.records] == ["inquisitor-users-are-looked-up-by-name"]
    assert sorted(p.name for p in output_dir.glob("*.md")) == ["inquisitor-users-are-looked-up-by-name.md"]
    shown = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all"], cwd=project, capture_output=True, text=True
    ).stdout
    assert "analysis/" not in shown, shown  # this clone's records: listed in the kb's own .gitignore
