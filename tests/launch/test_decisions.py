"""decisions.jsonl (issue 31, item 6): each decision of a run, in order, with the inputs it was taken from.

Real offline reviews of the fixture shop through the CLI: a staged run records triage, staging,
dropout, the expansion recommendation and the choice; the same inputs write the same file.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fluxdrive.runs.decisions import DecisionLog, read
from tests.conftest import committed_copy, run_fluxdrive

SHOP = Path(__file__).resolve().parents[1] / "fixtures" / "projects" / "py-webapp"


def _staged_review(project: Path, out: Path) -> list[dict]:
    done = run_fluxdrive(
        "review", ".", "--yes", "--fail-on", "never", "--output-dir", out, "-q",
        "--set", "selection.staging=always", "--expand", "all", cwd=project,
    )  # fmt: skip
    assert done.code == 0, done.err
    return read(out)


def test_a_staged_run_records_each_decision_with_its_inputs(tmp_path: Path) -> None:
    project = committed_copy(SHOP, tmp_path / "shop")
    decisions = _staged_review(project, tmp_path / "run")
    kinds = ["triage", "staging", "cost-estimate", "dropout", "expansion", "choice", "reaction-gate"]
    assert [d["kind"] for d in decisions] == kinds
    assert [d["seq"] for d in decisions] == list(range(1, len(kinds) + 1))
    triage, staging, cost, dropout, expansion, choice, reaction = decisions
    assert cost["decision"] == {"within_cap": True, "dispatch": True}, cost
    assert reaction["decision"]["run"] is False, "an offline review has nobody who can react"
    plan = json.loads((tmp_path / "run" / "triage.json").read_text())
    assert staging["decision"]["stage1"] == plan["stages"]["1"] and staging["decision"]["stage2"] == plan["stages"]["2"]
    assert {s["name"] for s in triage["inputs"]["scores"]} == {a["name"] for a in triage["decision"]["agents"]}
    assert "web-api" in {d["profile"] for d in triage["inputs"]["domains"]}
    assert set(dropout["inputs"]["candidates"]) == {r["agent"] for r in dropout["decision"]["rows"]}
    assert dropout["inputs"]["config"]["threshold"] == 0.6  # the formula's settings, as data
    assert expansion["inputs"]["stage1_findings"], "the findings the recommendation was computed from"
    assert choice == {"seq": 6, "kind": "choice", "decision": {"stage2": choice["decision"]["stage2"]},
                      "inputs": {"mode": "all"}}  # fmt: skip
    assert sorted(choice["decision"]["stage2"]) == sorted(staging["decision"]["stage2"])


def test_the_same_inputs_write_the_same_decisions(tmp_path: Path) -> None:
    project = committed_copy(SHOP, tmp_path / "shop")
    first = _staged_review(project, tmp_path / "one")
    second = _staged_review(project, tmp_path / "two")
    assert first == second


def test_a_planted_link_is_not_followed(tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("keep\n")
    run = tmp_path / "run"
    run.mkdir()
    (run / "decisions.jsonl").symlink_to(outside)
    with pytest.raises(OSError):  # O_NOFOLLOW: refused, never written through
        DecisionLog(run).record("choice", {"stage2": []}, {"mode": "none"})
    assert outside.read_text() == "keep\n"
