"""The README's quick start on a fresh clone (issue 30, item 1): what it prints, and what it leaves.

``make review TARGET=tests/fixtures/projects/py-webapp`` reviews a Flask shop
kept under the repository's ``tests/``. It came out SAFE with the
repository's domains (tui-app, cli-tool): every finding capped as test code,
request taint off (a test's app serves no one). A directory the user names is
judged as itself: places below it, domains its own when it has a manifest.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from fluxdrive.cli.examples import clean_copy
from tests.conftest import committed_copy, run_fluxdrive

REPO = Path(__file__).resolve().parent.parent
SHOP = REPO / "tests" / "fixtures" / "projects" / "py-webapp"
NESTED = "tests/fixtures/projects/py-webapp"


def _findings(run: Path, prefix: str = "") -> set[tuple[str, str]]:
    data = json.loads((run / "findings.json").read_text())
    return {(f["severity"], f["title"].replace(prefix, "")) for f in data["findings"]}


def _clone_like(tmp_path: Path) -> Path:
    """A repository shaped like ours: a CLI tool at the root, the shop under tests/fixtures."""
    root = tmp_path / "clone"
    clean_copy(SHOP, root / NESTED)
    (root / "pyproject.toml").write_text('[project]\nname = "tool"\ndependencies = ["typer", "textual"]\n')
    (root / "tool").mkdir()
    (root / "tool" / "cli.py").write_text("import typer\n\napp = typer.Typer()\n")
    return committed_copy(root, tmp_path / "repo")


def test_a_directory_under_tests_is_reviewed_as_what_it_is(tmp_path: Path) -> None:
    repo = _clone_like(tmp_path)
    nested = run_fluxdrive(
        "review", NESTED, "--yes", "--fail-on", "never", "--output-dir", str(tmp_path / "nested"), cwd=repo
    )
    alone = run_fluxdrive(
        "review",
        str(committed_copy(SHOP, tmp_path / "alone")),
        "--yes",
        "--fail-on",
        "never",
        "--output-dir",
        str(tmp_path / "standalone"),
    )
    assert nested.code == alone.code == 0, nested.err + alone.err
    assert nested.out.splitlines()[0].startswith("Verdict: RISKY (")
    assert "domains: web-api" in nested.err and "tui-app" not in nested.err
    same = _findings(tmp_path / "nested", NESTED + "/") == _findings(tmp_path / "standalone")
    assert same, "a shop kept under tests/ must get the review it gets on its own"
    assert ("P0", "SQL built with '%' formatting from parameter `name` reaches cur.execute() in find_user()") in (
        _findings(tmp_path / "nested")
    )


def test_the_shops_own_tests_are_still_tests(tmp_path: Path) -> None:
    repo = _clone_like(tmp_path)
    (repo / NESTED / "tests" / "test_routes.py").write_text(
        "import pickle\n\n\ndef test_roundtrip(blob):\n    assert pickle.loads(blob)\n"
    )
    done = run_fluxdrive("review", NESTED, "--yes", "--fail-on", "never", "--output-dir", str(tmp_path / "r"), cwd=repo)
    assert done.code == 0, done.err
    data = json.loads((tmp_path / "r" / "findings.json").read_text())
    in_tests = [f for f in data["findings"] if "/tests/test_routes.py" in json.dumps(f)]
    assert in_tests and all(f["severity"] >= "P2" for f in in_tests)


def test_a_users_run_on_a_fixture_cannot_break_the_next_test_run(tmp_path: Path) -> None:
    """``review --project FIXTURE`` writes docs/ and .fluxdrive/ into it: copies of the fixture leave them out."""
    fixture = tmp_path / "fixture"
    clean_copy(SHOP, fixture)
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    (fixture / ".fluxdrive").mkdir()
    (fixture / ".fluxdrive" / "config.yaml").write_text("budget:\n  max_tokens: 1000\n")
    subprocess.run(["git", "add", "-A"], cwd=tmp_path, check=True)
    done = run_fluxdrive("review", str(fixture), "--project", str(fixture), "--yes", "--fail-on", "never")
    assert done.code == 0, done.err
    assert (fixture / "docs" / "research" / "flux-drive").is_dir()  # the user's run left its outputs
    copy = clean_copy(fixture, tmp_path / "copy")
    assert (copy / ".fluxdrive" / "config.yaml").is_file()  # committed: part of the fixture
    assert not (copy / "docs").exists()
    assert sorted(p.name for p in (copy / ".fluxdrive").iterdir()) == ["config.yaml"]
