"""A review never dirties the user's repository: fluxdrive's caches ignore themselves (issue 30, item 4),
while what people commit in ``.fluxdrive/`` (config, baseline, agents) stays visible to git."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.conftest import committed_copy, run_fluxdrive

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "projects" / "py-webapp"
HEADER = "# fluxdrive's caches: this clone's state, never committed (this file ignores itself)\n"


def _status(root: Path) -> list[str]:
    done = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all"], cwd=root, capture_output=True, text=True, check=True
    )
    return sorted(line for line in done.stdout.splitlines() if not line.endswith("/"))


def test_a_review_leaves_git_status_as_it_found_it_but_for_what_people_commit(tmp_path: Path) -> None:
    root = committed_copy(FIXTURE, tmp_path / "shop")
    out = tmp_path / "out"  # outside the repository: only what fluxdrive keeps in the project is under test
    (root / ".fluxdrive").mkdir(exist_ok=True)
    (root / ".fluxdrive" / "config.toml").write_text("[output]\nfail_on = 'never'\n")  # the user's, uncommitted
    done = run_fluxdrive("review", ".", "--yes", "-q", "--output-dir", out, cwd=root)
    assert done.code in (0, 1), done.err
    assert (root / ".fluxdrive" / "domains.yaml").is_file(), "the domain cache was written"
    assert _status(root) == ["?? .fluxdrive/config.toml"], "only the user's own file shows"
    assert (root / ".fluxdrive" / ".gitignore").read_text() == HEADER + ".gitignore\ndomains.yaml\n"
    again = run_fluxdrive("review", ".", "--yes", "-q", "--output-dir", tmp_path / "out2", cwd=root)
    assert again.code in (0, 1), again.err
    assert (root / ".fluxdrive" / ".gitignore").read_text() == HEADER + ".gitignore\ndomains.yaml\n"


def test_a_gitignore_the_user_wrote_there_is_never_rewritten(tmp_path: Path) -> None:
    root = committed_copy(FIXTURE, tmp_path / "shop")
    (root / ".fluxdrive").mkdir(exist_ok=True)
    mine = "# mine\nknowledge/\n"
    (root / ".fluxdrive" / ".gitignore").write_text(mine)
    done = run_fluxdrive("triage", ".", "--yes", "--output-dir", tmp_path / "out", cwd=root)
    assert done.code == 0, done.err
    assert (root / ".fluxdrive" / ".gitignore").read_text() == mine
    assert "?? .fluxdrive/domains.yaml" in _status(root), "the user's ignore file decides, not fluxdrive"


def test_fleet_run_takes_yes_like_every_review_command(tmp_path: Path) -> None:
    """Issue 30, item 11: ``fleet run --yes`` was refused (exit 2) while every other review command takes it."""
    root = committed_copy(FIXTURE, tmp_path / "shop")
    (tmp_path / "repos.txt").write_text(f"{root}\n")
    done = run_fluxdrive(
        "fleet", "run", "repos.txt", "--yes", "--max-parallel", "1", "--output-root", tmp_path / "runs", cwd=tmp_path
    )
    assert done.code in (0, 1), done.err
    assert "fleet: shop:" in done.err and _status(root) == [], "reviewed, and the repository left clean"
