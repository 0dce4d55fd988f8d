"""Every front door shows the plan a review runs: the MCP ``triage`` tool, ``fluxdrive triage`` and the
review itself go through the same ``plan_review`` steps (the cost model, never-hide, the runtime's limits)."""

from __future__ import annotations

import asyncio
import json
import re
import sys
from pathlib import Path

from mcp import Client
from mcp.client.stdio import StdioServerParameters

from fluxdrive import api
from tests.conftest import committed_copy, run_fluxdrive

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "projects" / "py-webapp"
FLUXDRIVE = Path(sys.executable).parent / "fluxdrive"


def _mcp_triage(project: Path) -> str:
    async def go() -> str:
        params = StdioServerParameters(command=str(FLUXDRIVE), args=["mcp"], cwd=str(project))
        async with Client(params, read_timeout_seconds=120) as client:
            result = await client.call_tool("triage", {"target": "."})
            assert not result.is_error
            return "".join(getattr(part, "text", "") for part in result.content)

    return asyncio.run(go())


def _written(text: str, project: Path) -> dict[str, object]:
    found = re.search(r"Written: (\S+)/triage\.json", text)
    assert found, text
    directory = Path(found.group(1))
    data = json.loads(((directory if directory.is_absolute() else project / directory) / "triage.json").read_text())
    return {"stages": data["stages"], "staging": data["staging"], "gate": data["gate"]}


def test_mcp_triage_and_the_cli_show_the_plan_review_runs(tmp_path: Path) -> None:
    project = committed_copy(FIXTURE, tmp_path / "shop")
    cli = run_fluxdrive("triage", ".", "--yes", cwd=project)
    assert cli.code == 0, cli.err
    mcp = _mcp_triage(project)
    table = cli.out.split("\nWritten:")[0]
    assert mcp.startswith(table), "the MCP tool shows the same table as the CLI"
    assert _written(mcp, project) == _written(cli.out, project)
    # ... and it is the plan the review runs: offline, every reviewer in Stage 1 (the cost model applied)
    plan = api.plan_review(".", api.ReviewSettings(cwd=project, yes=True))
    assert _written(cli.out, project)["stages"] == {
        "1": plan.stage1,
        "2": [a.name for a in plan.triage.in_stage(2)],
        "pool": [a.name for a in plan.triage.in_stage("pool")],
    }
    assert plan.triage.staged is False and "offline, no tokens" in plan.triage.staging_note
