"""Hostile agents and processes: a regex that never ends, kill -9, SIGTERM, escapees, crashes and garbage.

Every test runs a real ``fluxdrive`` process. Models are the wire-level
fake provider; coding-assistant CLIs are small real executables that hang,
spawn children, ``setsid`` a grandchild that rewrites a report later, print
text and segfault, or print random bytes. Processes are found and ended by
pid (their own records, /proc), never by name.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp_types import LATEST_PROTOCOL_VERSION

from tests.adversarial._support import review_dir
from tests.conftest import REPO, committed_copy, run_fluxdrive, user_config_file
from tests.fakes.llm_server import FakeProvider, Text, ToolCall

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "projects" / "py-webapp"
FLUXDRIVE = [sys.executable, "-m", "fluxdrive"]
CLEAN = "### Findings Index\nVerdict: safe\n\n### Summary\nNothing in my lane.\n"
RISKY = '### Findings Index\n- P0 | SF-001 | "x" | planted by a late writer | shop/db.py:1\nVerdict: risky\n'


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return committed_copy(FIXTURE, tmp_path / "shop")


def _alive(pid: int) -> bool:
    """A live (not zombie) process."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def _group(pgid: int) -> list[int]:
    """Live processes whose process group is ``pgid``."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[2]) == pgid and fields[0] != "Z":
                found.append(int(entry))
    return found


def _kill(pids: list[int]) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def _until(condition: object, within_s: float) -> bool:
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        if condition():  # type: ignore[operator]
            return True
        time.sleep(0.1)
    return bool(condition())  # type: ignore[operator]


def _start(args: list[str], cwd: Path, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    """``fluxdrive ARGS`` in its own session (its group id is its pid), output to files."""
    log = cwd.parent / f"fluxdrive-{time.monotonic_ns()}.log"
    handle = log.open("w")
    process = subprocess.Popen(
        [*FLUXDRIVE, *args], cwd=cwd, stdout=handle, stderr=subprocess.STDOUT, text=True,
        start_new_session=True, env={**os.environ, **(env or {}), "PYTHONPATH": str(REPO)},
    )  # fmt: skip
    handle.close()
    process.log = log  # type: ignore[attr-defined]
    return process


# --------------------------------------------------------------------------
# a model's regular expression that backtracks forever


def test_a_redos_grep_is_cut_off_and_the_run_finishes(project: Path, provider: FakeProvider) -> None:
    (project / "shop" / "payload.txt").write_text("a" * 48 + "!\n")
    provider.script(
        "Review task for fd-safety",
        [
            ToolCall("grep", {"pattern": "(a+)+$", "glob": "**/*.txt"}),  # the pattern
            ToolCall("grep", {"pattern": "(a|aa)+$", "glob": "**/*.txt"}),  # exponential in any backtracking engine
            Text(CLEAN),
        ],
    )
    done = run_fluxdrive(
        "review", ".", "--yes", "--set", "evidence.enabled=false", "--runtime", "llm", "--model", "openai:gpt-4o", "--agents", "safety",
        "--set", "llm.tool_timeout_s=1", "--timeout", "60", cwd=project,
    )  # fmt: skip
    assert done.code == 0, done.err
    first, second = provider.tool_results("Review task for fd-safety")
    assert first == "no matches"
    assert "grep stopped" in second and "nested quantifiers" in second
    assert not (review_dir(project) / ".fluxdrive.lock").exists()


def test_no_tool_outlasts_the_agent_deadline(project: Path, provider: FakeProvider) -> None:
    """The grep's own limit is an hour here: the agent's deadline (3 s) must still end it."""
    (project / "shop" / "payload.txt").write_text("a" * 48 + "!\n")
    provider.script("Review task for fd-safety", [ToolCall("grep", {"pattern": "(a|aa)+$"}), Text(CLEAN)])
    done = run_fluxdrive(
        "review", ".", "--yes", "--runtime", "llm", "--model", "openai:gpt-4o", "--agents", "safety",
        "--set", "llm.tool_timeout_s=3600", "--timeout", "3", cwd=project,
    )  # fmt: skip
    assert done.code == 3, done.err  # its only agent timed out: no verdict (the run itself ended)
    run = json.loads((review_dir(project) / "run.json").read_text())
    assert run["agents"]["fd-safety"]["outcome"] == "timeout"
    assert "INCOMPLETE" in done.out
    assert not (review_dir(project) / ".fluxdrive.lock").exists()


# --------------------------------------------------------------------------
# kill -9 of the review: its workers go with it


def _big_tree(root: Path) -> None:
    """About 30,000 lines of Python: enough for the static analyzers to fan out to worker processes."""
    body = "".join(
        f"def handler_{i}(request, db):\n    value = request.args.get('q{i}')\n"
        f"    return db.execute('SELECT * FROM t WHERE c = ' + value)\n\n"
        for i in range(150)
    )
    for n in range(50):
        (root / "pkg" / f"mod{n}.py").parent.mkdir(parents=True, exist_ok=True)
        (root / "pkg" / f"mod{n}.py").write_text(body)


def _kill_9_once_workers_run(process: subprocess.Popen[Any]) -> None:
    """Wait for the analyzers' worker processes (members of the process's group besides itself), kill -9 the
    process alone, and require every other member of its group to be gone 5 s later."""
    try:
        assert _until(lambda: len(_group(process.pid)) >= 3, 60), "the review never started its workers"
        members = _group(process.pid)
        os.kill(process.pid, signal.SIGKILL)
        process.wait()
        left = [p for p in members if p != process.pid]
        assert _until(lambda: not any(_alive(p) for p in left), 5), f"orphans after 5 s: {left}"
    finally:
        _kill(_group(process.pid))


def test_kill_9_of_a_review_leaves_no_worker_behind(project: Path) -> None:
    _big_tree(project)
    _kill_9_once_workers_run(_start(["review", ".", "--yes", "--fail-on", "never"], project))


def test_kill_9_of_the_mcp_server_mid_review_leaves_no_worker_behind(project: Path) -> None:
    """The server runs reviews in a worker thread; their analyzer processes must still die with it."""
    _big_tree(project)
    server = subprocess.Popen(
        [*FLUXDRIVE, "mcp", "--root", str(project)], cwd=project, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL, start_new_session=True, env={**os.environ, "PYTHONPATH": str(REPO)},
    )  # fmt: skip
    assert server.stdin is not None
    try:
        for message in (
            {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": LATEST_PROTOCOL_VERSION, "capabilities": {},
                "clientInfo": {"name": "kill-test", "version": "0"}}},
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "review", "arguments": {}}},
        ):  # fmt: skip
            server.stdin.write((json.dumps(message) + "\n").encode())
            server.stdin.flush()
        _kill_9_once_workers_run(server)
    finally:
        server.stdin.close()


# --------------------------------------------------------------------------
# coding-assistant CLIs that misbehave (stand-ins: real executables)

HANGER = """
import os, subprocess, sys, time
from pathlib import Path
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
Path(os.environ["PIDS"], f"{os.getpid()}").write_text(f"{os.getpid()} {child.pid}")
sys.stdin.read()
time.sleep(600)
"""

LATE_WRITER = """
import os, subprocess, sys
from pathlib import Path
sys.stdin.read()
report_dir = Path(os.environ["OUT"])
late = (
    "import time\\n"
    "from pathlib import Path\\n"
    "time.sleep(3)\\n"
    f"Path({str(report_dir / 'fd-safety.md')!r}).write_text({os.environ['RISKY']!r})\\n"
)
child = subprocess.Popen([sys.executable, "-c", late], start_new_session=True,
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
# the agent records the grandchild's pid itself, before it answers: the grandchild may be ended
# before its own interpreter has started, and the test must still know whom to watch
Path(os.environ["PIDS"], "grandchild").write_text(str(child.pid))
sys.stdout.write(os.environ["CLEAN"])
"""

SEGFAULT = """
import os, signal, sys
sys.stdin.read()
sys.stdout.write("Reviewed everything, looks fine. Verdict: safe\\n")
sys.stdout.flush()
os.kill(os.getpid(), signal.SIGSEGV)
"""

GARBAGE = """
import os, sys
sys.stdin.read()
sys.stdout.buffer.write(os.urandom(3000).replace(b"\\x00", b"x"))
"""


def _command_agent(tmp_path: Path, project: Path, name: str, script: str) -> Path:
    """A stand-in CLI running ``script``, configured as the command agent; returns the config file."""
    tool = tmp_path / "bin" / name
    tool.parent.mkdir(exist_ok=True)
    tool.write_text(f"#!{sys.executable}\n{script}")
    tool.chmod(0o755)
    config = user_config_file()
    config.write_text(f'[cli_agent]\ntool = "command"\ncommand = "{tool}"\n')
    return config


def _pids(directory: Path) -> list[int]:
    return [int(p) for f in directory.glob("*") for p in f.read_text().split()]


@pytest.fixture
def hanging_review(project: Path, tmp_path: Path) -> Iterator[tuple[subprocess.Popen[str], Path]]:
    """A review whose CLI agents hang (each with a child); their pids land in the yielded directory.

    Whatever the test does, every process it recorded and the review itself are ended by pid afterwards.
    """
    _command_agent(tmp_path, project, "hanger", HANGER)
    pids = tmp_path / "pids"
    pids.mkdir()
    review = _start(["review", ".", "--yes", "--runtime", "cli-agent"], project, {"PIDS": str(pids)})
    try:
        yield review, pids
    finally:
        _kill(_pids(pids))
        if review.poll() is None:
            review.kill()
        review.wait()


def test_kill_9_of_a_review_ends_its_cli_agents_and_their_children(
    hanging_review: tuple[subprocess.Popen[str], Path],
) -> None:
    review, pids = hanging_review
    assert _until(lambda: len(list(pids.glob("*"))) >= 1, 60), "no CLI agent started"
    time.sleep(0.5)
    os.kill(review.pid, signal.SIGKILL)
    review.wait()
    started = _pids(pids)
    assert _until(lambda: not any(_alive(p) for p in started), 5), f"orphans after 5 s: {started}"


def test_sigterm_ends_a_review_like_ctrl_c(project: Path, hanging_review: tuple[subprocess.Popen[str], Path]) -> None:
    review, pids = hanging_review
    assert _until(lambda: len(list(pids.glob("*"))) >= 2, 60), "the CLI agents did not start"
    os.kill(review.pid, signal.SIGTERM)
    assert review.wait(60) == 130
    out = review_dir(project)
    run = json.loads((out / "run.json").read_text())
    launched = [a for s in run["stages"] if s.get("launched", True) for a in s["agents"]]
    assert launched and all((out / f"{a}.md").is_file() for a in launched), "every launched agent has a report"
    assert all(run["agents"][a]["outcome"] == "cancelled" for a in launched), run["agents"]
    assert (out / "findings.json").is_file(), "what finished was synthesized"
    assert json.loads((out / "findings.json").read_text())["complete"] is False
    assert not (out / ".fluxdrive.lock").exists(), "the lock was released"
    started = _pids(pids)
    assert _until(lambda: not any(_alive(p) for p in started), 5), f"left running: {started}"


def test_a_setsid_grandchild_cannot_rewrite_a_finished_report(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _command_agent(tmp_path, project, "late", LATE_WRITER)
    pids = tmp_path / "pids"
    pids.mkdir()
    out = tmp_path / "out"
    monkeypatch.setenv("PIDS", str(pids))
    monkeypatch.setenv("OUT", str(out))
    monkeypatch.setenv("CLEAN", CLEAN)
    monkeypatch.setenv("RISKY", RISKY)
    done = run_fluxdrive(
        "review", ".", "--yes", "--set", "evidence.enabled=false", "--runtime", "cli-agent", "--agents", "safety",
        "--output-dir", out, cwd=project,
    )  # fmt: skip
    assert done.code == 0 and done.out.startswith("Verdict: SAFE"), done.err
    grandchild = int((pids / "grandchild").read_text())
    assert _until(lambda: not _alive(grandchild), 5), "the escaped grandchild outlived its agent's run"
    time.sleep(3.5)  # past the moment it would have written
    assert "late writer" not in (out / "fd-safety.md").read_text()

    # a late writer that gets through anyway cannot change the verdict of the finished run
    (out / "fd-safety.md").write_text(RISKY)
    again = run_fluxdrive("synthesize", out, cwd=project)
    assert again.code == 0 and again.out.startswith("Verdict: SAFE"), again.out + again.err
    assert "changed after the agent finished" in again.err


@pytest.mark.parametrize("script", [SEGFAULT, GARBAGE], ids=["text-then-segfault", "random-bytes"])
def test_a_crashed_or_garbage_cli_agent_is_never_a_silent_safe(project: Path, tmp_path: Path, script: str) -> None:
    """fd-safety is the broken CLI, fd-quality the static analyzers: the one that worked must not pass for all."""
    config = _command_agent(tmp_path, project, "broken", script)
    with config.open("a") as handle:
        handle.write('\n[agents.fd-quality]\nruntime = "static"\n')
    args = ["review", "shop/db.py", "--yes", "--set", "evidence.enabled=false", "--runtime", "cli-agent"]
    args += ["--agents", "safety,quality"]
    done = run_fluxdrive(*args, cwd=project)
    assert done.code == 1, done.out + done.err
    assert "INCOMPLETE" in done.out.splitlines()[0] and "fd-safety" in done.out.splitlines()[2]
    findings = json.loads((review_dir(project) / "findings.json").read_text())
    assert findings["complete"] is False and any("fd-safety" in r for r in findings["incomplete_reasons"])
    allowed = run_fluxdrive(*args, "--allow-incomplete", cwd=project)
    assert allowed.code == 0 and "INCOMPLETE" in allowed.out


def test_a_prose_only_model_answer_is_never_a_silent_safe(project: Path, provider: FakeProvider) -> None:
    provider.set_default(Text("I looked at the code and it seems fine to me overall."))
    done = run_fluxdrive(
        "review", "shop/db.py", "--yes", "--runtime", "llm", "--model", "openai:gpt-4o", "--agents", "safety",
        cwd=project,
    )  # fmt: skip
    assert done.code == 1, done.out + done.err
    assert "INCOMPLETE" in done.out and "could not be read" in done.out
    assert json.loads((review_dir(project) / "findings.json").read_text())["complete"] is False
