"""``fluxdrive review a.py b.py``: several paths are one review of exactly those files (pre-commit's file list)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from fluxdrive.errors import InputError, UsageError
from fluxdrive.workspace import resolve_target

UNSAFE = 'import os\n\n\ndef clean(name):\n    os.system("rm -rf /tmp/" + name)\n'


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / "pkg").mkdir(parents=True)
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    (root / "pkg" / "tools.py").write_text(UNSAFE)
    (root / "pkg" / "other.py").write_text(UNSAFE.replace("clean", "wipe"))
    (root / "notes.md").write_text("# Notes\n\nNothing here.\n")
    return root


def test_several_paths_resolve_to_exactly_those_files(project: Path) -> None:
    target = resolve_target(["pkg/tools.py", "notes.md"], cwd=project)
    assert target.kind == "directory" and target.files == ("notes.md", "pkg/tools.py")
    assert target.stem == "2-files"
    again = resolve_target(["notes.md", "pkg/tools.py", "notes.md"], cwd=project)
    assert again.identity == target.identity  # order and repeats do not make another run directory
    with_dir = resolve_target(["pkg", "notes.md"], cwd=project)
    assert with_dir.files == ("notes.md", "pkg/other.py", "pkg/tools.py")


def test_several_paths_do_not_mix_with_diffs_or_other_projects(project: Path, tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="do not combine"):
        resolve_target(["pkg/tools.py", "notes.md"], diff_ref="HEAD", cwd=project)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "x.py").write_text("x = 1\n")
    with pytest.raises(InputError, match="different projects"):
        resolve_target(["pkg/tools.py", str(elsewhere / "x.py")], cwd=project)


def test_review_of_two_files_is_one_run_over_both(project: Path, cli, monkeypatch) -> None:
    monkeypatch.chdir(project)
    done = cli("review", "pkg/tools.py", "notes.md", "--yes", "--output-dir", project / "out", "--format", "json")
    assert done.code == 1, done.err  # risky: the shell command
    findings = json.loads(done.out)["findings"]
    assert {f["location"].split(":")[0] for f in findings} == {"pkg/tools.py"}  # other.py was not given
    profile = json.loads((project / "out" / "input-profile.json").read_text())
    assert profile["file_count"] == 2
