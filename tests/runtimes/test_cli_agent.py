"""The cli-agent runtime with real subprocesses: small Python scripts stand in for claude, codex and commands.

Each stand-in is an executable file with a ``#!<this python>`` shebang, run
through the guard exactly as the dispatcher runs an agent. What is real: the
process group, signals, pipes, exit statuses, the completion contract and the
verdict record. What is faked: only the model behind the CLI.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from fluxdrive.agents import load_roster
from fluxdrive.config import Config
from fluxdrive.contracts import OutputStatus, classify_output
from fluxdrive.errors import UsageError
from fluxdrive.runtimes import AgentResult, AgentTask, Outcome, Provenance, ReviewContent, run_guarded
from fluxdrive.runtimes.cli_agent import CliAgentRuntime, model_family, parse_claude, parse_codex

REPORT = '### Findings Index\n- P1 | SF-001 | "x" | y | a.py:1\nVerdict: needs-changes\n'
CLAUDE_RESULT = {
    "type": "result",
    "result": REPORT,
    "usage": {"input_tokens": 120, "output_tokens": 40},
    "total_cost_usd": 0.0012,
    "model": "claude-sonnet-4-5",
}

# Records what it was given next to itself, then answers like `claude -p --output-format json`.
FAKE_CLAUDE = """
import json, os, sys
from pathlib import Path
here = Path(__file__).parent
(here / "stdin.txt").write_text(sys.stdin.read())
seen = {"argv": sys.argv[1:], "cwd": os.getcwd(), "CLAUDECODE": os.environ.get("CLAUDECODE")}
(here / "seen.json").write_text(json.dumps(seen))
print(json.dumps(json.loads((here / "answer.json").read_text())))
"""

# `mytool --prompt-file F --out O --agent A --root R`: writes the report to O, chatters on stdout.
FAKE_COMMAND = """
import json, sys
from pathlib import Path
args = dict(zip(sys.argv[1::2], sys.argv[2::2]))
(Path(__file__).parent / "seen.json").write_text(json.dumps({"args": args, "stdin": sys.stdin.read()}))
prompt = Path(args["--prompt-file"]).read_text()
Path(args["--out"]).write_text(REPORT)
print("progress: thinking about", len(prompt), "characters")
"""

# Starts a grandchild that sleeps, records both pids, then hangs (optionally deaf to SIGTERM).
FAKE_HANG = """
import os, signal, subprocess, sys, time
from pathlib import Path
if "--ignore-term" in sys.argv:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
child = subprocess.Popen([sys.executable, "-c", "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN) "
                          "if %r else None; time.sleep(300)" % ("--ignore-term" in sys.argv)])
pids = Path(__file__).parent / "pids"
pids.with_suffix(".tmp").write_text(f"{os.getpid()} {child.pid}")
pids.with_suffix(".tmp").rename(pids)
time.sleep(300)
"""

# Prints its report, leaves a grandchild holding stdout open, and exits 0.
FAKE_LINGER = """
import os, subprocess, sys
from pathlib import Path
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"])
(Path(__file__).parent / "pids").write_text(f"{os.getpid()} {child.pid}")
sys.stdout.write(REPORT)
sys.stdout.flush()
"""

FAKE_FAIL = """
import sys
sys.stdin.read()
sys.stderr.write("Checking login...\\nError: Invalid API key - Please run /login\\n")
sys.exit(1)
"""

FAKE_GARBAGE = """
import sys
sys.stdin.read()
print("I looked at the code and it seems mostly fine, probably.")
"""

# Answers like `codex exec --json -o FILE -`: JSONL events on stdout, the final message in FILE.
FAKE_CODEX = """
import json, sys
from pathlib import Path
here = Path(__file__).parent
(here / "stdin.txt").write_text(sys.stdin.read())
(here / "seen.json").write_text(json.dumps({"argv": sys.argv[1:]}))
out = sys.argv[sys.argv.index("--output-last-message") + 1]
Path(out).write_text(REPORT)
for event in [
    {"type": "thread.started", "thread_id": "t1"},
    {"type": "turn.started"},
    {"type": "item.completed", "item": {"id": "item_0", "type": "agent_message", "text": "(shorter copy)"}},
    {"type": "turn.completed", "usage": {"input_tokens": 300, "cached_input_tokens": 100, "output_tokens": 25}},
]:
    print(json.dumps(event))
"""


def _tool(directory: Path, name: str, body: str) -> Path:
    """An executable stand-in: ``#!<this python>`` plus ``body``, with REPORT defined."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    path.write_text(f"#!{sys.executable}\nREPORT = {REPORT!r}\n" + textwrap.dedent(body))
    path.chmod(0o755)
    return path


