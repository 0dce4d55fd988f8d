"""Hostile files in the reviewed tree: FIFOs where files belong, names that are not text, names that hold escapes.

Every case builds a committed repository in tmp_path and puts the real thing
in its work tree (``os.mkfifo``, a name made of raw bytes with
``os.fsencode``, a name holding ``ESC [31m``), then runs the installed
``fluxdrive`` console script as a subprocess with a time limit: a read that
blocks on a FIFO kills the child (by its own pid, through
``subprocess.run``'s timeout) and fails the test instead of hanging the
suite. The contract: the run ends - with a verdict, or with one
``fluxdrive: error:`` line naming the file (exit 2) - never with a
traceback; and every output file is UTF-8 text showing such a name escaped
(``bad\\xff\\xfe.py``, ``\\x1b[31m``), never the raw bytes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.adversarial._support import files_under
from tests.conftest import CliResult, committed_copy

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "projects" / "py-webapp"
EXE = Path(sys.executable).parent / "fluxdrive"
LIMIT_S = 90  # a review of this project takes a few seconds; a FIFO read waits forever
ESC_NAME = "\x1b[31mred.py"
BAD_NAME = os.fsdecode(b"bad\xff\xfe.py")  # the str Python hands back for those bytes (lone surrogates)


def run(*args: str | os.PathLike[str] | bytes, cwd: Path, stdin: bytes | None = None) -> CliResult:
    """``fluxdrive ARGS`` as a real process; a run still going after LIMIT_S is killed and fails the test."""
    try:
        proc = subprocess.run(
            [os.fsencode(EXE), *[a if isinstance(a, bytes) else os.fsencode(a) for a in args]],
            input=stdin,
            capture_output=True,
            cwd=cwd,
            timeout=LIMIT_S,
            check=False,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"fluxdrive {' '.join(map(str, args))} did not finish within {LIMIT_S} s (a blocking read?)")
    return CliResult(proc.returncode, proc.stdout.decode("utf-8"), proc.stderr.decode("utf-8"))


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return committed_copy(FIXTURE, tmp_path / "proj")


def _clean(done: CliResult) -> None:
    for word in ("Traceback", "internal error", "UnicodeEncodeError"):
        assert word not in done.out + done.err, done.err[-2000:]


def _one_line(done: CliResult, *names: str) -> None:
    _clean(done)
    assert done.code == 2, f"exit {done.code}: {done.err}"
    lines = done.err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("fluxdrive: error:"), done.err
    for name in names:
        assert name in lines[0], lines[0]


def _verdict(done: CliResult) -> None:
    _clean(done)
    assert done.code in (0, 1), f"exit {done.code}: {done.err[-2000:]}"
    assert done.out.startswith("Verdict:"), done.out[:500]


def _outputs_are_text(out: Path) -> dict[str, str]:
    """Every file the run wrote decodes as strict UTF-8 and holds no raw escape character; the JSON parses."""
    found = {}
    for path in sorted(out.rglob("*")):
        if path.is_file() and not path.is_symlink():
            text = path.read_bytes().decode("utf-8")  # raises on a raw byte of a name
            assert "\x1b" not in text, f"a raw ESC in {path.relative_to(out)}"
            if path.suffix in (".json", ".sarif"):
                json.loads(text)
            found[str(path.relative_to(out))] = text
    return found


# --------------------------------------------------------------------------
# FIFOs: open only regular files, never block


def test_a_fifo_as_the_project_config_is_one_line_not_a_hang(project: Path, tmp_path: Path) -> None:
    (project / ".fluxdrive").mkdir()
    os.mkfifo(project / ".fluxdrive" / "config.toml")
    done = run("review", ".", "--yes", "-q", "--output-dir", tmp_path / "out", cwd=project)
    _one_line(done, "config.toml", "not a regular file")


def test_a_fifo_as_an_agent_definition_is_one_line_not_a_hang(project: Path, tmp_path: Path) -> None:
    (project / ".fluxdrive" / "agents").mkdir(parents=True)
    os.mkfifo(project / ".fluxdrive" / "agents" / "fd-pipe.md")
    _one_line(run("review", ".", "--yes", "-q", "--output-dir", tmp_path / "out", cwd=project), "fd-pipe.md")
    _one_line(run("agents", "list", cwd=project), "fd-pipe.md", "not a regular file")


def test_fifos_among_sources_ignore_files_and_knowledge_are_skipped_and_the_review_finishes(
    project: Path, tmp_path: Path
) -> None:
    (project / ".fluxdrive" / "knowledge").mkdir(parents=True)
    os.mkfifo(project / ".fluxdrive" / "knowledge" / "pipe-entry.md")
    os.mkfifo(project / "shop" / "evil.py")
    os.mkfifo(project / "shop" / ".gitignore")  # git ls-files would block opening it
    out = tmp_path / "out"
    done = run("review", ".", "--yes", "-q", "--output-dir", out, cwd=project)
    _verdict(done)
    not_reviewed = (out / "summary.md").read_text().split("## Not Reviewed", 1)[1].split("\n## ", 1)[0]
    for name in ("shop/evil.py", "shop/.gitignore"):
        assert f"`{name}`" in not_reviewed and "not a regular file" in not_reviewed, not_reviewed
    assert "pipe-entry.md is not a regular file" in done.err, done.err
    assert "P0" in done.out  # the regular files were still reviewed


# --------------------------------------------------------------------------
# names that are not UTF-8, names that hold escapes


def _hostile_names(project: Path) -> None:
    body = b"import os\n\n\ndef run(cmd):\n    os.system(cmd)\n"
    (project / "shop" / BAD_NAME).write_bytes(body)  # the bytes b"bad\xff\xfe.py" on disk
    (project / "shop" / ESC_NAME).write_text("def g(y):\n    return eval(y)\n")
    for args in (("add", "-A"), ("commit", "-q", "-m", "hostile names")):
        subprocess.run(
            ["git", "-c", "user.email=t@fluxdrive.invalid", "-c", "user.name=t", *args], cwd=project, check=True
        )


def test_a_name_that_is_not_utf8_is_skipped_with_a_note_shown_escaped(project: Path, tmp_path: Path) -> None:
    _hostile_names(project)
    assert os.fsencode(project / "shop" / BAD_NAME).endswith(b"bad\xff\xfe.py")
    out = tmp_path / "out"
    done = run("review", ".", "--yes", "--output-dir", out, cwd=project)
    _verdict(done)
    assert "Not reviewed: 1 file(s) - shop/bad\\xff\\xfe.py (its name is not UTF-8 text)" in done.out, done.out
    written = _outputs_are_text(out)
    assert "`shop/bad\\xff\\xfe.py`: its name is not UTF-8 text" in written["summary.md"]
    assert json.loads(written["run.json"]) and "shop/bad\\\\xff\\\\xfe.py" in written["run.json"]
    # json, sarif and markdown writers of the same run: every one wrote (none crashed on the name)
    for name in ("findings.json", "findings.sarif", "summary.md", "summary.html", "triage-table.md"):
        assert name in written


def test_an_escape_in_a_name_is_never_written_raw(project: Path, tmp_path: Path) -> None:
    _hostile_names(project)
    whole, single = tmp_path / "whole", tmp_path / "single"
    _verdict(run("review", ".", "--yes", "-q", "--output-dir", whole, cwd=project))
    _outputs_are_text(whole)
    _verdict(run("review", f"shop/{ESC_NAME}", "--yes", "-q", "--output-dir", single, cwd=project))
    table = _outputs_are_text(single)["triage-table.md"]
    assert "## Triage: \\x1b[31mred.py" in table, table[:300]
    triaged = run("triage", f"shop/{ESC_NAME}", "--yes", "--output-dir", tmp_path / "triage", cwd=project)
    _clean(triaged)
    assert triaged.code == 0 and "\x1b" not in files_under(tmp_path / "triage")["triage-table.md"]


def test_a_target_whose_name_is_not_utf8_is_one_line(project: Path, tmp_path: Path) -> None:
    _hostile_names(project)
    done = run("review", b"shop/bad\xff\xfe.py", "--yes", "-q", "--output-dir", tmp_path / "out", cwd=project)
    _one_line(done, "bad\\xff\\xfe.py", "not UTF-8")
    assert not (tmp_path / "out").exists()


def test_a_stdin_diff_that_is_not_utf8_is_reviewed(project: Path, tmp_path: Path) -> None:
    diff = (
        b"diff --git a/shop/db.py b/shop/db.py\n--- a/shop/db.py\n+++ b/shop/db.py\n@@ -1,1 +1,2 @@\n"
        b" import sqlite3\n+LABEL = '\xff\xfe caf\xe9'  # Latin-1 bytes\n"
    )
    out = tmp_path / "out"
    done = run("review", "-", "--yes", "-q", "--output-dir", out, cwd=project, stdin=diff)
    _verdict(done)
    written = _outputs_are_text(out)
    assert "\ufffd" in written["input.diff"] and "caf" in written["input.diff"]
