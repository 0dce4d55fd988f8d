"""What a new user hit first (issue 16, part 7): each one fixed and held here."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import run_fluxdrive

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / "pkg").mkdir(parents=True)
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    (root / "pkg" / "tools.py").write_text('import os\n\n\ndef clean(name):\n    os.system("rm -rf /tmp/" + name)\n')
    return root


def test_a_missing_llm_extra_is_one_line(project: Path) -> None:
    """Without pydantic-ai, asking for a model says how to install it once, instead of failing every call."""
    code = (
        "import sys; sys.modules['pydantic_ai'] = None\nfrom fluxdrive.cli import main\nsys.exit(main(sys.argv[1:]))\n"
    )
    for args in (
        ["research", "how do I paginate?", "--model", "openai:gpt-4o"],
        ["review", "pkg", "--yes", "--llm-triage"],
    ):
        done = subprocess.run([sys.executable, "-c", code, *args], cwd=project, capture_output=True, text=True)
        assert done.returncode == 2, done.stderr
        assert done.stderr == (
            "fluxdrive: error: a model was asked for, but the llm extra is not installed "
            "(hint: pip install 'fluxdrive[llm]')\n"
        )


def test_runs_are_ignored_by_git_and_a_users_gitignore_is_kept(project: Path) -> None:
    done = run_fluxdrive("review", "pkg", "--yes", "--fail-on", "never", "-q", cwd=project)
    assert done.code == 0, done.err
    status = subprocess.run(["git", "status", "--porcelain"], cwd=project, capture_output=True, text=True).stdout
    assert "docs/" not in status, status  # nothing under docs/research/flux-drive shows up
    assert (project / "docs" / "research" / "flux-drive" / ".gitignore").read_text().endswith("*\n")
    own = project / "docs" / "research" / "flux-research"
    own.mkdir(parents=True)
    (own / ".gitignore").write_text("!keep.md\n")
    run_fluxdrive("research", "where is clean defined?", "-q", cwd=project)
    assert (own / ".gitignore").read_text() == "!keep.md\n"


def test_make_review_args_keep_fail_on_never() -> None:
    dry = subprocess.run(
        ["make", "-n", "-s", "review", "TARGET=src", 'ARGS=--verbose', "RUNTIME_STAMP=Makefile"],
        cwd=REPO, capture_output=True, text=True, env={**os.environ, "MAKEFLAGS": ""},
    )  # fmt: skip
    assert dry.returncode == 0, dry.stderr
    command = dry.stdout.strip().splitlines()[-1]
    assert command.endswith('fluxdrive review "src" --yes --fail-on never --verbose'), command
    strict = subprocess.run(["make", "-n", "-s", "review", "TARGET=src", "FAIL_ON=risky", "RUNTIME_STAMP=Makefile"],
                            cwd=REPO, capture_output=True, text=True)  # fmt: skip
    assert "--fail-on risky" in strict.stdout


def test_shell_completion_is_available(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Without this typer guesses the shell from the parent processes (shellingham) and ignores "bash":
    # under a process tree with no shell (a CI runner, xdist workers started by `timeout`) it finds none.
    monkeypatch.setenv("_TYPER_COMPLETE_TEST_DISABLE_SHELL_DETECTION", "1")
    shown = run_fluxdrive("--show-completion", "bash")
    assert shown.code == 0 and "_fluxdrive_completion" in shown.out


def test_knowledge_lifecycle_is_a_note_not_a_warning(project: Path) -> None:
    from datetime import date

    from fluxdrive.knowledge import Entry, Store

    Store(project / ".fluxdrive" / "knowledge").save(
        Entry(
            id="shell-in-clean",
            title="Command built from runtime data runs through a shell in clean()",
            heuristic="clean() formats a name into a shell command; pass an argument list instead.",
            evidence=("pkg/tools.py:5",),
            verify=("Open pkg/tools.py:5 and check os.system gets no user text.",),
            last_confirmed=date(2026, 1, 5),
            agents=("fd-safety",),
        )
    )
    loud = run_fluxdrive("review", "pkg", "--yes", "--fail-on", "never", cwd=project)
    assert "fluxdrive: Knowledge: 1 confirmed independently" in loud.err, loud.err
    assert "warning: Knowledge" not in loud.err
    quiet = run_fluxdrive("review", "pkg", "--yes", "--fail-on", "never", "-q", cwd=project)
    assert "Knowledge:" not in quiet.err
