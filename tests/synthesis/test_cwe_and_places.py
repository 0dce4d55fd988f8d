"""CWE ids and other places written in index lines (``cwe:``, ``also:``) through synthesis and the reports."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
from hypothesis import given
from hypothesis import strategies as st

from fluxdrive.contracts import IndexEntry, parse_index, render_index, write_agent_output
from fluxdrive.contracts.fields import MAX_ALSO, also_field, cwe_field, normalize_cwe, read_fields, rule_field
from fluxdrive.reports import build_document, build_sarif
from fluxdrive.synthesis import synthesize
from fluxdrive.synthesis.prose import issue_notes

SARIF_SCHEMA = json.loads((Path(__file__).resolve().parent.parent / "data" / "sarif-schema-2.1.0.json").read_text())


def test_fields_are_read_generically() -> None:
    assert read_fields(["rule:ruff:S608", "cwe:CWE-89"]).cwe == ("CWE-89",)
    assert read_fields(["CWE: 89, 90"]).cwe == ("CWE-89", "CWE-90")
    assert read_fields(["cwe=CWE-079 / CWE-80"]).cwe == ("CWE-79", "CWE-80")
    assert read_fields(["CWE-22"]).cwe == ("CWE-22",)
    assert read_fields(["cwe:CWE-89 (OWASP A03 2021)"]).cwe == ("CWE-89",)
    assert read_fields(["cwe: none", "note: see CWE list"]).cwe == ()
    assert read_fields(["also:a.py:3;b/c.py:9;not a place", "also: a.py:3"]).also == ("a.py:3", "b/c.py:9")
    assert normalize_cwe("cwe 089") == "CWE-89" and normalize_cwe("CWE-0") is None and normalize_cwe("x") is None
    assert cwe_field(["89", "CWE-89", "CWE-90"]) == "cwe:CWE-89,CWE-90" and cwe_field(["nope"]) is None
    assert also_field(["a.py:1", "semi;colon.py:2", "no-line.py"]) == "also:a.py:1"
    assert also_field([f"a.py:{n}" for n in range(1, MAX_ALSO + 10)]).count(";") == MAX_ALSO - 1  # type: ignore[union-attr]


_path = st.from_regex(r"[a-z][a-z0-9_/.\- ]{0,30}\.py", fullmatch=True)


@given(st.lists(st.tuples(_path, st.integers(1, 99999)), min_size=1, max_size=20), st.lists(st.integers(1, 2000)))
def test_fields_survive_render_and_parse(places: list[tuple[str, int]], cwes: list[int]) -> None:
    locations = [f"{p}:{n}" for p, n in places]
    fields = [rule_field("ruff:S608"), cwe_field(str(c) for c in cwes), also_field(locations)]
    extra = tuple(f for f in fields if f)
    entry = IndexEntry("P1", "SF-001", "app.py", "A finding", "app.py:1", extra)
    (parsed,) = parse_index(render_index([entry])).entries
    read = read_fields(parsed.extra)
    assert read.rule == "ruff:S608"
    assert read.cwe == tuple(dict.fromkeys(f"CWE-{c}" for c in cwes))
    assert read.also == tuple(dict.fromkeys(p for p in locations if p == p.strip() and "  " not in p))


def test_places_and_cwe_merge_across_agents(tmp_path: Path) -> None:
    static = IndexEntry(
        "P1",
        "SF-001",
        "db.py",
        "SQL query built from request data with an f-string",
        "db.py:10",
        ("rule:fluxdrive:py-sql-injection", "cwe:CWE-89", "also:db.py:20;api.py:7"),
    )
    model = IndexEntry(
        "P0",
        "CR-001",
        "db.py",
        "SQL query built from request data using f-string",
        "./db.py:10",
        ("CWE: 89, 1426", "also: db.py:20; db.py:31"),
    )
    write_agent_output(tmp_path, "fd-safety", render_index([static]))
    write_agent_output(tmp_path, "fd-correctness", render_index([model]))
    result = synthesize(tmp_path)
    (finding,) = result.findings
    assert finding.agents == ["fd-correctness", "fd-safety"] and finding.severity == "P0"
    assert finding.locations == ["db.py:10", "db.py:20", "db.py:31", "api.py:7"]
    assert finding.cwe == ["CWE-89", "CWE-1426"]

    document = build_document(result).model_dump(mode="json")
    (out,) = document["findings"]
    assert out["location"] == "db.py:10" and out["locations"] == finding.locations and out["cwe"] == finding.cwe

    sarif = build_sarif(result)
    jsonschema.Draft7Validator(SARIF_SCHEMA).validate(sarif)
    run = sarif["runs"][0]
    (rule,) = run["tool"]["driver"]["rules"]
    assert rule["properties"]["tags"] == ["security", "external/cwe/cwe-89", "external/cwe/cwe-1426"]
    assert [t["id"] for t in run["taxonomies"][0]["taxa"]] == ["CWE-89", "CWE-1426"]
    assert run["taxonomies"][0]["taxa"][1]["name"] == "CWE-1426", "a CWE the table does not name keeps its id"
    (result_,) = run["results"]
    assert len(result_["locations"]) == 1
    assert [r["physicalLocation"]["artifactLocation"]["uri"] for r in result_["relatedLocations"]] == [
        "db.py",
        "db.py",
        "api.py",
    ]


def test_findings_without_cwe_or_places_stay_plain(tmp_path: Path) -> None:
    entry = IndexEntry("P2", "QS-001", "app.py", "Long function", "app.py:3", ("rule:lizard:length",))
    write_agent_output(tmp_path, "fd-quality", render_index([entry]))
    sarif = build_sarif(synthesize(tmp_path))
    run = sarif["runs"][0]
    assert "taxonomies" not in run and "supportedTaxonomies" not in run["tool"]["driver"]
    (rule,) = run["tool"]["driver"]["rules"]
    assert "tags" not in rule["properties"] and rule["fullDescription"]["text"] == "Long function"
    assert "relatedLocations" not in run["results"][0]


def test_issue_notes_skip_evidence_and_places() -> None:
    text = """### Findings Index
