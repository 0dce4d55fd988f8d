"""findings.sarif as GitHub code scanning ingests it: a real offline review, then GitHub's rules.

A small git project with several kinds of findings (SQL injection, a
hard-coded secret, ruff findings, document findings in a markdown plan) is
reviewed for real (static runtime, real triage, synthesis and reports). Its
``findings.sarif`` is validated against the SARIF 2.1.0 schema
(tests/data/README.md), checked against each property GitHub's "SARIF support
for code scanning" page requires or recommends, and, when ``npx`` is on PATH,
validated by Microsoft's SARIF multitool with the GitHub rule set
(``validate --rule-kind "Sarif;Gh"``): zero errors and zero warnings (notes -
"provide a code snippet", "rule ids look like CS1001" and the like - are
suggestions, not GitHub requirements).

The multitool is pinned: ``npx --yes -p @microsoft/sarif-multitool@5.7.0 -p
@microsoft/sarif-multitool-<platform>@5.7.0 sarif-multitool ...`` (the main
package's dependency on its platform binary is a ``^`` range, so the binary is
pinned too). The first run downloads about 40 MB (a self-contained .NET
binary; no .NET runtime needed) into the npm cache, ~4 s here; later runs take
~1.5 s. The package's ``bin.js`` hands its arguments to ``/bin/sh`` (``shell:
true``), so every argument is shell-quoted: an unquoted ``Sarif;Gh`` runs
``--rule-kind Sarif`` and then a command ``Gh``. A canary log (a result with
no location, a rule with no help) proves the GitHub rules ran.
"""

from __future__ import annotations

import collections
import hashlib
import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from fluxdrive.api import ReviewOptions, run_review
from fluxdrive.contracts import IndexEntry, render_index, write_agent_output
from fluxdrive.reports import build_sarif
from fluxdrive.reports.fingerprint import fingerprints
from fluxdrive.reports.html import project_root
from fluxdrive.reports.sarif import FINGERPRINT_KEY, SRCROOT, render_sarif
from fluxdrive.synthesis import Finding, synthesize
from tests.conftest import committed_copy

REPO = Path(__file__).resolve().parent.parent
SARIF_SCHEMA = json.loads((REPO / "tests" / "data" / "sarif-schema-2.1.0.json").read_text())
MULTITOOL_VERSION = "5.7.0"
PLATFORMS = {"linux": "linux", "darwin": "darwin"}  # win32 too, but its bin.js quoting is cmd.exe's
# Captured at import: the autouse fixture points HOME at a fresh directory, and the download belongs in the real cache.
NPM_CACHE = os.environ.get("npm_config_cache") or os.environ.get("NPM_CONFIG_CACHE") or str(Path.home() / ".npm")  # noqa: SIM112
NETWORK_ERRORS = ("ENOTFOUND", "EAI_AGAIN", "ETIMEDOUT", "ECONNREFUSED", "ECONNRESET", "ENETUNREACH", "E403", "E404")
AGENTS = ["fd-safety", "fd-correctness", "fd-quality", "fd-user-product", "fd-resilience"]

APP = """\
import sqlite3
import subprocess

AWS_KEY = "AKIAIOSFODNN7EXAMPLE"


def get_user(conn: sqlite3.Connection, name: str) -> list[tuple[str]]:
    cursor = conn.cursor()
    cursor.execute(f"SELECT * FROM users WHERE name = '{name}'")
    return cursor.fetchall()


def handlers(items):
    out = []
    for item in items:
        out.append(lambda: item.a)
        out.append(lambda: item.b)
    return out
"""
PLAN = """\
# Plan: move sessions to a service

## Context

We move sessions out of the monolith. See [the runbook](ops/runbook.md).

## Requirements

- Session lookups must be fast.

## Steps

1. Deploy the service behind the gateway.
2. Migrate the sessions table (TBD: backfill strategy).

## Open Questions

- Do we keep sticky sessions?
"""


def _review(tmp_path: Path, name: str, app: str = APP) -> Path:
    source = tmp_path / f"{name}-source"
    (source / "docs").mkdir(parents=True)
    (source / "app.py").write_text(app)
    (source / "docs" / "plan.md").write_text(PLAN)
    project = committed_copy(source, tmp_path / name)
    run = run_review(".", ReviewOptions(cwd=project, output_dir=project / "out", yes=True, agents=AGENTS))
    assert run.synthesis is not None
    return project / "out"


