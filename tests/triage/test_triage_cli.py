"""``fluxdrive triage`` as a person or a script runs it: a real subprocess each time."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from fluxdrive.workspace import claim_output_dir, run_lock
from tests.conftest import hold_lock, run_fluxdrive
from tests.triage.conftest import git

Make = Callable[..., Path]

PROJECT = {
    "CLAUDE.md": "# Shop\n\nFastAPI service.\n",
    "pyproject.toml": '[project]\nname = "shop"\ndependencies = ["fastapi", "sqlalchemy"]\n',
    "api/orders.py": (
        "from fastapi import APIRouter\n\nrouter = APIRouter()\n\n\n"
        "@router.get('/orders/{order_id}')\ndef read(order_id: int):\n    return {'id': order_id}\n"
    ),
    "handlers/auth.py": "def check(token: str) -> bool:\n    return token.startswith('Bearer ')\n",
    "middleware/timing.py": (
        "async def timing(request, call_next):\n"
        '    """Middleware: time every REST endpoint handler and put it on the response."""\n'
        "    response = await call_next(request)\n    return response\n"
    ),
    "openapi.json": '{"openapi": "3.1.0", "paths": {}}\n',
    "docs/plan.md": "# Plan\n\n## Auth\n\nTokens expire after an hour.\n",
}


def test_json_output_has_the_whole_plan(make_project: Make) -> None:
    staged = {**PROJECT, ".fluxdrive/config.toml": '[selection]\nstaging = "always"\n'}  # the protocol's two stages
    root = make_project(staged, repository=True)
    done = run_fluxdrive("triage", ".", "--yes", "--json", cwd=root)
    assert done.code == 0, done.err
    plan = json.loads(done.out)
    assert set(plan) == {
        "schema_version", "input", "domains", "domain_source", "ceiling", "staging", "stages", "agents", "gate",
        "notes",
    }  # fmt: skip
    assert plan["input"]["kind"] == "directory"
    assert plan["domains"][0] == {"profile": "web-api", "confidence": plan["domains"][0]["confidence"], "primary": True}
    assert plan["ceiling"] == {
        "base": 4,
        "scope": 3,
        "domains": min(len(plan["domains"]), 2),
        "total": 7 + min(len(plan["domains"]), 2),
    }
    assert [(-a["final_score"], a["name"]) for a in plan["agents"]] == sorted(
        (-a["final_score"], a["name"]) for a in plan["agents"]
    ), "agents sorted by final score, then name"
    stage1 = plan["stages"]["1"]
    assert 2 <= len(stage1) <= 5 and plan["stages"]["2"], "two stages"
    scores = {a["name"]: a for a in plan["agents"]}
    for name in stage1:
        assert scores[name]["stage"] == 1 and scores[name]["final_score"] > 0
    assert all(a["final_score"] == 0 for a in plan["agents"] if a["base_score"] == 0), (
        "base 0 is never lifted by bonuses"
    )
    out = next((root / "docs" / "research" / "flux-drive").glob("[!.]*/"))  # the run links, not .fluxdrive-runs
    assert sorted(p.name for p in out.iterdir()) == [
        ".fluxdrive-run",
        "input-profile.json",
        "triage-table.md",
        "triage.json",
    ]
    assert (out / "triage-table.md").read_text().startswith("## Triage: ")


def test_table_output_and_written_files(make_project: Make, tmp_path: Path) -> None:
    root = make_project(PROJECT, repository=True)
    done = run_fluxdrive("triage", "docs/plan.md", "--yes", "--output-dir", tmp_path / "out", cwd=root)
    assert done.code == 0, done.err
    lines = done.out.splitlines()
    assert lines[0] == "## Triage: plan.md"
    assert "| Agent | Base | Domain | Project | Domain agent | Trust | Score | Stage | Rationale |" in lines
    assert (
        "| fd-safety | 3 | +2 | +1 | +0 | 1.00 | 6 | 1 | base 3 (60% of the input: auth); evidence in 1 unit(s): auth;"
        " +2 web-api criteria; +1 project docs |"
    ) in lines
    assert (
        "- Staging: none, every candidate runs in Stage 1 (offline, no tokens: all 12 reviewers run, whatever they"
        " scored)"
    ) in lines
    assert done.out.rstrip().endswith(f"Written: {tmp_path / 'out'}/triage.json, triage-table.md, input-profile.json")
    assert json.loads((tmp_path / "out" / "triage.json").read_text())["input"]["kind"] == "document"


def test_diff_on_stdin_and_from_git(make_project: Make) -> None:
    root = make_project(PROJECT, repository=True)
    (root / "handlers" / "auth.py").write_text(
        "def check(token: str) -> bool:\n    return token.startswith('Bearer ') and len(token) > 7\n"
    )
    diff = git(root, "diff")
    piped = run_fluxdrive("triage", "-", "--yes", "--json", cwd=root, input=diff)
    from_git = run_fluxdrive("triage", "--diff", "HEAD", "--yes", "--json", cwd=root)
    assert piped.code == 0 and from_git.code == 0, piped.err + from_git.err
    a, b = json.loads(piped.out), json.loads(from_git.out)
    assert a["input"]["kind"] == b["input"]["kind"] == "diff"
    assert a["input"]["diff"]["added"] == b["input"]["diff"]["added"] == 1
    assert a["agents"] == b["agents"], "the same diff scores the same, however it arrives"
    safety = next(x for x in a["agents"] if x["name"] == "fd-safety")
    assert safety["base_score"] == 3 and "token" in safety["rationale"]


@pytest.mark.parametrize(("args", "stdin"), [(["-"], ""), (["--diff", "HEAD"], None)])
def test_an_empty_diff_is_nothing_to_review_and_exit_0(make_project: Make, args: list[str], stdin: str | None) -> None:
    root = make_project(PROJECT, repository=True)
    done = run_fluxdrive("triage", *args, "--yes", cwd=root, input=stdin)
    assert done.code == 0, done
    assert done.err.startswith("fluxdrive: nothing to review: ") and done.err.count("\n") == 1, done.err
    assert done.out == ""


@pytest.mark.parametrize(
    ("args", "stdin", "message"),
    [
        (["nope.md"], None, "input not found: nope.md (hint: check the path)"),
        (["logo.png"], None, "logo.png"),
        (["empty.md"], None, "empty.md"),
        (["-"], "just some words\n", "stdin is not a unified diff"),
        (["--diff", "no-such-ref"], None, "unknown git ref 'no-such-ref'"),
        (["docs/plan.md", "--diff", "HEAD"], None, "do not also pass a TARGET"),
        ([], None, "no TARGET given"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(make_project: Make, args: list[str], stdin: str | None, message: str) -> None:
    root = make_project({**PROJECT, "logo.png": b"\x89PNG\r\n\x1a\n\x00\x00\x00", "empty.md": ""}, repository=True)
    done = run_fluxdrive("triage", *args, "--yes", cwd=root, input=stdin)
    assert done.code == 2, done
    assert done.err.startswith("fluxdrive: error: ") and done.err.count("\n") == 1, done.err
    assert message in done.err and "Traceback" not in done.err
    assert done.out == ""


def test_broken_domain_cache_is_a_note_not_a_failure(make_project: Make) -> None:
    root = make_project(PROJECT, repository=True)
    (root / ".fluxdrive").mkdir()
    (root / ".fluxdrive" / "domains.yaml").write_text("domains: [unclosed\n")
    done = run_fluxdrive("triage", ".", "--yes", "--json", cwd=root)
    assert done.code == 0, done.err
    assert "domains.yaml" in done.err and "detected again" in done.err
    assert json.loads(done.out)["domain_source"] == "detected"


def test_a_live_run_holds_the_output_directory(make_project: Make, tmp_path: Path) -> None:
    root = make_project(PROJECT, repository=True)
    out = tmp_path / "out"
    with run_lock(claim_output_dir(out)):  # an earlier run: out is now the link fluxdrive swings to each run
        pass
    with hold_lock(out) as holder:
        busy = run_fluxdrive("triage", ".", "--yes", "--output-dir", out, cwd=root)
        assert busy.code == 2 and f"is in use by another fluxdrive run (pid {holder.pid}" in busy.err
    again = run_fluxdrive("triage", ".", "--yes", "--output-dir", out, cwd=root)
    assert again.code == 0, again.err
    assert not (out / ".fluxdrive.lock").exists()
    assert os.path.exists(out / "triage.json")


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any file, so permission denied cannot happen")
def test_permission_denied(make_project: Make) -> None:
    root = make_project(PROJECT, repository=True)
    secret = root / "docs" / "locked.md"
    secret.write_text("# Locked\n")
    secret.chmod(0)
    done = run_fluxdrive("triage", "docs/locked.md", "--yes", cwd=root)
    assert done.code == 2 and done.err == (
        "fluxdrive: error: input is not readable: docs/locked.md (hint: check its permissions)\n"
    )
