"""RunDirectory: the one typed, confined reader of a review's output directory.

The run is made by a real offline ``fluxdrive review`` of a small project
(as tests/test_baseline.py makes one); the broken and hostile cases are real
files and real symlinks beside it.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from fluxdrive.errors import InputError, UsageError
from fluxdrive.reports.findings_json import FindingsDocument
from fluxdrive.runs.directory import RunDirectory
from tests.conftest import CliResult

Cli = Callable[..., CliResult]

TOOLS = 'import os\n\n\ndef clean(name):\n    os.system("rm -rf /tmp/" + name)\n'


@pytest.fixture
def run(cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A real offline review of pkg/ into proj/run."""
    root = tmp_path / "proj"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "tools.py").write_text(TOOLS)
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "initial"]):
        subprocess.run(
            ["git", "-c", "user.email=t@fluxdrive.invalid", "-c", "user.name=t", *args], cwd=root, check=True
        )
    monkeypatch.chdir(root)
    done = cli("review", "pkg", "--yes", "--format", "json", "--output-dir", root / "run")
    assert done.code == 1, done.err  # risky: the shell command
    return root / "run"


def _one_line(exc: pytest.ExceptionInfo[InputError], *fragments: str) -> None:
    line = exc.value.one_line()
    assert "\n" not in line and all(f in line for f in fragments), line


def test_reads_a_real_run(run: Path) -> None:
    directory = RunDirectory.open(run)
    document = directory.findings()
    assert isinstance(document, FindingsDocument) and document.schema_version == 2
    assert document.model_dump(mode="json") == json.loads((run / "findings.json").read_text())
    assert document.verdict == "risky" and {f.severity for f in document.findings} >= {"P0"}
    assert directory.findings() is document, "read once per instance"
    manifest = directory.manifest()
    assert manifest.input is not None and Path(manifest.input.project_root) == run.parent.resolve()
    agent = document.findings[0].agents[0]
    assert directory.report(agent) == (run / f"{agent}.md").read_text()
    assert directory.verdicts().records, "the write-behind verdict records"
    assert directory.peer_findings().findings == directory.peer_findings("all").findings


def test_not_a_run_directory_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(InputError) as missing:
        RunDirectory.open(tmp_path / "nowhere")
    _one_line(missing, "is not a run directory")
    with pytest.raises(InputError) as empty:
        RunDirectory.open(tmp_path).findings()
    _one_line(empty, "no findings.json in")


@pytest.mark.parametrize(
    ("content", "fragment"),
    [
        (b"{garbage", "is not valid JSON"),
        (b"\xff\xfe\x00", "is not valid JSON"),
        (b"[" * 100_000, "is not valid JSON"),
        (b"[1, 2]", "is not a JSON object"),
        (b'{"findings": [{"id": "P0-1", "severity": "P7"}]}', "is not a fluxdrive findings.json (findings.0.severity"),
        (b'{"verdict": "safe", "surprise": 1}', "is not a fluxdrive findings.json (surprise"),
    ],
)
def test_a_broken_findings_json_is_one_input_error(tmp_path: Path, content: bytes, fragment: str) -> None:
    (tmp_path / "findings.json").write_bytes(content)
    with pytest.raises(InputError) as broken:
        RunDirectory(tmp_path).findings()
    _one_line(broken, "findings.json", fragment)
    assert "fluxdrive schema findings" in (broken.value.hint or "")


def test_a_findings_json_linked_out_of_the_project_is_refused(run: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.json"
    outside.write_bytes((run / "findings.json").read_bytes())
    (run / "findings.json").unlink()
    (run / "findings.json").symlink_to(outside)
    with pytest.raises(InputError) as refused:
        RunDirectory(run).findings()
    _one_line(refused, ", outside ")
    # confined to the run itself when the caller says so: a link elsewhere in the project is refused too
    kept = run.parent / "kept.json"
    kept.write_bytes(outside.read_bytes())
    (run / "findings.json").unlink()
    (run / "findings.json").symlink_to(kept)
    assert RunDirectory(run).findings().verdict == "risky"
    with pytest.raises(InputError):
        RunDirectory(run, root=run).findings()


def test_a_report_linked_out_or_badly_named_is_refused(run: Path, tmp_path: Path) -> None:
    (tmp_path / "secret.md").write_text("not yours")
    (run / "fd-x.md").symlink_to(tmp_path / "secret.md")
    with pytest.raises(InputError) as refused:
        RunDirectory(run).report("fd-x")
    _one_line(refused, ", outside ")
    with pytest.raises(UsageError):
        RunDirectory(run).report("../../etc/passwd")
    with pytest.raises(InputError) as none:
        RunDirectory(run).report("fd-nobody")
    _one_line(none, "no report for fd-nobody")


def test_schema_1_still_reads(tmp_path: Path) -> None:
    """A findings.json of schema 1: no findings_verdict, and "safe" said for an incomplete review."""
    old = {
        "schema_version": 1,
        "verdict": "safe",
        "complete": False,
        "incomplete_reasons": ["fd-safety failed (HTTP 500)"],
        "counts": {},
        "findings": [{"id": "P1-1", "title": "Unbounded retry", "location": "a.py:3", "agents": ["fd-correctness"]}],
        "agents": [{"name": "fd-safety", "status": "error"}],
    }
    (tmp_path / "findings.json").write_text(json.dumps(old))
    document = RunDirectory(tmp_path).findings()
    assert (document.verdict, document.findings_verdict, document.complete) == ("incomplete", "safe", False)
    (finding,) = document.findings
    assert (finding.severity, finding.locations, finding.location) == ("P1", ["a.py:3"], "a.py:3")
    assert document.agents[0].reason == "" and RunDirectory(tmp_path).manifest().input is None
