"""``fluxdrive mcp`` driven by the MCP SDK's own client over stdio, as a coding assistant would.

The server is the installed console script in a subprocess, started in a real
project; the client is ``mcp.Client``. Reviews run the real static analyzers.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from tests.conftest import committed_copy

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "projects" / "py-webapp"
FLUXDRIVE = Path(sys.executable).parent / "fluxdrive"
Session = Callable[[Client], Awaitable[None]]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return committed_copy(FIXTURE, tmp_path / "shop")


def _connect(project: Path, session: Session) -> None:
    async def go() -> None:
        params = StdioServerParameters(command=str(FLUXDRIVE), args=["mcp"], cwd=str(project))
        async with Client(params, read_timeout_seconds=120) as client:
            await session(client)

    asyncio.run(go())


async def _call(client: Client, tool: str, arguments: dict[str, Any]) -> tuple[bool, str]:
    result = await client.call_tool(tool, arguments)
    text = "".join(getattr(part, "text", "") for part in result.content)
    return bool(result.is_error), text


def test_tools_are_listed_with_descriptions_and_hints(project: Path) -> None:
    found: dict[str, Any] = {}

    async def session(client: Client) -> None:
        found.update({tool.name: tool for tool in (await client.list_tools()).tools})

    _connect(project, session)
    assert sorted(found) == [
        "fetch_peer_findings", "finding", "peer_findings", "remember", "report", "research", "review",
        "synthesize", "triage", "verdicts",
    ]  # fmt: skip
    assert all(tool.description for tool in found.values())
    assert found["finding"].annotations.read_only_hint is True
    assert found["review"].annotations.read_only_hint is False
    assert "target" in found["review"].input_schema["properties"]


def test_research_answers_from_the_project(project: Path) -> None:
    answers: dict[str, tuple[bool, str]] = {}

    async def session(client: Client) -> None:
        answers["ok"] = await _call(client, "research", {"question": "how are orders stored in the database?"})
        answers["outside"] = await _call(client, "research", {"question": "orders", "scope": "/etc"})

    _connect(project, session)
    error, text = answers["ok"]
    assert not error, text
    assert text.startswith("Output directory: docs/research/flux-research/")
    answer = text.split("## Answer", 1)[1].split("## Evidence", 1)[0]
    assert ".py:" in answer  # cited as path:line
    error, text = answers["outside"]
    assert error and "outside" in text and "\n" not in text.strip()


def test_review_then_drill_down(project: Path) -> None:
    answers: dict[str, tuple[bool, str]] = {}

    progress: list[tuple[float, float | None, str | None]] = []

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        progress.append((done, total, message))

    async def session(client: Client) -> None:
        result = await client.call_tool("review", {"target": "."}, progress_callback=on_progress)
        answers["review"] = (bool(result.is_error), "".join(getattr(p, "text", "") for p in result.content))
        output_dir = answers["review"][1].splitlines()[0].removeprefix("Output directory: ")
        answers["output_dir"] = (False, output_dir)
        answers["finding"] = await _call(client, "finding", {"output_dir": output_dir, "finding_id": "P0-1"})
        answers["verdicts"] = await _call(client, "verdicts", {"output_dir": output_dir, "attention_only": True})
        answers["peers"] = await _call(client, "peer_findings", {"output_dir": output_dir, "severity": "blocking"})
        answers["page1"] = await _call(
            client, "report", {"output_dir": output_dir, "agent": "fd-safety", "max_chars": 400}
        )
        answers["page2"] = await _call(
            client, "report", {"output_dir": output_dir, "agent": "fd-safety", "offset": 400, "max_chars": 400}
        )
        answers["again"] = await _call(client, "synthesize", {"output_dir": output_dir})

    _connect(project, session)

    error, summary = answers["review"]
    assert not error, summary
    output_dir = answers["output_dir"][1]
    assert output_dir.startswith("docs/research/flux-drive/shop-")
    assert summary.splitlines()[1].startswith("Verdict: RISKY (4 P0")
    assert "fd-safety" in summary and "Drill down:" in summary
    assert len(summary) <= 2_400, "a review costs the assistant well under 1,000 tokens"
    findings = json.loads((project / output_dir / "findings.json").read_text())
    finished = [p for p in progress if p[2] and " completed in " in p[2]]
    # offline, every review agent runs in Stage 1: seven agents, each reported once
    assert len(finished) == 7 and finished[-1][:2] == (7.0, 7.0), progress
    assert any(p[2] and p[2].startswith("Stage 1: ") for p in progress)

    error, finding = answers["finding"]
    assert not error and json.loads(finding) == findings["findings"][0]

    error, verdicts = answers["verdicts"]
    assert not error and "NEEDS_ATTENTION  fd-safety" in verdicts and "CLEAN " not in verdicts.split("\n\n")[0]

    error, peers = answers["peers"]
    assert not error and peers.count(" fd-safety blocking ") == 4

    report = (project / output_dir / "fd-safety.md").read_text()
    (_, page1), (_, page2) = answers["page1"], answers["page2"]
    assert page1.startswith(f"fd-safety.md, characters 0-400 of {len(report):,}\n")
    assert "offset=400" in page1 and report[:400] in page1 and report[400:800] in page2

    error, again = answers["again"]
    assert not error and again.startswith("Verdict: RISKY (4 P0")


@pytest.mark.parametrize(
    ("tool", "arguments", "message"),
    [
        ("review", {"target": "missing.py"}, "input not found"),
        ("review", {"target": "/etc"}, "is outside the project root"),
        ("triage", {"target": "../.."}, "is outside the project root"),
        ("report", {"output_dir": ".", "agent": "../../etc/passwd"}, "not an agent name"),
        ("report", {"output_dir": "/tmp", "agent": "fd-safety"}, "is outside the project root"),
        ("finding", {"output_dir": "shop", "finding_id": "P9-1"}, "not a finding id"),
        ("finding", {"output_dir": "shop", "finding_id": "P0-1"}, "no findings.json"),
        ("verdicts", {"output_dir": "nowhere"}, "no output directory"),
        ("review", {"target": ".", "runtime": "warp-drive"}, "unknown runtime"),
    ],
)
def test_bad_requests_are_one_line_tool_errors(
    project: Path, tool: str, arguments: dict[str, Any], message: str
) -> None:
    answers: list[tuple[bool, str]] = []

    async def session(client: Client) -> None:
        answers.append(await _call(client, tool, arguments))
        answers.append(await _call(client, "triage", {"target": "shop/db.py"}))  # the server is still serving

    _connect(project, session)
    (error, text), (after_error, after) = answers
    assert error and message in text and "\n" not in text.strip() and "Traceback" not in text
    assert not after_error and "fd-safety" in after
    assert not (project / "docs" / "research" / "flux-drive" / "shop").exists()


def test_remember_returns_at_once_and_the_queue_is_processed_behind_it(project: Path) -> None:
    answers: list[tuple[bool, str]] = []
    kb = project / ".fluxdrive" / "kb"

    async def session(client: Client) -> None:
        for title, content in (
            ("Users are looked up by name", "find_user() looks users up by name with one query."),
            ("Users are looked up by name", "find_user() looks users up by name with one query."),
            ("Cleanup swallows export errors", "cleanup() drops every error of the export."),
        ):
            answers.append(
                await _call(client, "remember", {"title": title, "content": content, "refs": ["shop/db.py"]})
            )
        answers.append(await _call(client, "remember", {"title": "T", "content": "x", "category": "folklore"}))
        for _ in range(200):  # the processor runs in the server, after the calls returned
            if not list((kb / "remember-queue").glob("*.json")) and (kb / "patterns.md").is_file():
                break
            await asyncio.sleep(0.05)

    _connect(project, session)
    assert all(not error and text.startswith("Queued ") for error, text in answers[:3])
    assert answers[3][0] and "unknown category 'folklore'" in answers[3][1]
    filed = (kb / "patterns.md").read_text()
    assert filed.count("<!-- kb:") == 2, "the duplicate was dropped"
    assert "users-are-looked-up-by-name | patterns |" in (kb / "KNOWLEDGE_MAP_CLAUDE.md").read_text()
