"""The GitLab Code Quality report (``render_codeclimate``) of real reviews.

Real offline reviews (triage, ruff, detect-secrets and fluxdrive's checks,
synthesis) of a small git project, reviewed from a subdirectory; and real
synthesis over agent reports written by hand, for what the analyzers do not
produce (a secret quoted in a title, a model finding with no rule or no
place, an improvement). Every report is validated against GitLab's own
per-issue schema and against the stricter report schema written from
GitLab's documented fields (tests/data/gitlab/SOURCE.md).
"""

from __future__ import annotations

import dataclasses
import json
from collections import Counter
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from fluxdrive.api import ReviewOptions, run_review
from fluxdrive.reports import render_codeclimate
from fluxdrive.synthesis import Synthesis
from fluxdrive.synthesis.engine import synthesize
from tests.conftest import committed_copy

DATA = Path(__file__).resolve().parent.parent / "data" / "gitlab"
GITLAB_ISSUE_SCHEMA = json.loads((DATA / "codeclimate.json").read_text())
REPORT_SCHEMA = json.loads((DATA / "codequality-report.schema.json").read_text())

PASSWORD = "hunter2hunter2xyz"
APP = f'''\
import sqlite3

DB_PASSWORD = "{PASSWORD}"
ADMIN_PASSWORD = "correcthorsebattery"


def get_user(conn: sqlite3.Connection, name: str) -> list[tuple[str]]:
    cursor = conn.cursor()
    cursor.execute(f"SELECT * FROM users WHERE name = '{{name}}'")
    return cursor.fetchall()


def handlers(items):
    out = []
    for item in items:
        out.append(lambda: item.a)
        out.append(lambda: item.b)
        out.append(lambda: item.c)
    return out
'''
OUTSIDE = 'import sqlite3\n\n\ndef q(conn, name):\n    conn.execute(f"SELECT {name}")\n'
CLEAN = '"""A clean module."""\n\n\ndef add(a: int, b: int) -> int:\n    """Sum."""\n    return a + b\n'


def _validate(text: str) -> list[dict[str, Any]]:
    """Parse a report and validate it the way GitLab does (each issue) and against the documented format."""
    issues = json.loads(text)
    assert isinstance(issues, list)
    for issue in issues:
        jsonschema.Draft7Validator(GITLAB_ISSUE_SCHEMA).validate(issue)
    jsonschema.Draft7Validator(REPORT_SCHEMA).validate(issues)
    return issues


