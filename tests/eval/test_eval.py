"""``fluxdrive eval``: fixtures, one-to-one matching with known answers, metrics, and real runs of the static runtime."""

from __future__ import annotations

import json
import shutil
import subprocess
import textwrap
from pathlib import Path

import jsonschema
import pytest

from fluxdrive.eval import find_fixtures, load_fixture, match
from fluxdrive.eval.fixture import Decoy, Expected
from fluxdrive.eval.match import Produced
from fluxdrive.eval.score import count
from tests.conftest import CliResult

APP = textwrap.dedent(
    """\
    import sqlite3

    from flask import Flask, request

    app = Flask(__name__)


    @app.get("/orders")
    def orders():
        customer = request.args.get("customer", "")
        db = sqlite3.connect("shop.db")
        rows = db.execute(f"SELECT * FROM orders WHERE customer = '{customer}'").fetchall()
        db.close()
        return {"orders": rows}


    @app.get("/order")
    def order():
        db = sqlite3.connect("shop.db")
        row = db.execute("SELECT * FROM orders WHERE id = ?", (request.args.get("id"),)).fetchall()
        db.close()
        return {"order": row}
    """
)
TRUTH = {
    "fixture_id": "tiny-sqli",
    "agent_type": "fd-safety",
    "findings": [
        {
            "severity": "P0",
            "location": "app.py:12",
            "description": "customer from the query string is formatted into the SQL text",
            "category": "sql-injection",
            "cwe": "CWE-89",
        }
    ],
    "must_not_flag": [
        {"location": "app.py:20", "description": "parameterized query: safe", "category": "sql-injection"}
    ],
    "annotator": "test",
    "notes": "",
}


def _fixture(root: Path, truth: dict[str, object] = TRUTH) -> Path:
    (root / "project").mkdir(parents=True)
    (root / "project" / "app.py").write_text(APP, encoding="utf-8")
    (root / "ground-truth.json").write_text(json.dumps(truth), encoding="utf-8")
    return root


def _produced(severity: str, title: str, *locations: str, cwe: tuple[str, ...] = ()) -> Produced:
    return Produced(id=title[:6], severity=severity, title=title, locations=locations, cwe=cwe)


def test_matching_is_one_to_one_and_optimal_not_greedy() -> None:
    expected = [
        Expected(
            severity="P0", location="db.py:10", description="SQL injection in the search", category="sql-injection"
        ),
        Expected(severity="P1", location="db.py:12", description="SQL injection in the sort", category="sql-injection"),
    ]
    # the first finding is close to both; a greedy pass would give it to the first truth and leave the
    # second finding (only near the first truth) without a partner
    produced = [
        _produced("P0", "SQL built from request data (sql injection)", "db.py:11"),
        _produced("P0", "SQL built from request data (sql injection)", "db.py:9"),
    ]
    result = match(expected, produced)
    assert {(p.expected, p.produced) for p in result.pairs} == {(0, 1), (1, 0)}
    assert result.missed == [] and result.extra == []


def test_place_kind_and_threshold_decide_a_match() -> None:
    truth = [Expected(severity="P1", location="a.py:20-24", description="Leaked file handle", category="resource-leak")]
    far = [_produced("P1", "File handle never closed", "a.py:40")]
    other_file = [_produced("P1", "File handle never closed", "b.py:22")]
    wrong_kind = [_produced("P3", "Magic number 86400", "a.py:22")]
    in_range = [_produced("P2", "File from open() in `fh` is never closed (resource leak)", "a.py:22")]
    assert match(truth, far).missed == [0]
    assert match(truth, other_file).missed == [0]
    assert match(truth, wrong_kind).missed == [0], "a nit on the line does not find the defect"
    (pair,) = match(truth, in_range).pairs
    assert pair.exact_place and pair.kind == 1.0
    counts = count(truth, in_range, match(truth, in_range), 0)
    metrics = counts.metrics()
    assert metrics["recall"] == 1.0 and metrics["severity_exact"] == 0.0 and metrics["severity_within_one"] == 1.0


