"""The hard cost ceiling (issue 31, item 5): an estimate in dollars before dispatch, a cap enforced on every request.

End to end, a real ``fluxdrive review --runtime llm`` process talks to the wire-level fake provider, whose
usage is deterministic (input tokens = len(body) // 4). The prices are set high and the agent default low, so
the up-front estimate is well under the cap while a reviewer that keeps calling tools spends past it: the
meter must stop it before a request that could pass the cap, and the verdict must be incomplete. The meter
itself is tested as plain data, threads included.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from fluxdrive.runtimes.llm.spend import CostCeilingError, SpendMeter, Stop
from tests.conftest import CliResult, committed_copy, run_fluxdrive
from tests.fakes.llm_server import FakeProvider, Text, ToolCall

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "projects" / "py-webapp"
KEY = "sk-test-SECRETSECRETSECRET0123456789"
CLEAN = "### Findings Index\nVerdict: safe\n\n### Summary\nNothing in my lane.\n"
USD_PER_MTOK = 100.0  # both directions: a request of ~5k input tokens costs ~$0.5
CONFIG = f"""[llm]
max_output_tokens = 256
max_turns = 40
[llm.prices."openai:gpt-4o"]
input_per_mtok = {USD_PER_MTOK}
output_per_mtok = {USD_PER_MTOK}
[budget]
review_agent_default = 1000
"""
TOOL_TURNS = 10  # uncapped, fd-safety makes 11 requests and fd-correctness 1
CAP = 3.0


def _review(tmp_path: Path, name: str, *extra: str) -> tuple[CliResult, FakeProvider, Path]:
    project = committed_copy(FIXTURE, tmp_path / name)
    (project / ".fluxdrive").mkdir(exist_ok=True)
    (project / ".fluxdrive" / "config.toml").write_text(CONFIG, encoding="utf-8")
    with FakeProvider(default=Text(CLEAN)) as provider:
        provider.script(
            "Review task for fd-safety",
            [*[ToolCall("read_file", {"path": "shop/db.py"})] * TOOL_TURNS, Text(CLEAN)],
        )
        out = tmp_path / f"{name}-run"
        env_run = _with_env(provider)
        done = env_run(
            "review", ".", "--yes", "--expand", "none", "--runtime", "llm", "--model", "openai:gpt-4o",
            "--agents", "fd-safety,fd-correctness", "--trust-project-config", "--fail-on", "risky",
            "--output-dir", out, *extra, cwd=project,
        )  # fmt: skip
    return done, provider, out


def _with_env(provider: FakeProvider) -> Any:
    def run(*args: Any, cwd: Path) -> CliResult:
        with pytest.MonkeyPatch.context() as patch:
            patch.setenv("OPENAI_BASE_URL", provider.base_url_openai)
            patch.setenv("OPENAI_API_KEY", KEY)
            return run_fluxdrive(*args, cwd=cwd)

    return run


@pytest.fixture
def capped(tmp_path: Path) -> Iterator[tuple[CliResult, FakeProvider, Path]]:
    yield _review(tmp_path, "shop", "--max-cost", str(CAP))  # function scope: the suite's isolated history


def test_the_ceiling_stops_a_run_whose_real_usage_passes_it(capped: tuple[CliResult, FakeProvider, Path]) -> None:
    done, provider, out = capped
    assert done.code == 1, done.err  # incomplete: exit 1 under --fail-on risky
    assert "INCOMPLETE" in done.out
    assert "Cost: about $0.2000 estimated (stage1 $0.2000), cap $3.0000" in done.err
    requests = provider.requests
    assert len(requests) < TOOL_TURNS + 2  # an uncapped run makes 12
    spent = sum(max(1, len(json.dumps(r.body)) // 4) for r in requests) * USD_PER_MTOK / 1e6
    assert spent <= CAP  # no request started that could pass the cap (outputs are a few tokens each)

    findings = json.loads((out / "findings.json").read_text())
    assert findings["complete"] is False and findings["verdict"] != "safe"
    assert any("cost ceiling reached ($" in r for r in findings["incomplete_reasons"])
    run = json.loads((out / "run.json").read_text())
    assert run["agents"]["fd-safety"]["outcome"] == "error"
    assert any(n.startswith("cost ceiling reached: $") and "fd-safety" in n for n in run["notes"])
    assert "cost ceiling reached" in (out / "fd-safety.md").read_text()
    assert "retrying" not in done.err  # a retry cannot help an agent the ceiling stopped

    estimate = json.loads((out / "triage.json").read_text())["estimate"]
    assert estimate["cap_usd"] == CAP and estimate["total"] == {"tokens": 2000, "usd": 0.2}
    assert estimate["phases"] == {"stage1": {"tokens": 2000, "usd": 0.2}}
    assert {a["agent"]: a["usd"] for a in estimate["agents"]} == {"fd-correctness": 0.1, "fd-safety": 0.1}

    decisions = [json.loads(line) for line in (out / "decisions.jsonl").read_text().splitlines()]
    kinds = {d["kind"]: d for d in decisions}
    assert kinds["cost-estimate"]["decision"] == {"dispatch": True, "within_cap": True}
    ceiling = kinds["cost-ceiling"]
    assert ceiling["decision"]["agent"] == "fd-safety" and ceiling["inputs"]["cap_usd"] == CAP
    assert ceiling["inputs"]["spent_usd"] + ceiling["inputs"]["worst_case_usd"] > CAP


def test_an_estimate_over_the_cap_is_refused_before_any_request(tmp_path: Path) -> None:
    done, provider, out = _review(tmp_path, "over", "--max-cost", "0.05", "--over-budget")
    assert done.code == 2, done.err
    assert provider.requests == []
    line = [e for e in done.err.splitlines() if "cost ceiling" in e]
    assert len(line) == 1 and "about $0.2000, over the cost ceiling of $0.0500" in line[0]
    assert "--over-budget does not lift it" in line[0]
    assert "Traceback" not in done.err
    decisions = [json.loads(x) for x in (out / "decisions.jsonl").read_text().splitlines()]
    assert decisions[-1]["kind"] == "cost-estimate" and decisions[-1]["decision"]["dispatch"] is False


# ---------------------------------------------------------------- the meter


def test_the_meter_refuses_a_request_whose_worst_case_passes_the_cap() -> None:
    stops: list[Stop] = []
    meter = SpendMeter(1.0, on_stop=stops.append)
    held = meter.reserve("a", 0.6)
    meter.settle(held, 0.5)
    with pytest.raises(CostCeilingError) as refused:
        meter.reserve("a", 0.6)  # 0.5 spent + 0.6 worst case > 1.0, although 0.5 + its real cost might fit
    assert refused.value.stop.reason == "cost ceiling reached ($0.5000 of $1.0000)"
    with pytest.raises(CostCeilingError):
        meter.reserve("a", 0.6)
    assert meter.reserve("b", 0.4) == 0.4  # a request that fits still starts
    assert [s.agent for s in stops] == ["a"]  # one decision per agent stopped
    assert (
        meter.stopped() == ["a"] and "fd" not in meter.notes()[0] and "$0.5000 spent of the $1.0000" in meter.notes()[0]
    )


def test_reservations_keep_concurrent_requests_under_the_cap() -> None:
    meter = SpendMeter(10.0)
    started: list[float] = []
    lock = threading.Lock()

    def agent(name: str) -> None:
        for _ in range(50):
            try:
                held = meter.reserve(name, 0.3)
            except CostCeilingError:
                return
            with lock:
                started.append(held)
            meter.settle(held, 0.25)

    threads = [threading.Thread(target=agent, args=(f"fd-{i}",)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert meter.reserved == pytest.approx(0.0)
    assert meter.spent == pytest.approx(0.25 * len(started))
    assert meter.spent <= 10.0 and meter.spent + 0.3 > 10.0  # stopped exactly when the next worst case would pass
    assert meter.requests == len(started)


def test_without_a_cap_the_meter_only_counts() -> None:
    meter = SpendMeter(None)
    meter.settle(meter.reserve("a", 1e9), 2.0)
    assert meter.spent == 2.0 and not meter.hit and meter.notes() == []
