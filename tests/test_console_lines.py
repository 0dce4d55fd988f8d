"""Every line a default ``review --yes`` prints says something, or is not printed (issue 30, item 11).

Real reviews by the installed console script, on copies of the fixture
projects: a sliced markdown document (unstaged, and staged by
``selection.staging = always``) and a Python web app reviewed again with a
baseline after a new bug and a changed manifest. Each test asserts on the
printed lines: the line that contradicted itself or said nothing is gone,
the line that replaces it carries the right numbers.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from tests.conftest import CliResult, run_fluxdrive

FIXTURES = Path(__file__).parent / "fixtures" / "projects"
NEW_BUG = """

def find_order(cur, oid):
    cur.execute("SELECT * FROM orders WHERE id = '%s'" % oid)
    return cur.fetchone()[0]
"""
FINDING = re.compile(r"^  (P[0-3])-(\d+) +(\d+)/(\d+) ", re.M)


def _project(source: str, where: Path) -> Path:
    root = where / source
    shutil.copytree(FIXTURES / source, root)
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    return root


def _review(root: Path, target: str, output: str, *more: str | Path) -> CliResult:
    done = run_fluxdrive(
        "review", target, "--yes", "--fail-on", "never", "--output-dir", root / output, *more, cwd=root
    )
    assert done.code == 0, done.err
    return done


@pytest.fixture(scope="module")
def sliced(tmp_path_factory: pytest.TempPathFactory) -> tuple[CliResult, Path]:
    """plan.md, sliced per agent (so synthesis measures each finding against a different M): the run, its dir."""
    root = _project("plan-doc", tmp_path_factory.mktemp("doc"))
    return _review(root, "docs/plan.md", "run", "--set", "slicing.document_min_lines=10"), root / "run"


@dataclass
class Webapp:
    root: Path
    first: CliResult
    again: CliResult  # with --baseline, after a new bug and a changed pyproject.toml
    hash_before: str


@pytest.fixture(scope="module")
def webapp(tmp_path_factory: pytest.TempPathFactory) -> Webapp:
    root = _project("py-webapp", tmp_path_factory.mktemp("webapp"))
    first = _review(root, ".", "run1")
    written = run_fluxdrive("baseline", "write", root / "run1", "--project", root, cwd=root)
    assert written.code == 0, written.err
    cache = root / ".fluxdrive" / "domains.yaml"
    before = yaml.safe_load(cache.read_text())["structural_hash"]
    with (root / "shop" / "db.py").open("a") as source:
        source.write(NEW_BUG)
    manifest = root / "pyproject.toml"
    manifest.write_text(manifest.read_text().replace('"requests>=2"', '"requests>=2", "rich>=13"'))
    again = _review(root, ".", "run2", "--baseline", ".fluxdrive/baseline.json")
    return Webapp(root, first, again, before)


def test_an_unstaged_review_says_it_has_no_slot_ceiling(sliced: tuple[CliResult, Path]) -> None:
    """Was: 'Triage: 12 agent(s) in Stage 1, 0 in Stage 2, 0 in the pool (ceiling 6; ...)' offline."""
    done, _ = sliced
    launched = int(re.search(r"^Stage 1: launching (\d+) agent", done.err, re.M).group(1))  # type: ignore[union-attr]
    assert launched > 6  # more than any ceiling this input gets: the contradiction the line used to print
    assert f"Triage: {launched} agent(s) in Stage 1 (unstaged: no slot ceiling; domains: " in done.err
    assert "ceiling" not in done.err.replace("no slot ceiling", "")
    assert "in Stage 2" not in done.err and "in the pool" not in done.err


def test_a_staged_review_shows_its_ceiling_and_stays_within_it(tmp_path: Path) -> None:
    root = _project("plan-doc", tmp_path)
    done = _review(root, "docs/plan.md", "run", "--set", "selection.staging=always")
    found = re.search(
        r"^Triage: (\d+) agent\(s\) in Stage 1, (\d+) in Stage 2, (\d+) in the pool \(ceiling (\d+); ", done.err, re.M
    )
    assert found, done.err
    first, second, _pool, ceiling = map(int, found.groups())
    assert first + second <= ceiling
    assert f"Stage 1: launching {first} agent(s)" in done.err


def test_one_report_has_one_convergence_denominator_the_reviewers_that_reported(
    sliced: tuple[CliResult, Path],
) -> None:
    """Was: '1/5' and '1/7' (each finding's own M, under slicing) under 'All 12 reviewers reported'."""
    done, run = sliced
    populations = {f["population"] for f in json.loads((run / "findings.json").read_text())["findings"]}
    assert len(populations) > 1  # synthesis did measure them against different M: the case being tested
    reported = int(re.search(r"^All (\d+) reviewers reported", done.out, re.M).group(1))  # type: ignore[union-attr]
    shown = FINDING.findall(done.out)
    assert shown and {m for *_, m in shown} == {str(reported)}, done.out


def test_a_baseline_run_numbers_the_new_findings_and_says_how_many_are_known(webapp: Webapp) -> None:
    """Was: only 'P0-5' listed (P0-1..4 were known) and a warning about the suppression."""
    known = len(json.loads((webapp.root / ".fluxdrive" / "baseline.json").read_text())["findings"])
    shown = FINDING.findall(webapp.again.out)
    assert shown, webapp.again.out
    for severity in ("P0", "P1", "P2", "P3"):
        numbers = [int(n) for s, n, *_ in shown if s == severity]
        assert numbers == list(range(1, len(numbers) + 1)), webapp.again.out
    assert any(s == "P0" for s, *_ in shown)  # the new SQL injection
    line = f"fluxdrive: {known} finding(s) already in the baseline .fluxdrive/baseline.json not shown; "
    assert line + f"the {len(shown)} new one(s) numbered among themselves" in webapp.again.err
    assert "warning" not in webapp.again.err
    ids = [f["id"] for f in json.loads((webapp.root / "run2" / "findings.json").read_text())["findings"]]
    assert ids == [f"{s}-{n}" for s, n, *_ in shown]  # the files say what the console says


def test_a_stale_domain_cache_is_refreshed_without_a_warning(webapp: Webapp) -> None:
    """Was: 'fluxdrive: warning: domain cache is stale; detected again' after pyproject.toml changed."""
    after = yaml.safe_load((webapp.root / ".fluxdrive" / "domains.yaml").read_text())["structural_hash"]
    assert after != webapp.hash_before  # it was stale, and detection ran again
    assert "stale" not in webapp.again.err and "detected again" not in webapp.again.err


def test_a_review_without_stage_2_says_so_once(sliced: tuple[CliResult, Path], webapp: Webapp) -> None:
    """Was: 'Research: skipped (there is no Stage 2)', 'Dropout: skipped (no Stage 2 candidates)' and the
    expansion decision, three lines for one fact."""
    for done in (sliced[0], webapp.first):
        assert "Research:" not in done.err and "Dropout" not in done.err, done.err
        assert done.err.count("No Stage 2 candidates: the review ends after Stage 1.") == 1


def test_shared_findings_are_counted_as_findings(webapp: Webapp) -> None:
    """Was: 'Shared while working: 12 finding(s); 15 taken up by another reviewer' (events, not findings)."""
    lines = [line for line in webapp.first.out.splitlines() if line.startswith("Shared while working:")]
    assert len(lines) == 1, webapp.first.out
    found = re.fullmatch(r"Shared while working: (\d+) finding\(s\)(?:; (\d+) of them taken up by another reviewer)?"
                         r"(?:; (\d+) disputed by another reviewer and left open)?", lines[0])  # fmt: skip
    assert found, lines[0]
    shared, taken, disputed = (int(g or 0) for g in found.groups())
    assert 0 < taken <= shared and disputed <= shared


def test_imported_tools_are_named_in_the_one_denominator(webapp: Webapp, tmp_path: Path) -> None:
    """--import-sarif's tools count as reporters: the report says what its one M is made of."""
    location = {"physicalLocation": {"artifactLocation": {"uri": "shop/routes.py"}, "region": {"startLine": 30}}}
    result = {
        "ruleId": "flask-delete",
        "level": "warning",
        "message": {"text": "Route deletes"},
        "locations": [location],
    }
    tool = {"driver": {"name": "semgrep", "rules": [{"id": "flask-delete"}]}}
    sarif = tmp_path / "semgrep.sarif"
    sarif.write_text(json.dumps({"version": "2.1.0", "runs": [{"tool": tool, "results": [result]}]}))
    done = _review(webapp.root, ".", "run3", "--import-sarif", sarif, "-q")
    reported = int(re.search(r"^All (\d+) reviewers reported", done.out, re.M).group(1))  # type: ignore[union-attr]
    assert f"; N/{reported + 1} beside a finding counts these {reported} and 1 imported tool(s)" in done.out
    assert {m for *_, m in FINDING.findall(done.out)} == {str(reported + 1)}
