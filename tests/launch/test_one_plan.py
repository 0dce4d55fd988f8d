"""Every front door shows the plan a review runs: the MCP ``triage`` tool, ``fluxdrive triage`` and the
review itself go through the same ``plan_review`` steps (the cost model, never-hide, the runtime's limits)."""

from __future__ import annotations

import asyncio
import json
import re
import sys
from pathlib import Path

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from fluxdrive import api
from fluxdrive.config import Config
from fluxdrive.config.loader import with_flags
from fluxdrive.errors import ConfigError
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


def test_a_library_config_takes_the_same_overrides_as_the_files(tmp_path: Path) -> None:
    """``ReviewSettings(config=..., overrides=...)``: the flags apply to the caller's Config, nested keys too,
    and a bad value is one ConfigError naming the key (as for ``--set``), never a silent attribute."""
    config = with_flags(Config(), {"dispatch.timeout_local_s": 30, "budget.per_input.repo": 5})
    assert config.dispatch.timeout_local_s == 30 and config.budget.per_input["repo"] == 5
    with pytest.raises(ConfigError, match=r"dispatch\.max_concurrency"):
        with_flags(Config(), {"dispatch.max_concurrency": 0})
