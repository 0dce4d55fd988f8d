"""``review --baseline FILE``, ``review --since-last`` and ``--format codeclimate``, end to end on a real repository."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.conftest import run_fluxdrive

SHELL = 'import os\n\n\ndef clean(name):\n    os.system("rm -rf /tmp/" + name)\n'
PICKLE = "import pickle\n\n\ndef load(blob):\n    return pickle.loads(blob)\n"


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, text=True).stdout


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "app").mkdir(parents=True)
    _git(root, "init", "-q", "-b", "main")
    _git(root, "config", "user.email", "dev@example.com")
    _git(root, "config", "user.name", "Dev")
    (root / "app" / "tools.py").write_text(SHELL)
    _git(root, "add", ".")
    _git(root, "commit", "-qm", "init")
    return root


def test_a_baseline_hides_known_findings_and_the_verdict_follows(repo: Path) -> None:
    first = run_fluxdrive("review", "app", "--yes", "--fail-on", "never", "--format", "json", cwd=repo)
    assert json.loads(first.out)["verdict"] == "risky"
    written = run_fluxdrive("baseline", "write", cwd=repo)
    assert written.code == 0, written.err
    (repo / "app" / "tools.py").write_text("# moved down by a header\n\n" + SHELL)  # the known finding shifts
    same = run_fluxdrive(
        "review", "app", "--yes", "--baseline", ".fluxdrive/baseline.json", "--format", "json", cwd=repo
    )
    assert same.code == 0, same.err  # nothing new: safe, below --fail-on risky
    document = json.loads(same.out)
    assert document["verdict"] == "safe" and document["findings"] == []
    assert "already in the baseline" in same.err
    (repo / "app" / "loader.py").write_text(PICKLE)
    new = run_fluxdrive(
        "review", "app", "--yes", "--baseline", ".fluxdrive/baseline.json", "--format", "json", cwd=repo
    )
    places = {f["location"].split(":")[0] for f in json.loads(new.out)["findings"]}
    assert places == {"app/loader.py"}, places
    broken = repo / "broken.json"
    broken.write_text("{")
    refused = run_fluxdrive("review", "app", "--yes", "--baseline", broken, cwd=repo)
    assert refused.code == 2 and refused.err.count("\n") == 1


def test_since_last_reviews_only_what_changed_since_the_last_review(repo: Path) -> None:
    never = run_fluxdrive("review", "--since-last", "--yes", cwd=repo)
    assert never.code == 2 and "no earlier review of branch main" in never.err
    run_fluxdrive("review", "app", "--yes", "--fail-on", "never", "-q", cwd=repo)
    (repo / "app" / "loader.py").write_text(PICKLE)
    _git(repo, "add", ".")
    _git(repo, "commit", "-qm", "loader")
    since = run_fluxdrive("review", "--since-last", "--yes", "--fail-on", "never", "--format", "json", cwd=repo)
    assert since.code == 0, since.err
    places = {f["location"].split(":")[0] for f in json.loads(since.out)["findings"]}
    assert places == {"app/loader.py"}  # tools.py did not change since the last review
    nothing = run_fluxdrive("review", "--since-last", "--yes", cwd=repo)
    assert nothing.code == 0 and "Nothing to review" in nothing.out


def test_codeclimate_on_stdout_is_gitlabs_report(repo: Path) -> None:
    done = run_fluxdrive("review", "app", "--yes", "--fail-on", "never", "--format", "codeclimate", cwd=repo)
    issues = json.loads(done.out)
    assert issues and all(i["location"]["path"] == "app/tools.py" for i in issues)
    assert {i["severity"] for i in issues} <= {"blocker", "critical", "major", "minor", "info"}
    empty = run_fluxdrive("review", "--diff", "HEAD", "--yes", "--format", "codeclimate", cwd=repo)
    assert empty.code == 0 and json.loads(empty.out) == []