def _review(project: Path, cwd: Path, out: Path) -> Synthesis:
    run = run_review(".", ReviewOptions(cwd=cwd, output_dir=out, yes=True, agents=["fd-safety", "fd-correctness"]))
    assert run.synthesis is not None
    return run.synthesis


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A git project: the reviewed code under svc/, another finding outside it."""
    source = tmp_path / "source"
    (source / "svc").mkdir(parents=True)
    (source / "svc" / "app.py").write_text(APP)
    (source / "other").mkdir()
    (source / "other" / "db.py").write_text(OUTSIDE)
    return committed_copy(source, tmp_path / "proj")


def _key(issue: dict[str, Any]) -> tuple[str, str, int]:
    return issue["check_name"], issue["location"]["path"], issue["location"]["lines"]["begin"]


def test_subdirectory_review_paths_severities_and_places(project: Path, tmp_path: Path) -> None:
    text = render_codeclimate(_review(project, project / "svc", tmp_path / "out"))
    issues = _validate(text)
    by_key = {_key(i): i for i in issues}

    # relative to the repository root, not to svc/; nothing from outside the reviewed directory
    assert {i["location"]["path"] for i in issues} == {"svc/app.py"}
    sql = by_key["fluxdrive:py-sql-injection", "svc/app.py", 9]
    assert sql["severity"] == "blocker" and sql["categories"] == ["Security"]
    assert sql["description"].startswith("SQL built with an f-string") and sql["type"] == "issue"
    assert sql["location"]["lines"] == {"begin": 9, "end": 9}
    assert "CWE-89" in sql["content"]["body"]

    secrets = [i for i in issues if i["check_name"] == "detect-secrets:secret-keyword"]
    assert sorted(i["location"]["lines"]["begin"] for i in secrets) == [3, 4]
    assert {i["severity"] for i in secrets} == {"blocker"}

    # one finding standing for three lines: one issue per line, each saying which place it is
    b023 = sorted((i for i in issues if i["check_name"] == "ruff:B023"), key=lambda i: i["location"]["lines"]["begin"])
    assert [i["location"]["lines"]["begin"] for i in b023] == [16, 17, 18]
    assert [i["description"].rsplit(" (", 1)[1] for i in b023] == ["place 1 of 3)", "place 2 of 3)", "place 3 of 3)"]
    assert not any("more lines" in i["description"] for i in b023)
    assert {i["severity"] for i in b023} == {"major"} and b023[0]["categories"] == ["Bug Risk"]

    # GitLab keeps one issue per fingerprint: the two secrets (same rule, file, title) must not collapse
    assert len({i["fingerprint"] for i in issues}) == len(issues)
    # deterministic, sorted output; the planted password never appears
    assert [(i["location"]["path"], i["location"]["lines"]["begin"]) for i in issues] == sorted(
        (i["location"]["path"], i["location"]["lines"]["begin"]) for i in issues
    )
    assert PASSWORD not in text


def test_fingerprints_stable_across_runs_and_line_shifts(project: Path, tmp_path: Path) -> None:
    first = _validate(render_codeclimate(_review(project, project / "svc", tmp_path / "out1")))
    second = _validate(render_codeclimate(_review(project, project / "svc", tmp_path / "out2")))
    assert first == second, "two reviews of the same tree give the same report"

    app = project / "svc" / "app.py"
    app.write_text("\n\n" + app.read_text())  # every line moves down by two
    shifted = _validate(render_codeclimate(_review(project, project / "svc", tmp_path / "out3")))

    assert len(shifted) == len(first)
    moved = {i["fingerprint"]: i["location"]["lines"]["begin"] for i in shifted}
    for issue in first:
        assert issue["fingerprint"] in moved, f"fingerprint changed when lines moved: {issue}"
        assert moved[issue["fingerprint"]] == issue["location"]["lines"]["begin"] + 2
    assert Counter(i["check_name"] for i in shifted) == Counter(i["check_name"] for i in first)


def test_clean_project_is_an_empty_array(tmp_path: Path) -> None:
    source = tmp_path / "source"
    source.mkdir()
    (source / "calc.py").write_text(CLEAN)
    project = committed_copy(source, tmp_path / "proj")
    result = _review(project, project, tmp_path / "out")
    assert not result.findings
    text = render_codeclimate(result)
    assert _validate(text) == [] and text == "[]\n"


# --- synthesis over agent reports written by hand --------------------------------------------------------

SAFETY = f"""### Findings Index
- P1 | SF-001 | "Secrets" | Database password committed: DB_PASSWORD={PASSWORD} is readable by anyone | config/.env:1
- P2 | SF-002 | "Auth" | Session cookie lacks the Secure flag | web/session.py:12
- P3 | SF-003 | "Threat model" | No threat model covers the admin console
- IMP | SF-004 | "Auth" | Consider rotating session keys on login | web/session.py:30
Verdict: risky

### Summary
A committed password, a cookie flag, a missing threat model.

### Issues Found
1. SF-001 P1: Database password committed (config/.env:1)
2. SF-002 P2: Session cookie lacks the Secure flag (web/session.py:12)
3. SF-003 P3: No threat model covers the admin console
"""
PERFORMANCE = """### Findings Index
- P2 | PF-001 | "Queries" | N+1 query loads each order's lines one by one | web/orders.py:40
Verdict: needs-changes

### Summary
One N+1 query.

