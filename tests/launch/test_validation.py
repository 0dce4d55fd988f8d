"""Cross-model validation and model floors (issue 31, item 2), end to end through the wire-level fake provider.

Real ``fluxdrive review --runtime llm`` processes: the reviewers talk to the fake's OpenAI endpoint, the
checker to its Anthropic endpoint (a model of another family), and only the models' answers are scripted.
A P0 the checker rejects no longer fails ``--fail-on risky`` but is shown as "not confirmed" everywhere;
a confirmed P0 still blocks. The second run also puts fd-safety below its model floor. The last tests call
the validation step directly on a run directory with a stand-in for the checker call.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from fluxdrive.config.model import Config, ValidationConfig
from fluxdrive.launch.validation import checker_for, validate
from fluxdrive.publish.render import finding_comment
from fluxdrive.publish.report import load_run
from fluxdrive.runs.decisions import DecisionLog
from fluxdrive.runs.decisions import read as read_decisions
from tests.conftest import CliResult, committed_copy, run_fluxdrive
from tests.fakes.llm_server import FakeProvider, Text

KEY = "sk-test-SECRETSECRETSECRET0123456789"
CLEAN = "### Findings Index\nVerdict: safe\n\n### Summary\nNothing in my lane.\n"
PRICES = (
    '"""Prices."""\n\n\ndef average(prices):\n    total = 0\n    for price in prices:\n        total += price\n'
    "    return total / len(prices)\n\n\ndef discount(price, percent):\n    return price - price * percent / 100\n"
)
EMPTY = "average divides by zero when it is given no prices"
NEGATIVE = "discount returns a negative price for a percent above 100"
REPORT = (
    "### Findings Index\n"
    f'- P0 | SF-001 | "app/prices.py" | {EMPTY} | app/prices.py:8\n'
    f'- P1 | SF-002 | "app/prices.py" | {NEGATIVE} | app/prices.py:12\n'
    "Verdict: risky\n\n### Summary\nTwo findings.\n\n### SF-001\nlen(prices) is 0 for an empty list.\n"
)
CHECKER = "anthropic:claude-sonnet-4-6"
REJECTION = "every caller checks for an empty list first"


def _review(project: Path, out: Path, *extra: str) -> CliResult:
    return run_fluxdrive(
        "review", ".", "--yes", "--expand", "none", "--runtime", "llm", "--fail-on", "risky",
        "--agents", "fd-safety,fd-correctness",
        "--set", f'validation.checker=["openai:gpt-4o", "{CHECKER}"]', "--output-dir", out, *extra, cwd=project,
    )  # fmt: skip


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """Two reviews: the checker rejects the injection P0 (run ``rejected``), or confirms it (``confirmed``)."""
    base = tmp_path_factory.mktemp("validation")
    with pytest.MonkeyPatch.context() as patch, FakeProvider(default=Text(CLEAN)) as fake:
        patch.setenv("OPENAI_BASE_URL", fake.base_url_openai)
        patch.setenv("OPENAI_API_KEY", KEY)
        patch.setenv("ANTHROPIC_BASE_URL", fake.base_url_anthropic)
        patch.setenv("ANTHROPIC_API_KEY", KEY)
        fake.script("Review task for fd-safety", [Text(REPORT)])
        fake.script(f"{EMPTY}\nPlace: app/prices.py:8", [Text(f"REJECTED: {REJECTION}")])
        fake.script(f"{NEGATIVE}\nPlace: app/prices.py:12", [Text("I think this might be a problem.")])
        source = base / "source"
        (source / "app").mkdir(parents=True)
        (source / "app" / "prices.py").write_text(PRICES)
        project = committed_copy(source, base / "project")
        rejected = _review(project, base / "rejected", "--model", "openai:gpt-4o")
        first = fake.requests
        fake.script(f"{EMPTY}\nPlace: app/prices.py:8", [Text("CONFIRMED: len(prices) is 0 for an empty list")])
        confirmed = _review(project, base / "confirmed", "--model", "openai:gpt-4o-mini")
        yield {"rejected": rejected, "confirmed": confirmed, "base": base, "project": project,
               "first": first, "all": fake.requests}  # fmt: skip


def _findings(out: Path) -> dict[str, dict[str, Any]]:
    document = json.loads((out / "findings.json").read_text())
    return {f["source_ids"]["fd-safety"]: f for f in document["findings"] if "fd-safety" in f["source_ids"]}


def test_a_rejected_p0_does_not_fail_the_review_but_is_shown_not_confirmed(runs: dict[str, Any]) -> None:
    done, out = runs["rejected"], runs["base"] / "rejected"
    assert done.code == 0, done.err + done.out
    assert "[not confirmed]" in done.out, done.out
    found = _findings(out)
    injection = found["SF-001"]
    assert injection["severity"] == "P2"
    assert injection["validation"] == {
        "status": "not-confirmed",
        "checker": CHECKER,
        "reason": REJECTION,
        "demoted_from": "P0",
        "producer": "openai-compatible:gpt-4o",
    }
    # Garbage from the checker is "unclear": recorded, not a rejection - the P1 keeps its severity.
    assert found["SF-002"]["severity"] == "P1" and found["SF-002"]["validation"]["status"] == "unclear"
    assert f"**[not confirmed]** {CHECKER}: {REJECTION} (demoted from P0)" in (out / "summary.md").read_text()

    results = json.loads((out / "findings.sarif").read_text())["runs"][0]["results"]
    line8 = next(r for r in results if r["locations"][0]["physicalLocation"]["region"]["startLine"] == 8)
    assert line8["level"] == "note" and line8["properties"]["validation"]["status"] == "not-confirmed"
    published = next(f for f in load_run(out, runs["project"]).findings if f.title == EMPTY)
    assert f"Not confirmed: {CHECKER}: {REJECTION}" in finding_comment(published)

    records = [d for d in read_decisions(out) if d["kind"] == "validation"]
    assert {(d["decision"]["status"], d["decision"]["checker"]) for d in records} == {
        ("rejected", CHECKER),
        ("unclear", CHECKER),
    }
    assert all(d["inputs"]["producer"] == "openai-compatible:gpt-4o" for d in records)
    lines = [json.loads(x) for x in (out / "validation.jsonl").read_text().splitlines()]
    assert sorted(x["status"] for x in lines) == ["rejected", "unclear"]
    calls = json.loads((out / "run.json").read_text())["model_calls"]
    checked = [c for c in calls if c["name"].startswith("validation ")]
    assert [c["provenance"]["model_id"] for c in checked] == ["claude-sonnet-4-6"] * 2
    assert all(c["usage"]["tokens_in"] > 0 for c in checked)


def test_the_checker_is_asked_on_the_other_familys_endpoint(runs: dict[str, Any]) -> None:
    checks = [r for r in runs["first"] if r.route and "Place: app/prices.py" in r.route]
    assert len(checks) == 2
    assert all(r.api == "anthropic" and r.path.endswith("/messages") for r in checks)
    assert all(r.body["model"] == "claude-sonnet-4-6" and not r.body.get("tools") for r in checks)
    asked = json.dumps(checks[0].body)
    assert "return total / len(prices)" in asked  # the cited code, read from the project, is in the question
    reviews = [r for r in runs["first"] if r.route == "Review task for fd-safety"]
    assert reviews and all(r.api == "openai" for r in reviews)


def test_a_confirmed_p0_still_blocks_and_a_weak_model_is_floored(runs: dict[str, Any]) -> None:
    done, out = runs["confirmed"], runs["base"] / "confirmed"
    assert done.code == 1, done.err + done.out
    injection = _findings(out)["SF-001"]
    assert injection["severity"] == "P0" and injection["validation"]["status"] == "confirmed"
    assert "[not confirmed]" not in done.out
    floors = {d["decision"]["agent"]: d for d in read_decisions(out) if d["kind"] == "model-floor"}
    assert floors["fd-safety"]["decision"]["model"] == "openai:gpt-4o"
    assert floors["fd-safety"]["inputs"] == {
        "agent": "fd-safety",
        "role": "challenger",
        "chosen": "openai:gpt-4o-mini",
        "tier": "small",
        "minimum": "standard",
    }
    agents = json.loads((out / "run.json").read_text())["agents"]
    assert agents["fd-safety"]["provenance"]["model_id"] == "gpt-4o"
    assert any("fd-safety runs on openai:gpt-4o, not openai:gpt-4o-mini" in n for n in json.loads(
        (out / "findings.json").read_text())["notes"])  # fmt: skip


def test_the_checker_is_of_another_family() -> None:
    listed = Config(validation=ValidationConfig(checker=["openai:gpt-4o", CHECKER]))
    assert checker_for({"openai"}, listed) == CHECKER
    assert checker_for({"anthropic"}, listed) == "openai:gpt-4o"
    assert checker_for({"anthropic", "openai"}, listed) is None
    by_family = Config(validation=ValidationConfig(checker={"openai": "openai:gpt-5", "anthropic": "openai:gpt-4o"}))
    assert checker_for({"openai"}, by_family) is None  # a checker of the producer's own family is never used
    assert checker_for({"anthropic"}, by_family) == "openai:gpt-4o"


def _run_dir(tmp_path: Path) -> Path:
    (tmp_path / ".git").mkdir()
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "prices.py").write_text(PRICES)
    out = tmp_path / "run"
    out.mkdir()
    (out / "fd-safety.md").write_text(REPORT)
    return out


def _validate(out: Path, config: Config, ask: Any) -> Any:
    return asyncio.run(validate(out, out.parent, config, lambda agent: "openai:gpt-4o", ask, DecisionLog(out)))


def test_without_a_checker_of_another_family_nothing_is_silently_trusted(tmp_path: Path) -> None:
    out = _run_dir(tmp_path)

    async def never(*_: str) -> tuple[str, dict[str, Any]]:
        raise AssertionError("no checker may be asked")

    done = _validate(out, Config(validation=ValidationConfig(checker=["openai:gpt-5"])), never)
    assert [c.status for c in done.checks] == ["unvalidated", "unvalidated"]
    assert any("not validated" in n and "validation.checker" in n for n in done.notes)
    assert [d["decision"]["status"] for d in read_decisions(out)] == ["unvalidated", "unvalidated"]


def test_a_failed_check_is_unclear_with_a_note_not_a_crash(tmp_path: Path) -> None:
    out = _run_dir(tmp_path)

    async def broken(*_: str) -> tuple[str, dict[str, Any]]:
        raise ConnectionError("connection refused")

    done = _validate(out, Config(validation=ValidationConfig(checker=[CHECKER])), broken)
    assert {c.status for c in done.checks} == {"unclear"} and done.model_calls == []
    assert any("failed (ConnectionError: connection refused): left unclear" in n for n in done.notes)
    assert len((out / "validation.jsonl").read_text().splitlines()) == 2


def test_a_checker_whose_key_is_missing_is_refused_before_any_request(tmp_path: Path) -> None:
    """The reviewers could run, but the checker's key is not in the environment: exit 2 before any model call,
    not a paid review whose every check ends unclear."""
    source = tmp_path / "source"
    (source / "app").mkdir(parents=True)
    (source / "app" / "prices.py").write_text(PRICES)
    project = committed_copy(source, tmp_path / "project")
    with pytest.MonkeyPatch.context() as patch, FakeProvider(default=Text(CLEAN)) as fake:
        patch.setenv("OPENAI_BASE_URL", fake.base_url_openai)
        patch.setenv("OPENAI_API_KEY", KEY)
        patch.delenv("ANTHROPIC_API_KEY", raising=False)
        refused = _review(project, tmp_path / "refused", "--model", "openai:gpt-4o")
        assert refused.code == 2, refused.err
        assert fake.requests == []
        line = refused.err.strip().splitlines()[-1]
        assert "claude-sonnet-4-6 (validation.checker) cannot be called" in line and "ANTHROPIC_API_KEY" in line
        assert "Traceback" not in refused.err and KEY not in refused.err
        allowed = _review(
            project, tmp_path / "allowed", "--model", "openai:gpt-4o", "--set", "validation.enabled=false"
        )
        assert allowed.code == 0, allowed.err
        assert fake.requests, "with validation off the review runs"