@pytest.fixture
def reviewed(tmp_path: Path) -> Path:
    """The output directory of a real offline review of the small project."""
    return _review(tmp_path, "shop")


def _sarif(directory: Path) -> dict[str, Any]:
    document: dict[str, Any] = json.loads((directory / "findings.sarif").read_text())
    return document


def _places(result: dict[str, Any]) -> list[dict[str, Any]]:
    return [*result["locations"], *result.get("relatedLocations", [])]


def _assert_github_requirements(sarif: dict[str, Any]) -> None:
    """Each property GitHub's SARIF page requires or recommends, and the multitool's Gh rules check."""
    jsonschema.Draft7Validator(SARIF_SCHEMA).validate(sarif)
    assert sarif["$schema"] == "https://json.schemastore.org/sarif-2.1.0.json" and sarif["version"] == "2.1.0"
    (run,) = sarif["runs"]
    driver = run["tool"]["driver"]
    assert driver["name"] == "fluxdrive" and driver["version"] and driver["informationUri"].startswith("https://")
    assert run["automationDetails"]["id"].endswith("/"), "category/ : GitHub keeps one analysis per category"
    assert run["originalUriBaseIds"][SRCROOT]["description"]["text"]
    assert "uri" not in run["originalUriBaseIds"][SRCROOT], "no machine path in the report"

    rules = driver["rules"]
    assert [r["id"] for r in rules] == sorted({r["id"] for r in rules})
    for rule in rules:
        assert 0 < len(rule["shortDescription"]["text"]) <= 1024 and 0 < len(rule["fullDescription"]["text"]) <= 1024
        assert rule["help"]["text"] and rule["help"]["markdown"]
        assert rule["defaultConfiguration"]["level"] in ("error", "warning", "note")
        properties = rule["properties"]
        assert properties["precision"] in ("very-high", "high", "medium", "low")
        if "security" in properties.get("tags", []):
            assert 0.0 < float(properties["security-severity"]) <= 10.0
            assert len(properties["tags"]) <= 20
        else:
            assert "security-severity" not in properties
            assert properties["problem.severity"] in ("error", "warning", "recommendation")

    assert run["results"]
    fingerprints = [r["partialFingerprints"][FINGERPRINT_KEY] for r in run["results"]]
    assert len(set(fingerprints)) == len(fingerprints), "one fingerprint per result"
    for result in run["results"]:
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"]
        assert result["message"]["text"].strip()
        assert result["level"] in ("error", "warning", "note")
        assert len(result["locations"]) == 1 and len(_places(result)) <= 1000
        for place in _places(result):
            physical = place["physicalLocation"]
            artifact = physical["artifactLocation"]
            assert artifact["uriBaseId"] == SRCROOT
            uri = artifact["uri"]
            assert uri and not uri.startswith(("/", "./", "file:")) and ":" not in uri and "\\" not in uri, uri
            assert physical["region"]["startLine"] >= 1
        assert [p["id"] for p in result.get("relatedLocations", [])] == list(
            range(1, len(result.get("relatedLocations", [])) + 1)
        )


def test_real_review_sarif_meets_github_requirements(reviewed: Path) -> None:
    sarif = _sarif(reviewed)
    _assert_github_requirements(sarif)
    run = sarif["runs"][0]
    rules = {r["id"]: r for r in run["tool"]["driver"]["rules"]}
    by_rule = collections.defaultdict(list)
    for result in run["results"]:
        by_rule[result["ruleId"]].append(result)

    sql = rules["fluxdrive:py-sql-injection"]["properties"]
    assert sql["tags"][0] == "security" and "external/cwe/cwe-89" in sql["tags"]
    assert sql["security-severity"] == "9.0" and sql["precision"] == "high"
    secret = rules["detect-secrets:aws-access-key"]["properties"]
    assert "external/cwe/cwe-798" in secret["tags"] and secret["security-severity"] == "9.0"
    assert "AKIAIOSFODNN7EXAMPLE" not in json.dumps(sarif), "the secret itself never reaches the report"
    assert rules["ruff:F401"]["properties"]["problem.severity"] == "recommendation"
    assert rules["ruff:B023"]["properties"]["problem.severity"] == "warning"
    (b023,) = by_rule["ruff:B023"]
    assert [p["physicalLocation"]["region"]["startLine"] for p in _places(b023)] == [16, 17]

    # document findings in the markdown plan: located at their line in docs/plan.md, heuristic precision
    todo = by_rule["fluxdrive:doc-unresolved-markers"][0]["locations"][0]["physicalLocation"]
    assert todo["artifactLocation"]["uri"] == "docs/plan.md" and todo["region"]["startLine"] == 14
    assert rules["fluxdrive:doc-unresolved-markers"]["properties"]["precision"] == "medium"
    uris = {p["physicalLocation"]["artifactLocation"]["uri"] for r in run["results"] for p in _places(r)}
    assert uris == {"app.py", "docs/plan.md"}


