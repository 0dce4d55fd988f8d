"""interflux's own qualification fixtures load verbatim and are scored (``tests/fixtures/interflux/``).

The reference writes a document's places its own way: ``api-spec:GET /tasks``
and ``api-spec:error-responses`` (a document and a heading, as words or a
slug), ``app.py:16`` for the code a ``document.md`` shows. These fixtures are
copied byte for byte (their README says from where); the test runs the real
``fluxdrive eval run`` over them with the static runtime and checks the
reference's section locations landed on the sections the reviewer reported.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from fluxdrive.eval import find_fixtures, load_fixture
from fluxdrive.eval.locate import WHOLE, Locator, Place
from fluxdrive.eval.match import Produced, place_score
from tests.conftest import CliResult, run_fluxdrive

REFERENCE = Path(__file__).resolve().parents[1] / "fixtures" / "interflux"
SPEC = """\
# Orders API

## Base URL

All endpoints live under `https://api.example.com/v1`.

## GET /orders (list)

Returns every order.

## Error responses

Errors are `{"error": {"code", "message"}}`.

### Retries

Clients retry 503 with backoff.
"""


def test_the_reference_fixtures_load_as_they_are_written() -> None:
    fixtures = find_fixtures(REFERENCE)
    assert [f.id for f in fixtures] == ["fixture-01-null-check", "fixture-02-sql-injection", "fixture-05-api-design"]
    spec = load_fixture(REFERENCE / "fixture-05-api-design")
    assert spec.kind == "document"
    assert [e.location for e in spec.truth.findings] == [
        "api-spec:error-responses", "api-spec:GET /tasks", "api-spec:DELETE /tasks/:id", "api-spec:POST /tasks",
        "api-spec:base-url",
    ]  # fmt: skip


def test_document_locations_resolve_to_sections_of_the_document(tmp_path: Path) -> None:
    (tmp_path / "project" / "docs").mkdir(parents=True)
    (tmp_path / "project" / "api-spec.md").write_text(SPEC, encoding="utf-8")
    project = Locator.of(tmp_path, "project")
    assert project.resolve("api-spec:base-url") == Place("api-spec.md", 3, 6, "base url")  # a slug
    assert project.resolve("api-spec:GET /orders") == Place("api-spec.md", 7, 10, "get orders list")  # contained
    assert project.resolve("api-spec:error-responses") == Place("api-spec.md", 11, 17, "error responses")
    assert project.resolve("api-spec:Retries") == Place("api-spec.md", 15, 17, "retries")
    assert project.resolve("api-spec:pagination") == Place("api-spec.md", heading="pagination", whole=True)
    assert project.resolve("other:intro") == Place("other", heading="intro")  # no such document
    assert project.resolve("app.py:12-14") == Place("app.py", 12, 14)

    (tmp_path / "document.md").write_text(SPEC, encoding="utf-8")
    document = Locator.of(tmp_path, "document")
    assert document.resolve("app.py:16") == Place("document.md", 16, 16)  # the code the document shows
    assert document.resolve("section: Error responses") == Place("document.md", 11, 17, "error responses")
    assert document.resolve("api-spec:GET /orders") == Place("document.md", 7, 10, "get orders list")

    in_section = Produced(id="a", severity="P2", title="t", locations=("document.md:17",))
    by_name = Produced(id="b", severity="P2", title="t", locations=("document.md:1",), section="Error responses")
    elsewhere = Produced(id="c", severity="P2", title="t", locations=("document.md:1",))
    errors = document.resolve("api-spec:error-responses")
    assert place_score(errors, in_section) == (1.0, True)
    assert place_score(errors, by_name) == (1.0, True)
    assert place_score(errors, elsewhere) == (0.0, False)
    assert place_score(document.resolve("api-spec:versioning"), elsewhere) == (WHOLE, False)


@pytest.mark.parametrize("location", ["app.py", "api-spec:", "app.py:12-", ":GET /tasks", "api-spec:  "])
def test_a_location_in_no_form_is_refused_with_one_line(tmp_path: Path, location: str) -> None:
    root = tmp_path / "case"
    shutil.copytree(REFERENCE / "fixture-05-api-design", root)
    truth = json.loads((root / "ground-truth.json").read_text(encoding="utf-8"))
    truth["findings"][0]["location"] = location
    (root / "ground-truth.json").write_text(json.dumps(truth), encoding="utf-8")
    result = run_fluxdrive("eval", "run", root, cwd=tmp_path)
    assert result.code == 2 and "Traceback" not in result.err
    assert "findings.0.location: Value error, expected path:line" in result.err, result.err


def test_eval_run_scores_the_reference_fixtures_with_the_static_runtime(tmp_path: Path) -> None:
    report = tmp_path / "run.json"
    result: CliResult = run_fluxdrive("eval", "run", REFERENCE, "--json", report, cwd=tmp_path)
    assert result.code in (0, 1) and "Value error" not in result.err, result.err
    run = json.loads(report.read_text(encoding="utf-8"))
    assert result.code == (0 if run["gate"]["passed"] else 1), "the exit code is the gate's"
    assert [(f["fixture_id"], f["error"], f["counts"]["expected"]) for f in run["fixtures"]] == [
        ("fixture-01-null-check", None, 4),
        ("fixture-02-sql-injection", None, 4),
        ("fixture-05-api-design", None, 5),
    ]
    spec = next(f for f in run["fixtures"] if f["fixture_id"] == "fixture-05-api-design")
    matched = {pair["expected"]["location"]: pair["produced"]["locations"] for pair in spec["pairs"]}
    assert "api-spec:GET /tasks" in matched and "api-spec:DELETE /tasks/:id" in matched, spec["pairs"]
    assert all(place.startswith("document.md:") for places in matched.values() for place in places)
    assert run["overall"]["counts"]["found"] >= 4, "the spec's sections (and the listings' lines) are matched"


def test_an_api_specs_endpoint_findings_sit_on_their_headings(tmp_path: Path) -> None:
    """``^\\s*`` ran across the blank line above each heading: every endpoint was reported one line early."""
    document = tmp_path / "spec" / "document.md"  # a copy: a review caches domains in its project
    document.parent.mkdir()
    shutil.copyfile(REFERENCE / "fixture-05-api-design" / "document.md", document)
    lines = document.read_text(encoding="utf-8").splitlines()
    out = tmp_path / "out"
    done = run_fluxdrive("review", document, "--yes", "--fail-on", "never", "--output-dir", out)
    assert done.code == 0, done.err
    places = re.findall(r"document\.md:(\d+)", json.dumps(json.loads((out / "findings.json").read_text())["findings"]))
    endpoint_lines = {int(n) for n in places if re.search(r"(GET|POST|PUT|PATCH|DELETE) /", lines[int(n) - 1])}
    assert 23 in endpoint_lines  # "### GET /tasks", the list without pagination
    assert not [n for n in places if not lines[int(n) - 1].strip()], places  # no finding on a blank line
