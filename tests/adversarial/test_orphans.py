"""``kill -9`` and SIGTERM of ``review``, ``mcp`` and ``fleet run`` with real worker processes (issue 26 item 16).

Each test starts the installed ``fluxdrive`` in a new session over a tree
large enough to start the static analyzers' process pool, waits until the
workers exist (read from ``/proc/<pid>/task/*/children``), records every
descendant by pid and start time, and then kills the fluxdrive process by
its pid. After ``kill -9`` no recorded process may be alive 10 s later;
after SIGTERM fluxdrive must exit 130 within STOP_S with its interrupted
line last ("fluxdrive: interrupted", or for a review that synthesized what
finished, its warning saying so), no traceback, and leave no recorded
process either. Nothing is found or killed by name.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

FLUXDRIVE = Path(sys.executable).parent / "fluxdrive"
SPAWNED = "multiprocessing.spawn"
SETTLE_S = 10.0
# SIGTERM to exit: a review still synthesizes what finished (README, exit 130), an MCP server interrupts the
# review its tool runs first. Measured on this 2-core machine: ~1 s and ~2 s (before the fix: 14-18 s, and > 40 s).
# The bound tells the hang apart from a slow moment, not a speed: in CI, with the other worker running the Ray
# cluster, the MCP server's stop measured 0.3-3.4 s and once passed 5 s (its own wait for the review's wind-down
# is 5 s, fluxdrive.mcp.server.STOP_WAIT_S). The measured times are printed in the run's summary.
STOP_S = 9.0
INTERRUPTED = "fluxdrive: interrupted"
REVIEW_INTERRUPTED = "fluxdrive: warning: interrupted: the report covers the agents that finished"
_ORPHANS: dict[str, int] = {}
_STOPPED: dict[str, float] = {}  # seconds from SIGTERM to exit


def figures() -> list[str]:
    """The figure this module measured (printed by the adversarial conftest)."""
    lines = []
    if _ORPHANS:
        shown = ", ".join(f"{name} {count}" for name, count in _ORPHANS.items())
        lines.append(f"orphans after kill -9 of review, mcp, fleet run: {sum(_ORPHANS.values())} ({shown})")
    if _STOPPED:
        lines.append("SIGTERM to exit: " + ", ".join(f"{name} {s:.1f} s" for name, s in _STOPPED.items()))
    return lines


def _generate(root: Path, files: int = 60) -> Path:
    """A mid-size Python project (~22,000 lines): above the static runtime's threshold for its process pool."""
    package = root / "pkg"
    package.mkdir(parents=True)
    for i in range(files):
        body = [f'"""Module {i}."""', "import os", ""]
        for j in range(40):
            body += [f"def f{i}_{j}(x, y):", f"    if x > {j}:", "        return os.path.join(str(x), str(y))",
                     "    for k in range(y):", "        x += k * 2", "    while x > 100:", "        x -= 7",
                     "    return x", ""]  # fmt: skip
        (package / f"m{i}.py").write_text("\n".join(body) + "\n")
    return root


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _generate(tmp_path_factory.mktemp("orphans") / "template")


def _stat(pid: int) -> tuple[str, str] | None:
    """(state, start time) of ``pid``, or None when it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return fields[0], fields[19]


def _descendants(pid: int) -> dict[int, str]:
    """Every live descendant of ``pid``, with its start time (a reused pid is another process)."""
    found: dict[int, str] = {}
    todo = [pid]
    while todo:
        parent = todo.pop()
        for task in Path(f"/proc/{parent}/task").glob("*"):
            try:
                children = [int(c) for c in (task / "children").read_text().split()]
            except OSError:
                continue
            for child in children:
                stat = _stat(child)
                if stat is not None and child not in found:
                    found[child] = stat[1]
                    todo.append(child)
    return found


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def _alive(recorded: dict[int, str]) -> list[int]:
    """The recorded processes still running (zombies and reused pids do not count)."""
    alive = []
    for pid, started in recorded.items():
        stat = _stat(pid)
        if stat is not None and stat[0] != "Z" and stat[1] == started:
            alive.append(pid)
    return alive


def _start(argv: list[str], cwd: Path, log: Path, stdin: int | None = subprocess.DEVNULL) -> subprocess.Popen[bytes]:
    with log.open("wb") as stderr:
        return subprocess.Popen(
            [str(FLUXDRIVE), *argv],
            cwd=cwd,
            stdin=stdin,
            stdout=subprocess.DEVNULL,
            stderr=stderr,
            start_new_session=True,
        )


def _workers_up(process: subprocess.Popen[bytes], workers: int, timeout_s: float = 90) -> dict[int, str]:
    """Wait until ``process`` has ``workers`` spawn workers among its descendants; all its descendants then."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        found = _descendants(process.pid)
        if sum(SPAWNED in _cmdline(pid) for pid in found) >= workers:
            return found
        assert process.poll() is None, f"fluxdrive ended (status {process.returncode}) before its workers started"
        time.sleep(0.05)
    raise AssertionError(f"no {workers} workers within {timeout_s} s")


def _cleanup(recorded: dict[int, str]) -> None:
    for pid in _alive(recorded):  # only when the test already failed: leave the machine clean
        os.kill(pid, signal.SIGKILL)


def _kill_9(name: str, process: subprocess.Popen[bytes], workers: int) -> None:
    recorded = _workers_up(process, workers)
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    if process.stdin is not None:
        process.stdin.close()
    deadline = time.monotonic() + SETTLE_S
    while _alive(recorded) and time.monotonic() < deadline:
        time.sleep(0.1)
    left = _alive(recorded)
    _ORPHANS[name] = len(left)
    try:
        assert not left, [(pid, _cmdline(pid)[:100]) for pid in left]
    finally:
        _cleanup(recorded)


