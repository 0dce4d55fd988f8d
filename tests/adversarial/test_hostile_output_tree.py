"""The run's output directory: a hostile repository can make a run neither delete nor write outside itself.

Reproduces issue 26 items 4-6 with a committed repository, real symlinks
and a victim directory outside the project (holding files whose bytes are
compared after the run):

4. the predictable default run folder committed with fluxdrive's marker and
   ``content``, ``verdicts``, ``prompts`` linked to the victim (the run used to
   delete every file there and write 17 files in it), and its variants: the
   run folder itself, fluxdrive's runs container or its lock file committed
   as a link (or the lock file hard-linked to a victim file);
5. ``docs/research`` committed as a link out of the project (the run used to
   write its whole output tree there);
6. ``--output-dir docs`` on a user's directory that merely holds
   ``triage.json`` and ``input-profile.json`` (the run used to delete
   ``plan.md`` and overwrite ``summary.md``).

Each run must leave the victim byte-identical, and either refuse with one
line and exit 2 or review safely into a fresh directory of its own. Two
reviews in a row both succeed and the familiar path leads to the newest.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from fluxdrive.workspace import RUN_MARKER, RUNS_CONTAINER
from tests.conftest import CliResult

APP = "import subprocess\n\n\ndef ping(host):\n    return subprocess.check_output('ping ' + host, shell=True)\n"
RUNS = Path("docs") / "research" / "flux-drive"
Cli = Callable[..., CliResult]


def _git(root: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.email=t@example.com", "-c", "user.name=t", *args],
        cwd=root, capture_output=True, check=True,
    )  # fmt: skip


def _commit(root: Path) -> None:
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "initial")


def _snapshot(directory: Path) -> dict[str, str]:
    """Every entry under ``directory`` (links not followed): a file's sha256, a link's target, or ``dir``."""
    found = {}
    for path in sorted(directory.rglob("*")):
        name = str(path.relative_to(directory))
        if path.is_symlink():
            found[name] = "-> " + os.readlink(path)
        elif path.is_file():
            found[name] = hashlib.sha256(path.read_bytes()).hexdigest()
        else:
            found[name] = "dir"
    return found


@pytest.fixture
def victim(tmp_path: Path) -> Path:
    """A directory outside the project with files a run must never touch."""
    directory = tmp_path / "victim"
    directory.mkdir()
    (directory / "thesis.md").write_text("# Thesis\n\nfive years of work\n")
    (directory / "keys.json").write_text('{"backup": true}\n')
    (directory / "patch.diff").write_text("diff --git a/x b/x\n")
    return directory


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "shop"
    (root / "shop").mkdir(parents=True)
    (root / "shop" / "app.py").write_text(APP)
    return root


def _default_dir(project: Path) -> Path:
    """Where ``fluxdrive review .`` run in ``project`` writes by default (the name an attacker predicts)."""
    digest = hashlib.sha256(str(project.resolve()).encode()).hexdigest()[:8]
    return project / RUNS / f"{project.name}-{digest}"


def _review(cli: Cli, project: Path, monkeypatch: pytest.MonkeyPatch, *args: str) -> CliResult:
    monkeypatch.chdir(project)
    return cli("review", ".", "--yes", "--fail-on", "never", *args)


def _one_error_line(done: CliResult, *needles: str) -> None:
    lines = done.err.strip().splitlines()
    assert done.code == 2, done.err
    assert len(lines) == 1 and lines[0].startswith("fluxdrive: error: "), done.err
    assert "Traceback" not in done.err
    for needle in needles:
        assert needle in lines[0], lines[0]


# --------------------------------------------------------------------------
# 4. the predictable run folder, committed


def _marked_run_folder(project: Path, victim: Path) -> None:
    """Item 4 as reported: the run folder with its marker, and content/verdicts/prompts linked to the victim."""
    folder = _default_dir(project)
    folder.mkdir(parents=True)
    (folder / RUN_MARKER).write_text('{"created_by": "fluxdrive"}\n')
    (folder / "triage.json").write_text("{}\n")
    (folder / "input-profile.json").write_text("{}\n")
    for name in ("content", "verdicts", "prompts"):
        (folder / name).symlink_to(victim)


def _run_folder_is_a_link(project: Path, victim: Path) -> None:
    _default_dir(project).parent.mkdir(parents=True)
    _default_dir(project).symlink_to(victim)


def _container_is_a_link(project: Path, victim: Path) -> None:
    """fluxdrive's own runs container committed as a link, under a pointer that looks like fluxdrive's."""
    runs = _default_dir(project).parent
    runs.mkdir(parents=True)
    (runs / RUNS_CONTAINER).symlink_to(victim)
    name = _default_dir(project).name
    _default_dir(project).symlink_to(f"{RUNS_CONTAINER}/{name}/20250101T000000.000000Z-abcdef")


def _slot_is_a_link(project: Path, victim: Path) -> None:
    runs = _default_dir(project).parent
    (runs / RUNS_CONTAINER).mkdir(parents=True)
    (runs / RUNS_CONTAINER / _default_dir(project).name).symlink_to(victim)


def _lock_is_a_link(project: Path, victim: Path) -> None:
    slot = _default_dir(project).parent / RUNS_CONTAINER / _default_dir(project).name
    slot.mkdir(parents=True)
    (slot / ".fluxdrive.lock").symlink_to(victim / "keys.json")


def _lock_is_a_hard_link(project: Path, victim: Path) -> None:
    """What an unpacked archive can hold (git cannot): the lock file hard-linked to a victim file."""
    slot = _default_dir(project).parent / RUNS_CONTAINER / _default_dir(project).name
    slot.mkdir(parents=True)
    os.link(victim / "keys.json", slot / ".fluxdrive.lock")


@pytest.mark.parametrize(
    ("plant", "needle"),
    [
        pytest.param(_marked_run_folder, "is not empty and was not created by fluxdrive", id="marked-folder"),
        pytest.param(_run_folder_is_a_link, "is a symlink fluxdrive did not create", id="folder-is-a-link"),
        pytest.param(_container_is_a_link, "is a symlink or not a directory", id="container-is-a-link"),
        pytest.param(_slot_is_a_link, "is a symlink or not a directory", id="slot-is-a-link"),
        pytest.param(_lock_is_a_link, "Too many levels of symbolic links", id="lock-is-a-link"),
        pytest.param(_lock_is_a_hard_link, "is not a lock file fluxdrive made", id="lock-is-a-hard-link"),
    ],
)
def test_a_committed_run_folder_never_reaches_the_victim(
    project: Path,
    victim: Path,
    cli: Cli,
    monkeypatch: pytest.MonkeyPatch,
    plant: Callable[[Path, Path], None],
    needle: str,
) -> None:
    plant(project, victim)
    _commit(project)
    before = _snapshot(victim)
    done = _review(cli, project, monkeypatch)
    _one_error_line(done, needle)
    assert _snapshot(victim) == before, "no file in the victim directory was removed, changed or added"


def test_a_forged_pointer_is_replaced_never_followed(
    project: Path, victim: Path, cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A pointer in fluxdrive's own shape, into a committed run folder whose entries link out: a fresh run."""
    pointer = _default_dir(project)
    stale = pointer.parent / RUNS_CONTAINER / pointer.name / "20250101T000000.000000Z-abcdef"
    stale.mkdir(parents=True)
    (stale / RUN_MARKER).write_text("{}\n")
    for name in ("content", "verdicts", "prompts", "findings.json", "summary.md"):
        (stale / name).symlink_to(victim if "." not in name else victim / "thesis.md")
    pointer.symlink_to(stale.relative_to(pointer.parent))
    _commit(project)
    before = _snapshot(victim)
    done = _review(cli, project, monkeypatch)
    assert done.code == 0, done.err
    assert _snapshot(victim) == before
    assert os.readlink(pointer) != str(stale.relative_to(pointer.parent)), "the pointer now leads to a fresh run"
    assert json.loads((pointer / "findings.json").read_text())["verdict"]
    assert (stale / "summary.md").is_symlink(), "the committed folder is left exactly as it was"


