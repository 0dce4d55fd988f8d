"""Hostile and broken requests to ``fluxdrive mcp``, through the MCP SDK's own client over stdio.

Every test starts the installed ``fluxdrive mcp`` in a real project (a git
repository holding a synthesized run) next to a directory outside it whose
files are valid reports, findings, channel lines and verdict records carrying
a marker. Symlinks and FIFOs are real. A bad request must be answered with
one meaningful line and never with the marker; the server must answer the
next good request; and its stderr, captured to a file, must hold no
traceback.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client

from fluxdrive.exchange.verdicts import write_verdict
from fluxdrive.reports import write_reports
from fluxdrive.synthesis import synthesize
from tests.conftest import committed_copy

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
FLUXDRIVE = Path(sys.executable).parent / "fluxdrive"
RUN = "docs/research/flux-drive/run"
SECRET = "OUTSIDE-THE-ROOT-7f3a"
GOOD = ("report", {"output_dir": RUN, "agent": "fd-safety", "max_chars": 100})
Session = Callable[[Client], Awaitable[None]]


@dataclass(frozen=True)
class Site:
    """The served project, its synthesized run and a directory outside the project."""

    project: Path
    run: Path
    outside: Path


@pytest.fixture
def site(tmp_path: Path) -> Site:
    project = committed_copy(FIXTURES / "projects" / "py-webapp", tmp_path / "shop")
    run = project / RUN
    shutil.copytree(FIXTURES / "agent-outputs" / "timeline", run)
    write_reports(synthesize(run))
    write_verdict(run, "fd-safety", "NEEDS_ATTENTION", "1 P0: SQL injection in find_user")
    outside = tmp_path / "outside"
    (outside / "verdicts").mkdir(parents=True)
    report = (run / "fd-quality.md").read_text().replace("Bare except in cleanup()", SECRET)
    (outside / "report.md").write_text(report)
    (outside / "findings.json").write_text(json.dumps({"findings": [{"id": "P0-1", "title": SECRET}]}))
    line = json.loads((run / "peer-findings.jsonl").read_text().splitlines()[0])
    (outside / "peer-findings.jsonl").write_text(json.dumps({**line, "summary": SECRET}) + "\n")
    record = {"schema_version": 1, "agent": "fd-x", "status": "NEEDS_ATTENTION", "summary": SECRET, "tokens": 0}
    (outside / "verdicts" / "fd-x.json").write_text(json.dumps(record))
    return Site(project, run, outside)


def _serve(site: Site, session: Session, env: dict[str, str] | None = None) -> str:
    """Run ``session`` against a real ``fluxdrive mcp`` in the project; return its stderr, checked for tracebacks."""
    log = site.project.parent / "server-stderr.log"

    async def go() -> None:
        params = StdioServerParameters(command=str(FLUXDRIVE), args=["mcp"], cwd=str(site.project), env=env)
        with log.open("w") as errlog:
            async with Client(stdio_client(params, errlog=errlog), read_timeout_seconds=60) as client:
                await session(client)

    asyncio.run(go())
    stderr = log.read_text()
    assert "Traceback" not in stderr and "unexpected exception" not in stderr, stderr
    return stderr


async def _call(client: Client, tool: str, arguments: dict[str, Any]) -> tuple[bool, str]:
    result = await client.call_tool(tool, arguments)
    return bool(result.is_error), "".join(getattr(part, "text", "") for part in result.content)


def _bad_then_good(site: Site, tool: str, arguments: dict[str, Any]) -> tuple[tuple[bool, str], tuple[bool, str]]:
    """The answer to the bad request and to the good one after it; asserts the server's stderr is clean."""
    answers: list[tuple[bool, str]] = []

    async def session(client: Client) -> None:
        answers.append(await _call(client, tool, arguments))
        answers.append(await _call(client, *GOOD))

    _serve(site, session)
    assert len(answers) == 2
    return answers[0], answers[1]


def _assert_one_line_error(answer: tuple[bool, str], *expected: str) -> None:
    error, text = answer
    assert error, text
    assert any(fragment in text for fragment in expected), text
    assert text.strip() and "\n" not in text.strip() and len(text) <= 1_000, text
    assert "Error executing tool" not in text and "Traceback" not in text
    assert SECRET not in text


def _assert_still_serving(answer: tuple[bool, str]) -> None:
    error, text = answer
    assert not error and text.startswith("fd-safety.md, characters 0-100 of "), text