def _sigterm(
    name: str,
    process: subprocess.Popen[bytes],
    workers: int,
    log: Path,
    bound_s: float = SETTLE_S,
    last: str = INTERRUPTED,
) -> None:
    recorded = _workers_up(process, workers)
    os.kill(process.pid, signal.SIGTERM)
    sent = time.monotonic()
    try:
        status = process.wait(timeout=bound_s)
        _STOPPED[name] = time.monotonic() - sent
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        _cleanup(recorded)
        raise AssertionError(f"SIGTERM did not end fluxdrive within {bound_s} s") from None
    deadline = time.monotonic() + SETTLE_S
    while _alive(recorded) and time.monotonic() < deadline:
        time.sleep(0.1)
    left = _alive(recorded)
    _cleanup(recorded)
    stderr = log.read_text(errors="replace")
    assert status == 130, stderr[-2000:]
    assert stderr.strip().splitlines()[-1] == last, stderr[-2000:]
    assert "Traceback" not in stderr
    assert not left


def _project(tree: Path, where: Path) -> Path:
    return Path(shutil.copytree(tree, where))


def test_kill_9_of_a_review_leaves_no_worker(tree: Path, tmp_path: Path) -> None:
    project = _project(tree, tmp_path / "project")
    _kill_9("review", _start(["review", ".", "--yes"], project, tmp_path / "stderr"), workers=2)


def test_sigterm_of_a_review_exits_130_and_ends_its_workers(tree: Path, tmp_path: Path) -> None:
    project = _project(tree, tmp_path / "project")
    log = tmp_path / "stderr"
    _sigterm("review", _start(["review", ".", "--yes"], project, log), 2, log, STOP_S, REVIEW_INTERRUPTED)
    run = json.loads(next((project / "docs" / "research" / "flux-drive").glob("*/run.json")).read_text())
    assert run["interrupted"] is True, "the interrupted review still wrote its run.json"


def test_a_second_sigterm_stops_a_review_at_once(tree: Path, tmp_path: Path) -> None:
    """The first SIGTERM starts the orderly ending; a second one during it ends the process now: 130, no traceback.

    (Which of the two ends it depends on timing - the orderly ending takes ~0.5 s here - so the last line may be
    either; what must never happen is a traceback, another status, or a wait.)"""
    project = _project(tree, tmp_path / "project")
    log = tmp_path / "stderr"
    process = _start(["review", ".", "--yes"], project, log)
    recorded = _workers_up(process, 2)
    os.kill(process.pid, signal.SIGTERM)
    time.sleep(0.1)  # the first one handled (two pending signals of a kind are delivered as one)
    os.kill(process.pid, signal.SIGTERM)
    try:
        status = process.wait(timeout=STOP_S)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        deadline = time.monotonic() + SETTLE_S
        while _alive(recorded) and time.monotonic() < deadline:
            time.sleep(0.1)
        left = _alive(recorded)
        _cleanup(recorded)
    stderr = log.read_text(errors="replace")
    assert status == 130, stderr[-2000:]
    assert stderr.strip().splitlines()[-1] in (INTERRUPTED, REVIEW_INTERRUPTED), stderr[-2000:]
    assert "Traceback" not in stderr
    assert not left


def _mcp_review(tree: Path, tmp_path: Path) -> tuple[subprocess.Popen[bytes], Path]:
    """``fluxdrive mcp`` over stdio, asked to review the project (raw JSON-RPC lines: the call is never awaited)."""
    project = _project(tree, tmp_path / "project")
    log = tmp_path / "stderr"
    process = _start(["mcp"], project, log, stdin=subprocess.PIPE)
    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "review", "arguments": {"target": "."}}},
    ]  # fmt: skip
    assert process.stdin is not None
    process.stdin.write(b"".join(json.dumps(m).encode() + b"\n" for m in messages))
    process.stdin.flush()
    return process, log


def test_kill_9_of_the_mcp_server_mid_review_leaves_no_worker(tree: Path, tmp_path: Path) -> None:
    process, _ = _mcp_review(tree, tmp_path)
    _kill_9("mcp", process, workers=2)


def test_sigterm_of_the_mcp_server_mid_review_exits_130_and_ends_its_workers(tree: Path, tmp_path: Path) -> None:
    process, log = _mcp_review(tree, tmp_path)
    try:
        _sigterm("mcp", process, 2, log, STOP_S)  # stdin stays open, as the client waiting for the answer keeps it
    finally:
        assert process.stdin is not None
        process.stdin.close()


def _fleet(tree: Path, tmp_path: Path) -> tuple[subprocess.Popen[bytes], Path]:
    for name in ("a", "b"):
        _project(tree, tmp_path / name)
    (tmp_path / "repos.txt").write_text("a\nb\n")
    log = tmp_path / "stderr"
    argv = ["fleet", "run", "repos.txt", "--max-parallel", "2", "--output-root", str(tmp_path / "runs")]
    return _start(argv, tmp_path, log), log


def test_kill_9_of_fleet_run_leaves_no_worker_and_no_resource_tracker(tree: Path, tmp_path: Path) -> None:
    process, _ = _fleet(tree, tmp_path)
    _kill_9("fleet run", process, workers=2)  # two fleet workers (a pool worker starts no pool of its own)


def test_sigterm_of_fleet_run_exits_130_promptly_and_ends_every_review(tree: Path, tmp_path: Path) -> None:
    process, log = _fleet(tree, tmp_path)
    _sigterm("fleet run", process, 2, log)
