"""``fluxdrive review --runtime llm`` end to end against a fake provider at the wire.

A real ``fluxdrive`` process talks HTTP to a local server that answers in
OpenAI's and Anthropic's real shapes (tests/fakes/llm_server.py): tool calls
run against the real project, shared findings land on the real channel,
synthesis reads the real reports, tokens and cost reach run.json and the
history database, and rate limits, server errors, malformed answers and a
dead endpoint are handled as the issue demands. Only the model is scripted.
"""

from __future__ import annotations

import json
import socket
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import committed_copy, run_fluxdrive, user_config_file
from tests.fakes.llm_server import Error, FakeProvider, Malformed, Slow, Text, ToolCall

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "projects" / "py-webapp"
KEY = "sk-test-SECRETSECRETSECRET0123456789"
SAFETY = (
    "### Findings Index\n"
    '- P0 | SF-001 | "shop/db.py" | SQL built with % formatting reaches cur.execute() in find_user() | shop/db.py:15\n'
    "Verdict: risky\n\n### Summary\nOne injection found with read_file.\n"
)
CLEAN = "### Findings Index\nVerdict: safe\n\n### Summary\nNothing in my lane.\n"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return committed_copy(FIXTURE, tmp_path / "shop")


@pytest.fixture
def provider(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeProvider]:
    with FakeProvider(default=Text(CLEAN)) as fake:
        monkeypatch.setenv("OPENAI_BASE_URL", fake.base_url_openai)
        monkeypatch.setenv("OPENAI_API_KEY", KEY)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.base_url_anthropic)
        monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
        # fast backoff so retry tests take milliseconds, not the production 2 s base
        monkeypatch.setenv("FLUXDRIVE_DISPATCH__BACKOFF_BASE_S", "0.01")
        monkeypatch.setenv("FLUXDRIVE_DISPATCH__BACKOFF_MAX_S", "0.2")
        yield fake


def _safety_script(fake: FakeProvider) -> None:
    fake.script(
        "Review task for fd-safety",
        [
            ToolCall("read_file", {"path": "shop/db.py"}),
            ToolCall(
                "share_finding",
                {
                    "severity": "blocking",
                    "category": "sql-injection",
                    "summary": "find_user() formats the user name into SQL.",
                    "file_refs": ["shop/db.py:15"],
                },
            ),
            Text(SAFETY),
        ],
    )


def _out(project: Path) -> Path:
    return next((project / "docs" / "research" / "flux-drive").glob("[!.]*/"))  # the run links, not .fluxdrive-runs


def test_openai_review_end_to_end(project: Path, provider: FakeProvider) -> None:
    _safety_script(provider)
    # Staged (the roster fits the budget, which would run everyone at once): Stage 2 starts after fd-safety shared.
    done = run_fluxdrive(
        "review", ".", "--yes", "--set", "evidence.enabled=false", "--expand", "all", "--runtime", "llm", "--model", "openai:gpt-4o",
        "--set", "selection.staging=always", cwd=project,
    )  # fmt: skip
    assert done.code == 1, done.err  # risky at --fail-on risky
    assert done.out.startswith("Verdict: RISKY (1 P0")
    out = _out(project)
    tool_results = provider.tool_results("Review task for fd-safety")
    assert any("cur.execute" in r for r in tool_results), "read_file ran against the real project"
    peer = [json.loads(line) for line in (out / "peer-findings.jsonl").read_text().splitlines()]
    assert [(p["agent"], p["severity"], p["category"]) for p in peer] == [("fd-safety", "blocking", "sql-injection")]
    findings = json.loads((out / "findings.json").read_text())
    assert findings["verdict"] == "risky"
    top = findings["findings"][0]
    assert top["agents"] == ["fd-safety"] and top["locations"] == ["shop/db.py:15"]
    run = json.loads((out / "run.json").read_text())
    safety = run["agents"]["fd-safety"]
    assert safety["provenance"] == {"provider": "openai-compatible", "model_family": "gpt", "model_id": "gpt-4o"}
    assert safety["usage"]["tokens_in"] > 0 and safety["usage"]["cost_usd"] > 0
    verdict = json.loads((out / "verdicts" / "fd-safety.json").read_text())
    assert verdict["tokens"] == safety["usage"]["tokens_in"] + safety["usage"]["tokens_out"]
    assert verdict["cost_usd"] == safety["usage"]["cost_usd"] > 0
    # Agents that had not seen fd-safety's blocking finding acknowledged it at the checkpoint.
    acknowledged = [r for r in provider.requests if "Checkpoint before your final report" in r.raw]
    assert acknowledged, "the checkpoint turn was sent to agents that had not seen the blocking finding"

    history = run_fluxdrive("history", "--run", run["run_id"][:6], cwd=project)
    assert history.code == 0, history.err
    assert "fd-safety" in history.out and "openai-compatible" in history.out and "gpt-4o" in history.out
    listing = run_fluxdrive("history", "--json", cwd=project)
    recorded = json.loads(listing.out)["runs"][0]
    assert recorded["verdict"] == "risky" and recorded["tokens_in"] > 0 and recorded["cost_usd"] > 0

    # The API key never leaves the environment: not in prompts, reports, run.json, history or the console.
    everything = [done.out, done.err, history.out, listing.out]
    everything += [p.read_text(errors="replace") for p in out.rglob("*") if p.is_file()]
    database = Path(next(iter([p for p in Path.home().rglob("history.db")]), ""))
    everything.append(database.read_bytes().decode("utf-8", errors="replace") if database.is_file() else "")
    assert not any(KEY in text for text in everything)
    assert all("authorization" in r.headers for r in provider.requests), "the key went to the provider only"