def test_cwe_agreement_and_decoys() -> None:
    truth = [Expected(severity="P0", location="x.py:5", description="eval of input", category="code-injection",
                      cwe="CWE-95")]  # fmt: skip
    decoys = [Decoy(location="x.py:30", description="literal_eval: safe", category="code-injection")]
    produced = [
        _produced("P0", "eval() runs request text", "x.py:5", cwe=("CWE-95",)),
        _produced("P1", "Code injection through eval()", "x.py:30"),
    ]
    result = match(truth, produced, decoys)
    assert [(p.expected, p.produced) for p in result.pairs] == [(0, 0)]
    assert result.decoys_flagged == [(0, 1)]
    assert count(truth, produced, result, 1).metrics()["decoys_flagged"] == 1.0


def test_schema_describes_the_format_and_bad_fixtures_get_one_line(tmp_path: Path, cli) -> None:  # type: ignore[no-untyped-def]
    printed: CliResult = cli("schema", "ground-truth")
    schema = json.loads(printed.out)
    jsonschema.Draft202012Validator(schema).validate(TRUTH)
    for shipped in sorted(Path(__file__).resolve().parents[2].joinpath("evals").glob("*/ground-truth.json")):
        jsonschema.Draft202012Validator(schema).validate(json.loads(shipped.read_text(encoding="utf-8")))
        load_fixture(shipped.parent)

    broken = dict(TRUTH, findings=[dict(TRUTH["findings"][0], severity="P7")])  # type: ignore[index]
    root = _fixture(tmp_path / "bad", broken)
    result: CliResult = cli("eval", "run", root)
    assert result.code == 2
    lines = [line for line in result.err.splitlines() if line.strip()]
    assert len(lines) == 1 and "ground-truth.json: findings.0.severity:" in lines[0], result.err

    (root / "ground-truth.json").write_text(json.dumps(TRUTH), encoding="utf-8")
    (root / "document.md").write_text("# two inputs\n", encoding="utf-8")
    result = cli("eval", "run", root)
    assert result.code == 2 and "exactly one input" in result.err


def test_new_scaffolds_a_fixture_that_loads(tmp_path: Path, cli) -> None:  # type: ignore[no-untyped-def]
    for kind in ("document", "project", "diff"):
        created: CliResult = cli("eval", "new", tmp_path / f"case-{kind}", "--input", kind)
        assert created.code == 0, created.err
        fixture = load_fixture(tmp_path / f"case-{kind}")
        assert fixture.kind == kind and fixture.id == f"case-{kind}"
    again: CliResult = cli("eval", "new", tmp_path / "case-project")
    assert again.code == 2 and "already exists" in again.err