def _commit_a_change(project: Path) -> None:
    db = project / "shop" / "db.py"
    db.write_text(db.read_text() + "\n\ndef drop_all(conn):\n    conn.execute('DELETE FROM users')\n")
    for args in (("add", "shop/db.py"), ("commit", "-q", "-m", "drop_all")):
        subprocess.run(
            ["git", "-c", "user.email=tests@fluxdrive.invalid", "-c", "user.name=fluxdrive tests", *args],
            cwd=project,
            check=True,
            capture_output=True,
        )


def test_diff_ref_reviews_and_triages_the_changes_without_a_target(site: Site) -> None:
    _commit_a_change(site.project)
    answers: dict[str, tuple[bool, str]] = {}

    async def session(client: Client) -> None:
        answers["review"] = await _call(client, "review", {"diff_ref": "HEAD~1"})
        answers["triage"] = await _call(client, "triage", {"diff_ref": "HEAD~1", "target": "."})
        answers["both"] = await _call(client, "review", {"diff_ref": "HEAD~1", "target": "shop/db.py"})
        answers["unknown"] = await _call(client, "triage", {"diff_ref": "no-such-ref"})
        answers["after"] = await _call(client, *GOOD)

    _serve(site, session)
    error, review = answers["review"]
    assert not error, review
    assert review.startswith("Output directory: docs/research/flux-drive/diff-HEAD") and "Verdict: " in review
    error, triage = answers["triage"]
    assert not error and "## Triage: diff-HEAD~1" in triage, triage
    _assert_one_line_error(answers["both"], "do not also pass a TARGET")
    _assert_one_line_error(answers["unknown"], "unknown git ref 'no-such-ref'")
    _assert_still_serving(answers["after"])


@pytest.mark.parametrize(
    ("tool", "arguments", "expected"),
    [
        pytest.param(
            "review",
            {"target": "x" * 1_000_000},
            ("target is 1,000,000 characters long (at most 4,096)",),
            id="1MB-target",
        ),
        pytest.param("triage", {"target": "shop/db.py\0.txt"}, ("target contains a NUL byte",), id="NUL-target"),
        pytest.param("review", {"target": "shop/\0"}, ("target contains a NUL byte",), id="NUL-directory-target"),
        pytest.param(
            "report",
            {"output_dir": "d" * 5_000, "agent": "fd-safety"},
            ("output directory is 5,000 characters",),
            id="long-output-dir",
        ),
        pytest.param(
            "verdicts", {"output_dir": "a" * 300}, ("File name too long", "no output directory"), id="name-too-long"
        ),
        pytest.param(
            "finding",
            {"output_dir": RUN, "finding_id": "P0-1" * 2_000},
            ("finding_id is 8,000 characters",),
            id="long-finding-id",
        ),
        pytest.param(
            "review", {"target": ".", "diff_ref": "HEAD\0"}, ("diff_ref contains a NUL byte",), id="NUL-diff-ref"
        ),
        pytest.param(
            "review",
            {"target": ".", "agents": ["safety"] * 101},
            ("101 agents requested (at most 100)",),
            id="too-many-agents",
        ),
        pytest.param(
            "review",
            {"target": "~no-such-user-3b1/app.py"},
            ("shop/~no-such-user-3b1/app.py (hint: check the path)",),
            id="no-such-home",
        ),
        pytest.param(
            "remember",
            {"title": "T", "content": "x", "refs": ["shop/db.py"] * 101},
            ("101 refs given (at most 100)",),
            id="too-many-refs",
        ),
        pytest.param(
            "remember",
            {"title": "T", "content": "x" * 200_000},
            ("content is 200,000 characters long",),
            id="huge-remember",
        ),
        pytest.param(
            "review",
            {"target": 5},
            ("review: argument target: Input should be a valid string",),
            id="target-not-a-string",
        ),
        pytest.param(
            "report",
            {"output_dir": RUN, "agent": "fd-safety", "offset": "abc"},
            ("report: argument offset:",),
            id="offset-not-a-number",
        ),
    ],
)
def test_bad_arguments_get_one_line(site: Site, tool: str, arguments: dict[str, Any], expected: tuple[str]) -> None:
    bad, good = _bad_then_good(site, tool, arguments)
    _assert_one_line_error(bad, *expected)
    _assert_still_serving(good)


def _write(content: bytes) -> Callable[[Path], None]:
    return lambda path: path.write_bytes(content)


