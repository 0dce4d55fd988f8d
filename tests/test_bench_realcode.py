"""bench/realcode.py end to end: tiny bare git mirrors, tiny manifests, the real review, bandit (and semgrep).

The vulnerable case reviews a subdirectory (``root: app``) of a Flask shop
with a SQL injection and a command injection from request arguments, and a
missing ownership check nothing can see. Its weaknesses are placed so that
the +-3 line rule decides: one on the sink's line, one exactly 3 lines below
the sink, one 7 lines away. The healthy project has three P0s (SQL, command,
eval from request arguments): one labelled real, one labelled false with the
rule's namespace left out and 2 lines off, one unlabelled; a label with the
wrong rule must match nothing. A case whose mirror is missing is skipped.
The shop's mirror lacks one file's content, as a snapshot
may: the case is reviewed without it. The semgrep-rules mirror holds one rule and a broken ``*.test.yaml`` that
must be left out; semgrep's figures are checked only when it is installed.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from bench import realcode

REPO = Path(__file__).resolve().parent.parent

SHOP_VIEWS = '''\
"""The shop's views."""

import sqlite3
import subprocess

from flask import Flask, request

app = Flask(__name__)


@app.route("/user")
def user():
    """One user by name."""
    name = request.args.get("name", "")
    with sqlite3.connect("shop.db") as con:
        rows = con.execute("SELECT * FROM users WHERE name = '%s'" % name).fetchall()
    return {"rows": rows}


@app.route("/ping")
def ping():
    """Ping a host."""
    host = request.args.get("host", "")
    out = subprocess.run("ping -c 1 " + host, shell=True, capture_output=True, check=False)
    return {"code": out.returncode}


@app.route("/orders/<int:order_id>")
def order(order_id: int):
    """Any logged-in user sees any order: nothing checks that it is theirs."""
    with sqlite3.connect("shop.db") as con:
        rows = con.execute("SELECT * FROM orders WHERE id = ?", (order_id,)).fetchall()
    return {"rows": rows}
'''

LIB_WEB = '''\
"""A small web helper."""

import sqlite3
import subprocess

from flask import Flask, request

app = Flask(__name__)


@app.route("/find")
def find():
    """Find an item."""
    term = request.args.get("q", "")
    with sqlite3.connect("lib.db") as con:
        rows = con.execute(f"SELECT * FROM items WHERE name = '{term}'").fetchall()
    return {"rows": rows}


@app.route("/run")
def run():
    """Run a tool."""
    tool = request.args.get("tool", "")
    done = subprocess.run("tool " + tool, shell=True, capture_output=True, check=False)
    return {"code": done.returncode}


@app.route("/calc")
def calc():
    """Evaluate an expression."""
    return {"value": eval(request.args.get("expr", "0"))}
'''

LIB_UTIL = '''\
"""Helpers."""


def add(a: int, b: int) -> int:
    """The sum."""

    return a + b