def test_static_runtime_run_on_project_and_diff_fixtures(tmp_path: Path, cli) -> None:  # type: ignore[no-untyped-def]
    suite = tmp_path / "suite"
    _fixture(suite / "tiny-sqli")
    # the same defect arriving as a diff: base/ has the safe version, change.patch makes it injectable
    diff_case = suite / "tiny-sqli-diff"
    (diff_case / "base").mkdir(parents=True)
    safe = APP.replace(
        "f\"SELECT * FROM orders WHERE customer = '{customer}'\"",
        '"SELECT * FROM orders WHERE customer = ?", (customer,)',
    )
    (diff_case / "base" / "app.py").write_text(safe, encoding="utf-8")
    work = tmp_path / "patchwork"
    shutil.copytree(diff_case / "base", work)
    (work / "app.py").write_text(APP, encoding="utf-8")
    patch = subprocess.run(
        ["git", "diff", "--no-index", "--", str(diff_case / "base" / "app.py"), str(work / "app.py")],
        capture_output=True, text=True, check=False,
    ).stdout  # fmt: skip
    patch = patch.replace(str(diff_case / "base" / "app.py").lstrip("/"), "app.py").replace(
        str(work / "app.py").lstrip("/"), "app.py"
    )
    (diff_case / "change.patch").write_text(patch, encoding="utf-8")
    (diff_case / "ground-truth.json").write_text(json.dumps(dict(TRUTH, fixture_id="tiny-sqli-diff")), encoding="utf-8")
    before = sorted(p.relative_to(suite) for p in suite.rglob("*"))

    assert [f.id for f in find_fixtures(suite)] == ["tiny-sqli", "tiny-sqli-diff"]
    report = tmp_path / "run.json"
    result: CliResult = cli("eval", "run", suite, "--json", report)
    assert result.code == 0, result.err
    assert "tiny-sqli " in result.out and "lane fd-safety" in result.out and "overall" in result.out
    data = json.loads(report.read_text(encoding="utf-8"))
    for fixture in data["fixtures"]:
        assert fixture["error"] is None
        assert fixture["metrics"]["recall"] == 1.0, fixture
        assert fixture["decoys_flagged"] == [], "the parameterized query is not flagged"
        (pair,) = fixture["pairs"]
        assert pair["produced"]["severity"] == "P0" and pair["place"] == 1.0
    assert data["overall"]["counts"]["found"] == 2 and data["settings"]["runtime"] == "static"
    assert data["usage"]["format_compliance"] == 1.0 and data["usage"]["tokens_in"] == 0, data["usage"]
    assert data["categories"] == {"sql-injection": {"found": 2, "expected": 2, "recall": 1.0}}
    assert "by category (found/expected): sql-injection 2/2" in result.out
    assert sorted(p.relative_to(suite) for p in suite.rglob("*")) == before, "a run never writes into the fixtures"


@pytest.mark.parametrize("kind", ["document"])
def test_document_fixture_reviews_the_document(tmp_path: Path, cli, kind: str) -> None:  # type: ignore[no-untyped-def]
    root = tmp_path / "plan"
    root.mkdir()
    (root / "document.md").write_text(
        "# Rollout plan\n\n## Steps\n\n1. Drop the old table.\n2. TBD: who approves.\n", encoding="utf-8"
    )
    truth = {
        "fixture_id": "plan",
        "agent_type": "any",
        "findings": [
            {"severity": "P2", "location": "document.md:6", "description": "TBD marker: approver undecided",
             "category": "unresolved-marker"}
        ],
    }  # fmt: skip
    (root / "ground-truth.json").write_text(json.dumps(truth), encoding="utf-8")
    result: CliResult = cli("eval", "run", root, "--as-json")
    assert result.code == 0, result.err
    data = json.loads(result.out)
    assert data["fixtures"][0]["input"] == kind and data["fixtures"][0]["error"] is None
    assert data["overall"]["counts"]["expected"] == 1


def test_compare_shows_disabling_an_agent_and_the_baseline_catches_it(tmp_path: Path, cli) -> None:  # type: ignore[no-untyped-def]
    suite = tmp_path / "suite"
    _fixture(suite / "tiny-sqli")
    full, without = tmp_path / "full.json", tmp_path / "without.json"
    assert cli("eval", "run", suite, "--json", full).code == 0
    less: CliResult = cli("eval", "run", suite, "--agents", "fd-quality,fd-correctness", "--json", without)
    assert less.code == 1 and "gate: FAIL" in less.out, "the P0 the safety lane found is missed: the gate fails"

    compared: CliResult = cli("eval", "compare", full, without)
    assert compared.code == 0, compared.err
    recall = next(line for line in compared.out.splitlines() if line.startswith("overall recall "))
    assert recall.split()[-3:] == ["100.0", "0.0", "-100.0"], recall
    assert "fixtures that changed: 1" in compared.out and "tiny-sqli" in compared.out

    held: CliResult = cli("eval", "run", suite, "--agents", "fd-quality", "--fail-below", full)
    assert held.code == 1 and "regression: recall 0.0% < baseline 100.0%" in held.err
    assert cli("eval", "run", suite, "--fail-below", full).code == 0
    bad: CliResult = cli("eval", "compare", full, tmp_path / "missing.json")
    assert bad.code == 2 and "not an eval run's JSON" in bad.err


