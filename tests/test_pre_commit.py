"""The hooks in .pre-commit-hooks.yaml, run by the real pre-commit tool on a temporary repository.

pre-commit installs a ``language: python`` hook from its repository into a
virtualenv with pip, which needs the network and minutes; the test runs the
same hooks - their ids, entries and file handling, read from our
``.pre-commit-hooks.yaml`` - as ``language: system`` hooks pointing at this
environment's ``fluxdrive``. Everything else (staging, file lists, exit codes,
what pre-commit prints) is the real tool.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
PRE_COMMIT = BIN / "pre-commit"
UNSAFE = 'import os\n\n\ndef clean(name):\n    os.system("rm -rf /tmp/" + name)\n'
SAFE = 'def add(a, b):\n    """Sum."""\n    return a + b\n'

pytestmark = pytest.mark.skipif(not PRE_COMMIT.exists(), reason="pre-commit is a dev dependency")


def _hooks() -> list[dict[str, object]]:
    hooks = yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text())
    assert {h["id"] for h in hooks} == {"fluxdrive-staged", "fluxdrive"}
    return hooks


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


def _run(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",
        "PRE_COMMIT_HOME": str(root.parent / "pc"),
    }
    return subprocess.run([str(PRE_COMMIT), *args], cwd=root, capture_output=True, text=True, env=env, timeout=300)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    _git(root, "init", "-q", "-b", "main")
    _git(root, "config", "user.email", "dev@example.com")
    _git(root, "config", "user.name", "Dev")
    local = [{**hook, "language": "system"} for hook in _hooks()]  # this environment's fluxdrive, not a pip build
    (root / ".pre-commit-config.yaml").write_text(yaml.safe_dump({"repos": [{"repo": "local", "hooks": local}]}))
    (root / ".gitignore").write_text("docs/research/\n.fluxdrive/\n")
    (root / "util.py").write_text(SAFE)
    _git(root, "add", ".")
    _git(root, "commit", "-qm", "init")
    return root


def test_the_staged_hook_stops_a_risky_commit_and_passes_a_safe_one(repo: Path) -> None:
    (repo / "tools.py").write_text(UNSAFE)
    _git(repo, "add", "tools.py")
    risky = _run(repo, "run", "fluxdrive-staged")
    assert risky.returncode == 1, risky.stdout + risky.stderr
    assert "fluxdrive (staged change)" in risky.stdout and "Failed" in risky.stdout
    assert "RISKY" in risky.stdout and "tools.py:5" in risky.stdout
    (repo / "tools.py").write_text(SAFE.replace("add", "mul").replace("+", "*"))
    _git(repo, "add", "tools.py")
    safe = _run(repo, "run", "fluxdrive-staged")
    assert safe.returncode == 0, safe.stdout + safe.stderr
    assert "Passed" in safe.stdout


def test_the_file_hook_reviews_several_files_in_one_run(repo: Path) -> None:
    (repo / "tools.py").write_text(UNSAFE)
    (repo / "more.py").write_text(SAFE)
    _git(repo, "add", "tools.py", "more.py")
    done = _run(repo, "run", "fluxdrive", "--files", "tools.py", "more.py", "util.py")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "tools.py:5" in done.stdout
    runs = list((repo / "docs" / "research" / "flux-drive").glob("3-files-*"))
    assert len(runs) == 1, "one review of the three files, not three reviews"
    clean = _run(repo, "run", "fluxdrive", "--files", "more.py", "util.py")
    assert clean.returncode == 0, clean.stdout + clean.stderr


def test_all_files_mode(repo: Path) -> None:
    done = _run(repo, "run", "--all-files")
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.count("Passed") == 2


def test_the_hooks_file_is_valid_for_pre_commit(tmp_path: Path) -> None:
    if shutil.which("git") is None:
        pytest.skip("git")
    done = subprocess.run(
        [str(PRE_COMMIT), "validate-manifest", str(REPO / ".pre-commit-hooks.yaml")], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_documented_configuration_names_a_revision_that_has_the_hooks() -> None:
    """README's ``rev:`` must resolve in this repository to a commit whose hooks file declares the documented
    hook ids: a tag that was never made failed every user with ``pathspec 'v0.1.0' did not match``."""
    readme = (REPO / "README.md").read_text()
    block = readme.split("# .pre-commit-config.yaml\n", 1)[1].split("```", 1)[0]
    config = yaml.safe_load(block)
    (entry,) = config["repos"]
    rev = str(entry["rev"])
    shown = subprocess.run(
        ["git", "show", f"{rev}:.pre-commit-hooks.yaml"], cwd=REPO, capture_output=True, text=True, check=False
    )
    assert shown.returncode == 0, f"README's rev {rev!r} does not resolve here: {shown.stderr.strip()}"
    declared = {hook["id"] for hook in yaml.safe_load(shown.stdout)}
    documented = {"fluxdrive-staged", "fluxdrive"}
    assert {hook["id"] for hook in entry["hooks"]} <= declared
    assert documented <= declared
