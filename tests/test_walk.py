"""The one walk over a project's files and its one skip policy (fluxdrive.core.walk), on real trees and real git.

Each walker that lists a project - the review's file list, the llm reviewer's
tools, the secret collector, the knowledge inquisitor - is driven through its
public function, so a walker that grew its own list again would fail here.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from fluxdrive.core import secret_values
from fluxdrive.core.walk import SKIPPED_DIRS, list_files, review_files, walk
from fluxdrive.kb.inquisitor import static_inquisitor
from fluxdrive.kb.model import Item
from fluxdrive.runtimes.llm.tools import Workspace

TREE = {
    "app.py": "x = 1\n",
    "src/core.py": "y = 2\n",
    "src/.gitignore": "generated.py\n",
    "src/generated.py": "z = 3\n",
    ".gitignore": "*.log\nsecret.env\n",
    "debug.log": "noise\n",
    "secret.env": "API_TOKEN=Zq8vR2mW9xK4pL7nT3bY6cF1\n",
    ".github/workflows/ci.yml": "on: push\n",
    "node_modules/lib/index.js": "module.exports = 1\n",
    ".venv/lib/site.py": "import os\n",
    "build/out.py": "x = 1\n",
    "pkg/__pycache__/mod.pyc": "cached\n",
    "vendor/lib.py": "v = 1\n",
}
REVIEWED = [
    ".github/workflows/ci.yml",
    ".gitignore",
    "app.py",
    "src/.gitignore",
    "src/core.py",
    "vendor/lib.py",
]


def _tree(root: Path, *, repository: bool) -> Path:
    for name, text in TREE.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    if repository:
        subprocess.run(["git", "init", "-q", str(root)], check=True)
        subprocess.run(["git", "-C", str(root), "add", "app.py"], check=True)  # the rest untracked: listed too
    return root


@pytest.fixture(params=["git", "plain"])
def project(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    return _tree(tmp_path / "project", repository=request.param == "git")


def test_ignored_files_and_skipped_dirs_are_left_out_the_same_with_and_without_git(project: Path) -> None:
    assert list(review_files(project, project)) == REVIEWED


def test_a_symlink_out_of_the_root_is_named_and_one_inside_is_kept(project: Path, tmp_path: Path) -> None:
    outside = tmp_path / "victim.txt"
    outside.write_text("private\n")
    (project / "leak.txt").symlink_to(outside)
    (project / "alias.py").symlink_to(project / "app.py")
    (project / "loop").symlink_to(project / "loop")
    listed = list_files(project, project)
    assert "alias.py" in listed.files and "leak.txt" not in listed.files and "loop" not in listed.files
    reasons = dict(listed.skipped)
    assert reasons["leak.txt"] == f"a symlink to {outside.resolve()}, outside the project root"
    assert reasons["loop"] == "a broken symlink or a symlink loop"


def test_a_symlinked_directory_is_never_entered(project: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "stolen.py").write_text("s = 1\n")
    (project / "linked").symlink_to(elsewhere, target_is_directory=True)
    files = review_files(project, project)
    assert not any(name.startswith("linked") for name in files)


def test_a_subdirectory_is_a_scope_of_the_same_list(project: Path) -> None:
    assert review_files(project / "src", project) == ("src/.gitignore", "src/core.py")


def test_the_order_is_by_name_whatever_the_creation_order(tmp_path: Path) -> None:
    first, second = tmp_path / "a", tmp_path / "b"
    for root, names in ((first, ["z.py", "m/b.py", "a.py"]), (second, ["a.py", "m/b.py", "z.py"])):
        for name in names:
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_text("x\n")
    assert review_files(first, first) == review_files(second, second) == ("a.py", "m/b.py", "z.py")


def test_walk_scopes_are_parameters_never_other_lists(tmp_path: Path) -> None:
    root = _tree(tmp_path / "plain", repository=False)
    (root / "docs/research/flux-drive").mkdir(parents=True)
    (root / "docs/research/flux-drive/old.md").write_text("a previous run\n")
    everything = list(walk(root, gitignore=False))
    assert "secret.env" in everything and "debug.log" in everything and "src/generated.py" in everything
    assert not any(name.split("/")[0] in SKIPPED_DIRS for name in everything)
    assert ".github/workflows/ci.yml" not in list(walk(root, hidden_dirs=False))
    pruned = list(walk(root, gitignore=False, prune=("docs/research/flux-drive",)))
    assert "docs/research/flux-drive/old.md" in everything and "docs/research/flux-drive/old.md" not in pruned


def test_the_llm_tools_list_exactly_the_review_files(project: Path) -> None:
    workspace = Workspace(project)
    assert workspace.list_files().splitlines() == REVIEWED
    assert workspace.list_files("**/*.py").splitlines() == ["app.py", "src/core.py", "vendor/lib.py"]


def test_the_secret_collector_reads_ignored_files_but_not_skipped_dirs(tmp_path: Path) -> None:
    root = _tree(tmp_path / "plain", repository=True)
    value = "Hq3vR8mW2xK5pL9nT4bY7cF0"
    (root / "node_modules/lib/.env").write_text(f"API_TOKEN={value}\n")
    found = secret_values.collect(root)
    assert "Zq8vR2mW9xK4pL7nT3bY6cF1" in found  # secret.env is git-ignored: collected all the same
    assert value not in found


def test_the_inquisitor_finds_a_moved_file_outside_skipped_and_hidden_dirs(tmp_path: Path) -> None:
    root = tmp_path / "kb"
    for name in ("lib/moved.py", "node_modules/x/moved.py", ".cache/moved.py", "build/moved.py"):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("def handler():\n    pass\n")
    item = Item(id="handler-lives-here", category="architecture", title="handler", content="c", refs=["moved.py"])
    found = static_inquisitor(item, root)
    assert found.outcome == "outdated" and found.fix is not None and found.fix.refs == ["lib/moved.py"]


def test_an_unreadable_directory_does_not_stop_the_walk(tmp_path: Path) -> None:
    root = _tree(tmp_path / "plain", repository=False)
    locked = root / "locked"
    locked.mkdir()
    (locked / "hidden.py").write_text("h = 1\n")
    os.chmod(locked, 0)
    try:
        files = review_files(root, root)
    finally:
        os.chmod(locked, 0o755)
    assert "app.py" in files


def test_an_installed_environment_under_any_name_is_never_entered(tmp_path: Path) -> None:
    """A virtualenv named ``.venv-bench`` held 3,500 third-party files: the secret collector read them all (18 s)."""
    (tmp_path / "app.py").write_text("x = 1\n")
    for env, marker in (("env3", "pyvenv.cfg"), ("miniconda", "conda-meta/history")):
        (tmp_path / env / marker).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / env / marker).write_text("home = /usr/bin\n")
        (tmp_path / env / "lib" / "site.py").parent.mkdir(parents=True)
        (tmp_path / env / "lib" / "site.py").write_text("x = 2\n")
    (tmp_path / "lib" / "pyvenv.py").parent.mkdir()
    (tmp_path / "lib" / "pyvenv.py").write_text("y = 3\n")  # a file so named is not a marker
    assert sorted(walk(tmp_path, gitignore=False)) == ["app.py", "lib/pyvenv.py"]
