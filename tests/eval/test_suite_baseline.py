"""The starter suite (evals/) under the static runtime is exactly its committed baseline (evals/baseline.json).

The README's eval figures are that file (``fluxdrive eval report evals/ --format
summary``, a generated example block), so the baseline must be what a fresh
clone measures: a change that makes the offline reviewers find less, report
more noise or hit more decoys fails here, and so does one that improves them
until the baseline and the README are regenerated in the same commit
(``fluxdrive eval baseline evals/`` then ``make docs``).
"""

from __future__ import annotations

import json
from pathlib import Path

from fluxdrive.eval.compare import regressions
from fluxdrive.eval.fixture import GROUND_TRUTH
from tests.conftest import CliResult

EVALS = Path(__file__).resolve().parents[2] / "evals"
REGENERATE = "regenerate: fluxdrive eval baseline evals/ && make docs"


def _baseline() -> dict:  # type: ignore[type-arg]
    return json.loads((EVALS / "baseline.json").read_text(encoding="utf-8"))


def _shown(run: dict) -> dict:  # type: ignore[type-arg]
    """The counts the README's summary shows: overall and per lane."""
    return {"overall": run["overall"]["counts"], **{lane: part["counts"] for lane, part in run["lanes"].items()}}


def test_the_baseline_holds_every_fixture_of_the_suite() -> None:
    """Fast: a fixture added without regenerating the baseline (and the README's count) fails here."""
    on_disk = sorted(p.parent.name for p in EVALS.glob(f"*/{GROUND_TRUTH}"))
    in_baseline = sorted(f["fixture_id"] for f in _baseline()["fixtures"])
    assert len(on_disk) == len(in_baseline), REGENERATE
    assert len(on_disk) >= 40


def test_static_runtime_measures_exactly_the_baseline(tmp_path: Path, cli) -> None:  # type: ignore[no-untyped-def]
    report = tmp_path / "run.json"
    result: CliResult = cli("eval", "run", EVALS, "--json", report)
    run = json.loads(report.read_text(encoding="utf-8"))
    assert result.code == (0 if run["gate"]["passed"] else 1), result.err  # the exit code is the gate's
    baseline = _baseline()
    assert len(run["fixtures"]) == len(baseline["fixtures"]), REGENERATE
    assert regressions(run, baseline) == []
    now = {f["fixture_id"]: f["metrics"] for f in run["fixtures"]}
    then = {f["fixture_id"]: f["metrics"] for f in baseline["fixtures"]}
    dropped = [fid for fid in then if (now[fid]["recall"] or 0) < (then[fid]["recall"] or 0)]
    assert dropped == [], f"fixtures that lost recall: {dropped}"
    assert _shown(run) == _shown(baseline), f"the README's figures are stale; {REGENERATE}"
    assert run["gate"] == baseline["gate"], f"the README's gate line is stale; {REGENERATE}"