def test_fingerprints_do_not_move_with_lines(tmp_path: Path) -> None:
    """Lines added above every finding: same rules and fingerprints, other lines."""
    before = _sarif(_review(tmp_path, "before"))["runs"][0]["results"]
    shifted = '"""Sessions."""\n\n# one\n# two\n' + APP
    after = _sarif(_review(tmp_path, "after", shifted))["runs"][0]["results"]

    def keyed(results: list[dict[str, Any]]) -> dict[str, tuple[str, int]]:
        return {
            r["partialFingerprints"][FINGERPRINT_KEY]: (
                r["ruleId"],
                r["locations"][0]["physicalLocation"]["region"]["startLine"],
            )
            for r in results
            if r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "app.py"
        }

    old, new = keyed(before), keyed(after)
    common = set(old) & set(new)
    assert {old[k][0] for k in common} >= {"fluxdrive:py-sql-injection", "detect-secrets:aws-access-key", "ruff:B023"}
    assert all(new[k][1] == old[k][1] + 4 for k in common)


def _section_finding_run(tmp_path: Path) -> Path:
    """Reports where a reviewer located a finding at a document section, not a line."""
    out = tmp_path / "section-run"
    section = IndexEntry(
        "P1", "DC-001", "Open Questions", "No owner for the sticky-session decision", "docs/plan.md § Open Questions"
    )
    lined = IndexEntry("P2", "UP-001", "Steps", "Unresolved TBD in Steps", "docs/plan.md:14")
    twice = [
        IndexEntry("P0", f"SF-00{n}", "app.py", "Hard-coded password in app.py", f"app.py:{line}", ("rule:ruff:S105",))
        for n, line in ((1, 3), (2, 9))
    ]
    write_agent_output(out, "fd-decisions", render_index([section]))
    write_agent_output(out, "fd-user-product", render_index([lined]))
    write_agent_output(out, "fd-safety", render_index(twice))
    return out


def test_a_finding_located_at_a_document_section(tmp_path: Path) -> None:
    result = synthesize(_section_finding_run(tmp_path))
    finding = next(f for f in result.findings if f.agents == ["fd-decisions"])
    assert finding.locations == [], "a section is not a file:line location"
    sarif = build_sarif(result)
    _assert_github_requirements(sarif)
    (item,) = [r for r in sarif["runs"][0]["results"] if r["properties"]["fluxdriveId"] == finding.id]
    physical = item["locations"][0]["physicalLocation"]
    assert physical["region"]["startLine"] == 1 and physical["artifactLocation"]["uri"] == "."
    assert "section 'Open Questions', not a line" in item["message"]["text"]
    assert item["properties"]["section"] == "Open Questions"
    # one title twice in one file: two fingerprints, each the one a baseline records for that finding
    passwords = [r for r in sarif["runs"][0]["results"] if r["ruleId"] == "ruff:S105"]
    assert len(passwords) == 2
    found = fingerprints(result.findings, project_root(result) or tmp_path)
    marks = dict(zip((f.id for f in result.findings), found, strict=True))
    assert sorted(r["partialFingerprints"][FINGERPRINT_KEY] for r in passwords) == sorted(
        marks[r["properties"]["fluxdriveId"]] for r in passwords
    )
    assert len({r["partialFingerprints"][FINGERPRINT_KEY] for r in passwords}) == 2
    assert build_sarif(result, category="fluxdrive/backend")["runs"][0]["automationDetails"]["id"] == (
        "fluxdrive/backend/"
    )


