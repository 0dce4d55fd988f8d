"""``review --import-sarif FILE``: other analyzers' results as evidence, end to end on a real project.

bandit runs for real (its ``-f sarif`` formatter); semgrep is not installed here, so its log is written
in the shape ``semgrep scan --sarif`` produces (driver "Semgrep OSS", rules with ``defaultConfiguration``
and ``CWE-…`` tags, results without a ``level``: semgrep leaves it on the rule).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from fluxdrive.imports import load_sarif
from tests.conftest import committed_copy, run_fluxdrive

PY_WEBAPP = Path(__file__).parent / "fixtures" / "projects" / "py-webapp"
SEMGREP_SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/os/schemas/sarif-schema-2.1.0.json"


def _semgrep_rule(rule_id: str, level: str, message: str, tags: list[str], **properties: Any) -> dict[str, Any]:
    return {
        "id": rule_id,
        "name": rule_id,
        "shortDescription": {"text": f"Semgrep Finding: {rule_id}"},
        "fullDescription": {"text": message},
        "defaultConfiguration": {"level": level},
        "help": {"text": message, "markdown": message},
        "helpUri": f"https://semgrep.dev/r/{rule_id}",
        "properties": {"precision": "very-high", "tags": tags, **properties},
    }


def _semgrep_result(rule_id: str, uri: str, line: int, message: str) -> dict[str, Any]:
    return {
        "fingerprints": {"matchBasedId/v1": f"{rule_id}:{uri}:{line}"},
        "locations": [
            {
                "physicalLocation": {
                    "artifactLocation": {"uri": uri, "uriBaseId": "%SRCROOT%"},
                    "region": {"startLine": line, "startColumn": 5, "endLine": line, "endColumn": 40},
                }
            }
        ],
        "message": {"text": message},
        "properties": {},
        "ruleId": rule_id,
    }


SQL_RULE = "python.lang.security.audit.formatted-sql-query.formatted-sql-query"
SQL_TEXT = "Detected possible formatted SQL query. Use parameterized queries instead."
DELETE_RULE = "rules.sql-delete-without-where"
DELETE_TEXT = "DELETE without a WHERE clause removes every row of the table"
SHELL_RULE = "python.lang.security.audit.subprocess-shell-true.subprocess-shell-true"


def semgrep_log(outside: Path) -> dict[str, Any]:
    """What ``semgrep scan --sarif`` writes for the py-webapp fixture (plus two results outside the project)."""
    rules = [
        _semgrep_rule(
            SQL_RULE,
            "warning",
            SQL_TEXT,
            [
                "CWE-89: Improper Neutralization of Special Elements used in an SQL Command ('SQL Injection')",
                "HIGH CONFIDENCE",
                "OWASP-A03:2021 - Injection",
                "security",
            ],
        ),
        _semgrep_rule(DELETE_RULE, "warning", DELETE_TEXT, []),
        _semgrep_rule(
            SHELL_RULE,
            "error",
            "Found 'subprocess' function 'check_output' with 'shell=True'.",
            ["CWE-78: Improper Neutralization of Special Elements used in an OS Command", "security"],
            **{"security-severity": "9.8"},
        ),
    ]
    results = [
        _semgrep_result(SQL_RULE, "shop/db.py", 15, SQL_TEXT),
        _semgrep_result(DELETE_RULE, "shop/routes.py", 30, DELETE_TEXT),
        _semgrep_result(
            SHELL_RULE, "shop/routes.py", 45, "Found 'subprocess' function 'check_output' with 'shell=True'."
        ),
        _semgrep_result(SHELL_RULE, "../vendor/tool.py", 3, "Found 'subprocess' function 'run' with 'shell=True'."),
        _semgrep_result(SHELL_RULE, outside.as_uri(), 7, "Found 'subprocess' function 'call' with 'shell=True'."),
    ]
    return {
        "$schema": SEMGREP_SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "invocations": [{"executionSuccessful": True, "toolExecutionNotifications": []}],
                "results": results,
                "tool": {"driver": {"name": "Semgrep OSS", "semanticVersion": "1.99.0", "rules": rules}},
            }
        ],
    }


def _write(path: Path, document: Any) -> Path:
    path.write_text(json.dumps(document, indent=2))
    return path


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return committed_copy(PY_WEBAPP, tmp_path / "shop-app")


def _bandit_sarif(root: Path, output: Path) -> Path:
    """A real bandit run over the project, in SARIF (exit 1 means it found something)."""
    bandit = Path(sys.executable).parent / "bandit"
    done = subprocess.run(
        [str(bandit), "-q", "-r", "shop", "-f", "sarif", "-o", str(output)], cwd=root, capture_output=True, text=True
    )
    if "invalid choice: 'sarif'" in done.stderr:
        pytest.fail("bandit's SARIF formatter is not installed: install bandit[sarif]")
    assert done.returncode in (0, 1), done.stderr
    return output


def _at(findings: list[dict[str, Any]], place: str) -> list[dict[str, Any]]:
    return [f for f in findings if place in f["locations"]]


def test_imported_results_corroborate_or_join_the_review(project: Path, tmp_path: Path) -> None:
    bandit = _bandit_sarif(project, tmp_path / "bandit.sarif")
    outside = tmp_path / "elsewhere" / "tool.py"
    semgrep = _write(tmp_path / "semgrep.sarif", semgrep_log(outside))
    plain = run_fluxdrive("review", ".", "--yes", "--fail-on", "never", "--format", "json", "-q", cwd=project)
    before = json.loads(plain.out)
    done = run_fluxdrive(
        "review", ".", "--yes", "--fail-on", "never", "--format", "json", "-q",
        "--import-sarif", bandit, "--import-sarif", semgrep, cwd=project,
    )  # fmt: skip
    assert done.code == 0, done.err
    document = json.loads(done.out)
    findings = document["findings"]

    # (a) fluxdrive's SQL injection, bandit's B608 and semgrep's formatted-sql-query: one finding, three sources
    sql = [f for f in _at(findings, "shop/db.py:15") if "CWE-89" in f["cwe"]]
    assert len(sql) == 1, sql
    assert sql[0]["rules"] == ["fluxdrive:py-sql-injection"]
    assert sql[0]["imported_from"] == [{"tool": "bandit", "rule": "B608"}, {"tool": "semgrep", "rule": SQL_RULE}]
    was = next(f for f in _at(before["findings"], "shop/db.py:15") if "CWE-89" in f["cwe"])
    assert sql[0]["convergence"] == was["convergence"] + 2
    assert sql[0]["population"] == was["population"] + 2  # each imported tool is one more reviewer
    assert sql[0]["confidence"] == "high" and not sql[0]["verification_recommended"]
    assert sql[0]["descriptions"]["semgrep"] == SQL_TEXT
    # semgrep rates the shell injection 9.8 (P0): counted once, fluxdrive's finding keeps its place and rule
    shell = [f for f in _at(findings, "shop/routes.py:45") if "CWE-78" in f["cwe"]]
    assert len(shell) == 1 and shell[0]["severity"] == "P0"
    assert {"tool": "semgrep", "rule": SHELL_RULE} in shell[0]["imported_from"]
    # every bandit result either corroborates a fluxdrive finding or stands on its own: none is counted twice
    bandit_rules = [i["rule"] for f in findings for i in f["imported_from"] if i["tool"] == "bandit"]
    assert len(bandit_rules) == len(set(bandit_rules))

    # (b) a result fluxdrive has no finding for is a finding of its own, naming its tool and rule
    (delete,) = [f for f in findings if f["rules"] == [f"semgrep:{DELETE_RULE}"]]
    assert delete["location"] == "shop/routes.py:30" and delete["severity"] == "P2"
    assert delete["agents"] == ["fd-quality"]  # not a security result: the quality reviewer owns it
    assert delete["imported_from"] == [{"tool": "semgrep", "rule": DELETE_RULE}]
    assert delete["title"] == f"{DELETE_TEXT} (semgrep {DELETE_RULE})"
    assert delete["convergence"] == 1
    assert [f["id"] for f in findings] == [f"{f['severity']}-{n}" for f, n in _numbered(findings)]

    # (c) results outside the project root are dropped, with a note
    places = [p for f in findings for p in f["locations"]]
    assert not any("vendor" in p or "elsewhere" in p for p in places)
    (note,) = [n for n in document["notes"] if "outside the project root were dropped" in n]
    assert "2 result(s)" in note and "../vendor/tool.py" in note


def _numbered(findings: list[dict[str, Any]]) -> list[tuple[dict[str, Any], int]]:
    seen: dict[str, int] = {}
    out = []
    for finding in findings:
        seen[finding["severity"]] = seen.get(finding["severity"], 0) + 1
        out.append((finding, seen[finding["severity"]]))
    return out


@pytest.mark.parametrize(
    ("content", "says"),
    [
        (None, "cannot read SARIF file"),
        ("{", "is not JSON"),
        ('{"version": "1.0.0", "results": []}', "is not a SARIF log"),  # semgrep --json, not --sarif
        ('{"version": "2.0.0", "runs": []}', "fluxdrive reads 2.1.0"),
        (b"\xff\xfe{", "is not UTF-8"),
    ],
)
def test_a_bad_sarif_file_is_one_line_and_exit_2_before_the_review(
    project: Path, tmp_path: Path, cli: Any, content: str | bytes | None, says: str
) -> None:
    given = tmp_path / "scan.sarif"
    if isinstance(content, bytes):
        given.write_bytes(content)
    elif content is not None:
        given.write_text(content)
    output = tmp_path / "out"
    done = cli("review", str(project), "--yes", "--import-sarif", given, "--output-dir", output)
    assert done.code == 2, done.err
    assert done.err.count("\n") == 1 and says in done.err, done.err
    assert "Traceback" not in done.err
    assert not output.exists()  # nothing ran


def test_project_config_names_only_files_inside_the_project(project: Path, tmp_path: Path, cli: Any) -> None:
    secret = _write(tmp_path / "private.sarif", semgrep_log(tmp_path / "x.py"))
    config = project / ".fluxdrive" / "config.toml"
    config.parent.mkdir()
    config.write_text('[imports]\nsarif = ["../private.sarif"]\n')
    climbing = cli("review", str(project), "--yes", "-q", "--fail-on", "never")
    assert climbing.code == 2 and "imports.sarif" in climbing.err and climbing.err.count("\n") == 1
    (project / "linked.sarif").symlink_to(secret)
    config.write_text('[imports]\nsarif = ["linked.sarif"]\n')
    linked = cli("review", str(project), "--yes", "-q", "--fail-on", "never")
    assert linked.code == 2 and "outside" in linked.err and linked.err.count("\n") == 1
    (project / "linked.sarif").unlink()
    _write(project / "semgrep.sarif", semgrep_log(tmp_path / "x.py"))
    config.write_text('[imports]\nsarif = ["semgrep.sarif"]\n')
    inside = cli("review", str(project), "--yes", "-q", "--fail-on", "never", "--format", "json")
    assert inside.code == 0, inside.err
    rules = {r for f in json.loads(inside.out)["findings"] for r in f["rules"]}
    assert f"semgrep:{DELETE_RULE}" in rules


def test_a_diff_review_keeps_only_results_on_changed_lines(project: Path, tmp_path: Path, cli: Any) -> None:
    routes = project / "shop" / "routes.py"
    routes.write_text(routes.read_text() + "\n\ndef purge(conn):\n    conn.execute('DELETE FROM users')\n")
    added = len(routes.read_text().splitlines())
    log = semgrep_log(tmp_path / "x.py")
    log["runs"][0]["results"].append(_semgrep_result(DELETE_RULE, "shop/routes.py", added, DELETE_TEXT))
    sarif = _write(tmp_path / "semgrep.sarif", log)
    done = cli(
        "review", "--diff", "HEAD", "--project", str(project), "--yes", "--fail-on", "never", "--format", "json",
        "--import-sarif", sarif,
    )  # fmt: skip
    assert done.code == 0, done.err
    imported = [f for f in json.loads(done.out)["findings"] if f["imported_from"]]
    assert [f["location"] for f in imported] == [f"shop/routes.py:{added}"]
    assert "3 outside what this review covered" in done.err


def _log(results: list[dict[str, Any]], rules: list[dict[str, Any]], name: str = "CodeQL", **run: Any) -> Any:
    return {
        "version": "2.1.0",
        "runs": [{"tool": {"driver": {"name": name, "rules": rules}}, "results": results, **run}],
    }


def test_the_reader_takes_severity_weakness_and_place_from_every_spelling(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.js").write_text("x\n" * 20)
    rules: list[dict[str, Any]] = [
        {"id": "js/sql-injection", "properties": {"tags": ["security", "external/cwe/cwe-089"],
                                                  "security-severity": "8.8"}},
        {"id": "js/unused-local-variable", "defaultConfiguration": {"level": "note"}, "properties": {"tags": []}},
        {"id": "js/xss", "relationships": [{"target": {"id": "79", "toolComponent": {"name": "CWE"}}}]},
    ]  # fmt: skip
    where = {"artifactLocation": {"uri": "src/app.js", "uriBaseId": "SRC"}, "region": {"startLine": 4}}
    absolute = {"artifactLocation": {"uri": (root / "src" / "app.js").as_uri()}, "region": {"startLine": 9}}
    results: list[dict[str, Any]] = [
        {"ruleId": "js/sql-injection", "ruleIndex": 0, "message": {"text": "Query built from\nuser input"},
         "locations": [{"physicalLocation": where}]},
        {"rule": {"id": "js/unused-local-variable", "index": 1}, "message": {"text": "Unused variable x."},
         "locations": [{"physicalLocation": absolute}]},
        {"ruleIndex": 2, "level": "error", "message": {"id": "default", "arguments": ["name"]},
         "locations": [{"physicalLocation": where}]},
        {"ruleId": "js/xss", "message": {"text": "dismissed"}, "suppressions": [{"kind": "external"}],
         "locations": [{"physicalLocation": where}]},
        {"ruleId": "js/xss", "kind": "pass", "message": {"text": "fine"}, "locations": [{"physicalLocation": where}]},
    ]  # fmt: skip
    rules[2]["messageStrings"] = {"default": {"text": "Cross-site scripting from {0}."}}
    log = _log(results, rules, originalUriBaseIds={"SRC": {"uri": root.as_uri() + "/"}})
    read = load_sarif(_write(tmp_path / "codeql.sarif", log), root)
    assert read.tools == ("codeql",)
    sql, unused, xss = read.results
    assert (sql.path, sql.line, sql.severity, sql.cwe, sql.security) == ("src/app.js", 4, "P1", ("CWE-89",), True)
    assert sql.message == "Query built from user input"  # one line
    assert (unused.path, unused.line, unused.severity, unused.security) == ("src/app.js", 9, "P3", False)
    assert (xss.rule, xss.severity, xss.cwe, xss.message) == (
        "js/xss",
        "P1",
        ("CWE-79",),
        "Cross-site scripting from name.",
    )
    assert read.skipped == {"not a failure": 1, "suppressed": 1}
    assert read.notes == ()


def test_messages_are_masked_and_other_hosts_dropped(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    place = {"physicalLocation": {"artifactLocation": {"uri": "a.py"}, "region": {"startLine": 1}}}
    remote = {"physicalLocation": {"artifactLocation": {"uri": "https://example.com/a.py"}}}
    results = [
        {"ruleId": "leak", "message": {"text": f"token {token}\x1b[31m found"}, "locations": [place]},
        {"ruleId": "leak", "message": {"text": "elsewhere"}, "locations": [remote]},
    ]
    read = load_sarif(_write(tmp_path / "x.sarif", _log(results, [], name="Acme Scanner 3")), root)
    (only,) = read.results
    assert token not in only.message and "\x1b" not in only.message
    assert only.tool == "acme-scanner-3" and only.severity == "P2"  # SARIF's default level: warning
    assert "not a file: a https: URI" in read.notes[0]


def test_the_mcp_review_tool_imports_sarif_from_inside_the_project_only(project: Path, tmp_path: Path) -> None:
    import asyncio

    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    _write(project / "semgrep.sarif", semgrep_log(tmp_path / "x.py"))
    _write(tmp_path / "private.sarif", semgrep_log(tmp_path / "x.py"))
    answers: list[tuple[bool, str]] = []

    async def go() -> None:
        exe = str(Path(sys.executable).parent / "fluxdrive")
        params = StdioServerParameters(command=exe, args=["mcp"], cwd=str(project))
        async with Client(params, read_timeout_seconds=120) as client:
            for given in (str(tmp_path / "private.sarif"), "semgrep.sarif"):
                result = await client.call_tool("review", {"target": ".", "import_sarif": [given]})
                answers.append((bool(result.is_error), "".join(getattr(p, "text", "") for p in result.content)))

    asyncio.run(go())
    (refused, said), (failed, review) = answers
    assert refused and "outside the project root" in said
    assert not failed and "Output directory:" in review, review
    output = project / review.split("Output directory: ", 1)[1].splitlines()[0]
    rules = {r for f in json.loads((output / "findings.json").read_text())["findings"] for r in f["rules"]}
    assert f"semgrep:{DELETE_RULE}" in rules
