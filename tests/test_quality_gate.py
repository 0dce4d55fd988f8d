"""``fluxdrive gate``: the change before shipping, on real git repositories with the real static reviewers."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from fluxdrive.agents import load_roster
from fluxdrive.triage.quality_gate import DiffSize, decide, diff_size, plan_gate

UTIL = "def add(a, b):\n    return a + b\n"
QUERY = """import sqlite3


def find_user(name):
    conn = sqlite3.connect("app.db")
    cursor = conn.cursor()
    cursor.execute("SELECT * FROM users WHERE name = '" + name + "'")
    return cursor.fetchall()


def count_users():
    conn = sqlite3.connect("app.db")
    return conn.execute("SELECT count(*) FROM users").fetchone()[0]


def list_users(limit):
    conn = sqlite3.connect("app.db")
    return conn.execute("SELECT name FROM users LIMIT ?", (limit,)).fetchall()
"""


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, text=True).stdout


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "repo"
    (root / "app").mkdir(parents=True)
    (root / "hooks").mkdir()
    _git(root, "init", "-q", "-b", "main")
    _git(root, "config", "user.email", "dev@example.com")
    _git(root, "config", "user.name", "Dev")
    (root / "app" / "util.py").write_text(UTIL)
    (root / "hooks" / "pre-commit.sh").write_text("#!/bin/sh\nexit 0\n")
    _git(root, "add", ".")
    _git(root, "commit", "-qm", "init")
    monkeypatch.chdir(root)
    return root


def _gate(root: Path) -> dict:
    return json.loads(next((root / "docs" / "research" / "flux-drive").glob("gate-*/gate.json")).read_text())


def test_nothing_changed_passes(repo: Path, cli) -> None:
    result = cli("gate", "-q")
    assert result.code == 0
    assert result.out.startswith("Gate: PASS (nothing to gate")


def test_a_small_change_gets_fd_quality_alone(repo: Path, cli) -> None:
    (repo / "app" / "util.py").write_text(UTIL.replace("    return", '    """Sum."""\n    return'))
    result = cli("gate", "-q")
    assert result.code == 0, result.out + result.err
    assert "Gate: PASS" in result.out
    gate = _gate(repo)
    assert gate["decision"] == "PASS"
    assert gate["plan"]["small"] is True and gate["plan"]["agents"] == ["fd-quality"]
    records = next((repo / "docs" / "research" / "flux-drive").glob("gate-*/verdicts")).iterdir()
    assert sorted(p.stem for p in records if p.stem != "synthesis") == ["fd-quality"]


def test_a_ship_class_change_always_gets_fd_safety_and_its_findings_block(repo: Path, cli) -> None:
    (repo / "hooks" / "pre-commit.sh").write_text('#!/bin/sh\neval "$1"\nexit 0\n')
    result = cli("gate", "-q")
    assert result.code == 1
    gate = _gate(repo)
    assert gate["plan"]["ship_class"] == ["hooks/pre-commit.sh"]
    assert gate["plan"]["agents"] == ["fd-quality", "fd-safety"]
    assert gate["safety"] == "ran"
    assert gate["decision"] == "FAIL" and gate["verdict"] in ("needs-changes", "risky")
    assert "Gate: FAIL" in result.out


SHELL_AND_SQL = """import subprocess


def listing(cmd):
    return subprocess.check_output("ls " + cmd, shell=True)


def find(cursor, name):
    cursor.execute("SELECT * FROM users WHERE name = '%s'" % name)
    return cursor.fetchall()