REPORT = (
    "### Findings Index\n"
    '- P0 | SF-001 | "app.py" | SQL injection: customer from the query string is formatted into the SQL | app.py:12\n'
    "Verdict: risky\n\n"
    "### Issues Found\n"
    "1. SF-001 P0: SQL injection (app.py:12)\n"
    "   The f-string puts the request's customer into the query. Fix: bind it as a parameter.\n"
)


def test_qualify_a_model_against_the_fake_provider(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli) -> None:  # type: ignore[no-untyped-def]
    from fluxdrive.runs.history import eval_runs, open_history
    from tests.fakes.llm_server import FakeProvider, Text

    suite = tmp_path / "suite"
    _fixture(suite / "tiny-sqli")
    missed = dict(TRUTH, fixture_id="tiny-sqli-missed", findings=[
        {"severity": "P0", "location": "app.py:20", "description": "a defect the model does not see",
         "category": "race-condition"},
    ], must_not_flag=[])  # fmt: skip
    _fixture(suite / "tiny-sqli-missed", missed)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
    with FakeProvider() as provider:
        provider.script("fd-safety", Text(REPORT))
        monkeypatch.setenv("OPENAI_BASE_URL", provider.base_url_openai)
        failed: CliResult = cli("eval", "qualify", "--model", "openai:gpt-4o", suite)
        assert provider.count() > 0, "the model was asked"
        shutil.rmtree(suite / "tiny-sqli-missed")
        passed: CliResult = cli("eval", "qualify", "--model", "openai:gpt-4o", suite)
    assert failed.code == 1, failed.err
    assert "qualify openai:gpt-4o: FAIL" in failed.out and "P0 missed in tiny-sqli-missed: app.py:20" in failed.out
    assert passed.code == 0, passed.err + passed.out
    assert "qualify openai:gpt-4o: PASS" in passed.out
    usage = next(line for line in passed.out.splitlines() if line.startswith("tokens "))
    assert int(usage.split()[1].rstrip(",").replace(",", "")) > 0 and "format compliance 100%" in usage, usage
    row = next(line for line in passed.out.splitlines() if line.startswith("tiny-sqli "))
    assert "1/1" in row and "100%" in row, row
    with open_history() as connection:
        recorded = eval_runs(connection, model="openai:gpt-4o")
    assert [(r.passed, r.qualify, r.runtime, r.fixtures) for r in recorded] == [
        (True, True, "llm", 1),
        (False, True, "llm", 2),
    ]
    assert recorded[0].metrics["recall_p0p1"] == 1.0 and recorded[1].reasons[0].startswith("P0 missed")


def test_the_exit_code_is_the_gates(tmp_path: Path) -> None:
    """``gate: FAIL`` exits 1 (CI must not read it as a pass), ``gate: PASS`` exits 0: the real process."""
    from tests.conftest import run_fluxdrive

    suite = tmp_path / "suite"
    _fixture(suite / "tiny-sqli")
    passed = run_fluxdrive("eval", "run", suite, cwd=tmp_path)
    assert passed.code == 0 and passed.out.rstrip().endswith("gate: PASS"), passed.err
    missed = dict(TRUTH, fixture_id="tiny-sqli-race", findings=[
        {"severity": "P0", "location": "app.py:20", "description": "a race nothing offline sees",
         "category": "race-condition"},
    ], must_not_flag=[])  # fmt: skip
    _fixture(suite / "tiny-sqli-race", missed)
    failed = run_fluxdrive("eval", "run", suite, "--as-json", cwd=tmp_path)
    assert failed.code == 1, failed.err
    gate = json.loads(failed.out)["gate"]
    assert gate["passed"] is False and gate["reasons"][0].startswith("P0 missed in tiny-sqli-race: app.py:20")
    bad = run_fluxdrive("eval", "run", tmp_path / "nowhere", cwd=tmp_path)
    assert bad.code == 2 and "not a directory of eval fixtures" in bad.err and "Traceback" not in bad.err


