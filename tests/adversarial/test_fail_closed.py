"""An incomplete review is never "safe" in anything a machine reads (issue 26, item 8).

fd-safety fails three real ways while the other reviewers find nothing: its
provider answers 500 to every request (a real ``fluxdrive review`` against
the wire-level fake provider), it crashes, and it hangs past its deadline
(the library's scripted runtime). Each run is then read back through every
output a gate or a bot reads: findings.json, findings.sarif, the Code
Quality report, the verdict records, summary.md and summary.html, the exit
codes of ``review`` and ``synthesize``, and what ``publish github`` (checks
and review mode) and ``publish gitlab`` send to the fake GitHub and GitLab
servers. Before the fix 13 of 35 provider-fault runs said ``"verdict":
"safe"`` and posted a check run with conclusion ``success``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from fluxdrive.api import ReviewOptions, run_review
from fluxdrive.cli import main
from fluxdrive.config import load_config
from fluxdrive.mcp.server import _summary as mcp_summary
from fluxdrive.reports import render_codeclimate
from fluxdrive.runtimes.testing import Crash, Hang, ScriptedRuntime
from fluxdrive.synthesis import Synthesis, synthesize
from tests.fakes.github_api import FakeGitHub
from tests.fakes.gitlab_api import FakeGitLab
from tests.fakes.llm_server import Error, FakeProvider
from tests.publish import test_github as gh
from tests.publish import test_gitlab as gl

# scenario -> the outputs that said safe/success (empty: none did)
LEDGER: dict[str, list[str]] = {}
CHECKED: dict[str, int] = {}
SAFE_WORD = re.compile(r"\bsafe\b", re.IGNORECASE)


def figures() -> list[str]:
    """Incomplete reviews reported as safe anywhere, over the scenarios that ran."""
    if not LEDGER:
        return []
    said = sum(len(found) for found in LEDGER.values())
    lines = [f"incomplete reviews reported as safe anywhere: {said} (of {sum(CHECKED.values())} outputs read)"]
    lines += [f"  {name}: {', '.join(found) or 'none'}" for name, found in LEDGER.items()]
    return lines


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A real repository: main, and a feature branch whose change the review and the pull request cover."""
    repo = tmp_path / "repo"
    (repo / "app").mkdir(parents=True)
    (repo / "app" / "db.py").write_text(gh.BASE_DB)
    (repo / "app" / "tools.py").write_text(gh.BASE_TOOLS)
    gh.git(repo, "init", "-q", "-b", "main")
    gh.git(repo, "add", "-A")
    gh.git(repo, "commit", "-q", "-m", "base")
    gh.git(repo, "checkout", "-q", "-b", "feature")
    (repo / "app" / "db.py").write_text(gh.BASE_DB + "\n\ndef close(conn):\n    conn.close()\n")
    gh.git(repo, "commit", "-q", "-am", "add close")
    return repo