def test_anthropic_wire_with_tools(project: Path, provider: FakeProvider) -> None:
    _safety_script(provider)
    done = run_fluxdrive(
        "review", ".", "--yes", "--expand", "none", "--runtime", "llm", "--model", "anthropic:claude-haiku-4-5",
        "--fail-on", "never", cwd=project,
    )  # fmt: skip
    assert done.code == 0, done.err
    assert done.out.startswith("Verdict: RISKY")
    assert all(r.path == "/v1/messages" for r in provider.requests)
    run = json.loads((_out(project) / "run.json").read_text())
    assert run["agents"]["fd-safety"]["provenance"]["model_family"] == "claude"


def test_rate_limits_and_server_errors_are_not_agent_failures(project: Path, provider: FakeProvider) -> None:
    provider.script(
        "Review task for fd-safety", [Error(429, retry_after=0.05), Error(429, retry_after=0.05), Text(SAFETY)]
    )
    provider.script("Review task for fd-quality", [Error(500), Error(503), Text(CLEAN)])
    # Every other agent is rate limited three times first: whatever the interleaving, the run's first success
    # comes after at least three 429s in a row, and two in a row halve the cap.
    provider.set_default([Error(429, retry_after=0.05)] * 3 + [Text(CLEAN)])
    done = run_fluxdrive(
        "review", ".", "--yes", "--expand", "none", "--runtime", "llm", "--model", "openai:gpt-4o",
        "--fail-on", "never", "--set", "llm.halve_after_429=2", cwd=project,
    )  # fmt: skip
    assert done.code == 0, done.err
    run = json.loads((_out(project) / "run.json").read_text())
    assert all(a["outcome"] == "completed" for a in run["agents"].values() if a["outcome"] != "not-launched")
    assert provider.count(route="Review task for fd-safety") == 3, "two 429s retried below the agent"
    assert any("concurrency cap lowered" in n for n in run["notes"]), run["notes"]


def test_malformed_answers_and_a_dead_endpoint_fail_clearly(project: Path, provider: FakeProvider) -> None:
    provider.script("Review task for fd-safety", [Malformed()])
    done = run_fluxdrive(
        "review", ".", "--yes", "--expand", "none", "--runtime", "llm", "--model", "openai:gpt-4o",
        "--fail-on", "never", cwd=project,
    )  # fmt: skip
    run = json.loads((_out(project) / "run.json").read_text())
    assert run["agents"]["fd-safety"]["outcome"] == "error"
    assert (
        "decode" in run["agents"]["fd-safety"]["error"].lower() or "json" in run["agents"]["fd-safety"]["error"].lower()
    )
    # an agent that failed makes the review incomplete: it never passes silently (exit 1)
    assert done.code == 1 and "fd-safety" in done.out and "INCOMPLETE" in done.out

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{probe.getsockname()[1]}/v1"
    import os

    os.environ["OPENAI_BASE_URL"] = dead
    dead_run = run_fluxdrive(
        "review", ".", "--yes", "--expand", "none", "--runtime", "llm", "--model", "openai:gpt-4o",
        "--set", "llm.http_retries=1", "--output-dir", project / "dead", cwd=project,
    )  # fmt: skip
    assert dead_run.code == 3, dead_run.err  # no agent completed: no verdict
    assert "cannot reach" in dead_run.out + dead_run.err
    assert "Traceback" not in dead_run.err


