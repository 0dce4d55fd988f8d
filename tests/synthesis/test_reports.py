"""Reports: findings.json against its schema, SARIF against the official schema, summary, console."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import jsonschema
import pytest

from fluxdrive.cli.examples import clean_copy
from fluxdrive.reports import build_sarif, json_schema, render_console, render_json, render_summary, write_reports
from fluxdrive.synthesis import synthesize

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "agent-outputs"
SARIF_SCHEMA = json.loads((Path(__file__).resolve().parent.parent / "data" / "sarif-schema-2.1.0.json").read_text())
SCENARIOS = ["canonical", "variants", "prose", "real-world", "timeline"]


def _run(name: str, tmp_path: Path) -> Path:
    target = tmp_path / name
    clean_copy(FIXTURES / name, target)
    return target


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_every_report_validates(scenario: str, tmp_path: Path) -> None:
    result = synthesize(_run(scenario, tmp_path))
    paths = write_reports(result)
    assert [p.name for p in paths] == ["findings.json", "summary.md", "findings.sarif", "summary.html", "verdicts"]
    document = json.loads((result.output_dir / "findings.json").read_text())
    jsonschema.validate(document, json_schema())
    sarif = json.loads((result.output_dir / "findings.sarif").read_text())
    jsonschema.Draft7Validator(SARIF_SCHEMA).validate(sarif)
    record = json.loads((result.output_dir / "verdicts" / "synthesis.json").read_text())
    assert record["detail_path"] == "summary.md" and record["summary"].startswith(result.verdict)


def test_findings_json_carries_the_protocol_fields(tmp_path: Path) -> None:
    document = json.loads(render_json(synthesize(_run("canonical", tmp_path))))
    for key in ("reviewed", "input", "input_type", "agents_launched", "agents_completed", "agents_failed", "findings",
                "improvements", "verdict", "early_stop", "content_routing_active", "synthesis_timestamp"):  # fmt: skip
        assert key in document, key
    finding = document["findings"][0]
    for key in ("id", "severity", "agents", "section", "title", "location", "locations", "convergence", "confidence",
                "cross_family_convergence", "provenance", "co_located", "co_located_with", "cross_references",
                "severity_conflict", "verification_recommended", "partial", "descriptions"):  # fmt: skip
        assert key in finding, key
    assert document["schema_version"] == 2 and document["synthesis_protocol_version"] == "1.0"


def test_sarif_levels_rules_and_stable_fingerprints(tmp_path: Path) -> None:
    result = synthesize(_run("canonical", tmp_path))
    sarif = build_sarif(result)
    run = sarif["runs"][0]
    results = run["results"]
    assert len(results) == len(result.findings)
    levels = {r["properties"]["severity"]: r["level"] for r in results}
    assert levels["P0"] == "error" and levels["P2"] == "warning"
    rule_ids = {r["id"] for r in run["tool"]["driver"]["rules"]}
    assert {r["ruleId"] for r in results} <= rule_ids
    first = results[0]
    assert first["locations"][0]["physicalLocation"]["region"]["startLine"] == 15
    again = build_sarif(synthesize(result.output_dir))["runs"][0]["results"]
    assert [r["partialFingerprints"] for r in again] == [r["partialFingerprints"] for r in results]


def test_static_rule_ids_reach_sarif(tmp_path: Path) -> None:
    from fluxdrive.contracts import IndexEntry, render_index, write_agent_output

    entry = IndexEntry("P0", "SF-001", "app.py", "SQL built with an f-string", "app.py:3", ("rule:ruff:S608",))
    write_agent_output(tmp_path, "fd-safety", render_index([entry]))
    sarif = build_sarif(synthesize(tmp_path))
    assert sarif["runs"][0]["results"][0]["ruleId"] == "ruff:S608"


def test_summary_sections_in_protocol_order(tmp_path: Path) -> None:
    text = render_summary(synthesize(_run("timeline", tmp_path)))
    headings = [line for line in text.splitlines() if line.startswith("## ")]
    assert headings == [
        "## Key Findings",
        "## Issues to Address",
        "## Improvements",
        "## Section Heat Map",
        "## Agent Reports",
        "## Conflicts",
        "## Findings Timeline",
    ]
    assert text.startswith("# fluxdrive review: ")
    assert "- [ ] **P0-1**" in text
    assert "**Cross-agent adjustments:** 4" in text and "**Unresolved contradictions:** 1" in text
    assert "| Time | Agent | Severity | Category | Summary |" in text


def test_console_report_fits_the_budget_for_a_big_seven_agent_review(tmp_path: Path) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent.parent / "bench"))
    from synthesis import _generate

    _generate(tmp_path, 700)
    result = synthesize(tmp_path)
    assert len(result.outputs) == 7 and len(result.findings) > 300
    files = write_reports(result)
    short = render_console(result, files)
    assert len(short) <= 4000
    assert short.startswith(f"Verdict: {result.verdict.upper()}")
    assert "more (see summary.md or --verbose)" in short
    assert "Files in " in short
    verbose = render_console(result, files, verbose=True)
    assert len(verbose) > 4000 and all(f.id in verbose for f in result.findings)


def test_cli_synthesize_exit_codes_and_json(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    run = _run("canonical", tmp_path)
    risky = cli("synthesize", run)
    assert risky.code == 1 and risky.out.startswith("Verdict: RISKY")
    assert len(risky.out) <= 4000
    assert cli("synthesize", run, "--fail-on", "never").code == 0
    data = json.loads(cli("synthesize", run, "--json", "--fail-on", "never").out)
    assert data["verdict"] == "risky"
    assert cli("synthesize", run, "--fail-on", "sometimes").code == 2
    safe = tmp_path / "safe"
    safe.mkdir()
    (safe / "fd-quality.md").write_text("### Findings Index\nVerdict: safe\n")
    assert cli("synthesize", safe).code == 0
    errored = tmp_path / "errored"
    errored.mkdir()
    (errored / "fd-quality.md").write_text(
        "### Findings Index\nVerdict: error\n\nAgent failed to produce findings after retry. Error: boom\n"
    )
    assert cli("synthesize", errored).code == 3
    empty = tmp_path / "empty"
    empty.mkdir()
    nothing = cli("synthesize", empty)
    assert nothing.code == 3 and nothing.err.startswith("fluxdrive: error: no agent reports in")
    assert cli("synthesize", tmp_path / "nope").code == 2


def test_cli_schema_commands(cli) -> None:  # type: ignore[no-untyped-def]
    findings = json.loads(cli("schema", "findings").out)
    assert findings["title"] == "fluxdrive findings.json" and "findings" in findings["properties"]
    run = json.loads(cli("schema", "run").out)
    assert "stages" in run["properties"]