def test_report_formats_and_baseline(tmp_path: Path, cli) -> None:  # type: ignore[no-untyped-def]
    suite = tmp_path / "suite"
    _fixture(suite / "tiny-sqli")
    written: CliResult = cli("eval", "baseline", suite)
    assert written.code == 0 and (suite / "baseline.json").is_file(), written.err
    md: CliResult = cli("eval", "report", suite / "baseline.json", "--format", "md")
    assert md.code == 0 and "| tiny-sqli | 100% | 100% |" in md.out and "Gate: PASS" in md.out
    page: CliResult = cli("eval", "report", suite / "baseline.json", "--format", "html")
    assert page.code == 0 and page.out.startswith("<!doctype html>") and "<script" not in page.out
    assert "<td>tiny-sqli</td>" in page.out
    raw: CliResult = cli("eval", "report", suite / "baseline.json", "--format", "json")
    assert json.loads(raw.out)["overall"]["counts"]["found"] == 1
    assert cli("eval", "report", suite / "baseline.json", "--format", "pdf").code == 2
    summary: CliResult = cli("eval", "report", suite, "--format", "summary")  # a suite: its baseline.json
    assert summary.code == 0, summary.err
    assert summary.out.startswith("1 fixture (1 project), runtime static, reviewed in ")
    assert "| overall  " in summary.out and " 1/1 " in summary.out and summary.out.endswith("gate: PASS\n")


def test_repeat_shows_the_spread_of_a_model_that_varies(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli) -> None:  # type: ignore[no-untyped-def]
    from tests.fakes.llm_server import DEFAULT_REPORT, FakeProvider, Text

    suite = tmp_path / "suite"
    _fixture(suite / "tiny-sqli")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
    monkeypatch.setenv("FLUXDRIVE_EVIDENCE__ENABLED", "false")  # the model alone: the analyzers would find it
    with FakeProvider() as provider:
        provider.script("fd-safety", [Text(REPORT), Text(DEFAULT_REPORT)])  # finds it once, then never again
        monkeypatch.setenv("OPENAI_BASE_URL", provider.base_url_openai)
        result: CliResult = cli(
            "eval", "run", suite, "--runtime", "llm", "--model", "openai:gpt-4o", "--agents", "fd-safety",
            "--repeat", "3", "--json", tmp_path / "runs.json",
        )  # fmt: skip
    assert result.code == 1 and "gate: FAIL" in result.out, "the last run misses the P0: it is the one gated"
    assert "over 3 runs (min/median/max): recall 0/0/100%" in result.out, result.out
    repeats = json.loads((tmp_path / "runs.json").read_text(encoding="utf-8"))["repeats"]
    assert [r["recall"] for r in repeats] == [1.0, 0.0, 0.0]


def test_a_diff_fixture_with_crlf_lines_stages(tmp_path: Path) -> None:
    """Windows line endings in base/ and in change.patch (real repositories have them) survive staging."""
    from fluxdrive.eval.stage import stage

    fixture = tmp_path / "crlf"
    (fixture / "base").mkdir(parents=True)
    (fixture / "base" / "app.js").write_bytes(b"var a = 1;\r\nvar b = 2;\r\n")
    patch = (
        b"diff --git a/app.js b/app.js\n--- a/app.js\n+++ b/app.js\n@@ -1,2 +1,2 @@\n"
        b" var a = 1;\r\n-var b = 2;\r\n+var b = eval(a);\r\n"
    )
    (fixture / "change.patch").write_bytes(patch)
    (fixture / "ground-truth.json").write_text(
        json.dumps({"fixture_id": "crlf", "agent_type": "any", "findings": []}), encoding="utf-8"
    )
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    _target, work, staged = stage(load_fixture(fixture), scratch)
    assert (work / "app.js").read_bytes() == b"var a = 1;\r\nvar b = eval(a);\r\n"
    assert staged is not None and "\r\n" in staged
