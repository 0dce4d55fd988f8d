"""bench/security.py end to end on a tiny fake BenchmarkPython checkout, with the real fluxdrive review.

Four cases: two even (one real SQL injection, one parameterized query) and two
odd. The odd files are made unreadable, every ``open`` in this process is
watched for them, and the temporary project is checked: the held-out odd
cases must never be opened or copied.
"""

from __future__ import annotations

import builtins
import io
import json
import os
from pathlib import Path
from typing import Any

import pytest

from bench import security

VULNERABLE = """\
import sqlite3

from flask import request


def init(app):

\t@app.route('/benchmark/sqli-00/BenchmarkTest{n}', methods=['POST'])
\tdef BenchmarkTest{n}_post():
\t\tparam = request.form.get("BenchmarkTest{n}", "")
\t\tsql = f"SELECT * FROM users WHERE name = '{{param}}'"
\t\twith sqlite3.connect("benchmark.db") as con:
\t\t\tcon.execute(sql)
\t\treturn "done"
"""

SAFE = """\
import sqlite3

from flask import request


def init(app):

\t@app.route('/benchmark/sqli-00/BenchmarkTest{n}', methods=['POST'])
\tdef BenchmarkTest{n}_post():
\t\tparam = request.form.get("BenchmarkTest{n}", "")
\t\twith sqlite3.connect("benchmark.db") as con:
\t\t\tcon.execute("SELECT * FROM users WHERE name = ?", (param,))
\t\treturn "done"
"""

EXPECTED = """\
# test name, category, real vulnerability, cwe, Benchmark version: 0.1, 2025-11-5
BenchmarkTest00001,sqli,true,89
BenchmarkTest00002,sqli,true,89
BenchmarkTest00003,sqli,false,89
BenchmarkTest00004,sqli,false,89
"""


def fake_checkout(root: Path) -> list[Path]:
    """The checkout; returns the odd case files (unreadable)."""
    (root / "testcode").mkdir(parents=True)
    (root / "helpers").mkdir()
    (root / "helpers" / "__init__.py").write_text("", encoding="utf-8")
    (root / "helpers" / "utils.py").write_text("TESTFILES_DIR = 'testfiles'\n", encoding="utf-8")
    (root / "requirements.txt").write_text("Flask==3.0.0\n", encoding="utf-8")
    (root / "expectedresults-0.1.csv").write_text(EXPECTED, encoding="utf-8")
    odd = []
    for number, template in ((1, VULNERABLE), (2, VULNERABLE), (3, SAFE), (4, SAFE)):
        n = f"{number:05d}"
        path = root / "testcode" / f"BenchmarkTest{n}.py"
        path.write_text(template.format(n=n), encoding="utf-8")
        (root / "testcode" / f"BenchmarkTest{n}.xml").write_text("<test-metadata/>\n", encoding="utf-8")
        if number % 2:
            odd.append(path)
    for path in odd:
        path.chmod(0)
        path.with_suffix(".xml").chmod(0)
    return odd


