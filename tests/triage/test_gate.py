"""The approval gate: edits recompute the plan; the interactive path runs in a real pseudo-terminal."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import pexpect

from fluxdrive.config import Config
from fluxdrive.triage import Triage, triage_target
from fluxdrive.triage.gate import Decision, apply_command, run_gate
from fluxdrive.workspace import resolve_target

PROJECT = {
    "CLAUDE.md": "# Shop\nA small web shop.\n",
    "shop/db.py": "import sqlite3\n\ndef find(conn, name):\n    cur = conn.cursor()\n    for row in cur.execute('SELECT * FROM t'):\n        yield row  # transaction lock race\n",
    "shop/auth.py": "PASSWORD_HASH = 'x'\n\ndef login(token, password):\n    return token == password  # credential session\n",
    "shop/views.py": "def render(user):\n    return f'<p>{user}</p>'\n",
}


def _triage(root: Path):  # type: ignore[no-untyped-def]
    return triage_target(resolve_target(str(root)), Config())


def test_edits_recompute_the_plan(make_project) -> None:  # type: ignore[no-untyped-def]
    result = _triage(make_project(PROJECT, repository=True))
    stage1 = [a.name for a in result.in_stage(1)]
    assert len(stage1) >= 2
    demoted = stage1[0]

    def edit(command: str) -> Triage:
        reply = apply_command(result, command)
        assert reply.changed and reply.triage is not None, command
        return reply.triage

    before = [a.name for a in result.in_stage(1)]
    result = edit(f"demote {demoted}")
    assert demoted not in [a.name for a in result.in_stage(1)]
    result = edit("promote performance")
    assert "fd-performance" in [a.name for a in result.in_stage(1)], "names may omit fd-"
    result = edit("remove fd-safety")
    assert all(a.name != "fd-safety" for a in result.agents if a.stage is not None)
    result = edit("add fd-game-design 6")
    game = next(a for a in result.agents if a.name == "fd-game-design")
    assert game.final_score == 6 and game.stage == 1
    assert "unknown agent 'fd-nobody'" in apply_command(result, "promote fd-nobody").message
    assert "must be a number" in apply_command(result, "add fd-quality lots").message
    assert "unknown command" in apply_command(result, "dance").message
    assert apply_command(result, "approve").decision is Decision.APPROVED
    assert apply_command(result, "r").decision is Decision.REJECTED
    assert result.to_json()["gate"]["removed"] == ["fd-safety"]
    assert before == stage1, "an edit returns a new plan: the one it started from is unchanged"


def test_gate_loop_rejects_on_end_of_input(make_project) -> None:  # type: ignore[no-untyped-def]
    result = _triage(make_project(PROJECT, repository=True))
    answers = iter(["help", "demote fd-architecture"])
    written: list[str] = []

    def read(prompt: str) -> str:
        answer = next(answers, None)
        if answer is None:
            raise EOFError
        return answer

    decision, _edited = run_gate(result, read, written.append)
    assert decision is Decision.REJECTED
    assert sum(1 for w in written if w.startswith("## Triage")) == 2, "shown again after the edit"


def _fluxdrive() -> str:
    return str(Path(sys.executable).parent / "fluxdrive")


def test_interactive_gate_in_a_real_terminal(make_project, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    root = make_project(PROJECT, repository=True)
    out = tmp_path / "out"
    child = pexpect.spawn(
        _fluxdrive(),
        ["triage", str(root), "--output-dir", str(out)],
        encoding="utf-8",
        timeout=60,
        dimensions=(50, 200),
    )
    child.expect("## Triage: project")
    child.expect("approve / reject")
    child.sendline("demote fd-architecture")
    child.expect("demoted fd-architecture")
    child.expect("## Triage: project")
    child.expect("approve / reject")
    child.sendline("approve")
    child.expect("Written: ")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    data = json.loads((out / "triage.json").read_text())
    assert data["gate"]["demoted"] == ["fd-architecture"]
    assert "fd-architecture" not in data["stages"]["1"]


def test_reject_in_a_real_terminal(make_project, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    root = make_project(PROJECT, repository=True)
    child = pexpect.spawn(
        _fluxdrive(), ["triage", str(root), "--output-dir", str(tmp_path / "out")], encoding="utf-8", timeout=60
    )
    child.expect("approve / reject")
    child.sendline("reject")
    child.expect("nothing was dispatched")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0


def test_no_terminal_and_no_yes_stops_with_a_clear_message(make_project) -> None:  # type: ignore[no-untyped-def]
    root = make_project(PROJECT, repository=True)
    proc = subprocess.run(
        [_fluxdrive(), "triage", str(root)],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 2
    assert proc.stderr == (
        "fluxdrive: error: the triage needs approval, and there is no terminal to ask in "
        "(hint: run it in a terminal, or pass --yes to approve the plan as computed)\n"
    )


def test_a_promotion_says_what_it_pushed_out_and_the_table_is_aligned(make_project) -> None:  # type: ignore[no-untyped-def]
    from fluxdrive.triage.engine import render_table
    from fluxdrive.triage.gate import aligned

    result = _triage(make_project(PROJECT, repository=True))
    result = result.with_overrides(dataclasses.replace(result.overrides, promoted=frozenset()))
    before = {a.name for a in result.in_stage(1)}
    outside = next(a.name for a in result.agents if a.stage == 2 or a.stage == "pool")
    reply = apply_command(result, f"promote {outside}")
    assert reply.triage is not None
    result = reply.triage
    after = {a.name for a in result.in_stage(1)}
    pushed = sorted(before - after - {outside})
    assert pushed, "Stage 1 was full: promoting one agent pushes another out"
    assert reply.message == f"promoted {outside}; {', '.join(pushed)} moved out of Stage 1 to make room"
    assert apply_command(result, f"demote {outside}").message.startswith(f"demoted {outside}")
    shown = aligned(render_table(result), width=100)
    assert "|---" not in shown and "| Agent |" not in shown
    rows = [line for line in shown.splitlines() if line.startswith("fd-")]
    assert rows and all(len(line) <= 100 for line in rows)
    assert len({line.index("  ") for line in rows}) >= 1