- P1 | SF-001 | "db.py" | SQL from input | db.py:10
Verdict: needs-changes

### Issues Found
1. SF-001 P1: SQL from input (db.py:10)
   Evidence:
       cursor.execute(f"SELECT {x}")
   The value is pasted into the SQL text.
   Rule: fluxdrive:py-sql-injection
   Other places: db.py:20
   Fix: Bind parameters.
2. SF-002 P2: Other
   Only prose.
"""
    notes = issue_notes(text)
    assert notes["SF-001"] == ("The value is pasted into the SQL text.", "Bind parameters.")
    assert notes["SF-002"] == ("Only prose.", "")


def test_different_rules_at_one_line_stay_apart(tmp_path: Path) -> None:
    """Two analyzer rules at one line are two issues: one's severity never reaches the other's places."""
    injection = IndexEntry(
        "P0",
        "SF-001",
        "run.py",
        "Command built from request.form runs through a shell: subprocess.run(cmd) (and 1 more places)",
        "run.py:8",
        ("rule:fluxdrive:py-command-injection", "also:run.py:30"),
    )
    unchecked = IndexEntry(
        "P2",
        "CR-001",
        "run.py",
        "`subprocess.run` without explicit `check` argument [PLW1510] (and 1 more places)",
        "run.py:8",
        ("rule:ruff:PLW1510", "also:other.py:5"),
    )
    same_rule = IndexEntry(
        "P1", "CR-002", "run.py", "Command built from request.form runs through a shell", "run.py:8",
        ("rule:fluxdrive:py-command-injection",),
    )  # fmt: skip
    write_agent_output(tmp_path, "fd-safety", render_index([injection]))
    write_agent_output(tmp_path, "fd-correctness", render_index([unchecked, same_rule]))
    findings = {f.rules[0]: f for f in synthesize(tmp_path).findings}
    assert set(findings) == {"fluxdrive:py-command-injection", "ruff:PLW1510"}
    assert findings["ruff:PLW1510"].severity == "P2"
    assert findings["ruff:PLW1510"].locations == ["run.py:8", "other.py:5"]
    assert findings["fluxdrive:py-command-injection"].agents == ["fd-correctness", "fd-safety"]
    assert findings["fluxdrive:py-command-injection"].co_located_with, "still linked as co-located"