"""


def test_a_small_change_that_reaches_a_dangerous_sink_gets_fd_safety(repo: Path, cli) -> None:
    """12 lines in one file are a small change, but a shell and SQL built with % make fd-safety mandatory; the
    gate's run has its own folder (the review of the same change keeps its reports); no --agents is claimed."""
    (repo / "app" / "tools.py").write_text(SHELL_AND_SQL)
    _git(repo, "add", "app/tools.py")
    review = cli("review", "--staged", "--yes", "--fail-on", "never", "-q")
    assert review.code == 0 and "RISKY" in review.out, review.out + review.err
    reviewed = {p.name: p.resolve() for p in (repo / "docs" / "research" / "flux-drive").glob("[!.]*")}

    result = cli("gate")
    assert result.code == 1, result.out + result.err
    gate = json.loads((repo / "docs" / "research" / "flux-drive" / "gate-staged-changes" / "gate.json").read_text())
    assert gate["plan"]["small"] is True and gate["plan"]["agents"] == ["fd-quality", "fd-safety"]
    assert gate["safety"] == "ran" and gate["decision"] == "FAIL" and gate["counts"]["P0"] >= 1
    assert "reaches a dangerous sink (app/tools.py: return subprocess.check_output" in result.err
    assert "--agents" not in result.err and "the gate's small-change plan" in result.err
    for name, target in reviewed.items():  # the review's link still leads to the review's own run
        assert (repo / "docs" / "research" / "flux-drive" / name).resolve() == target
        assert json.loads((target / "findings.json").read_text())["verdict"] == "risky"


def test_a_committed_branch_is_gated_against_its_merge_base(repo: Path, cli) -> None:
    _git(repo, "checkout", "-q", "-b", "feature")
    (repo / "app" / "users.py").write_text(QUERY)
    (repo / "app" / "util.py").write_text(UTIL + "\n\ndef sub(a, b):\n    return a - b\n")
    _git(repo, "add", ".")
    _git(repo, "commit", "-qm", "users")
    result = cli("gate")
    assert result.code == 1
    assert "branch against its merge-base" in result.err
    gate = _gate(repo)
    assert gate["plan"]["small"] is False and gate["plan"]["agents"] is None  # full triage
    assert gate["counts"]["P0"] + gate["counts"]["P1"] >= 1
    assert gate["decision"] == "FAIL"


def test_staged_changes_are_gated_first(repo: Path, cli) -> None:
    (repo / "app" / "users.py").write_text(QUERY)
    _git(repo, "add", "app/users.py")
    (repo / "app" / "util.py").write_text(UTIL + "\n# unstaged\n")
    result = cli("gate", "--fail-on", "never")
    assert result.code == 0
    assert "staged changes" in result.err
    assert "app/users.py" in result.out


def test_plan_gate_small_change_and_ship_class() -> None:
    roster = load_roster().of_kind("review")
    plan = plan_gate(DiffSize(5, ("src/app.py",)), roster)
    assert plan.small and plan.agents == ("fd-quality",) and not plan.ship_class
    plan = plan_gate(DiffSize(400, (".claude-plugin/plugin.json", "src/app.py")), roster)
    assert not plan.small and plan.agents is None and plan.ship_class == (".claude-plugin/plugin.json",)
    assert plan_gate(DiffSize(20, ("a.py",)), roster).small is False  # the reference's bound: under 20 lines


def test_diff_size_counts_changed_lines_and_paths() -> None:
    text = "--- a/x.py\n+++ b/x.py\n@@ -1,2 +1,2 @@\n-a\n+b\n c\n--- /dev/null\n+++ b/new.py\n@@ -0,0 +1 @@\n+n\n"
    assert diff_size(text) == DiffSize(3, ("x.py", "new.py"))


def test_the_gate_fails_closed() -> None:
    plan = plan_gate(DiffSize(300, ("hooks/x.sh",)), load_roster().of_kind("review"))
    counts = {"P0": 0, "P1": 0, "P2": 1, "P3": 0}
    missing = decide(plan, verdict="safe", incomplete=[], completed=["fd-quality"], counts=counts, fail_on="risky")
    assert not missing.passed and missing.safety == "missing"
    skipped = decide(
        plan, verdict="safe", incomplete=[], completed=["fd-quality"], counts=counts, fail_on="risky",
        skip_safety="hotfix, reviewed by hand",
    )  # fmt: skip
    assert skipped.passed and skipped.safety == "skipped: hotfix, reviewed by hand"
    assert any("recorded" in r for r in skipped.reasons)
    broken = decide(
        plan, verdict="safe", incomplete=["fd-safety"], completed=["fd-quality"], counts=counts, fail_on="never"
    )
    assert not broken.passed and any("incomplete" in r for r in broken.reasons)
    assert not decide(plan, verdict="error", incomplete=[], completed=[], counts=counts, fail_on="never").passed