def test_missing_key_is_one_line_before_anything_runs(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    done = run_fluxdrive(
        "review", ".", "--yes", "--runtime", "llm", "--model", "anthropic:claude-haiku-4-5", cwd=project
    )
    assert done.code == 2
    assert done.err.startswith("fluxdrive: error: ANTHROPIC_API_KEY is not set (hint: export ANTHROPIC_API_KEY=")
    assert done.err.count("\n") == 1 and not (project / "docs").exists()


def test_mixed_runtimes_and_budget(project: Path, provider: FakeProvider) -> None:
    _safety_script(provider)
    user_config_file().write_text('[agents.fd-quality]\nruntime = "static"\n')
    over = run_fluxdrive(
        "review", ".", "--yes", "--runtime", "llm", "--model", "openai:gpt-4o", "--set", "budget.per_input.repo=1000",
        cwd=project,
    )  # fmt: skip
    assert over.code == 2 and "over the repo budget of 1,000" in over.err and "--over-budget" in over.err
    done = run_fluxdrive(
        "review", ".", "--yes", "--expand", "none", "--runtime", "llm", "--model", "openai:gpt-4o",
        "--set", "budget.per_input.repo=1000", "--over-budget", "--fail-on", "never", cwd=project,
    )  # fmt: skip
    assert done.code == 0, done.err
    run = json.loads((_out(project) / "run.json").read_text())
    families = {name: a["provenance"]["model_family"] for name, a in run["agents"].items() if a.get("provenance")}
    assert families["fd-quality"] == "static" and families["fd-safety"] == "gpt"
    assert run["runtime"] == "llm+static"


def test_llm_triage_refines_scores_but_zero_stays(project: Path, provider: FakeProvider) -> None:
    provider.script(
        "You assign review agents",
        [ToolCall("final_result", {"scores": {"fd-quality": 0, "fd-safety": 3, "fd-game-design": 3}})],
    )
    done = run_fluxdrive(
        "triage", ".", "--yes", "--json", cwd=project,
    )  # fmt: skip
    before = {a["name"]: a for a in json.loads(done.out)["agents"]}
    review = run_fluxdrive(
        "review", ".", "--yes", "--expand", "none", "--runtime", "llm", "--model", "openai:gpt-4o", "--llm-triage",
        "--fail-on", "never", cwd=project,
    )  # fmt: skip
    assert review.code == 0, review.err
    assert "--llm-triage: openai:gpt-4o refined base scores" in review.err
    after = {a["name"]: a for a in json.loads((_out(project) / "triage.json").read_text())["agents"]}
    assert after["fd-quality"]["base_score"] == 0 and after["fd-quality"]["stage"] is None
    assert before["fd-game-design"]["base_score"] == 0 and after["fd-game-design"]["base_score"] == 0, "0 is absolute"
    assert "from openai:gpt-4o" in after["fd-quality"]["rationale"]
    calls = json.loads((_out(project) / "run.json").read_text())["model_calls"]
    (call,) = [c for c in calls if not c["name"].startswith("reaction ")]  # the reaction round's are its own
    assert call["name"] == "llm-triage" and call["usage"]["tokens_in"] > 0
    assert call["provenance"] == {"provider": "openai-compatible", "model_family": "gpt", "model_id": "gpt-4o"}


def test_history_database_has_the_calls(project: Path, provider: FakeProvider) -> None:
    done = run_fluxdrive(
        "review", ".", "--yes", "--expand", "none", "--runtime", "llm", "--model", "openai:gpt-4o",
        "--fail-on", "never", cwd=project,
    )  # fmt: skip
    assert done.code == 0, done.err
    database = next(Path.home().rglob("history.db"))
    with sqlite3.connect(database) as connection:
        rows = connection.execute(
            "SELECT agent, provider, model_id, tokens_in > 0, outcome FROM agent_calls"
        ).fetchall()
    assert rows and all(r[1] == "openai-compatible" and r[2] == "gpt-4o" and r[3] == 1 for r in rows)


def test_two_model_families_converge_and_a_lone_gpt_p0_is_flagged(project: Path, provider: FakeProvider) -> None:
    user_config_file().write_text(
        '[agents.fd-safety]\nmodel = "anthropic:claude-haiku-4-5"\n[agents.fd-correctness]\nmodel = "openai:gpt-4o"\n'
    )
    provider.script("Review task for fd-safety", Text(SAFETY))
    provider.script(
        "Review task for fd-correctness",
        Text(
            "### Findings Index\n"
            '- P0 | CO-001 | "shop/db.py" | SQL built with % formatting reaches cur.execute() in find_user() '
            "| shop/db.py:15\n"
            '- P0 | CO-002 | "shop/routes.py" | cleanup() deletes every order without a WHERE clause | '
            "shop/routes.py:48\n"
            "Verdict: risky\n"
        ),
    )
    done = run_fluxdrive(
        "review", ".", "--yes", "--set", "evidence.enabled=false", "--agents", "safety,correctness", "--runtime", "llm", "--model", "openai:gpt-4o",
        "--expand", "all", "--fail-on", "never", cwd=project,
    )  # fmt: skip
    assert done.code == 0, done.err
    findings = {f["title"][:20]: f for f in json.loads((_out(project) / "findings.json").read_text())["findings"]}
    both = findings["SQL built with % for"]
    assert both["agents"] == ["fd-correctness", "fd-safety"]
    assert both["cross_family_convergence"] == 2 and not both["verification_recommended"]
    lone = findings["cleanup() deletes ev"]
    assert lone["agents"] == ["fd-correctness"] and lone["cross_family_convergence"] == 1
    assert lone["verification_recommended"], "a single-source P0 from outside the top tier (claude) is flagged"


def test_a_request_that_times_out_is_retried_not_failed(project: Path, provider: FakeProvider) -> None:
    provider.script("Review task for fd-safety", [Slow(30, Text(SAFETY)), Text(SAFETY)])
    done = run_fluxdrive(
        "review", ".", "--yes", "--set", "evidence.enabled=false", "--expand", "none", "--runtime", "llm", "--model", "openai:gpt-4o",
        "--set", "llm.request_timeout_s=1", "--fail-on", "never", cwd=project,
    )  # fmt: skip
    assert done.code == 0, done.err
    assert done.out.startswith("Verdict: RISKY (1 P0"), done.out
    assert provider.count(route="Review task for fd-safety") == 2
    run = json.loads((_out(project) / "run.json").read_text())
    assert run["agents"]["fd-safety"]["outcome"] == "completed"


def test_best_practices_research_runs_on_the_model_between_stages(project: Path, provider: FakeProvider) -> None:
    provider.script(
        "Review task for fd-safety",
        Text(
            "### Findings Index\n"
            '- P0 | SF-001 | "shop/db.py" | SQL built with % formatting instead of parameters, against OWASP best '
            "practice | shop/db.py:15\nVerdict: risky\n"
        ),
    )
    answer = {
        "sources": ["shop/db.py", "from model knowledge: OWASP SQL Injection Prevention Cheat Sheet"],
        "findings": ["Parameterized queries (cur.execute(sql, params)) are the accepted practice for sqlite3."],
        "confidence": "high",
        "confidence_note": "the DB-API and OWASP agree",
        "gaps": [],
    }
    provider.script(
        "best-practices researcher", [ToolCall("read_file", {"path": "shop/db.py"}), ToolCall("final_result", answer)]
    )
    done = run_fluxdrive(
        "review", ".", "--yes", "--expand", "all", "--runtime", "llm", "--model", "openai:gpt-4o",
        "--fail-on", "never", "--set", "selection.staging=always", cwd=project,
    )  # fmt: skip
    assert done.code == 0, done.err
    out = _out(project)
    research = json.loads((out / "run.json").read_text())["research"]
    ran = {r["agent"]: r for r in research}
    assert ran["best-practices"]["status"] == "completed", research
    assert ran["best-practices"]["note"].startswith(
        "answered by openai:gpt-4o from the repository and its own knowledge"
    )
    text = (out / "research" / "best-practices.md").read_text()
    assert "Parameterized queries" in text and "no web access" in text and "- shop/db.py" in text
    asked = [r for r in provider.requests if "best-practices researcher" in r.raw]
    tools = {t["function"]["name"] for t in asked[0].body["tools"]}
    assert {"read_file", "list_files", "grep"} <= tools and "share_finding" not in tools
    assert any("cur.execute" in result for result in provider.tool_results("best-practices researcher"))
    stage2 = json.loads((out / "run.json").read_text())["stages"][1]["agents"]
    stage2_prompt = (out / "prompts" / f"{stage2[0]}.md").read_text()
    assert "## Research results" in stage2_prompt and "Parameterized queries" in stage2_prompt
    # every token is accounted for: the research call is in run.json and in the history, with its cost
    record = ran["best-practices"]
    assert record["provenance"]["model_id"] == "gpt-4o" and record["usage"]["tokens_in"] > 0
    run_id = json.loads((out / "run.json").read_text())["run_id"]
    history = json.loads(run_fluxdrive("history", "--run", run_id, "--json", cwd=project).out)
    research_call = next(c for c in history["calls"] if c["agent"] == "best-practices")
    assert research_call["stage"] is None and research_call["tokens_in"] == record["usage"]["tokens_in"]
    assert research_call["cost_usd"] > 0
    assert history["run"]["tokens_in"] == sum(c["tokens_in"] for c in history["calls"])


def test_kb_analysis_with_a_model_suggests_and_fixes(project: Path, provider: FakeProvider) -> None:
    from fluxdrive.kb import load_reviews, process_queue, remember
    from fluxdrive.kb.files import load_items

    kb = project / ".fluxdrive" / "kb"
    remember(kb, "Users are looked up by name", "find_user() looks users up by name.", "architecture", ["shop/db.py"])
    remember(kb, "Debug mode is on", "config.py turns DEBUG on for everyone.", "gotchas", ["shop/config.py"])
    process_queue(kb)
    provider.script(
        "Entry users-are-looked-up-by-name",
        [
            ToolCall("read_file", {"path": "shop/db.py"}),
            ToolCall(
                "final_result",
                {"outcome": "conflicting", "detail": "find_user() now formats the name into SQL (db.py:15).",
                 "new_content": "find_user() formats the name into SQL with %; it must take parameters."},
            ),
        ],
    )  # fmt: skip
    provider.script(
        "Entry debug-mode-is-on",
        ToolCall(
            "final_result", {"outcome": "outdated", "detail": "moved", "minor": True, "new_refs": ["shop/settings.py"]}
        ),
    )
    done = run_fluxdrive("kb", "analyze", "--model", "openai:gpt-4o", cwd=project)
    assert done.code == 0, done.err
    assert "2 item(s) investigated (1 conflicting, 1 outdated)" in done.out and "model tokens" in done.out
    assert any("cur.execute" in r for r in provider.tool_results("Entry users-are-looked-up-by-name"))
    reviews = {r.item_id: r for r in load_reviews(kb)}
    conflicting = reviews["users-are-looked-up-by-name"]
    assert conflicting.options[0] == "apply the suggested update" and "must take parameters" in conflicting.question
    assert reviews["debug-mode-is-on"].auto_apply

    save = conflicting.answered("apply the suggested update")
    (kb / "pending-review" / f"{save.id}.json").write_text(save.dumps())
    applied = run_fluxdrive("kb", "apply", cwd=project)
    assert applied.code == 0 and "2 applied, 0 waiting" in applied.out
    items = load_items(kb)
    assert items["architecture"][0].content.endswith("it must take parameters.")
    assert items["gotchas"][0].refs == ["shop/settings.py"]


def test_a_generated_domain_agent_runs_on_the_model(project: Path, provider: FakeProvider) -> None:
    assert run_fluxdrive("agents", "new", "web-api", cwd=project).code == 0
    provider.script(
        "Review task for fd-web-api",
        Text('### Findings Index\n- P1 | WA-001 | "shop/routes.py" | POST /admin/delete has no auth | shop/routes.py:28\n'
             "Verdict: needs-changes\n"),
    )  # fmt: skip
    done = run_fluxdrive(
        "review", ".", "--yes", "--set", "evidence.enabled=false", "--agents", "web-api,safety", "--runtime", "llm", "--model", "openai:gpt-4o",
        "--expand", "all", "--fail-on", "never", cwd=project,
    )  # fmt: skip
    assert done.code == 0, done.err
    run = json.loads((_out(project) / "run.json").read_text())
    assert run["agents"]["fd-web-api"]["outcome"] == "completed"
    findings = json.loads((_out(project) / "findings.json").read_text())["findings"]
    assert any(f["agents"] == ["fd-web-api"] and f["locations"] == ["shop/routes.py:28"] for f in findings)
