"""Judgment on a feature branch nobody tuned for: staging, scores and expansion never hide a finding.

Every review here is the real CLI in a subprocess on a real git repository,
with the command a user types (``review --diff main --yes``, a pipe from
``git diff``, a saved diff file). The branch is issue 12's: a Flask
inventory service gains a supplier sync with a shell injection, SQL built
with ``%``, a ``ghp_`` token and a swallowed exception. Before the policy
this printed ``Verdict: SAFE (1 P3)``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fluxdrive.agents import load_roster
from fluxdrive.config import Config
from fluxdrive.launch.expansion import decide
from fluxdrive.triage.scoring import AgentScore, Ceiling, assign
from tests.conftest import run_fluxdrive
from tests.triage.conftest import git

BASE = {
    "inventory/__init__.py": "",
    "inventory/app.py": (
        '"""Inventory service."""\nfrom flask import Flask, jsonify\n\nfrom inventory.db import get_db\n\n'
        'app = Flask(__name__)\n\n\n@app.route("/items")\ndef list_items():\n'
        '    rows = get_db().execute("SELECT id, name, qty FROM items ORDER BY name").fetchall()\n'
        "    return jsonify([dict(r) for r in rows])\n"
    ),
    "inventory/db.py": (
        "import sqlite3\n\nfrom flask import g\n\n\ndef get_db():\n    if 'db' not in g:\n"
        "        g.db = sqlite3.connect('inventory.db')\n    return g.db\n"
    ),
    "inventory/units.py": '"""Unit conversions."""\n\n\ndef to_kg(grams):\n    """Grams to kilograms."""\n    return grams / 1000\n',
    "requirements.txt": "flask==3.0.0\n",
}
SYNC = '''"""Synchronise stock levels with the supplier."""
import subprocess

from inventory.db import get_db

SUPPLIER_TOKEN = "ghp_Zx81kLmQ2rT7vBn4Yp0sWc9dEf3hJk6aUq1o"


def fetch_supplier_stock(url):
    out = subprocess.check_output("curl -s " + url, shell=True)
    return out.decode()


def find_items(name):
    query = "SELECT id, name, qty FROM items WHERE name = '%s'" % name
    return get_db().execute(query).fetchall()


def sync(url):
    try:
        data = fetch_supplier_stock(url)
        for line in data.splitlines():
            name, qty = line.split(",")
            get_db().execute("UPDATE items SET qty = ? WHERE name = ?", (int(qty), name))
    except Exception:
        pass
'''
# Ground truth (written before the policy existed): line -> what must be a P0.
P0_LINES = {6: "token", 10: "shell", 16: "SQL"}


def _harmless(parts: int, functions: int) -> dict[str, str]:
    """About 3,000 lines of plain, documented helpers in new files."""
    files = {}
    for n in range(parts):
        body = [f'"""Report helpers, part {n}."""', ""]
        for i in range(functions):
            body += [
                f"def total_{n}_{i}(values):",
                f'    """Sum of bucket {i}."""',
                "    result = 0",
                "    for value in values:",
                "        result += value",
                "    return result",
                "",
                "",
            ]
        files[f"reports/part{n}.py"] = "\n".join(body)
    return files


def _repository(root: Path, files: dict[str, str]) -> Path:
    """A git repository on ``main`` holding ``files``, committed."""
    _write(root, files)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "initial")
    return root


def _write(root: Path, files: dict[str, str]) -> None:
    for relative, text in files.items():
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(text)


@pytest.fixture
def branch(tmp_path: Path) -> Path:
    """The inventory service on main, and the feature branch checked out with the sync module committed."""
    root = _repository(tmp_path / "inventory-service", BASE)
    git(root, "checkout", "-q", "-b", "feature")
    (root / "inventory" / "sync.py").write_text(SYNC)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "supplier sync")
    return root


def _p0_lines(out: Path) -> dict[int, str]:
    findings = json.loads((out / "findings.json").read_text())["findings"]
    lines = {}
    for finding in findings:
        if finding["severity"] != "P0":
            continue
        for location in finding["locations"]:
            file, _, line = location.partition(":")
            if file == "inventory/sync.py" and line.split("-")[0].isdigit():
                lines[int(line.split("-")[0])] = finding["title"]
    return lines


def _assert_all_three_p0(out: Path, done_out: str) -> None:
    assert done_out.startswith("Verdict: RISKY"), done_out
    found = _p0_lines(out)
    assert set(P0_LINES) <= set(found), f"missing P0s: {sorted(set(P0_LINES) - set(found))}; found {found}"


def test_default_review_of_the_branch_is_risky_with_all_three_p0(branch: Path) -> None:
    done = run_fluxdrive("review", "--diff", "main", "--yes", "--output-dir", branch / "out", cwd=branch)
    assert done.code == 1, done.err
    _assert_all_three_p0(branch / "out", done.out)
    run = json.loads((branch / "out" / "run.json").read_text())
    assert {"fd-safety", "fd-correctness"} <= set(run["agents"]), "the P0 lanes ran"
    assert all(a["stage"] == 1 for a in run["agents"].values()), "offline, every candidate is Stage 1"
    assert "Staging: none (offline, no tokens: all 7 reviewers run, whatever they scored)" in done.err


def test_the_same_branch_piped_from_git_diff(branch: Path) -> None:
    diff = git(branch, "diff", "main")
    done = run_fluxdrive("review", "-", "--yes", "--output-dir", branch / "out", cwd=branch, input=diff)
    assert done.code == 1, done.err
    _assert_all_three_p0(branch / "out", done.out)


def test_the_branch_with_3000_harmless_lines_added(branch: Path) -> None:
    _write(branch, _harmless(6, 62))
    git(branch, "add", "-A")
    git(branch, "commit", "-q", "-m", "reports")
    assert int(git(branch, "diff", "--shortstat", "main").split()[3]) >= 3_000
    done = run_fluxdrive("review", "--diff", "main", "--yes", "--output-dir", branch / "out", cwd=branch)
    assert done.code == 1, done.err
    _assert_all_three_p0(branch / "out", done.out)


def test_a_saved_diff_outside_the_project_is_reviewed_against_the_repository(branch: Path, tmp_path: Path) -> None:
    saved = tmp_path / "elsewhere" / "change.diff"
    saved.parent.mkdir()
    saved.write_text(git(branch, "diff", "main"))
    done = run_fluxdrive("review", saved, "--yes", "--output-dir", branch / "out", cwd=branch)
    assert done.code == 1, done.err
    run = json.loads((branch / "out" / "run.json").read_text())
    assert run["input"]["project_root"] == str(branch.resolve()), "profiled against the repository, not /tmp"
    from_afar = run_fluxdrive(
        "review", saved, "--yes", "--project", branch, "--output-dir", tmp_path / "o2", cwd=tmp_path
    )
    assert from_afar.code == 1 and json.loads((tmp_path / "o2" / "run.json").read_text())["input"][
        "project_root"
    ] == str(branch.resolve())
    missing = run_fluxdrive("review", saved, "--yes", "--project", tmp_path / "nope", cwd=tmp_path)
    assert missing.code == 2 and "--project directory not found" in missing.err


def test_a_path_outside_the_project_option_is_refused(branch: Path, tmp_path: Path) -> None:
    stray = tmp_path / "stray.py"
    stray.write_text("print('hi')\n")
    done = run_fluxdrive("review", stray, "--yes", "--project", branch, cwd=tmp_path)
    assert done.code == 2 and "is outside the --project directory" in done.err


@pytest.mark.parametrize("output_format", ["console", "sarif", "json"])
def test_an_empty_diff_is_nothing_to_review(branch: Path, output_format: str) -> None:
    git(branch, "checkout", "-q", "main")
    done = run_fluxdrive("review", "--diff", "main", "--yes", "--format", output_format, cwd=branch)
    assert done.code == 0, done.err
    assert "Traceback" not in done.err
    if output_format == "console":
        assert done.out == "Nothing to review: the diff is empty: nothing changed since main\n"
    elif output_format == "sarif":
        log = json.loads(done.out)
        assert log["version"] == "2.1.0" and log["runs"][0]["results"] == []
        assert "nothing to review" in done.err
    else:
        assert json.loads(done.out)["nothing_to_review"] is True
    assert not (branch / "docs").exists(), "nothing was written"
    piped = run_fluxdrive("review", "-", "--yes", cwd=branch, input="")
    assert piped.code == 0 and "Nothing to review: stdin is empty" in piped.out


def test_a_big_staged_diff_with_one_dangerous_file_runs_fd_safety(tmp_path: Path) -> None:
    root = _repository(tmp_path / "app", {"README.md": "# app\n"})
    files = {
        "auth/session.py": (
            'import hmac\n\nSESSION_SIGNING_TOKEN = "ghp_Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zAb7c"\n\n\n'
            "def sign(session_id):\n"
            "    return hmac.new(SESSION_SIGNING_TOKEN.encode(), session_id.encode(), 'sha256').hexdigest()\n"
        ),
        **_harmless(7, 64),
    }
    _write(root, files)
    git(root, "add", "-A")
    triaged = run_fluxdrive("triage", "--staged", "--yes", "--json", cwd=root)
    assert triaged.code == 0, triaged.err
    plan = json.loads(triaged.out)
    assert plan["input"]["diff"]["added"] >= 3_500
    safety = next(a for a in plan["agents"] if a["name"] == "fd-safety")
    assert safety["base_score"] == 3 and safety["stage"] == 1, safety["rationale"]
    assert "path auth/session.py" in safety["evidence"], "one auth file is core evidence in a big diff"
    done = run_fluxdrive("review", "--staged", "--yes", "--output-dir", root / "out", cwd=root)
    assert done.code == 1 and done.out.startswith("Verdict: RISKY"), done.out + done.err
    assert "auth/session.py:3" in done.out


@pytest.mark.parametrize("target", ["file", "diff"])
def test_an_explicit_roster_runs_exactly_and_first(branch: Path, target: str) -> None:
    args = ["inventory/units.py"] if target == "file" else ["--diff", "main"]
    done = run_fluxdrive("review", *args, "--yes", "--agents", "fd-safety", "--output-dir", branch / "out", cwd=branch)
    assert done.code in (0, 1), done.err
    run = json.loads((branch / "out" / "run.json").read_text())
    assert run["stages"] == [{"stage": 1, "agents": ["fd-safety"]}]
    if target == "file":
        assert "fd-safety was chosen by --agents although nothing in the input matched its lane" in done.err
    quality = run_fluxdrive("review", *args, "--yes", "--agents", "quality", "--output-dir", branch / "o2", cwd=branch)
    assert quality.code in (0, 1) and json.loads((branch / "o2" / "run.json").read_text())["stages"][0]["agents"] == [
        "fd-quality"
    ]


def test_a_paid_runtime_over_budget_stages_but_keeps_the_p0_lanes_first(branch: Path) -> None:
    done = run_fluxdrive(
        "triage", "--diff", "main", "--yes", "--json", "--runtime", "llm", "--model", "anthropic:m", cwd=branch
    )
    assert done.code == 0, done.err
    plan = json.loads(done.out)
    assert plan["staging"]["staged"] and "over the diff-small budget" in plan["staging"]["why"]
    assert {"fd-safety", "fd-correctness"} <= set(plan["stages"]["1"])
    assert "fd-game-design" not in plan["stages"]["1"], "inventory/ in a Flask service is not a game"
    game = next(a for a in plan["agents"] if a["name"] == "fd-game-design")
    assert game["base_score"] == 1 and "at most 1 outside its domains" in game["rationale"]


def _records(*rows: tuple[str, float, int]) -> list[AgentScore]:
    return [
        AgentScore(name, "builtin", base_score=3, final_score=score, reach=reach, rationale="")
        for name, score, reach in rows
    ]


def test_ties_at_the_stage1_boundary_go_to_the_lane_that_reaches_furthest() -> None:
    records = _records(("fd-game-design", 3, 2), ("fd-performance", 3, 2), ("fd-quality", 3, 1), ("fd-safety", 3, 3))
    assign(records, Ceiling(4, 1, 0, 5), Config())
    stage1 = sorted(r.name for r in records if r.stage == 1)
    assert "fd-safety" in stage1 and "fd-quality" not in stage1, stage1
    assign(records, Ceiling(4, 1, 0, 5), Config(), staged=False)
    assert all(r.stage == 1 for r in records), "unstaged: every candidate is Stage 1"


def test_expansion_recommends_an_agent_whose_lane_the_input_shows_even_when_stage1_found_nothing() -> None:
    roster = load_roster(Path.cwd())
    decision = decide(
        ["fd-safety", "fd-quality"],
        [],
        [],
        stage1_failed=False,
        roster=roster,
        boosted=set(),
        dropped=[],
        config=Config().expansion,
        evidence={"fd-safety": ("subprocess", "path auth/session.py")},
        base_scores={"fd-safety": 3, "fd-quality": 1},
    )
    assert decision.kind == "recommend" and decision.recommended == ("fd-safety",)
    assert "the input shows its lane (subprocess, path auth/session.py)" in decision.message
    quiet = decide(
        ["fd-quality"], [], [], stage1_failed=False, roster=roster, boosted=set(), dropped=[], config=Config().expansion
    )
    assert quiet.kind == "stop", "without evidence or findings, stopping is still the recommendation"


def test_every_nonempty_input_gets_two_reviewers(tmp_path: Path) -> None:
    root = _repository(tmp_path / "notes", {"notes.md": "# Notes\n\nWe met on Tuesday and agreed to meet again.\n"})
    done = run_fluxdrive("triage", "notes.md", "--yes", "--json", cwd=root)
    assert done.code == 0, done.err
    plan = json.loads(done.out)
    assert len(plan["stages"]["1"]) >= 2, plan["stages"]
    lifted = [a for a in plan["agents"] if a["rationale"].startswith("lifted to base 1")]
    assert lifted and all(a["stage"] == 1 for a in lifted)
