"""Analyzer evidence (issue 31, item 4): a model agent confirms or refutes its lane's analyzer candidates.

One real ``fluxdrive review --runtime llm`` process against the wire-level fake provider
(tests/fakes/llm_server.py): the offline analyzers run in-process before Stage 1, their candidates
reach fd-safety's request, and the scripted model answers the way a careful one does - it confirms the
real SQL injection in shop/db.py:15 (and reports it itself) and refutes the XSS candidate on a
``send_file()`` line that builds no HTML. findings.json then says who supports what.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from fluxdrive.publish.render import finding_comment
from fluxdrive.publish.report import load_run
from fluxdrive.runs import decisions
from tests.conftest import committed_copy, run_fluxdrive
from tests.fakes.llm_server import FakeProvider, Text

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "projects" / "py-webapp"
KEY = "sk-test-SECRETSECRETSECRET0123456789"
CLEAN = "### Findings Index\nVerdict: safe\n\n### Summary\nNothing in my lane.\n"
SQL = "fd-safety:py-sql-injection"
XSS = "fd-safety:py-xss"
REFUTATION = "send_file() returns a file, not HTML; no markup is built from the value"


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    tmp = tmp_path_factory.mktemp("evidence")
    project = committed_copy(FIXTURE, tmp / "shop")
    (project / ".fluxdrive").mkdir(exist_ok=True)
    (project / ".fluxdrive" / "config.toml").write_text("[evidence]\nenabled = true\nmax_per_agent = 30\n")
    with FakeProvider(default=Text(CLEAN)) as provider, pytest.MonkeyPatch.context() as patch:
        patch.setenv("OPENAI_BASE_URL", provider.base_url_openai)
        patch.setenv("OPENAI_API_KEY", KEY)
        out = tmp / "run"
        # Only the ids it is answering depend on the candidates' order: the first review shows them.
        given = json.loads(_given(project, tmp / "first"))
        ids = {c["rule"] + " " + c["place"]: c["id"] for c in given["candidates"]}
        sql = ids["fluxdrive:py-sql-injection shop/db.py:15"]
        xss = ids["fluxdrive:py-xss shop/routes.py:38"]
        report = (
            "### Findings Index\n"
            "- P0 | SF-001 | \"shop/db.py\" | SQL built with '%' formatting from parameter `name` reaches "
            "cur.execute() in find_user() | shop/db.py:15\n"
            "Verdict: risky\n\n### Summary\nOne finding of my own; the analyzers' candidates are answered below.\n\n"
            "### Analyzer Evidence\n"
            f"- {sql} | confirmed | `name` is pasted into the SQL with % at shop/db.py:15\n"
            f"- {xss} | refuted | {REFUTATION}\n"
            "- AE-999 | confirmed | an id this agent was never given\n"
            "this line is not an answer\n"
        )
        provider.script("Review task for fd-safety", [Text(report)])
        done = run_fluxdrive(*_review(out), cwd=project)
        assert done.code == 0, done.err
        prompts = [r.raw for r in provider.requests if "Review task for fd-safety" in r.raw]
        yield {
            "out": out,
            "prompt": prompts[-1],
            "sql": sql,
            "xss": xss,
            "given": json.loads((out / "evidence" / "fd-safety.json").read_text()),
        }


def _review(out: Path) -> list[str | Path]:
    return [
        "review", ".", "--yes", "--expand", "none", "--runtime", "llm", "--model", "openai:gpt-4o",
        "--agents", "fd-safety", "--fail-on", "never", "--output-dir", out,
    ]  # fmt: skip


def _given(project: Path, out: Path) -> str:
    """A first review (the model finds nothing): what fd-safety was given."""
    done = run_fluxdrive(*_review(out), cwd=project)
    assert done.code == 0, done.err
    return (out / "evidence" / "fd-safety.json").read_text()


def test_the_model_agent_is_given_its_lanes_analyzer_candidates(run: dict[str, Any]) -> None:
    given = run["given"]
    assert given["schema_version"] == 1 and given["model"] == "openai:gpt-4o"
    places = [c["place"] for c in given["candidates"]]
    assert "shop/db.py:15" in places and len(places) >= 5
    severities = [c["severity"] for c in given["candidates"]]
    assert severities == sorted(severities)  # most severe first
    assert [c["id"] for c in given["candidates"]] == [f"AE-{n:03d}" for n in range(1, len(places) + 1)]
    flows = [c for c in given["candidates"] if c.get("flow")]
    assert any(c["flow"]["evidence"] == "high" for c in flows)  # the taint engine's data flow travels along
    # The request that reached the provider carries them, with the instruction to answer each.
    prompt = run["prompt"]
    assert "Analyzer evidence" in prompt and "### Analyzer Evidence" in prompt
    assert f"{run['sql']} | P0 | fluxdrive:py-sql-injection | shop/db.py:15" in prompt
    assert "confirmed" in prompt and "refuted" in prompt

    recorded = [d for d in decisions.read(run["out"]) if d["kind"] == "evidence"]
    assert len(recorded) == 1
    assert recorded[0]["decision"]["given"]["fd-safety"]["model"] == "openai:gpt-4o"
    assert len(recorded[0]["decision"]["given"]["fd-safety"]["ids"]) == len(places)


def test_confirmed_and_refuted_candidates_land_in_one_ranked_list(run: dict[str, Any]) -> None:
    document = json.loads((run["out"] / "findings.json").read_text())
    findings = document["findings"]
    sql = next(f for f in findings if f["location"] == "shop/db.py:15")
    assert sql["support"] == {"analyzers": [SQL], "models": ["openai:gpt-4o"], "refuted": {}}
    xss = next(f for f in findings if f["location"] == "shop/routes.py:38" and XSS in f["support"]["analyzers"])
    assert xss["support"] == {"analyzers": [XSS], "models": [], "refuted": {"openai:gpt-4o": REFUTATION}}
    # Kept, never dropped: the same rule's unrefuted twin (a proven flow, too) keeps its high confidence.
    twin = next(f for f in findings if f["location"] == "shop/routes.py:45" and XSS in f["support"]["analyzers"])
    assert xss["severity"] == twin["severity"] == "P1"
    assert (twin["confidence"], xss["confidence"]) == ("high", "medium")
    assert [f for f in findings if f["severity"] == "P1"][-1] == xss  # and ranked last of its severity
    assert findings.index(sql) == 0  # two independent supporters rank first
    unanswered = [f for f in findings if not f["support"]["models"] and not f["support"]["refuted"]]
    assert unanswered and all(f["support"]["analyzers"] for f in unanswered)  # analyzer-only support

    sarif = json.loads((run["out"] / "findings.sarif").read_text())
    by_id = {r["properties"]["fluxdriveId"]: r["properties"] for r in sarif["runs"][0]["results"]}
    assert by_id[sql["id"]]["support"] == {"analyzers": [SQL], "models": ["openai:gpt-4o"]}
    assert by_id[xss["id"]]["support"]["refuted"] == {"openai:gpt-4o": REFUTATION}

    summary = (run["out"] / "summary.md").read_text()
    assert f"supported by {SQL} + openai:gpt-4o" in summary
    assert f"**[refuted by openai:gpt-4o]** {REFUTATION}" in summary

    published = {f.id: f for f in load_run(run["out"]).findings}  # the PR/MR comment says the same
    assert f"Supported by {SQL} + openai:gpt-4o" in finding_comment(published[sql["id"]])
    assert f"refuted by openai:gpt-4o: {REFUTATION}" in finding_comment(published[xss["id"]])