### Issues Found
1. PF-001 P2: N+1 query loads each order's lines one by one (web/orders.py:40)
"""


@pytest.fixture
def hand_written(tmp_path: Path) -> Synthesis:
    reports = tmp_path / "reports"
    reports.mkdir()
    (reports / "fd-safety.md").write_text(SAFETY + "\n<!-- flux-drive:complete -->\n")
    (reports / "fd-performance.md").write_text(PERFORMANCE + "\n<!-- flux-drive:complete -->\n")
    return synthesize(reports)


def test_model_findings_masking_rules_and_fallbacks(hand_written: Synthesis) -> None:
    text = render_codeclimate(hand_written)
    issues = _validate(text)

    assert PASSWORD not in text
    leaked = next(i for i in issues if i["location"]["path"] == "config/.env")
    assert "DB_PASSWORD=****" in leaked["description"]
    assert leaked["severity"] == "critical" and leaked["categories"] == ["Security"]
    assert leaked["check_name"] == "fd-safety", "a model finding with no rule is named after its agent"

    orders = next(i for i in issues if i["location"]["path"] == "web/orders.py")
    assert orders["severity"] == "major" and orders["categories"] == ["Performance"]
    assert orders["check_name"] == "fd-performance"

    # no place: still a path GitLab can link (it builds the blob URL from it), line 1
    (unplaced,) = [i for i in issues if i["description"].startswith("No threat model")]
    assert unplaced["severity"] == "minor" and unplaced["location"]["lines"] == {"begin": 1, "end": 1}
    assert unplaced["location"]["path"] == ".", "reports synthesized without a run: the repository root"

    # improvements are suggestions, not violations: left out unless asked for, then info
    assert not any("rotating session keys" in i["description"] for i in issues)
    with_improvements = _validate(render_codeclimate(hand_written, include_improvements=True))
    (improvement,) = [i for i in with_improvements if "rotating session keys" in i["description"]]
    assert improvement["severity"] == "info" and improvement["location"]["path"] == "web/session.py"
    assert len(with_improvements) == len(issues) + 1
    assert {i["fingerprint"] for i in issues} <= {i["fingerprint"] for i in with_improvements}


def test_report_is_byte_identical_when_rendered_twice(hand_written: Synthesis) -> None:
    assert render_codeclimate(hand_written) == render_codeclimate(hand_written)


@pytest.mark.parametrize(
    ("input_type", "label", "expected"),
    [
        ("file", "session.py", "web/session.py"),  # the one located file with that name, root-relative
        ("document", "plan.md", "plan.md"),  # no finding located in it: its name as given
        ("directory", "web", "web"),
        ("diff", "diff-main", "."),
    ],
)
def test_unplaced_finding_points_at_the_reviewed_input(
    hand_written: Synthesis, input_type: str, label: str, expected: str
) -> None:
    result = dataclasses.replace(hand_written, input=label, input_type=input_type)
    issues = _validate(render_codeclimate(result))
    (unplaced,) = [i for i in issues if i["description"].startswith("No threat model")]
    assert unplaced["location"] == {"path": expected, "lines": {"begin": 1, "end": 1}}


def test_renderer_masks_a_raw_secret_itself(hand_written: Synthesis) -> None:
    """Synthesis masks reports as they come in; the renderer masks again, and hashes only masked text."""
    before = {i["description"]: i["fingerprint"] for i in _validate(render_codeclimate(hand_written))}
    leaked = next(f for f in hand_written.findings if f.location == "config/.env:1")
    assert PASSWORD not in leaked.title
    leaked.title = leaked.title.replace("****", PASSWORD)  # as if an upstream mask had been missed
    token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    other = next(f for f in hand_written.findings if f.location == "web/orders.py:40")
    other.title = f"{other.title} (token {token})"

    text = render_codeclimate(hand_written)
    issues = _validate(text)
    assert PASSWORD not in text and token not in text
    masked = next(i for i in issues if i["location"]["path"] == "config/.env")
    assert before[masked["description"]] == masked["fingerprint"], "the fingerprint hashes the masked title"