@pytest.mark.parametrize(
    ("make", "expected"),
    [
        pytest.param(_write(b""), "findings.json in 'docs/research/flux-drive/run' is not valid JSON", id="empty"),
        pytest.param(_write(b'{"findings": [{"id": "P0-1"'), "is not valid JSON", id="cut-off"),
        pytest.param(_write(b"\xff\xfe\x00garbage"), "is not valid JSON", id="not-utf8"),
        pytest.param(_write(b"[" * 100_000), "is not valid JSON", id="nested-too-deep"),
        pytest.param(
            _write(b'[{"id": "P0-1"}]'),
            "findings.json in 'docs/research/flux-drive/run' is not a JSON object",
            id="a-list",
        ),
        pytest.param(_write(b'"P0-1"'), "is not a JSON object", id="a-string"),
        pytest.param(
            _write(b'{"findings": "P0-1", "improvements": 7}'),
            "findings.json in 'docs/research/flux-drive/run' is not a fluxdrive findings.json",
            id="lists-not-lists",
        ),
        pytest.param(
            _write(b'{"findings": [1, null, ["P0-1"], {"id": 5}]}'), "is not a fluxdrive findings.json", id="odd-items"
        ),
        pytest.param(Path.mkdir, "is a directory", id="a-directory"),
        pytest.param(os.mkfifo, "is not a regular file", id="a-fifo"),
    ],
)
def test_a_broken_findings_json_gets_one_line(site: Site, make: Callable[[Path], None], expected: str) -> None:
    findings = site.run / "findings.json"
    findings.unlink()
    make(findings)
    bad, good = _bad_then_good(site, "finding", {"output_dir": RUN, "finding_id": "P0-1"})
    _assert_one_line_error(bad, expected)
    _assert_still_serving(good)


def _link_out(name: str, target: str) -> Callable[[Site], None]:
    """Replace ``RUN/name`` by a symlink to ``outside/target``."""

    def make(site: Site) -> None:
        path = site.run / name
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        elif os.path.lexists(path):
            path.unlink()
        path.symlink_to(site.outside / target)

    return make


def _fifo(name: str) -> Callable[[Site], None]:
    """Replace ``RUN/name`` by a FIFO nobody writes to (a reader that opens it waits forever)."""

    def make(site: Site) -> None:
        path = site.run / name
        path.parent.mkdir(exist_ok=True)
        if os.path.lexists(path):
            path.unlink()
        os.mkfifo(path)

    return make


def _escaping_run_dir(site: Site) -> None:
    (site.run.parent / "elsewhere").symlink_to(site.outside, target_is_directory=True)


OUTSIDE = ", outside "  # confine()'s line: "<what> <path> resolves to <real path>, outside <root> (hint: ...)"
NOT_REGULAR = "is not a regular file"


@pytest.mark.parametrize(
    ("make", "tool", "arguments", "expected"),
    [
        pytest.param(
            _link_out("fd-x.md", "report.md"), "report", {"output_dir": RUN, "agent": "fd-x"}, OUTSIDE, id="report-link"
        ),
        pytest.param(
            _link_out("fd-x.md.partial", "report.md"),
            "report",
            {"output_dir": RUN, "agent": "fd-x"},
            OUTSIDE,
            id="partial-report-link",
        ),
        pytest.param(_fifo("fd-x.md"), "report", {"output_dir": RUN, "agent": "fd-x"}, NOT_REGULAR, id="report-fifo"),
        pytest.param(
            _link_out("peer-findings.jsonl", "peer-findings.jsonl"),
            "peer_findings",
            {"output_dir": RUN},
            OUTSIDE,
            id="channel-link",
        ),
        pytest.param(
            _fifo("peer-findings.jsonl"), "peer_findings", {"output_dir": RUN}, NOT_REGULAR, id="channel-fifo"
        ),
        pytest.param(
            _link_out("findings.json", "findings.json"),
            "finding",
            {"output_dir": RUN, "finding_id": "P0-1"},
            OUTSIDE,
            id="findings-link",
        ),
        pytest.param(
            _link_out("verdicts/fd-x.json", "verdicts/fd-x.json"),
            "verdicts",
            {"output_dir": RUN},
            OUTSIDE,
            id="verdict-record-link",
        ),
        pytest.param(
            _link_out("verdicts", "verdicts"), "verdicts", {"output_dir": RUN}, OUTSIDE, id="verdicts-directory-link"
        ),
        pytest.param(
            _fifo("verdicts/fd-x.json"), "verdicts", {"output_dir": RUN}, NOT_REGULAR, id="verdict-record-fifo"
        ),
        pytest.param(
            _link_out("fd-quality.md", "report.md"),
            "synthesize",
            {"output_dir": RUN},
            OUTSIDE,
            id="synthesize-report-link",
        ),
        pytest.param(
            _link_out("fd-x.md.partial", "report.md"),
            "synthesize",
            {"output_dir": RUN},
            OUTSIDE,
            id="synthesize-partial-link",
        ),
        pytest.param(
            _link_out("peer-findings.jsonl", "peer-findings.jsonl"),
            "synthesize",
            {"output_dir": RUN},
            OUTSIDE,
            id="synthesize-channel-link",
        ),
        pytest.param(
            _link_out("run.json", "findings.json"),
            "synthesize",
            {"output_dir": RUN},
            OUTSIDE,
            id="synthesize-manifest-link",
        ),
        pytest.param(
            _link_out("verdicts", "verdicts"), "synthesize", {"output_dir": RUN}, OUTSIDE, id="synthesize-verdicts-link"
        ),
        pytest.param(_fifo("fd-x.md"), "synthesize", {"output_dir": RUN}, NOT_REGULAR, id="synthesize-report-fifo"),
        pytest.param(
            _fifo(".reports/fd-safety.md"), "synthesize", {"output_dir": RUN}, NOT_REGULAR, id="synthesize-frozen-fifo"
        ),
        pytest.param(
            _escaping_run_dir,
            "synthesize",
            {"output_dir": "docs/research/flux-drive/elsewhere"},
            "is outside the project root",
            id="output-directory-link",
        ),
    ],
)
def test_what_resolves_outside_the_root_or_is_no_file_is_refused(
    site: Site, make: Callable[[Site], None], tool: str, arguments: dict[str, Any], expected: str
) -> None:
    make(site)
    findings = site.run / "findings.json"
    findings_before = findings.read_bytes() if findings.is_file() and not findings.is_symlink() else None
    bad, good = _bad_then_good(site, tool, arguments)
    _assert_one_line_error(bad, expected)
    _assert_still_serving(good)
    if findings_before is not None:
        assert (site.run / "findings.json").read_bytes() == findings_before, "a refused synthesis writes nothing"
    written = [p for p in site.project.rglob("*") if p.is_file() and not p.is_symlink()]
    assert not [p for p in written if SECRET.encode() in p.read_bytes()], "nothing from outside was copied in"