# --- the SARIF multitool (GitHub's rules) ---------------------------------------------------------------------------


def _canary(sarif: dict[str, Any]) -> dict[str, Any]:
    """A copy GitHub would reject: a result with no location, a rule with no help."""
    broken: dict[str, Any] = json.loads(json.dumps(sarif))
    run = broken["runs"][0]
    del run["results"][0]["locations"]
    del run["tool"]["driver"]["rules"][0]["help"]
    return broken


def _multitool(targets: list[Path], work: Path) -> dict[str, collections.Counter[tuple[str, str]]]:
    """(level, rule) counts per validated file, from the SARIF log the multitool writes."""
    platform = PLATFORMS.get(sys.platform)
    npx = shutil.which("npx")
    if npx is None or platform is None:
        pytest.skip("npx is not on PATH" if npx is None else f"no pinned multitool binary for {sys.platform}")
    log = work / "validation.sarif"
    arguments = ["validate", "--rule-kind", "Sarif;Gh", "--level", "Error;Warning;Note"]
    arguments += ["--output", str(log), "--log", "ForceOverwrite;PrettyPrint", *map(str, targets)]
    command = [
        npx,
        "--yes",
        "-p",
        f"@microsoft/sarif-multitool@{MULTITOOL_VERSION}",
        "-p",
        f"@microsoft/sarif-multitool-{platform}@{MULTITOOL_VERSION}",
        "sarif-multitool",
        *(shlex.quote(a) for a in arguments),  # bin.js runs the binary through /bin/sh
    ]
    env = {**os.environ, "npm_config_cache": NPM_CACHE, "npm_config_update_notifier": "false"}
    done = subprocess.run(command, capture_output=True, text=True, timeout=900, env=env, check=False)
    if not log.is_file() and any(code in done.stderr for code in NETWORK_ERRORS):
        pytest.skip(f"the npm registry is unreachable: {done.stderr.strip().splitlines()[-1]}")
    assert log.is_file(), f"the multitool wrote no log (exit {done.returncode}):\n{done.stdout}\n{done.stderr}"
    (run,) = json.loads(log.read_text())["runs"]
    assert run["invocations"][0]["executionSuccessful"], run["invocations"]
    counts: dict[str, collections.Counter[tuple[str, str]]] = {t.name: collections.Counter() for t in targets}
    for result in run.get("results", []):
        uri = result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        counts[uri.rsplit("/", 1)[-1]][(result.get("level", "warning"), result["ruleId"])] += 1
    return counts


def _by_level(counts: collections.Counter[tuple[str, str]], level: str) -> dict[str, int]:
    return {rule: n for (lvl, rule), n in counts.items() if lvl == level}


def test_github_rules_of_the_sarif_multitool(reviewed: Path, tmp_path: Path) -> None:
    work = tmp_path / "multitool"
    work.mkdir()
    review = work / "review.sarif"
    shutil.copyfile(reviewed / "findings.sarif", review)
    section = work / "section.sarif"
    section.write_text(render_sarif(synthesize(_section_finding_run(tmp_path))))
    canary = work / "canary.sarif"
    canary.write_text(json.dumps(_canary(_sarif(reviewed)), indent=2))

    counts = _multitool([review, section, canary], work)

    assert _by_level(counts["canary.sarif"], "error").keys() >= {"GH1015", "GH2012"}, counts["canary.sarif"]
    for name in ("review.sarif", "section.sarif"):
        assert _by_level(counts[name], "error") == {}, (name, counts[name])
        assert _by_level(counts[name], "warning") == {}, (name, counts[name])


def test_fingerprint_key_and_material_are_the_baseline_ones(tmp_path: Path) -> None:
    """The key name is unchanged; the value is the baseline fingerprint (file, rule or title, line text, occurrence)."""
    assert FINGERPRINT_KEY == "fluxdriveFinding/v1"
    (tmp_path / "a.py").write_text("import os\n\nquery = 'SELECT ' + name\n")
    finding = Finding(id="P0-1", severity="P0", agents=["fd-safety"], section="a", title="SQL", locations=["a.py:3"])
    material = "v1\0a.py\0title:sql\0query = 'SELECT ' + name\0" + "0"
    assert fingerprints([finding], tmp_path) == [hashlib.sha256(material.encode()).hexdigest()[:32]]