# --------------------------------------------------------------------------
# 5. docs/research linked out of the project


@pytest.mark.parametrize("link", ["docs/research", "docs", "docs/research/flux-drive"])
def test_a_linked_runs_root_is_refused(
    project: Path, victim: Path, cli: Cli, monkeypatch: pytest.MonkeyPatch, link: str
) -> None:
    (project / link).parent.mkdir(parents=True, exist_ok=True)
    (project / link).symlink_to(victim)
    _commit(project)
    before = _snapshot(victim)
    done = _review(cli, project, monkeypatch)
    _one_error_line(done, "outside the project root")
    assert _snapshot(victim) == before, "not one file of the output tree was written outside the project"


def test_a_link_that_stays_inside_the_project_is_followed(
    project: Path, cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    (project / "documentation").mkdir()
    (project / "docs").symlink_to("documentation")
    _commit(project)
    done = _review(cli, project, monkeypatch)
    assert done.code == 0, done.err
    assert list((project / "documentation" / "research" / "flux-drive").glob("*/findings.json"))


# --------------------------------------------------------------------------
# 6. a user's directory that merely looks like an old run


def test_a_users_directory_that_looks_like_an_old_run_is_refused(
    project: Path, cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    docs = project / "docs"
    docs.mkdir()
    (docs / "triage.json").write_text('{"mine": 1}\n')
    (docs / "input-profile.json").write_text('{"mine": 2}\n')
    (docs / "plan.md").write_text("# Plan\n\nship it\n")
    (docs / "summary.md").write_text("# My summary\n")
    _commit(project)
    before = _snapshot(docs)
    done = _review(cli, project, monkeypatch, "--output-dir", "docs")
    _one_error_line(done, "is not empty and was not created by fluxdrive")
    assert _snapshot(docs) == before, "plan.md kept, summary.md not overwritten, nothing added"


def test_an_output_dir_linked_outside_its_parent_is_refused(
    project: Path, victim: Path, cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    (project / "out").symlink_to(victim)
    before = _snapshot(victim)
    done = _review(cli, project, monkeypatch, "--output-dir", "out")
    _one_error_line(done, "is a symlink fluxdrive did not create")
    assert _snapshot(victim) == before


# --------------------------------------------------------------------------
# runs in a row: each in a fresh directory, the familiar path leads to the newest


def test_two_reviews_in_a_row_each_write_a_fresh_directory(
    project: Path, cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    _commit(project)
    first = _review(cli, project, monkeypatch)
    assert first.code == 0, first.err
    pointer = _default_dir(project)
    first_dir = pointer.resolve()
    first_files = _snapshot(first_dir)
    second = _review(cli, project, monkeypatch)
    assert second.code == 0, second.err
    second_dir = pointer.resolve()
    assert pointer.is_symlink() and second_dir != first_dir
    assert second_dir.parent == first_dir.parent == pointer.parent / RUNS_CONTAINER / pointer.name
    assert _snapshot(first_dir) == first_files, "the earlier run is left exactly as it was"
    assert (pointer / "findings.json").samefile(second_dir / "findings.json")
    assert str(pointer) in second.out or pointer.name in second.out, "the familiar path is what the user is shown"
    assert not any(p.name.endswith(".tmp") for p in pointer.parent.iterdir()), "no temporary link left behind"
    status = subprocess.run(["git", "status", "--porcelain"], cwd=project, capture_output=True, text=True)
    assert "docs/" not in status.stdout, "the runs root stays ignored by git"