def _read_back(
    name: str, out: Path, repo: Path, exit_code: int | None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every machine-read output of the run in ``out``; record and assert that none says safe or success."""
    said: list[str] = []

    def check(what: str, bad: bool) -> None:
        CHECKED[name] = CHECKED.get(name, 0) + 1
        if bad:
            said.append(what)

    if exit_code is not None:
        check("review exit code 0", exit_code == 0)
    document = json.loads((out / "findings.json").read_text())
    check("findings.json verdict safe", document["verdict"] == "safe" or document["complete"])
    assert document["findings_verdict"] == "safe" and document["incomplete_reasons"], document
    sarif = json.loads((out / "findings.sarif").read_text())["runs"][0]
    check("SARIF verdict safe", sarif["properties"]["verdict"] == "safe")
    check("SARIF execution successful", sarif.get("invocations", [{}])[0].get("executionSuccessful", True))
    again = synthesize(out, load_config(repo).config)
    issues = json.loads(render_codeclimate(again))
    check("Code Quality clean", not any(i["check_name"] == "fluxdrive:incomplete-review" for i in issues))
    check("MCP review result SAFE", "Verdict: SAFE" in mcp_summary(again, []))  # what the MCP review tool returns
    record = json.loads((out / "verdicts" / "synthesis.json").read_text())
    check("synthesis verdict record CLEAN", record["status"] == "CLEAN" or record["summary"].startswith("safe"))
    safety = json.loads((out / "verdicts" / "fd-safety.json").read_text())
    check("fd-safety verdict record CLEAN", safety["status"] == "CLEAN")
    check("summary.md verdict safe", "**Verdict: safe**" in (out / "summary.md").read_text())
    html = (out / "summary.html").read_text()
    check("summary.html verdict SAFE", "verdict v-safe" in html or 'id="verdict-word">SAFE' in html)

    monkeypatch.chdir(repo)
    check("synthesize exit code 0", main(["synthesize", str(out)]) == 0)

    with FakeGitHub(token=gh.TOKEN, owner="octo", repo="app") as github:
        sha = gh.open_pull(github, repo, tmp_path, monkeypatch)
        assert main(["publish", "github", str(out), "--mode", "checks", "--fail-on", "risky", "--sha", sha]) == 0
        run = github.check_runs[-1]
        check("check run success", run["conclusion"] in ("success", "neutral", "skipped"))
        verdict_line = run["output"]["summary"].splitlines()[0]  # the agents' own rows may say "verdict safe"
        check("check run says safe", SAFE_WORD.search(run["output"]["title"] + verdict_line) is not None)
        assert main(["publish", "github", str(out)]) == 0
        body = gh.summary_comments(github)[0]["body"]
        check("PR summary says safe", "✅" in body or "review: ✅ safe" in body)
    with FakeGitLab(token=gl.TOKEN, project_id=gl.PROJECT, project_path="octo/app") as gitlab:
        gl.push(gitlab, repo, monkeypatch)
        assert main(["publish", "gitlab", str(out)]) == 0
        note = gl.summary_notes(gitlab)[0]["body"]
        check("MR summary says safe", "✅" in note)
    LEDGER[name] = said
    assert not said, f"{name}: an incomplete review said safe/success in: {', '.join(said)}"


def test_a_provider_500_for_fd_safety_is_not_safe(
    project: Path, provider: FakeProvider, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """fd-safety's every request gets HTTP 500; fd-correctness reports clean. A real review over the wire."""
    provider.script("Review task for fd-safety", [Error(500)] * 40)
    out = tmp_path / "out-500"
    monkeypatch.chdir(project)
    code = main(
        ["review", "--diff", "main", "--yes", "--quiet", "--runtime", "llm", "--model", "openai:gpt-4o",
         "--agents", "safety,correctness", "--over-budget", "--set", "llm.http_retries=1", "--output-dir", str(out)]
    )  # fmt: skip
    assert code == 1  # documented: an incomplete review exits 1 unless --allow-incomplete
    assert provider.count(route="Review task for fd-safety") >= 1
    _read_back("fd-safety provider 500", out, project, code, tmp_path, monkeypatch)


def _scripted(project: Path, out: Path, runtime: ScriptedRuntime, timeout: float | None) -> Synthesis:
    """A review with the scripted runtime, in process (its exit code is read back through ``synthesize``)."""
    run = run_review(
        ".",
        ReviewOptions(cwd=project, output_dir=out, yes=True, runtime=runtime, timeout_s=timeout,
                      agents=["fd-safety", "fd-correctness"]),
    )  # fmt: skip
    assert run.synthesis is not None and run.synthesis.incomplete, run.synthesis
    assert run.synthesis.verdict == "incomplete"
    return run.synthesis


SCRIPTED: dict[str, Callable[[], tuple[ScriptedRuntime, float | None]]] = {
    "fd-safety crashed": lambda: (ScriptedRuntime({"fd-safety": [Crash("segfault in the model client")]}), None),
    "fd-safety timed out": lambda: (ScriptedRuntime({"fd-safety": [Hang()]}), 2.0),
}


@pytest.mark.parametrize("scenario", sorted(SCRIPTED))
def test_a_crashed_or_timed_out_fd_safety_is_not_safe(
    scenario: str, project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runtime, timeout = SCRIPTED[scenario]()
    out = tmp_path / "out"
    _scripted(project, out, runtime, timeout)
    _read_back(scenario, out, project, None, tmp_path, monkeypatch)


def test_an_old_findings_json_that_said_safe_is_published_as_incomplete(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, project: Path
) -> None:
    """A schema-1 findings.json (written before the fix) with verdict safe and complete false still fails."""
    out = tmp_path / "old"
    out.mkdir()
    (out / "findings.json").write_text(
        json.dumps({"verdict": "safe", "complete": False, "incomplete_reasons": ["fd-safety failed (HTTP 500)"],
                    "counts": {}, "findings": [], "agents": []})
    )  # fmt: skip
    with FakeGitHub(token=gh.TOKEN, owner="octo", repo="app") as github:
        sha = gh.open_pull(github, project, tmp_path, monkeypatch)
        monkeypatch.chdir(project)
        assert main(["publish", "github", str(out), "--mode", "checks", "--fail-on", "never", "--sha", sha]) == 0
        run: dict[str, Any] = github.check_runs[-1]
    assert run["conclusion"] == "failure" and "incomplete" in run["output"]["title"]
    assert not SAFE_WORD.search(run["output"]["title"])
