"""A real offline review: CWE ids and every place of a grouped finding reach findings.json and SARIF.

Real triage, the real static analyzers (ruff and fluxdrive's checks) on a
small project, real synthesis and reports; the SARIF is validated against
the vendored SARIF 2.1.0 schema (tests/data/README.md).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from fluxdrive.api import ReviewOptions, run_review
from fluxdrive.contracts import classify_output
from fluxdrive.contracts.fields import read_fields
from tests.conftest import committed_copy

SARIF_SCHEMA = json.loads((Path(__file__).resolve().parent.parent / "data" / "sarif-schema-2.1.0.json").read_text())

APP = """\
import sqlite3


def get_user(conn: sqlite3.Connection, name: str) -> list[tuple[str]]:
    cursor = conn.cursor()
    cursor.execute(f"SELECT * FROM users WHERE name = '{name}'")
    return cursor.fetchall()


def handlers(items):
    out = []
    for item in items:
        out.append(lambda: item.a)
        out.append(lambda: item.b)
        out.append(lambda: item.c)
        out.append(lambda: item.d)
        out.append(lambda: item.e)
    return out
"""
# seven functions that each swallow an exception: more than max_per_rule (5), so one folded finding
MANY = "".join(
    f"def parse_{i}(x):\n    try:\n        return int(x)\n    except Exception:\n        pass\n\n\n" for i in range(7)
)


@pytest.fixture
def reviewed(tmp_path: Path) -> Path:
    """The output directory of a review (function scope: the autouse state isolation must be in place)."""
    source = tmp_path / "source"
    source.mkdir()
    (source / "app.py").write_text(APP)
    (source / "many.py").write_text(MANY)
    project = committed_copy(source, tmp_path / "proj")
    options = ReviewOptions(cwd=project, output_dir=project / "out", yes=True, agents=["fd-safety", "fd-correctness"])
    run = run_review(".", options)
    assert run.synthesis is not None
    return project / "out"


def _by_rule(document: dict[str, Any], rule: str) -> dict[str, Any]:
    return next(f for f in document["findings"] if rule in f["rules"])


def test_index_lines_carry_cwe_and_places(reviewed: Path) -> None:
    safety = classify_output(reviewed / "fd-safety.md").index.entries
    sql = next(e for e in safety if read_fields(e.extra).rule == "fluxdrive:py-sql-injection")
    assert "cwe:CWE-89" in sql.extra and read_fields(sql.extra).cwe == ("CWE-89",)
    correctness = classify_output(reviewed / "fd-correctness.md").index.entries
    b023 = next(e for e in correctness if read_fields(e.extra).rule == "ruff:B023")
    assert b023.location == "app.py:13"
    assert read_fields(b023.extra).also == ("app.py:14", "app.py:15", "app.py:16", "app.py:17")
    assert not read_fields(b023.extra).cwe, "a bug-prone construct is not a security weakness"


def test_findings_json_cwe_and_locations(reviewed: Path) -> None:
    document = json.loads((reviewed / "findings.json").read_text())
    sql = _by_rule(document, "fluxdrive:py-sql-injection")
    assert sql["cwe"] == ["CWE-89"] and sql["location"] == "app.py:6" and sql["locations"] == ["app.py:6"]

    # five hits of one rule in one function: one finding with every line, the first one primary
    b023 = _by_rule(document, "ruff:B023")
    assert b023["locations"] == ["app.py:13", "app.py:14", "app.py:15", "app.py:16", "app.py:17"]
    assert b023["location"] == "app.py:13" and b023["cwe"] == []
    assert b023["title"].endswith("(and 4 more lines)")
    assert len([f for f in document["findings"] if "ruff:B023" in f["rules"]]) == 1

    # a rule firing in more functions than max_per_rule: one finding, every place
    swallowed = _by_rule(document, "fluxdrive:py-swallowed-exception")
    assert swallowed["locations"] == [f"many.py:{4 + 7 * i}" for i in range(7)]
    assert swallowed["title"].endswith("(and 6 more places)")


def test_sarif_validates_and_carries_cwe_taxonomy_and_related_locations(reviewed: Path) -> None:
    sarif = json.loads((reviewed / "findings.sarif").read_text())
    jsonschema.Draft7Validator(SARIF_SCHEMA).validate(sarif)
    run = sarif["runs"][0]
    driver = run["tool"]["driver"]
    rules = {rule["id"]: rule for rule in driver["rules"]}

    sql = rules["fluxdrive:py-sql-injection"]
    assert sql["properties"]["tags"] == ["security", "external/cwe/cwe-89"]
    assert sql["properties"]["security-severity"] == "9.0"
    assert sql["helpUri"] == "https://cwe.mitre.org/data/definitions/89.html"
    assert sql["fullDescription"]["text"] and sql["help"]["text"] and "Fix:" in sql["help"]["text"]
    assert "[CWE-89: Improper Neutralization" in sql["help"]["markdown"]
    (taxonomy,) = run["taxonomies"]
    assert taxonomy["name"] == "CWE" and driver["supportedTaxonomies"] == [{"name": "CWE", "index": 0}]
    taxa = [t["id"] for t in taxonomy["taxa"]]
    (relationship,) = sql["relationships"]
    assert relationship["target"]["toolComponent"] == {"name": "CWE", "index": 0}
    assert taxa[relationship["target"]["index"]] == relationship["target"]["id"] == "CWE-89"
    assert "SQL Injection" in taxonomy["taxa"][relationship["target"]["index"]]["name"]

    b023 = rules["ruff:B023"]
    assert "tags" not in b023["properties"] and "relationships" not in b023
    assert b023["fullDescription"]["text"] and b023["help"]["markdown"]
    assert "(and 4 more" not in b023["shortDescription"]["text"]

    results = {r["ruleId"]: r for r in run["results"]}
    assert results["fluxdrive:py-sql-injection"]["properties"]["cwe"] == ["CWE-89"]
    grouped = results["ruff:B023"]
    assert [loc["physicalLocation"]["region"]["startLine"] for loc in grouped["locations"]] == [13]
    related = grouped["relatedLocations"]
    assert [r["id"] for r in related] == [1, 2, 3, 4]
    assert [r["physicalLocation"]["region"]["startLine"] for r in related] == [14, 15, 16, 17]
    assert all(r["physicalLocation"]["artifactLocation"]["uri"] == "app.py" and r["message"]["text"] for r in related)
    assert len(results["fluxdrive:py-swallowed-exception"]["relatedLocations"]) == 6
