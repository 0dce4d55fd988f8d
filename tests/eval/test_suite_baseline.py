"""The starter suite (evals/) under the static runtime holds its committed baseline (evals/baseline.json).

A change that makes the offline reviewers find less, report more noise or hit
more decoys on the suite fails here; a change that improves them updates the
baseline in the same commit (``fluxdrive eval run evals/ --json evals/baseline.json``).
"""

from __future__ import annotations

import json
from pathlib import Path

from fluxdrive.eval.compare import regressions
from tests.conftest import CliResult

EVALS = Path(__file__).resolve().parents[2] / "evals"


def test_static_runtime_holds_the_baseline(tmp_path: Path, cli) -> None:  # type: ignore[no-untyped-def]
    report = tmp_path / "run.json"
    result: CliResult = cli("eval", "run", EVALS, "--json", report)
    assert result.code == 0, result.err
    run = json.loads(report.read_text(encoding="utf-8"))
    baseline = json.loads((EVALS / "baseline.json").read_text(encoding="utf-8"))
    assert len(run["fixtures"]) >= 40 and len(run["fixtures"]) == len(baseline["fixtures"])
    assert regressions(run, baseline) == []
    now = {f["fixture_id"]: f["metrics"] for f in run["fixtures"]}
    then = {f["fixture_id"]: f["metrics"] for f in baseline["fixtures"]}
    dropped = [fid for fid in then if (now[fid]["recall"] or 0) < (then[fid]["recall"] or 0)]
    assert dropped == [], f"fixtures that lost recall: {dropped}"