def test_symlinks_that_stay_inside_the_root_keep_working(site: Site) -> None:
    kept = site.project / "kept"
    kept.mkdir()
    for name in ("fd-quality.md", "peer-findings.jsonl", "verdicts", "findings.json"):
        (site.run / name).rename(kept / name)
        if name != "findings.json":  # synthesize never writes through a link: that one is linked after it ran
            (site.run / name).symlink_to(kept / name)
    answers: dict[str, tuple[bool, str]] = {}

    async def session(client: Client) -> None:
        answers["report"] = await _call(client, "report", {"output_dir": RUN, "agent": "fd-quality"})
        answers["peers"] = await _call(client, "peer_findings", {"output_dir": RUN})
        answers["verdicts"] = await _call(client, "verdicts", {"output_dir": RUN})
        answers["synthesize"] = await _call(client, "synthesize", {"output_dir": RUN})
        (kept / "findings.json").write_bytes((site.run / "findings.json").read_bytes())
        (site.run / "findings.json").unlink()
        (site.run / "findings.json").symlink_to(kept / "findings.json")
        answers["finding"] = await _call(client, "finding", {"output_dir": RUN, "finding_id": "P0-1"})

    _serve(site, session)
    assert [(name, text) for name, (error, text) in answers.items() if error] == []
    assert answers["report"][1].startswith("fd-quality.md, characters 0-")
    assert " fd-safety blocking " in answers["peers"][1]
    assert "NEEDS_ATTENTION  fd-safety" in answers["verdicts"][1] and "note:" not in answers["verdicts"][1]
    assert (
        answers["synthesize"][1].startswith("Verdict: RISKY") and "All 5 reviewers reported" in answers["synthesize"][1]
    )
    assert json.loads(answers["finding"][1])["id"] == "P0-1"


CRASH = """
import fluxdrive.exchange.verdicts

def _crash(*args, **kwargs):
    raise RuntimeError("the verdict loader\\ncrashed")

fluxdrive.exchange.verdicts.load_verdicts = _crash
"""


def test_an_unexpected_exception_is_one_line_and_leaves_no_traceback(site: Site, tmp_path: Path) -> None:
    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(CRASH)  # imported by the server's interpreter at start-up
    answers: list[tuple[bool, str]] = []

    async def session(client: Client) -> None:
        answers.append(await _call(client, "verdicts", {"output_dir": RUN}))
        answers.append(await _call(client, *GOOD))

    stderr = _serve(site, session, env={"PYTHONPATH": str(hook)})
    _assert_one_line_error(answers[0], "internal error: RuntimeError: the verdict loader crashed (please report it)")
    _assert_still_serving(answers[1])
    assert "crashed" not in stderr, stderr
