"""``fluxdrive research``: the question's triage, the offline agents on a real repository, the dispatcher's contract.

The project is a small service written here with a retry module, its test,
a solution note and a git history; the answers are checked against lines
known before the run (the module's line numbers are computed from its text).
One test asks the question of the issue on this repository itself.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from fluxdrive.cli.examples import clean_copy
from fluxdrive.launch.research.model import ResearchAnswer, ResearchRequest
from fluxdrive.research import research
from fluxdrive.research import run as research_run
from fluxdrive.research.offline import _Terms, history_search, repo_search
from fluxdrive.research.query import choose_agents, query_type, terms
from fluxdrive.research.runtime import ResearchRuntime
from tests.conftest import committed_copy

REPO = Path(__file__).resolve().parents[2]
AGENTS = ["best-practices", "framework-docs", "git-history", "learnings", "repo-research"]

RETRY = '''"""Retries for calls to the payment provider."""

import random
import time


class RetryPolicy:
    """Exponential backoff with full jitter, at most five attempts."""

    def __init__(self, attempts: int = 5, base: float = 0.2) -> None:
        self.attempts = attempts
        self.base = base

    def delay(self, attempt: int) -> float:
        return random.uniform(0, self.base * 2**attempt)


def with_retries(call, policy: RetryPolicy):
    """Call until it succeeds or the policy gives up."""
    for attempt in range(policy.attempts):
        try:
            return call()
        except ConnectionError:
            time.sleep(policy.delay(attempt))
    raise RuntimeError("gave up")
'''
CLOCK = '''"""A clock and a block of locked code that must not match the word lock."""

def clock_block():
    return 1
'''


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


@pytest.fixture
def service(tmp_path: Path) -> Path:
    root = tmp_path / "service"
    (root / "payments").mkdir(parents=True)
    (root / "tests").mkdir()
    (root / "docs" / "solutions").mkdir(parents=True)
    _git(root, "init", "-q", "-b", "main")
    _git(root, "config", "user.email", "dev@example.com")
    _git(root, "config", "user.name", "Dev")
    (root / "payments" / "api.py").write_text("def charge(amount):\n    return amount\n")
    (root / "README.md").write_text("# Service\n\nCharges cards.\n")
    _git(root, "add", ".")
    _git(root, "commit", "-qm", "Initial service")
    (root / "payments" / "retry.py").write_text(RETRY)
    (root / "payments" / "clock.py").write_text(CLOCK)
    (root / "tests" / "test_retry.py").write_text(
        "from payments.retry import RetryPolicy, with_retries\n\ndef test_policy():\n    assert RetryPolicy().attempts == 5\n"
    )
    _git(root, "add", ".")
    _git(root, "commit", "-qm", "Retry provider calls with exponential backoff")
    (root / "docs" / "solutions" / "provider-timeouts.md").write_text(
        "---\nproblem_type: integration_issue\n---\n# Provider timeouts during checkout\n\n"
        "We added retries with backoff after the March incident.\n"
    )
    _git(root, "add", ".")
    _git(root, "commit", "-qm", "Solution note: provider timeouts")
    return root


def _line(text: str, needle: str) -> int:
    return next(n for n, line in enumerate(text.splitlines(), 1) if needle in line)


def _request(root: Path, question: str, agent: str, scope: str | None = None) -> ResearchRequest:
    import time

    runtime = ResearchRuntime({}, question, query_type(question)[0], scope)
    return ResearchRequest(runtime.trigger(agent), root, time.monotonic() + 60)


@pytest.mark.parametrize(
    ("question", "kind", "launched"),
    [
        ("how does this project handle retries?", "onboarding", ["repo-research", "framework-docs", "learnings"]),
        ("why is the cache keyed by path?", "why-is-it", ["git-history", "repo-research", "learnings"]),
        ("what changed in the config loader since v1?", "what-changed", ["git-history", "repo-research"]),
        ("how do I paginate with SQLAlchemy 2?", "how-to", ["best-practices", "framework-docs", "learnings"]),
        ("best practice for storing API keys", "best-practice", ["best-practices", "framework-docs", "learnings"]),
        ("the review crashes with KeyError in synthesis", "debug-context",
         ["git-history", "learnings", "framework-docs", "repo-research"]),
    ],
)  # fmt: skip
def test_questions_are_triaged_by_the_affinity_table(question: str, kind: str, launched: list[str]) -> None:
    found, choices = choose_agents(question, AGENTS)
    assert found == kind
    assert [c.agent for c in choices if c.launched] == launched
    assert choose_agents(question, AGENTS) == (found, choices)  # deterministic


def test_terms_expand_synonyms_and_match_identifier_parts_only() -> None:
    words = terms("How does this project handle retries?")
    assert "retry" in words and "backoff" in words and "project" not in words and "how" not in words
    matcher = _Terms(["retry", "lock"])
    assert matcher.find("self.max_retries = 3") == {"retry"}
    assert matcher.find("class RetryPolicy:") == {"retry"}
    assert matcher.find("with self._lock:") == {"lock"}
    assert matcher.find("a block of clock code") == set()


def test_repo_research_cites_the_definitions_that_handle_the_topic(service: Path) -> None:
    answer = repo_search(_request(service, "how does this project handle retries?", "repo-research"))
    first = answer.points[0]
    assert first.text.startswith("payments/retry.py:1 module retry: Retries for calls to the payment provider.")
    details = "\n".join(first.details)
    assert f"payments/retry.py:{_line(RETRY, 'class RetryPolicy')}" in details
    assert f"payments/retry.py:{_line(RETRY, 'def with_retries')}" in details
    assert "covered by tests/test_retry.py" in details
    assert answer.sources[0] == "payments/retry.py"
    assert all("clock.py" not in s for s in answer.sources)  # "clock" and "block" are not "lock"... nor retries
    assert answer.confidence in ("high", "medium")


def test_repo_research_honours_the_scope(service: Path) -> None:
    answer = repo_search(_request(service, "where are charges made?", "repo-research", scope="tests"))
    assert answer.sources == ("tests",)  # payments/api.py defines charge(), outside the scope
    assert answer.points[0].text.startswith("Nothing under tests mentions")


def test_git_history_ranks_commits_that_name_the_terms(service: Path) -> None:
    answer = history_search(_request(service, "why do provider calls use retries?", "git-history"))
    assert "Retry provider calls with exponential backoff" in answer.points[0].text
    assert "payments/retry.py" in answer.points[0].details[0]
    assert all("Initial service" not in p.text for p in answer.points)


def test_research_command_writes_synthesis_reports_and_verdicts(service: Path, cli, monkeypatch) -> None:
    monkeypatch.chdir(service)
    out = service / "out"
    result = cli("research", "how does this project handle retries?", "--scope", ".", "--output-dir", out, "-q")
    assert result.code == 0, result.err
    assert result.out.startswith("# Research: how does this project handle retries?")
    synthesis = (out / "synthesis.md").read_text()
    headings = [line for line in synthesis.splitlines() if line.startswith("## ")]
    assert headings == ["## Answer", "## Evidence", "## Disagreements", "## Confidence", "## Gaps"]
    answer = synthesis.split("## Evidence")[0]
    assert "payments/retry.py:1" in answer
    assert "docs/solutions/provider-timeouts.md" in synthesis  # learnings found the solution note
    assert "framework-docs skipped: needs the web or a model" in synthesis
    record = json.loads((out / "research.json").read_text())
    status = {a["agent"]: a["status"] for a in record["agents"]}
    assert status == {
        "repo-research": "completed", "learnings": "completed", "framework-docs": "skipped",
        "best-practices": "not launched", "git-history": "not launched",
    }  # fmt: skip
    assert record["query_type"] == "onboarding"
    assert any(c.startswith("payments/retry.py:") for c in record["citations"]["files"])
    for agent in ("repo-research", "learnings"):
        report = (out / f"{agent}.md").read_text()
        assert "### Findings Index" in report and "Verdict: safe" in report and "### Sources" in report
        verdict = json.loads((out / "verdicts" / f"{agent}.json").read_text())
        assert verdict["status"] == "CLEAN" and verdict["summary"].startswith("answered, ")
    assert not (out / "framework-docs.md").exists()


def test_a_crashing_research_agent_is_an_error_stub_not_an_answer(service: Path, monkeypatch) -> None:
    def crash(request: ResearchRequest) -> ResearchAnswer:
        raise OSError("disk on fire")

    real = research_run._executors

    def executors(*args, **kwargs):
        table = real(*args, **kwargs)
        table["repo-research"] = crash
        return table

    monkeypatch.setattr(research_run, "_executors", executors)
    result = research("how does this project handle retries?", project=service, output_dir=service / "out")
    runs = {r.agent: r for r in result.runs}
    assert runs["repo-research"].status == "error" and "disk on fire" in runs["repo-research"].note
    assert "Verdict: error" in (service / "out" / "repo-research.md").read_text()
    verdict = json.loads((service / "out" / "verdicts" / "repo-research.json").read_text())
    assert verdict["status"] == "ERROR"
    assert any("repo-research error" in gap for gap in result.synthesis.gaps)
    assert all("(repo-research)" not in line for line in result.synthesis.answer)


def test_scope_outside_the_project_is_refused(service: Path, cli, monkeypatch, tmp_path: Path) -> None:
    monkeypatch.chdir(service)
    result = cli("research", "retries", "--scope", tmp_path)
    assert result.code == 2
    assert result.err.count("\n") == 1 and "outside the project root" in result.err
    assert not (tmp_path / "docs").exists()


def test_this_repository_answers_how_it_handles_retries(tmp_path: Path) -> None:
    """On a committed copy of this package: research caches the project's domains, and the suite leaves
    nothing in the repository it runs from."""
    source = tmp_path / "source"
    clean_copy(REPO / "fluxdrive", source / "fluxdrive")
    (source / "pyproject.toml").write_bytes((REPO / "pyproject.toml").read_bytes())
    project = committed_copy(source, tmp_path / "repo")
    result = research("how does this project handle retries?", project=project, output_dir=tmp_path / "out")
    answer = "\n".join(result.synthesis.answer)
    assert "fluxdrive/runtimes/llm/backoff.py" in answer
    assert result.synthesis.confidence == "high"


def test_web_agents_answer_on_a_model_through_the_provider_wire(service: Path, monkeypatch) -> None:
    """--model: best-practices and framework-docs run on the (fake, wire-level) provider; no search key: no web."""
    from tests.fakes.llm_server import FakeProvider, ToolCall

    answer = {
        "sources": ["payments/retry.py", "from model knowledge: SQLAlchemy 2.0 pagination docs"],
        "findings": ["Use keyset pagination with a unique ordering column."],
        "confidence": "medium",
        "confidence_note": "documented practice, not checked against current docs",
        "gaps": [],
    }
    with FakeProvider() as provider:
        monkeypatch.setenv("OPENAI_BASE_URL", provider.base_url_openai)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test-0123456789abcdefghijklmn")
        provider.script("best-practices", ToolCall("final_result", answer))
        provider.script("framework-docs", ToolCall("final_result", {**answer, "confidence": "high"}))
        result = research(
            "how do I paginate with SQLAlchemy 2?", project=service, output_dir=service / "out", model="openai:gpt-4o"
        )
        requests = provider.requests
    runs = {r.agent: r for r in result.runs}
    assert runs["best-practices"].status == "completed" and runs["framework-docs"].status == "completed"
    assert result.synthesis.answer[0].startswith("Use keyset pagination")
    assert any("no web access in this run" in gap for gap in result.synthesis.gaps)
    assert len(requests) == 2  # one call per agent, to the provider's wire
    record = json.loads((service / "out" / "research.json").read_text())
    assert record["model"] == "openai:gpt-4o"
    verdict = json.loads((service / "out" / "verdicts" / "framework-docs.json").read_text())
    assert verdict["status"] == "CLEAN" and verdict["tokens"] > 0