'''

EVAL_RULE = """\
rules:
  - id: bench-eval
    languages: [python]
    severity: ERROR
    message: eval of anything
    pattern: eval(...)
"""


def bare_mirror(mirrors: Path, repo: str, files: dict[str, str]) -> str:
    """A bare mirror of a one-commit repository holding ``files``; its commit."""
    work = mirrors.parent / "work" / repo.replace("/", "+")
    for name, text in files.items():
        (work / name).parent.mkdir(parents=True, exist_ok=True)
        (work / name).write_text(text, encoding="utf-8")
    quiet = ["-c", "user.name=t", "-c", "user.email=t@localhost", "-c", "commit.gpgsign=false"]
    subprocess.run(["git", "init", "-q", str(work)], check=True)
    subprocess.run(["git", "-C", str(work), "add", "-A"], check=True)
    subprocess.run(["git", "-C", str(work), *quiet, "commit", "-q", "-m", "one"], check=True)
    target = mirrors / repo.replace("/", "+") / "repo"
    subprocess.run(["git", "clone", "-q", "--bare", str(work), str(target)], check=True)
    return subprocess.run(
        ["git", "-C", str(work), "rev-parse", "HEAD"], capture_output=True, text=True, check=True
    ).stdout.strip()


def manifests(tmp: Path, shop: str, lib: str) -> tuple[Path, Path]:
    vulnerable = tmp / "vulnerable.yaml"
    vulnerable.write_text(
        f"""\
cases:
  - name: shop
    repo: acme/shop
    commit: {shop}
    license: MIT
    language: python
    kind: app
    root: app
    solution: tests/test_bench_realcode.py
    weaknesses:
      - {{id: shop-sqli, cwe: CWE-89, file: app/views.py, lines: [16], what: SQL from the name argument}}
      - {{id: shop-cmdi, cwe: CWE-78, file: app/views.py, lines: [27], what: host reaches a shell}}
      - {{id: shop-idor, cwe: CWE-639, file: app/views.py, lines: [31], what: any user reads any order}}
  - name: ghost
    repo: acme/ghost
    commit: "{"0" * 40}"
    license: MIT
    language: python
    weaknesses:
      - {{id: ghost-x, cwe: CWE-89, file: x.py, lines: [1], what: never scored}}
  - name: gadget
    repo: acme/gadget
    commit: "{"1" * 40}"
    license: MIT
    language: go
    weaknesses:
      - {{id: gadget-x, cwe: CWE-78, file: x.go, lines: [1], what: not python}}
""",
        encoding="utf-8",
    )
    healthy = tmp / "healthy.yaml"
    healthy.write_text(
        f"""\
projects:
  - {{name: lib, repo: acme/lib, commit: {lib}, license: MIT, language: python, root: ""}}
labels:
  - {{project: lib, file: lib/web.py, line: 16, rule: "fluxdrive:py-sql-injection", tool: fluxdrive, real: true}}
  - {{project: lib, file: lib/web.py, line: 26, rule: py-command-injection, tool: fluxdrive, real: false}}
  - {{project: lib, file: lib/web.py, line: 31, rule: "fluxdrive:py-sql-injection", tool: fluxdrive, real: false}}
  - {{project: lib, file: lib/web.py, line: 24, rule: B602, tool: bandit, real: false, why: test}}
""",
        encoding="utf-8",
    )
    return vulnerable, healthy


def test_corpora_scored_side_by_side(tmp_path: Path) -> None:
    mirrors = tmp_path / "mirrors"
    shop = bare_mirror(
        mirrors, "acme/shop", {"app/views.py": SHOP_VIEWS, "docs/index.md": "# Shop\n", "docs/logo.png": "big\n"}
    )
    shop_git = mirrors / "acme+shop" / "repo"
    logo = subprocess.run(
        ["git", "-C", str(shop_git), "rev-parse", "HEAD:docs/logo.png"], capture_output=True, text=True, check=True
    ).stdout.strip()
    (shop_git / "objects" / logo[:2] / logo[2:]).unlink()  # a snapshot may lack its largest files
    lib = bare_mirror(
        mirrors, "acme/lib", {"lib/web.py": LIB_WEB, "lib/util.py": LIB_UTIL, "README.md": "# lib\n\nSmall.\n"}
    )
    bare_mirror(
        mirrors,
        "semgrep/semgrep-rules",
        {"python/eval.yaml": EVAL_RULE, "python/eval.py": "eval(x)\n", "python/eval.test.yaml": "rules: [oops\n"},
    )
    vulnerable, healthy = manifests(tmp_path, shop, lib)
    out = tmp_path / "figures.json"
    args = ["--mirrors", str(mirrors), "--vulnerable", str(vulnerable), "--healthy", str(healthy)]
    args += ["--cache", str(tmp_path / "cache"), "--json", str(out)]
    done = subprocess.run(
        [sys.executable, str(REPO / "bench" / "realcode.py"), *args],
        capture_output=True,
        text=True,
        check=False,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(out.read_text(encoding="utf-8"))
    assert report["tools"][:2] == ["fluxdrive", "bandit"], "bandit is in the dev extras"

    cases = {case["name"]: case for case in report["vulnerable"]["cases"]}
    assert set(cases) == {"shop", "ghost"}, "the Go case is filtered out by the default --language python"
    assert cases["ghost"]["status"] == "skipped"
    assert "skipped: ghost: mirror missing (fetch github:acme/ghost)" in done.stdout
    case = cases["shop"]
    assert case["status"] == "ok" and case["absent_files"] == ["docs/logo.png"]
    found = {w["id"]: bool(w["found_by"]["fluxdrive"]) for w in case["weaknesses"]}
    assert found == {"shop-sqli": True, "shop-cmdi": True, "shop-idor": False}, "+-3 lines, inclusive"
    assert case["weaknesses"][0]["found_by"]["fluxdrive"] == ["P0 fluxdrive:py-sql-injection app/views.py:16"]
    counts = ("found", "weaknesses", "flagged")
    assert {k: case["tools"]["fluxdrive"][k] for k in counts} == {"found": 2, "weaknesses": 3, "flagged": 2}
    # bandit: B608 MEDIUM at 16 and B602 HIGH at 24 are flagged; B404 (LOW) is not
    assert {k: case["tools"]["bandit"][k] for k in counts} == {"found": 2, "weaknesses": 3, "flagged": 2}
    totals = report["vulnerable"]["totals"]
    assert totals["fluxdrive"]["found"] == 2 and totals["weaknesses"] == 3
    assert totals["by_cwe"]["CWE-639"] == {"weaknesses": 1, "fluxdrive": 0, "bandit": 0} | (
        {"semgrep": 0} if "semgrep" in report["tools"] else {}
    )
    assert "shop-idor CWE-639 app/views.py:31 - any user reads any order" in done.stdout

    project = report["healthy"]["projects"][0]
    assert project["status"] == "ok"
    lines = sum(1 for text in (LIB_WEB, LIB_UTIL) for line in text.splitlines() if line.strip())
    assert (project["files"], project["lines"]) == (2, lines), "README.md is not code"
    flux = project["tools"]["fluxdrive"]
    assert flux["flagged"] == 3
    assert flux["per_100k"] == round(3 * 100_000 / lines, 2)
    labelled = project["labels"]["fluxdrive"]
    assert (labelled["real"], labelled["false"], labelled["precision"]) == (1, 1, 0.5)
    assert [(u["rule"], u["location"]) for u in labelled["unlabelled"]] == [("fluxdrive:py-eval-exec", "lib/web.py:31")]
    assert project["stale_labels"] == ["fluxdrive fluxdrive:py-sql-injection lib/web.py:31"]
    assert project["labels"]["bandit"]["false"] == 1
    assert "UNLABELLED fluxdrive P0/P1 (1;" in done.stdout
    assert report["time"]["ratio"] > 0 and "fluxdrive / bandit = " in done.stdout

    if "semgrep" in report["tools"]:  # installed by bench/tools.sh; the broken *.test.yaml was left out
        assert project["tools"]["semgrep"]["flagged"] == 1, project["tools"]["semgrep"]
        assert case["tools"]["semgrep"]["flagged"] == 0
    else:
        assert "semgrep: not installed" in done.stdout


def test_list_sources_and_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    vulnerable, healthy = manifests(tmp_path, "a" * 40, "b" * 40)
    paths = ["--vulnerable", str(vulnerable), "--healthy", str(healthy)]
    assert realcode.main([*paths, "--list-sources", "--language", "all"]) == 0
    assert capsys.readouterr().out.split() == [
        "github:acme/gadget",
        "github:acme/ghost",
        "github:acme/lib",
        "github:acme/shop",
        "github:semgrep/semgrep-rules",
    ]
    broken = tmp_path / "broken.yaml"
    for text, message in (
        ("cases: [{name: x, repo: a/b, commit: abc, language: python, weaknesses: []}]", "40 lowercase hex"),
        ("cases: [oops", "not valid YAML"),
        (f"cases: [{{name: x, repo: a/b, commit: {'a' * 40}, language: cobol}}]", "language must be one of"),
    ):
        broken.write_text(text, encoding="utf-8")
        assert realcode.main(["--vulnerable", str(broken), "--corpus", "vulnerable", "--list-sources"]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and message in err[0], err
    assert realcode.main([*paths, "--only", "nope", "--list-sources"]) == 2
    assert "no such case" in capsys.readouterr().err
    assert realcode.main([*paths, "--mirrors", str(tmp_path / "none")]) == 2
    assert "no such mirrors folder" in capsys.readouterr().err


def test_scoring_rules_without_tools() -> None:
    """+-3 lines for a weakness, +-2 and the same rule for a label, the primary location's label covers the rest."""
    weakness = realcode.Weakness("w", "CWE-89", "a.py", (10, 40), "sql")
    hit = realcode.Hit("fluxdrive", "P1", "fluxdrive:py-sql-injection", "t", (realcode.Location("a.py", 13, 13),))
    assert realcode.weakness_hits(weakness, [hit]) == ["P1 fluxdrive:py-sql-injection a.py:13"]
    far = realcode.Hit("fluxdrive", "P1", "r", "t", (realcode.Location("a.py", 14, 14), realcode.Location("b.py", 10)))
    assert realcode.weakness_hits(weakness, [far]) == []
    spanning = realcode.Hit("bandit", "HIGH", "B1", "t", (realcode.Location("a.py", 20, 37),))
    assert realcode.weakness_hits(weakness, [spanning]) == ["HIGH B1 a.py:20-37"], "a range reaches 40 within 3"

    label = realcode.Label("p", "a.py", 12, "check:py-sql-injection", "fluxdrive", False, "docs")
    primary = realcode.Location("a.py", 10, 10)
    other = realcode.Location("c.py", 99, 99)
    multi = realcode.Hit("fluxdrive", "P0", "fluxdrive:py-sql-injection", "t", (primary, other), primary)
    assert realcode.label_of(multi, primary, "p", [label]) is label, "namespace differs, 2 lines off"
    assert realcode.label_of(multi, other, "p", [label]) is None
    assert realcode.label_of(multi, primary, "q", [label]) is None
    scored = realcode.score_healthy(
        realcode.Case("p", "a/p", "0" * 40, "MIT", "python"),
        {"fluxdrive": {"seconds": 1.0, "hits": [multi]}},
        50_000,
        [label],
    )
    assert scored["labels"]["fluxdrive"] | {"unlabelled": []} == {
        "real": 0,
        "false": 2,
        "unlabelled": [],
        "precision": 0.0,
    }
    assert scored["tools"]["fluxdrive"]["per_100k"] == 2.0


def _scored(name: str, language: str, tools: dict[str, tuple[int, int, int, float]]) -> dict[str, object]:
    """A scored vulnerable case: per tool (found, weaknesses, flagged, seconds)."""
    weaknesses = max(w for _, w, _, _ in tools.values())
    return {
        "name": name,
        "kind": "cve",
        "language": language,
        "status": "ok",
        "weaknesses": [{"cwe": "CWE-22", "found_by": {"fluxdrive": ["P1 x"]}} for _ in range(weaknesses)],
        "tools": {
            tool: {"found": f, "weaknesses": w, "flagged": n, "seconds": s} for tool, (f, w, n, s) in tools.items()
        },
    }


def test_per_language_totals_and_time_ratios(capsys: pytest.CaptureFixture[str]) -> None:
    """Recall, cases with a find, flagged and seconds per language; fluxdrive / semgrep time per language."""
    cases = [
        _scored("js-a", "javascript", {"fluxdrive": (1, 2, 3, 1.0), "semgrep": (0, 2, 40, 4.0)}),
        _scored("js-b", "javascript", {"fluxdrive": (0, 2, 0, 1.0), "semgrep": (2, 2, 60, 4.0)}),
        _scored("go-a", "go", {"fluxdrive": (1, 1, 1, 3.0), "semgrep": (1, 1, 5, 1.0)}),
        _scored("py-a", "python", {"fluxdrive": (2, 4, 2, 2.0), "bandit": (1, 4, 7, 0.5)}),
        {"name": "gone", "language": "typescript", "status": "skipped", "reason": "mirror missing"},
    ]
    totals = realcode.vulnerable_totals(cases, ["fluxdrive", "bandit", "semgrep"])
    by_language = totals["by_language"]
    assert list(by_language) == ["python", "javascript", "go"], "LANGUAGES order; skipped cases are not rows"
    javascript = by_language["javascript"]
    assert (javascript["cases"], javascript["weaknesses"]) == (2, 4)
    assert javascript["fluxdrive"] == {
        "found": 1,
        "weaknesses": 4,
        "recall": 0.25,
        "cases_found": 1,
        "flagged": 3,
        "seconds": 2.0,
        "cases": 2,
    }
    assert javascript["semgrep"]["recall"] == 0.5 and javascript["semgrep"]["cases_found"] == 1
    assert javascript["bandit"] is None, "bandit reads only Python"
    assert by_language["python"]["semgrep"] is None and by_language["python"]["bandit"]["flagged"] == 7
    assert totals["fluxdrive"]["found"] == 4 and totals["fluxdrive"]["cases_found"] == 3
    assert totals["fluxdrive"]["recall"] == round(4 / 9, 4)

    projects = [
        {"name": "koa", "language": "javascript", "status": "ok", "lines": 50_000, "labels": {"fluxdrive": {}},
         "tools": {"fluxdrive": {"flagged": 1, "seconds": 2.0}, "semgrep": {"flagged": 10, "seconds": 5.0}}},
        {"name": "gin", "language": "go", "status": "ok", "lines": 20_000, "labels": {"fluxdrive": {}},
         "tools": {"fluxdrive": {"flagged": 0, "seconds": 1.0}, "semgrep": {"flagged": 4, "seconds": 1.0}}},
    ]  # fmt: skip
    for project in projects:
        project["labels"] = {"fluxdrive": {"real": 0, "false": 0, "unlabelled": []}}
    healthy = realcode.healthy_totals(projects, ["fluxdrive", "semgrep"])
    assert healthy["by_language"]["javascript"]["semgrep"] == {
        "flagged": 10,
        "per_100k": 20.0,
        "seconds": 5.0,
        "projects": 1,
    }
    assert healthy["by_language"]["go"]["fluxdrive"]["flagged"] == 0 and healthy["projects"] == 2

    assert realcode.time_ratio(cases, projects) == {
        "fluxdrive_seconds": 2.0,
        "bandit_seconds": 0.5,
        "ratio": 4.0,
        "cases": 1,
    }, "the default compares Python cases with bandit, as before"
    ratios = realcode.time_by_language(cases, projects)
    assert list(ratios) == ["python", "javascript", "go"]
    assert ratios["python"] is None, "semgrep did not run on the Python case"
    assert ratios["javascript"] == {"fluxdrive_seconds": 4.0, "semgrep_seconds": 13.0, "ratio": 0.308, "cases": 3}
    assert ratios["go"] == {"fluxdrive_seconds": 4.0, "semgrep_seconds": 2.0, "ratio": 2.0, "cases": 2}

    report = {
        "versions": {"fluxdrive": "1"},
        "notes": [],
        "tools": ["fluxdrive", "bandit", "semgrep"],
        "vulnerable": {"cases": cases, "totals": totals | {"by_cwe": {}}},
        "time": None,
        "time_by_language": ratios,
    }
    realcode.print_report(report)
    out = capsys.readouterr().out
    javascript_row = next(line for line in out.splitlines() if line.startswith("javascript "))
    assert "1/4      25%   1/2         3     2.0" in javascript_row and "2/4      50%" in javascript_row
    assert "time javascript: fluxdrive 4.0 s, semgrep 13.0 s on the same 3 case(s) -> fluxdrive / semgrep = 0.31" in out
    assert "time python: semgrep did not run on any python case" in out


def test_bandit_column_only_with_python_cases() -> None:
    """bandit reads only Python: without a Python case it is left out, not shown as finding nothing."""
    go = realcode.Case("g", "a/g", "0" * 40, "MIT", "go")
    tools = realcode.Toolbox("bandit", None, Path("."), Path("."), versions={"bandit": "bandit 1"})
    realcode._drop_idle_bandit(tools, [go])
    assert (tools.bandit, tools.versions, tools.notes) == (
        None,
        {},
        ["bandit: reads only Python, and no Python case is selected"],
    )
    kept = realcode.Toolbox("bandit", None, Path("."), Path("."))
    realcode._drop_idle_bandit(kept, [go, realcode.Case("p", "a/p", "0" * 40, "MIT", "python")])
    assert kept.bandit == "bandit" and kept.notes == []