def _task(tmp_path: Path, cli_agent: dict[str, Any], *, deadline: float | None = 30.0) -> AgentTask:
    root = tmp_path / "my project"  # a space: arguments must survive as one word each
    root.mkdir(exist_ok=True)
    (root / "a.py").write_text("import os\nos.system(input())\n")
    output = tmp_path / "out"
    output.mkdir(exist_ok=True)
    return AgentTask(
        load_roster(root).get("fd-safety"),
        "Review a.py for safety problems.",
        ReviewContent(root, ("a.py",)),
        output,
        output / "peer-findings.jsonl",
        Config.model_validate({"cli_agent": cli_agent}),
        deadline,
    )


def _run(task: AgentTask, runtime: CliAgentRuntime | None = None) -> AgentResult:
    return asyncio.run(run_guarded(runtime or CliAgentRuntime(), task))


def _seen(tool: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((tool.parent / "seen.json").read_text())
    return data


def _gone(pid: int) -> bool:
    if Path("/proc").is_dir():
        return not Path(f"/proc/{pid}").exists()
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def _eventually_gone(pid: int, within_s: float = 10.0) -> bool:
    """Orphaned grandchildren are reaped by init, a moment after they die."""
    deadline = time.monotonic() + within_s
    while not _gone(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def _pids(tool: Path) -> tuple[int, int]:
    leader, grandchild = (tool.parent / "pids").read_text().split()
    return int(leader), int(grandchild)


# --- claude ----------------------------------------------------------------


def test_claude_report_usage_and_provenance(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLAUDECODE", "1")
    tool = _tool(tmp_path / "bin", "claude", FAKE_CLAUDE)
    (tool.parent / "answer.json").write_text(json.dumps(CLAUDE_RESULT))
    task = _task(tmp_path, {"tool": "claude", "executable": str(tool)})

    result = _run(task)

    assert result.outcome is Outcome.COMPLETED, result.error
    classified = classify_output(result.output_path)
    assert classified.status is OutputStatus.VALID and classified.has_sentinel
    assert [(e.severity, e.id, e.location) for e in classified.index.entries] == [("P1", "SF-001", "a.py:1")]
    assert classified.verdict == "needs-changes"
    assert result.provenance == Provenance("claude-code", "claude", "claude-sonnet-4-5")
    assert (result.usage.tokens_in, result.usage.tokens_out, result.usage.cost_usd) == (120, 40, 0.0012)
    assert result.usage.wall_s > 0
    assert not (task.output_dir / "fd-safety.md.partial").exists()
    assert (task.output_dir / "verdicts" / "fd-safety.json").is_file()


def test_claude_gets_the_prompt_on_stdin_read_only_in_the_project_root(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CLAUDECODE", "1")
    tool = _tool(tmp_path / "bin", "claude", FAKE_CLAUDE)
    (tool.parent / "answer.json").write_text(json.dumps(CLAUDE_RESULT))
    task = _task(tmp_path, {"tool": "claude", "executable": str(tool)})

    _run(task)

    stdin = (tool.parent / "stdin.txt").read_text()
    assert stdin.startswith(task.prompt) and "return the report as your final message" in stdin.lower()
    assert (task.output_dir / "prompts-cli" / "fd-safety.txt").read_text() == stdin
    seen = _seen(tool)
    assert seen["argv"] == [
        "-p",
        "--output-format",
        "json",
        "--allowedTools",
        "Read,Grep,Glob",
        "--permission-mode",
        "default",
        "--add-dir",  # OUTPUT_DIR is outside the project here: the agent may still read its content there
        str(task.output_dir.resolve()),
    ]
    assert Path(seen["cwd"]) == task.content.root.resolve()
    assert seen["CLAUDECODE"] is None


def test_claude_garbage_is_written_and_classified_malformed(tmp_path: Path) -> None:
    tool = _tool(tmp_path / "bin", "claude", FAKE_GARBAGE)
    result = _run(_task(tmp_path, {"tool": "claude", "executable": str(tool)}))

    assert result.outcome is Outcome.COMPLETED
    classified = classify_output(result.output_path)
    assert classified.status is OutputStatus.MALFORMED
    assert "seems mostly fine" in result.output_path.read_text()
    assert any("not the JSON result" in note for note in result.notes)
    assert result.provenance == Provenance("claude-code", "claude", "claude")


def test_non_zero_exit_becomes_an_error_stub_with_the_last_stderr_line(tmp_path: Path) -> None:
    tool = _tool(tmp_path / "bin", "claude", FAKE_FAIL)
    task = _task(tmp_path, {"tool": "claude", "executable": str(tool)})

    result = _run(task)

    assert result.outcome is Outcome.ERROR
    assert result.error is not None and "Error: Invalid API key - Please run /login" in result.error
    assert "exited with status 1" in result.error
    classified = classify_output(result.output_path)
    assert classified.status is OutputStatus.ERROR and "Invalid API key" in classified.reason
    assert json.loads((task.output_dir / "verdicts" / "fd-safety.json").read_text())["status"] == "ERROR"


def test_claude_error_result_is_an_error_even_with_text(tmp_path: Path) -> None:
    tool = _tool(tmp_path / "bin", "claude", FAKE_CLAUDE)
    answer = {"type": "result", "subtype": "success", "is_error": True, "result": "Credit balance is too low"}
    (tool.parent / "answer.json").write_text(json.dumps(answer))

    result = _run(_task(tmp_path, {"tool": "claude", "executable": str(tool)}))

    assert result.outcome is Outcome.ERROR
    assert result.error == "CliAgentError: claude reported an error: Credit balance is too low"


# --- codex and command templates -------------------------------------------


def test_codex_reads_the_last_message_file_and_usage_events(tmp_path: Path) -> None:
    tool = _tool(tmp_path / "bin", "codex", FAKE_CODEX)
    task = _task(tmp_path, {"tool": "codex", "executable": str(tool)})

    result = _run(task)

    assert result.outcome is Outcome.COMPLETED, result.error
    assert classify_output(result.output_path).status is OutputStatus.VALID
    assert "(shorter copy)" not in result.output_path.read_text()
    reply = task.output_dir / "prompts-cli" / "fd-safety.reply.md"
    assert _seen(tool)["argv"] == [
        "exec",
        "--skip-git-repo-check",
        "--sandbox",
        "read-only",
        "--json",
        "--output-last-message",
        str(reply),
        "-",
    ]
    assert (tool.parent / "stdin.txt").read_text().startswith(task.prompt)
    assert (result.usage.tokens_in, result.usage.tokens_out) == (300, 25)
    assert result.provenance == Provenance("codex", "gpt", "codex")


@pytest.mark.parametrize(
    ("tool_name", "body", "agent_model", "default_model", "expected"),
    [
        ("claude", FAKE_CLAUDE, None, "opus", "opus"),
        ("claude", FAKE_CLAUDE, "anthropic:claude-sonnet-4-6", "opus", "claude-sonnet-4-6"),  # per agent wins
        ("codex", FAKE_CODEX, None, "openai:gpt-5-codex", "gpt-5-codex"),
        ("claude", FAKE_CLAUDE, None, None, None),  # the CLI's own default
    ],
)
def test_the_model_is_passed_to_the_cli(
    tmp_path: Path, tool_name: str, body: str, agent_model: str | None, default_model: str | None, expected: str | None
) -> None:
    tool = _tool(tmp_path / "bin", tool_name, body)
    (tool.parent / "answer.json").write_text(json.dumps(CLAUDE_RESULT))
    settings = {"tool": tool_name, "executable": str(tool)}
    task = _task(tmp_path, settings)
    if agent_model:
        config = Config.model_validate({"cli_agent": settings, "agents": {"fd-safety": {"model": agent_model}}})
        task = AgentTask(task.agent, task.prompt, task.content, task.output_dir, task.channel_path, config, 30.0)

    result = _run(task, CliAgentRuntime(default_model))

    assert result.outcome is Outcome.COMPLETED, result.error
    argv = _seen(tool)["argv"]
    if expected is None:
        assert "--model" not in argv
    else:
        assert argv[argv.index("--model") + 1] == expected


def test_command_template_output_file_is_the_report(tmp_path: Path) -> None:
    tool = _tool(tmp_path / "bin dir", "mytool", FAKE_COMMAND)
    template = f"'{tool}' --prompt-file {{prompt_file}} --out {{output_file}} --agent {{agent}} --root {{root}}"
    task = _task(tmp_path, {"tool": "command", "command": template})

    result = _run(task)

    assert result.outcome is Outcome.COMPLETED, result.error
    classified = classify_output(result.output_path)
    assert classified.status is OutputStatus.VALID
    assert "progress:" not in result.output_path.read_text()
    seen = _seen(tool)
    prompt_file = task.output_dir / "prompts-cli" / "fd-safety.txt"
    assert seen["args"] == {
        "--prompt-file": str(prompt_file),
        "--out": str(task.output_dir / "prompts-cli" / "fd-safety.reply.md"),
        "--agent": "fd-safety",
        "--root": str(task.content.root),
    }
    assert seen["stdin"] == ""  # the prompt went by file, not on stdin
    assert prompt_file.read_text().startswith(task.prompt)
    assert result.provenance == Provenance("command", "mytool", "mytool")
    assert result.usage.tokens == 0 and result.usage.wall_s > 0


def test_command_without_output_file_reports_its_stdout(tmp_path: Path) -> None:
    tool = _tool(tmp_path / "bin", "echo-report", "import sys\nsys.stdin.read()\nsys.stdout.write(REPORT)\n")
    result = _run(_task(tmp_path, {"tool": "command", "command": f"{tool} --agent {{agent}}"}))

    assert result.outcome is Outcome.COMPLETED, result.error
    assert classify_output(result.output_path).status is OutputStatus.VALID


def test_oversized_output_is_cut_with_a_note(tmp_path: Path) -> None:
    tool = _tool(tmp_path / "bin", "chatty", "import sys\nsys.stdout.write(REPORT + 'x' * 5000)\n")
    task = _task(tmp_path, {"tool": "command", "command": f"{tool} {{prompt_file}}"})

    result = _run(task, CliAgentRuntime(max_output_bytes=1000))

    assert result.outcome is Outcome.COMPLETED
    text = result.output_path.read_text()
    assert "cut at 1000 bytes" in text and text.count("x") < 1000
    assert any("cut at 1000 bytes" in note for note in result.notes)
    assert classify_output(result.output_path).status is OutputStatus.VALID


# --- process groups: timeouts, cancellation, leftovers ----------------------


@pytest.mark.parametrize("deaf", [False, True], ids=["sigterm", "sigkill-after-grace"])
def test_timeout_kills_the_whole_process_group(tmp_path: Path, deaf: bool) -> None:
    tool = _tool(tmp_path / "bin", "hang", FAKE_HANG)
    command = f"{tool} {{prompt_file}}" + (" --ignore-term" if deaf else "")
    task = _task(tmp_path, {"tool": "command", "command": command}, deadline=3.0)

    result = _run(task, CliAgentRuntime(kill_grace_s=0.5))

    assert result.outcome is Outcome.TIMEOUT
    assert classify_output(result.output_path).status is OutputStatus.ERROR
    leader, grandchild = _pids(tool)
    assert _eventually_gone(leader), (
        "the CLI process outlived the timeout"
    )  # its supervisor died with it: init reaps it
    assert _eventually_gone(grandchild), "the grandchild outlived the timeout"


def test_cancellation_kills_the_group_and_reraises(tmp_path: Path) -> None:
    tool = _tool(tmp_path / "bin", "hang", FAKE_HANG)
    task = _task(tmp_path, {"tool": "command", "command": f"{tool} {{prompt_file}}"}, deadline=None)

    async def go() -> None:
        running = asyncio.create_task(run_guarded(CliAgentRuntime(kill_grace_s=0.5), task))
        while not (tool.parent / "pids").exists():
            assert not running.done()
            await asyncio.sleep(0.02)
        running.cancel()
        with pytest.raises(asyncio.CancelledError):
            await running

    asyncio.run(go())

    leader, grandchild = _pids(tool)
    assert _eventually_gone(leader) and _eventually_gone(grandchild)
    assert classify_output(task.output_dir / "fd-safety.md").status is OutputStatus.ERROR


def test_a_leftover_grandchild_holding_stdout_neither_blocks_nor_survives(tmp_path: Path) -> None:
    tool = _tool(tmp_path / "bin", "linger", FAKE_LINGER)
    task = _task(tmp_path, {"tool": "command", "command": f"{tool} {{prompt_file}}"}, deadline=60.0)

    result = _run(task, CliAgentRuntime(kill_grace_s=0.5))

    assert result.outcome is Outcome.COMPLETED, result.error
    assert classify_output(result.output_path).status is OutputStatus.VALID
    leader, grandchild = _pids(tool)
    assert _eventually_gone(leader) and _eventually_gone(grandchild)


def test_a_previous_attempts_reply_file_is_not_reused(tmp_path: Path) -> None:
    tool = _tool(tmp_path / "bin", "silent", "import sys\nsys.exit(3)\n")
    task = _task(tmp_path, {"tool": "command", "command": f"{tool} --out {{output_file}}"})
    stale = task.output_dir / "prompts-cli" / "fd-safety.reply.md"
    stale.parent.mkdir(parents=True)
    stale.write_text(REPORT)

    result = _run(task)

    assert result.outcome is Outcome.ERROR
    assert result.error == "CliAgentError: silent exited with status 3 without a report: no error output"


def test_a_tool_that_cannot_start_is_an_error_stub(tmp_path: Path) -> None:
    broken = tmp_path / "bin" / "claude"
    broken.parent.mkdir()
    broken.write_text("#!/nonexistent/interpreter\n")
    broken.chmod(0o755)

    result = _run(_task(tmp_path, {"tool": "claude", "executable": str(broken)}))

    assert result.outcome is Outcome.ERROR and result.error is not None
    assert result.error.startswith(f"CliAgentError: cannot start {broken}")


# --- missing tools ---------------------------------------------------------


def test_missing_executable_is_a_usage_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    task = _task(tmp_path, {"tool": "codex"})

    with pytest.raises(UsageError) as raised:
        asyncio.run(CliAgentRuntime().run(task))
    assert "codex" in raised.value.one_line() and "cli_agent.executable" in raised.value.one_line()

    result = _run(task)
    assert result.outcome is Outcome.ERROR and result.error is not None
    assert result.error.startswith("UsageError: the codex CLI 'codex' was not found")
    assert not (task.output_dir / "prompts-cli").exists()  # nothing ran, nothing was written


@pytest.mark.parametrize(
    ("settings", "needle"),
    [
        ({"tool": "claude", "executable": "/nonexistent/claude"}, "claude CLI '/nonexistent/claude'"),
        ({"tool": "command", "command": "no-such-tool-xyz {prompt_file}"}, "'no-such-tool-xyz'"),
        ({"tool": "command"}, "cli_agent.command is not set"),
        ({"tool": "command", "command": "tool 'unclosed"}, "cannot be split"),
    ],
)
def test_unusable_settings_are_usage_errors(tmp_path: Path, settings: dict[str, Any], needle: str) -> None:
    with pytest.raises(UsageError, match=needle.replace("(", r"\(")):
        asyncio.run(CliAgentRuntime().run(_task(tmp_path, settings)))


# --- parsing ----------------------------------------------------------------


def test_claude_parsing_is_defensive() -> None:
    by_model = {
        "claude-haiku-4-5": {"inputTokens": 10, "outputTokens": 5, "costUSD": 0.0001},
        "claude-opus-4-1": {"inputTokens": 100, "cacheReadInputTokens": 50, "outputTokens": 20, "costUSD": 0.01},
    }
    envelope = {**CLAUDE_RESULT, "usage": None, "model": None, "modelUsage": by_model}
    reply = parse_claude(json.dumps([{"type": "system"}, envelope]))  # --verbose prints every message
    assert reply.text == REPORT and reply.model == "claude-opus-4-1"
    assert (reply.tokens_in, reply.tokens_out) == (160, 25)
    cached = parse_claude(json.dumps({"result": "r", "usage": {"input_tokens": "x", "cache_read_input_tokens": 7}}))
    assert (cached.tokens_in, cached.tokens_out, cached.cost_usd, cached.model) == (7, 0, 0.0, None)
    noisy = "warning: update available\n" + json.dumps(CLAUDE_RESULT) + "\n"
    assert parse_claude(noisy).text == REPORT
    assert parse_claude("").text == "" and parse_claude("").notes == ()


def test_codex_parsing_falls_back_to_the_agent_message(tmp_path: Path) -> None:
    events = [
        {"type": "item.completed", "item": {"type": "agent_message", "text": "final words"}},
        {"type": "turn.failed", "error": {"message": "stream disconnected"}},
    ]
    reply = parse_codex("\n".join(json.dumps(e) for e in events), tmp_path / "missing.md")
    assert reply.text == "final words" and reply.error == "codex reported: stream disconnected"
    assert parse_codex("plain final message\n", tmp_path / "missing.md").text == "plain final message\n"


@pytest.mark.parametrize(
    ("model", "family"),
    [
        ("claude-sonnet-4-5", "claude"),
        ("anthropic:claude-opus-4-1", "claude"),
        ("sonnet", "claude"),
        ("gpt-5-codex", "gpt"),
        ("o3", "gpt"),
        ("openai/gpt-4.1", "gpt"),
        ("gemini-2.5-pro", "gemini"),
        ("qwen2.5-coder:32b", "qwen"),
        ("ollama:qwen2.5-coder:32b", "qwen"),
        ("Qwen/Qwen2.5-Coder-32B-Instruct", "qwen"),
        ("codellama:13b", "llama"),
        ("falcon-40b", "falcon"),
    ],
)
def test_model_family(model: str, family: str) -> None:
    assert model_family(model) == family


def test_registered_capabilities() -> None:
    assert CliAgentRuntime.name == "cli-agent"
    assert CliAgentRuntime.remote is True and CliAgentRuntime.offline is False and CliAgentRuntime.needs_key is False
