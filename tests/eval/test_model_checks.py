"""bench/model_checks.py's lying model, end to end on two eval cases: what grounding and the checker catch.

The bench scripts a reviewer that reports a case's ground truth plus invented P0/P1 findings (a line
past the end of a file, a quote of code that is not there, a plausible claim at a real line) and a
checker model of another family that rejects most invented findings. Here its scripting runs two real
``fluxdrive review`` processes (configuration C: grounding and validation on) against the wire-level
fake provider on staged copies of two eval cases, and findings.json is checked finding by finding:
the first two kinds are demoted by grounding, the third is rejected and shown "not confirmed", and
the true findings keep their severity.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from bench import model_checks
from fluxdrive.eval import find_fixtures
from fluxdrive.eval.stage import stage
from tests.fakes.llm_server import FakeProvider, Text

# One document case (invented code, a plausible claim), one project case (a line past the end, a claim).
CASES = ("doc-proposal-platform-team-reorg", "py-retry-policy-magic-numbers")


@pytest.mark.parametrize("case", CASES)
def test_invented_findings_are_demoted_by_grounding_or_not_confirmed_by_the_checker(tmp_path: Path, case: str) -> None:
    (fixture,) = find_fixtures(model_checks.SUITE / case)
    with FakeProvider(default=Text("### Findings Index\nVerdict: safe\n")) as provider:
        claims = model_checks.script(provider, fixture)
        target, work, _ = stage(fixture, tmp_path)
        out = tmp_path / "run"
        with model_checks.environment(provider, "C") as env:
            command = [str(Path(sys.executable).parent / "fluxdrive"), "review", target, "--yes", "--runtime", "llm",
                       "--model", model_checks.REVIEWER, "--agents", model_checks.agent_of(fixture),
                       "--fail-on", "never", "--output-dir", str(out)]  # fmt: skip
            done = subprocess.run(command, cwd=work, env=env, capture_output=True, text=True, timeout=120, check=False)
        assert done.returncode == 0, done.stderr
        checked = sum(1 for r in provider.requests if r.api == "anthropic")
    kinds = {c.kind for c in claims if c.invented}
    assert "plausible" in kinds and kinds & {"past-end", "invented-code"}  # the case shows both guards

    by_id = {
        f["source_ids"][model_checks.agent_of(fixture)]: f
        for f in json.loads((out / "findings.json").read_text())["findings"]
    }
    # Every invented finding is there (demoted, never dropped); a true one may have been merged with another
    # true one of the same agent at the same place (synthesis keeps one id per agent), never with an invented one.
    assert all(f"MC-{n:03d}" in by_id for n, c in enumerate(claims, 1) if c.invented)
    assert len(by_id) >= len(claims) - 1
    for number, claim in enumerate(claims, 1):
        found = by_id.get(f"MC-{number:03d}")
        if found is None:
            continue
        if claim.kind in ("past-end", "invented-code"):
            assert found["severity"] == "P2", claim
            assert found["grounding"]["grounded"] is False and found["grounding"]["demoted_from"] == claim.severity
            assert found["validation"] is None  # grounding caught it: no checker call spent on it
        elif claim.kind == "plausible":
            assert claim.rejected()  # the cases were chosen so: the checker catches this one
            assert found["grounding"]["grounded"] is True
            assert found["severity"] == "P2", claim
            assert found["validation"]["status"] == "not-confirmed"
            assert found["validation"]["checker"] == model_checks.CHECKER
            assert found["validation"]["demoted_from"] == claim.severity
        else:  # a true finding stays as the model gave it
            assert not claim.rejected()
            assert found["severity"] <= claim.severity, claim  # as given, or a merged peer's higher one
            assert found["grounding"] in (None, {"grounded": True, "reason": "", "demoted_from": None})
            if claim.severity in ("P0", "P1"):
                assert found["validation"]["status"] == "confirmed"
    serious_true = sum(1 for c in claims if not c.invented and c.severity in ("P0", "P1"))
    assert checked == serious_true + 1  # the checker saw the true P0/P1 and the plausible claim, nothing else
