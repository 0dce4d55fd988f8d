"""Confidence from measurement: precision per rule and agent-model pair, from feedback and eval runs.

Real things: a SQLite history under the test's XDG_DATA_HOME (conftest's
isolated_state), real offline static reviews of a small git project, the
real ``fluxdrive feedback`` (one subprocess, the rest in process through
``fluxdrive.cli.main``) and a real ``fluxdrive eval run`` over a fixture.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from fluxdrive.publish.render import finding_comment
from fluxdrive.publish.report import load_run
from fluxdrive.runs.history import open_history
from fluxdrive.runs.precision import record, snapshot, table
from fluxdrive.synthesis import measured
from fluxdrive.synthesis.measured import AGENT_MODEL, RULE, Tally, assess
from tests.conftest import commit_all, run_fluxdrive, user_config_file
from tests.eval.test_eval import APP, TRUTH

SQLI = ("rule", "fluxdrive:py-sql-injection")
DOCSTRING = ("rule", "fluxdrive:py-missing-docstring")
STATIC_SAFETY = ("agent-model", "fd-safety@static:fluxdrive-static-0.1.0")


def _configure(**synthesis: object) -> None:
    lines = ["[synthesis]", *(f"{key} = {value}" for key, value in synthesis.items())]
    user_config_file().write_text("\n".join(lines) + "\n", encoding="utf-8")


def _project(root: Path) -> Path:
    root.mkdir(parents=True)
    (root / "app.py").write_text(APP, encoding="utf-8")
    return commit_all(root)


def _review(cli: Any, out: Path, *, console: list[str] | None = None) -> dict[str, Any]:
    done = cli("review", ".", "--yes", *([] if console is not None else ["-q"]), "--output-dir", out)
    assert done.code in (0, 1), done.err
    if console is not None:
        console.append(done.out)
    findings: dict[str, Any] = json.loads((out / "findings.json").read_text(encoding="utf-8"))
    return findings


def _sqli(findings: dict[str, Any]) -> dict[str, Any]:
    found: list[dict[str, Any]] = [f for f in findings["findings"] if f["rules"] == [SQLI[1]]]
    assert len(found) == 1, findings["findings"]
    return found[0]


# --- the pure rules --------------------------------------------------------------------------------------


def test_assess_needs_enough_judged_findings_prefers_rules_and_demotes_only_on_a_rule() -> None:
    keys = [(RULE, "ruff:S108"), (RULE, "semgrep:tmp"), (AGENT_MODEL, "fd-safety@openai:gpt")]
    thin = {(RULE, "ruff:S108"): Tally(1, 8), (AGENT_MODEL, "fd-safety@openai:gpt"): Tally(18, 2)}
    by_model = assess(thin, "P1", keys, min_judged=10, demote_below=0.3)
    assert by_model is not None and (by_model.kind, by_model.confidence, by_model.demoted_from) == (
        AGENT_MODEL,
        "high",
        None,
    ), "9 judged findings of the rule are not enough: the agent-model pair's 20 are"
    assert by_model.sentence == "confidence high: 18 of 20 judged findings of this agent and model were right"

    ruled = {**thin, (RULE, "ruff:S108"): Tally(2, 10), (RULE, "semgrep:tmp"): Tally(6, 4)}
    found = assess(ruled, "P0", keys, min_judged=10, demote_below=0.3)
    assert found is not None and (found.key, found.precision, found.demoted_from) == ("ruff:S108", 0.1667, "P0")
    assert found.sentence.endswith("2 of 12 judged findings of this rule were right (demoted from P0)")
    assert measured.lowered("P0") == "P1" and measured.lowered("P1") == "P2" and measured.lowered("P2") == "P2"
    assert assess(ruled, "P0", keys, min_judged=10, demote_below=0).demoted_from is None, "0 disables demotion"  # type: ignore[union-attr]
    assert assess(ruled, "P2", keys, min_judged=10, demote_below=0.3).demoted_from is None, "only P0/P1 drop"  # type: ignore[union-attr]
    assert assess(ruled, "P1", keys, min_judged=100, demote_below=0.3) is None
    assert [measured.confidence_of(p) for p in (0.8, 0.79, 0.5, 0.49)] == ["high", "medium", "medium", "low"]


def test_table_adds_up_in_sqlite_and_snapshot_keeps_what_counts(tmp_path: Path) -> None:
    with open_history() as connection:
        assert record(connection, [([SQLI, STATIC_SAFETY], True), ([SQLI], False), ([DOCSTRING], False)]) == 3
        record(connection, [([SQLI, SQLI], True)])  # a key listed twice counts once
    with open_history() as connection:
        assert table(connection) == {SQLI: Tally(2, 1), STATIC_SAFETY: Tally(1, 0), DOCSTRING: Tally(0, 1)}
    _configure(measured_min_judged=2)
    from fluxdrive.config import load_config

    settings = load_config(tmp_path).config.synthesis
    path = snapshot(tmp_path, settings)
    assert measured.read(tmp_path, tmp_path) == ({SQLI: Tally(2, 1)}, []), "keys under the minimum are left out"
    path.write_text('{"entries": [{"kind": "rule", "key": "x", "right": -1, "wrong": 0}]}', encoding="utf-8")
    table_read, notes = measured.read(tmp_path, tmp_path)
    assert table_read == {} and len(notes) == 1 and "ignored" in notes[0], "a bad file is a note, never a crash"


# --- feedback moves the confidence; a re-synthesis does not ------------------------------------------------


def test_feedback_lowers_a_rules_confidence_and_demotes_it_on_the_next_review(
    tmp_path: Path, cli: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    _configure(measured_min_judged=3, demote_below_precision=0.3)
    project = _project(tmp_path / "shop")
    monkeypatch.chdir(project)
    first = _review(cli, tmp_path / "first")
    before = _sqli(first)
    assert (before["severity"], before["confidence"], before["measured"]) == ("P0", "high", None)

    done = run_fluxdrive("feedback", "discard", tmp_path / "first", before["id"], cwd=project)  # the real command
    assert done.code == 0, done.err
    for _ in range(2):
        assert cli("feedback", "discard", tmp_path / "first", before["id"]).code == 0
    with open_history() as connection:
        counts = table(connection)
    assert counts[SQLI] == Tally(0, 3) and counts[STATIC_SAFETY] == Tally(0, 3)

    again = cli("synthesize", tmp_path / "first")
    assert again.code in (0, 1), again.err
    resynthesized = json.loads((tmp_path / "first" / "findings.json").read_text(encoding="utf-8"))
    assert _sqli(resynthesized)["measured"] is None, "a run keeps the measured table it was reviewed with"

    shown_console: list[str] = []
    second = _review(cli, tmp_path / "second", console=shown_console)
    after = _sqli(second)
    (line,) = [line for line in shown_console[0].splitlines() if line.lstrip().startswith(after["id"] + " ")]
    assert "[measured 0/3 right, demoted from P0]" in line, shown_console[0]
    assert (after["severity"], after["confidence"]) == ("P1", "low"), after
    assert after["measured"] == {
        "kind": "rule",
        "key": SQLI[1],
        "precision": 0.0,
        "judged": 3,
        "right": 0,
        "demoted_from": "P0",
    }
    sarif = json.loads((tmp_path / "second" / "findings.sarif").read_text(encoding="utf-8"))
    (shown,) = [r["properties"] for r in sarif["runs"][0]["results"] if r["properties"]["fluxdriveId"] == after["id"]]
    assert shown["measured"] == {"key": SQLI[1], "precision": 0.0, "judged": 3, "demotedFrom": "P0"}
    summary = (tmp_path / "second" / "summary.md").read_text(encoding="utf-8")
    assert "confidence low: 0 of 3 judged findings of this rule were right (demoted from P0)" in summary
    (published,) = [f for f in load_run(tmp_path / "second").findings if f.rules == (SQLI[1],)]
    assert "Measured confidence low: 0 of 3 judged findings of this rule were right" in finding_comment(published)


# --- an eval run judges every finding it produced -----------------------------------------------------------


def test_eval_run_records_right_and_wrong_findings_and_the_next_review_shows_them(
    tmp_path: Path, cli: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    _configure(measured_min_judged=1)
    suite = tmp_path / "suite" / "tiny-sqli"
    (suite / "project").mkdir(parents=True)
    (suite / "project" / "app.py").write_text(APP, encoding="utf-8")
    (suite / "ground-truth.json").write_text(json.dumps(TRUTH), encoding="utf-8")
    assert cli("eval", "run", suite).code == 0

    with open_history() as connection:
        counts = table(connection)
    assert counts[SQLI] == Tally(1, 0) and counts[STATIC_SAFETY] == Tally(1, 0), "matched to the ground truth"
    assert counts[DOCSTRING].right == 0 and counts[DOCSTRING].wrong >= 1, "left over: a false positive"

    monkeypatch.chdir(_project(tmp_path / "shop"))
    findings = _review(cli, tmp_path / "out")
    sqli = _sqli(findings)
    assert (sqli["severity"], sqli["confidence"], sqli["measured"]["precision"]) == ("P0", "high", 1.0)
    docstrings = [f for f in findings["findings"] if f["rules"] == [DOCSTRING[1]]]
    assert docstrings and all(f["measured"]["key"] == DOCSTRING[1] for f in docstrings)
    assert all(f["confidence"] == "low" and f["measured"]["demoted_from"] is None for f in docstrings), "P3 stays"
