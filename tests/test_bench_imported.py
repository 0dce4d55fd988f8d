"""bench/imported.py: the ossf-cve sample imported for real, then scored by place on the changed lines."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from bench import imported
from tests.eval.test_import_ossf import _source

REPO = Path(__file__).resolve().parent.parent


def test_changed_lines_are_the_new_side_lines_a_patch_adds() -> None:
    patch = (
        "diff --git a/a.js b/a.js\n--- a/a.js\n+++ b/a.js\n@@ -1,3 +1,4 @@\n keep\n-old\n+new\n+more\n keep\n"
        "@@ -10,2 +11,2 @@\n same\r\n-x\r\n+y\r\n"
        "diff --git a/gone.js b/gone.js\n--- a/gone.js\n+++ /dev/null\n@@ -1 +0,0 @@\n-bye\n"
        "diff --git a/new.js b/new.js\n--- /dev/null\n+++ b/new.js\n@@ -0,0 +1,2 @@\n+one\n+two\n"
    )
    assert imported.changed_lines(patch) == {"a.js": {2, 3, 12}, "new.js": {1, 2}}


def test_bench_scores_the_imported_sample(tmp_path: Path) -> None:
    source, _ = _source(tmp_path)
    fixtures = tmp_path / "fixtures"
    cli = [sys.executable, "-m", "fluxdrive", "eval", "import", "ossf-cve", str(source), str(fixtures)]
    subprocess.run(cli, capture_output=True, text=True, check=True)
    report = tmp_path / "bench.json"
    done = subprocess.run(
        [
            sys.executable,
            str(REPO / "bench" / "imported.py"),
            str(fixtures),
            "--skip",
            "semgrep",
            "--json",
            str(report),
        ],
        capture_output=True,
        text=True,
        check=False,
        cwd=REPO,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].endswith(": 6 diff fixture(s), 3 truths")
    rows = {line.split()[0]: line.split() for line in lines[2:5]}
    assert set(rows) == {"JavaScript", "TypeScript", "all"}
    assert rows["all"][1:3] == ["6", "3"] and rows["JavaScript"][1:3] == ["4", "2"]
    assert "errors: none" in lines
    document = json.loads(report.read_text(encoding="utf-8"))
    assert document["tools"] == ["fluxdrive"]
    cases = {case["id"]: case for case in document["cases"]}
    assert sum(case["truths"] for case in cases.values()) == 3
    assert all(0 <= case["found"]["fluxdrive"] <= case["truths"] for case in cases.values())
    found = sum(case["found"]["fluxdrive"] for case in cases.values())
    assert rows["all"][3] == f"{found}/3"