def test_even_cases_scored_odd_never_touched(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    checkout = tmp_path / "BenchmarkPython"
    odd = fake_checkout(checkout)
    held_out = {path.name for path in odd} | {path.with_suffix(".xml").name for path in odd}
    touched: list[str] = []

    def watch(real: Any) -> Any:
        def opener(file: Any, *args: Any, **kwargs: Any) -> Any:
            if isinstance(file, (str, os.PathLike)) and Path(os.fsdecode(file)).name in held_out:
                touched.append(os.fsdecode(file))
            return real(file, *args, **kwargs)

        return opener

    monkeypatch.setattr(builtins, "open", watch(builtins.open))
    monkeypatch.setattr(io, "open", watch(io.open))
    monkeypatch.setattr(os, "open", watch(os.open))
    out = tmp_path / "figures.json"

    assert security.main([str(checkout), "--json", str(out)]) == 0

    assert touched == [], f"held-out odd cases were opened: {touched}"
    report = json.loads(out.read_text(encoding="utf-8"))["benchmarkpython"]
    assert report["staged_case_files"] == ["BenchmarkTest00002.py", "BenchmarkTest00004.py"]
    assert report["cases"] == 2
    flux = report["tools"]["fluxdrive"]
    assert flux["categories"]["sqli"] == {"tp": 1, "fn": 0, "fp": 0, "tn": 1, "tpr": 1.0, "fpr": 0.0, "j": 1.0}
    assert flux["micro"]["j"] == 1.0
    assert flux["average"]["j"] == 1.0
    by_cwe = report["tools"]["fluxdrive cwe"]["categories"]["sqli"]
    assert (by_cwe["tp"], by_cwe["fp"]) == (1, 0), "the SQL injection finding names CWE-89"
    if "bandit" in report["tools"]:
        assert set(report["tools"]["bandit"]["categories"]) == {"sqli"}
    for path in odd:
        path.chmod(0o644)  # let tmp_path be cleaned up


def test_bad_paths_exit_2_and_no_path_skips(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert security.main([str(tmp_path / "nowhere")]) == 2
    assert security.main([str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2
    assert "not a directory" in err[0]
    assert "not a BenchmarkPython checkout" in err[1]
    checkout = tmp_path / "checkout"
    (checkout / "testcode").mkdir(parents=True)
    (checkout / "expectedresults-0.1.csv").write_text(EXPECTED, encoding="utf-8")
    assert security.main([str(checkout), "--dvpwa", str(tmp_path / "missing")]) == 2
    assert security.main([]) == 0
    assert "skipped" in capsys.readouterr().out


def test_dvpwa_matching_needs_place_and_meaning() -> None:
    truth = security.load_truth()
    root = Path("/project")
    items = [
        # the SQL injection: in sqli/dao/student.py 41-45 and about SQL
        {
            "severity": "P0",
            "rules": ["fluxdrive:py-sql-injection"],
            "title": "SQL built with %",
            "location": "sqli/dao/student.py:45",
        },
        # right place, wrong meaning: neither found nor "other" (it is P3)
        {"severity": "P3", "rules": ["ruff:N802"], "title": "naming", "locations": ["sqli/dao/student.py:42"]},
        # right meaning, wrong place: an "other" P1
        {"severity": "P1", "rules": ["fluxdrive:py-sql-injection"], "title": "SQL", "locations": ["sqli/views.py:57"]},
    ]
    scored = security.score_dvpwa(security.Run("fluxdrive", 0.0, items), truth, root, security.FLUX_FOUND)
    assert scored["vulnerabilities"]["sqli"]["found"] is True
    assert scored["found_all"] == 1
    assert [other["locations"] for other in scored["other_flagged"]] == [["sqli/views.py:57"]]
    assert {v["id"] for v in truth["vulnerabilities"]} >= {
        "sqli",
        "stored-xss",
        "session-fixation",
        "weak-password-hash",
        "csrf",
    }


def test_cwe_scoring_needs_the_cases_weakness(tmp_path: Path) -> None:
    """The OWASP-style view: a finding in the file counts only when it names the case's CWE (or its twin)."""
    place = "testcode/BenchmarkTest00002.py:5"
    findings = [
        {"severity": "P1", "cwe": ["CWE-79"], "locations": [place], "rules": ["fluxdrive:py-xss"], "title": "xss"},
        {"severity": "P1", "cwe": ["CWE-327"], "location": "testcode/BenchmarkTest00004.py:9", "title": "md5"},
        {"severity": "P3", "cwe": ["CWE-643"], "location": "testcode/BenchmarkTest00006.py:9", "title": "low"},
    ]
    run = security.Run("fluxdrive", 0.0, findings)
    expected = {2: "643", 4: "328", 6: "643"}
    assert security.flagged_cases(run, tmp_path, security.FLUX_FLAG) == {2, 4}
    assert security.flagged_cases(run, tmp_path, security.FLUX_FLAG, expected) == {4}
    issue = {"filename": "testcode/BenchmarkTest00002.py", "line_number": 5, "issue_severity": "LOW",
             "issue_cwe": {"id": 643}}  # fmt: skip
    bandit = security.Run("bandit", 0.0, [issue])
    assert security.flagged_cases(bandit, tmp_path, security.BANDIT_ANY, expected) == {2}
