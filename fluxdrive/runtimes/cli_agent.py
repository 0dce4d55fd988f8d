"""The ``cli-agent`` runtime: a coding-assistant CLI, run headless, is the reviewer.

Why: whoever is already logged in to Claude Code or Codex can review with the
model, tools and context handling those CLIs bring - and any other agent CLI
plugs in through a command template - while fluxdrive never holds an API key.
The CLI runs once per agent, in the project root, read-only, with the agent's
prompt (saved as ``OUTPUT_DIR/prompts-cli/<agent>.txt``). Its final message
becomes the agent's report through the completion contract; the usage and the
model it reports become the result's usage and provenance.

A CLI is a process tree we did not write, so it runs in a process group of its
own: however the run ends - report, crash, timeout or Ctrl-C - the whole group
is terminated (SIGTERM, then SIGKILL after a grace period) and the leader is
reaped. Its stdout and stderr are read concurrently and bounded, so neither a
chatty nor a silent tool can block or exhaust the run.

    tool=claude   claude -p --output-format json --allowedTools Read,Grep,Glob --permission-mode default
    tool=codex    codex exec --skip-git-repo-check --sandbox read-only --json --output-last-message FILE -
    tool=command  cli_agent.command, split like a POSIX shell would, then {prompt_file} {output_file}
                  {agent} {root} filled in each argument (never run through a shell)
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import shlex
import shutil
import signal
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fluxdrive._atomic import atomic_write_text
from fluxdrive.contracts import write_agent_output
from fluxdrive.errors import UsageError
from fluxdrive.runtimes.base import AgentResult, AgentTask, Outcome, Provenance, Runtime, Usage

if TYPE_CHECKING:
    from fluxdrive.agents import AgentDefinition
    from fluxdrive.config.model import CliAgentConfig, Config

CLI_DIR = "prompts-cli"
MAX_OUTPUT_BYTES = 10 * 1024 * 1024
KILL_GRACE_S = 3.0
READ_ONLY_TOOLS = "Read,Grep,Glob"
PROVIDERS = {"claude": "claude-code", "codex": "codex", "command": "command"}
INSTALL_HINTS = {
    "claude": "install Claude Code (npm install -g @anthropic-ai/claude-code) and log in, "
    "or set cli_agent.executable to its path",
    "codex": "install Codex (npm install -g @openai/codex) and log in, or set cli_agent.executable to its path",
    "command": "make the first word of cli_agent.command an executable on PATH or a path to one",
}
# Claude Code refuses to start when it believes it is nested in another session;
# a headless run in its own process group is not a nested interactive session.
NESTING_GUARD_VARS = ("CLAUDECODE",)

_PLACEHOLDER = re.compile(r"\{(prompt_file|output_file|agent|root)\}")
_PROVIDER_PREFIXES = {"anthropic", "openai", "google", "google-gla", "google-vertex", "bedrock", "ollama", "openrouter"}
_POLL_S = 0.05
_CHUNK = 1 << 16


class CliAgentError(RuntimeError):
    """The CLI ended without a usable report (the guard turns this into an error stub)."""


# --- running a process tree ------------------------------------------------


@dataclass(frozen=True, slots=True)
class Finished:
    """What a CLI process left behind: exit status and (bounded) output."""

    returncode: int
    stdout: str
    stderr: str
    stdout_cut: int = 0
    stderr_cut: int = 0


class _Capture:
    """A bounded reader: keeps the head (or the tail) of a stream, drains the rest."""

    def __init__(self, limit: int, *, keep_tail: bool) -> None:
        self.limit = limit
        self.keep_tail = keep_tail
        self.data = bytearray()
        self.dropped = 0

    async def drain(self, stream: asyncio.StreamReader) -> None:
        while chunk := await stream.read(_CHUNK):
            self.data += chunk
            excess = len(self.data) - self.limit
            if excess > 0:
                self.dropped += excess
                if self.keep_tail:
                    del self.data[:excess]
                else:
                    del self.data[self.limit :]

    def text(self) -> str:
        return bytes(self.data).decode("utf-8", errors="replace")


async def _feed(pipe: asyncio.StreamWriter, data: bytes) -> None:
    # A tool may exit without reading its stdin; that is its business, not an error.
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        pipe.write(data)
        await pipe.drain()
    pipe.close()


def _signal_group(group: int, sig: int) -> bool:
    """Send ``sig`` to the process group; False when no member is left to receive it."""
    try:
        os.killpg(group, sig)
    except (ProcessLookupError, PermissionError):
        return False
    return True


async def _until(condition: Callable[[], bool], timeout: float) -> bool:
    """Poll ``condition()`` until it holds or ``timeout`` passes; its final value."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() >= deadline:
            return False
        await asyncio.sleep(_POLL_S)
    return True


async def end_group(process: asyncio.subprocess.Process, grace_s: float) -> None:
    """Terminate the process's whole group (TERM, then KILL after ``grace_s``) and reap the leader."""
    group = process.pid  # start_new_session=True: the leader's pid is the group id

    def gone() -> bool:
        return process.returncode is not None and not _signal_group(group, 0)

    try:
        if _signal_group(group, signal.SIGTERM) and not await _until(gone, grace_s):
            _signal_group(group, signal.SIGKILL)
        # asyncio's child watcher reaps the leader; the rest of the group belongs to init now.
        await _until(lambda: process.returncode is not None, grace_s)
    except asyncio.CancelledError:  # cancelled again while waiting: leave nothing running
        _signal_group(group, signal.SIGKILL)
        raise


async def run_in_own_group(
    argv: tuple[str, ...],
    *,
    cwd: Path,
    stdin: bytes | None,
    env: Mapping[str, str] | None = None,
    max_bytes: int = MAX_OUTPUT_BYTES,
    grace_s: float = KILL_GRACE_S,
) -> Finished:
    """Run ``argv`` in a new session; whatever happens, its process group is gone afterwards."""
    try:
        process = await asyncio.create_subprocess_exec(
            *argv,
            cwd=cwd,
            env=env,
            stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,
        )
    except OSError as exc:
        raise CliAgentError(f"cannot start {argv[0]} in {cwd}: {exc.strerror or exc}") from exc
    assert process.stdout is not None and process.stderr is not None
    out = _Capture(max_bytes, keep_tail=False)  # the report is at the head
    err = _Capture(max_bytes, keep_tail=True)  # the reason for a failure is at the tail
    helpers = [asyncio.create_task(out.drain(process.stdout)), asyncio.create_task(err.drain(process.stderr))]
    if stdin is not None:
        assert process.stdin is not None
        helpers.append(asyncio.create_task(_feed(process.stdin, stdin)))
    ended = False
    try:
        # Not process.wait(): it also waits for the pipes, which a leftover grandchild can hold open forever.
        await _until(lambda: process.returncode is not None, float("inf"))
        await end_group(process, grace_s)
        ended = True
        await asyncio.wait(helpers, timeout=grace_s)  # the pipes close with the group
    finally:
        if not ended:
            await end_group(process, grace_s)
        for helper in helpers:
            helper.cancel()
        await asyncio.gather(*helpers, return_exceptions=True)
        if process.stdin is not None:
            process.stdin.close()
    assert process.returncode is not None
    return Finished(process.returncode, out.text(), err.text(), out.dropped, err.dropped)


# --- what the tools print --------------------------------------------------


@dataclass(frozen=True, slots=True)
class Reply:
    """What a tool answered: the report text, and what it said about itself."""

    text: str
    model: str | None = None
    tokens_in: int = 0
    tokens_out: int = 0
    cost_usd: float = 0.0
    error: str | None = None
    notes: tuple[str, ...] = ()


def _count(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def _amount(value: object) -> float:
    if isinstance(value, int | float) and not isinstance(value, bool) and value > 0:
        return float(value)
    return 0.0


def _string(value: object) -> str | None:
    return value.strip() if isinstance(value, str) and value.strip() else None


def _first_line(text: str) -> str:
    return next((line.strip() for line in text.splitlines() if line.strip()), "")[:300]


def last_line(text: str) -> str:
    """The last non-empty line (a CLI's error is usually its last word), at most 300 characters."""
    return next((line.strip() for line in reversed(text.splitlines()) if line.strip()), "")[:300]


def _json_objects(text: str) -> Iterator[dict[str, Any]]:
    """Every line of ``text`` that is a JSON object (JSONL, or noise around one object)."""
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith("{"):
            with contextlib.suppress(ValueError):
                value = json.loads(line)
                if isinstance(value, dict):
                    yield value


def _claude_envelope(stdout: str) -> dict[str, Any] | None:
    try:
        value = json.loads(stdout)
    except ValueError:
        value = None
    if isinstance(value, list):  # --verbose prints every message; the result is the last
        value = next((v for v in reversed(value) if isinstance(v, dict) and v.get("type") == "result"), None)
    if isinstance(value, dict):
        return value
    return next((v for v in reversed(list(_json_objects(stdout))) if v.get("type") == "result"), None)


def _claude_tokens(usage: object, by_model: object) -> tuple[int, int]:
    # Input counts the prompt-cache reads and writes: those tokens were processed too.
    if isinstance(usage, dict):
        keys = ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
        return sum(_count(usage.get(k)) for k in keys), _count(usage.get("output_tokens"))
    if isinstance(by_model, dict):
        rows = [row for row in by_model.values() if isinstance(row, dict)]
        keys = ("inputTokens", "cacheCreationInputTokens", "cacheReadInputTokens")
        return (
            sum(_count(row.get(k)) for row in rows for k in keys),
            sum(_count(row.get("outputTokens")) for row in rows),
        )
    return 0, 0


def _main_model(by_model: object) -> str | None:
    """The model that did most of the work in claude's ``modelUsage`` (by cost, then output)."""
    if not isinstance(by_model, dict) or not by_model:
        return None
    rows = {name: row for name, row in by_model.items() if isinstance(name, str) and isinstance(row, dict)}
    if not rows:
        return None
    return max(rows, key=lambda n: (_amount(rows[n].get("costUSD")), _count(rows[n].get("outputTokens"))))


def parse_claude(stdout: str) -> Reply:
    """``claude -p --output-format json``: one result object; anything else is kept as the report."""
    envelope = _claude_envelope(stdout)
    if envelope is None:
        note = "stdout was not the JSON result of claude -p; kept as the report"
        return Reply(stdout, notes=(note,) if stdout.strip() else ())
    result = envelope.get("result")
    text = result if isinstance(result, str) else ""
    by_model = envelope.get("modelUsage")
    tokens_in, tokens_out = _claude_tokens(envelope.get("usage"), by_model)
    cost = _amount(envelope.get("total_cost_usd")) or _amount(envelope.get("cost_usd"))
    model = _string(envelope.get("model")) or _main_model(by_model)
    subtype = _string(envelope.get("subtype")) or ""
    error = None
    if envelope.get("is_error") is True or subtype.startswith("error"):
        label = subtype if subtype.startswith("error") else "an error"
        error = f"claude reported {label}" + (f": {_first_line(text)}" if text.strip() else "")
    return Reply(text, model, tokens_in, tokens_out, cost, error)


def parse_codex(stdout: str, reply_file: Path) -> Reply:
    """``codex exec --json -o FILE``: the final message in FILE, usage on ``turn.completed`` events."""
    events = list(_json_objects(stdout))
    tokens_in = tokens_out = 0
    message = ""
    model = None
    error = None
    for event in events:
        kind = event.get("type")
        usage = event.get("usage")
        if kind == "turn.completed" and isinstance(usage, dict):
            tokens_in += _count(usage.get("input_tokens"))  # includes cached_input_tokens
            tokens_out += _count(usage.get("output_tokens"))
        item = event.get("item")
        if kind == "item.completed" and isinstance(item, dict) and item.get("type") == "agent_message":
            message = _string(item.get("text")) or message
        if kind == "turn.failed" and isinstance(event.get("error"), dict):
            error = _string(event["error"].get("message")) or "turn failed"
        elif kind == "error":
            error = _string(event.get("message")) or "error"
        model = _string(event.get("model")) or model
    text = _read_reply(reply_file) or message
    if not text.strip() and not events:
        text = stdout  # a codex without --json support prints the final message itself
    return Reply(text, model, tokens_in, tokens_out, 0.0, f"codex reported: {error}" if error else None)


def parse_command(stdout: str, reply_file: Path | None) -> Reply:
    """A command template: the report is ``{output_file}`` when it wrote one, else its stdout."""
    return Reply((_read_reply(reply_file) if reply_file else "") or stdout)


def _read_reply(path: Path) -> str:
    try:
        return path.read_bytes().decode("utf-8", errors="replace")
    except FileNotFoundError:
        return ""


def model_family(model: str) -> str:
    """The family synthesis compares for cross-family convergence: claude, gpt, gemini, ..."""
    name = model.strip().lower().rsplit("/", 1)[-1]
    head, _, tail = name.partition(":")
    while tail and head in _PROVIDER_PREFIXES:  # anthropic:claude-..., ollama:qwen2.5:32b
        head, _, tail = tail.partition(":")
    name = head  # what follows a colon is a tag (qwen2.5:32b)
    if "claude" in name or name.startswith(("opus", "sonnet", "haiku")):
        return "claude"
    if name.startswith(("gpt", "chatgpt")) or "codex" in name or re.match(r"o\d", name):
        return "gpt"
    match = re.match(r"[a-z]+", name)
    return match.group(0) if match else (name or "unknown")


# --- the runtime -----------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Invocation:
    """One CLI run, fully decided: argv, what goes on stdin, where the reply lands."""

    tool: str
    argv: tuple[str, ...]
    stdin: bytes | None
    reply_file: Path | None
    env: Mapping[str, str] | None = None

    @property
    def tool_name(self) -> str:
        """The executable's name (``claude``, ``codex``, or the command's first word)."""
        return Path(self.argv[0]).name


def handing_in(task: AgentTask, *, read_only: bool) -> str:
    """The paragraph appended to the prompt: return the report as the final message."""
    report = Path(task.output_dir) / f"{task.agent.name}.md"
    lines = ["", "## Handing in your report", ""]
    if read_only:
        lines += [
            "This run is headless with read-only tools: you cannot write files or run commands, so you",
            f"cannot share on the peer channel; you may still read `{task.channel_path}` if it exists.",
        ]
    lines += [
        f"Do not write `{report}` yourself. Return the report as your final message - exactly the",
        "report, starting with `### Findings Index`, with nothing before or after it; fluxdrive",
        "writes it through the completion contract.",
    ]
    return "\n".join(lines) + "\n"


def _inside(path: Path, root: Path) -> bool:
    return path.resolve().is_relative_to(root.resolve())


def resolve_executable(tool: str, name: str, root: Path) -> str:
    """The executable's path, or a UsageError naming the tool and how to fix it.

    A bare name is looked up on PATH; a relative path is taken from the project root.
    """
    candidate = Path(name).expanduser()
    if os.sep in name or (os.altsep and os.altsep in name):
        if not candidate.is_absolute():
            candidate = root / candidate
        found = str(candidate) if candidate.is_file() and os.access(candidate, os.X_OK) else None
    else:
        found = shutil.which(name)
    if found is None:
        label = "cli_agent.command executable" if tool == "command" else f"{tool} CLI"
        raise UsageError(f"the {label} {name!r} was not found or is not executable", hint=INSTALL_HINTS[tool])
    return found


def command_words(template: str | None) -> list[str]:
    """The template split like a POSIX shell would (placeholders still unfilled)."""
    if not template or not template.strip():
        raise UsageError(
            "cli_agent.tool is 'command' but cli_agent.command is not set",
            hint='set cli_agent.command, e.g. "mytool --prompt-file {prompt_file} --out {output_file}"',
        )
    try:
        words = shlex.split(template)
    except ValueError as exc:
        raise UsageError(f"cli_agent.command cannot be split: {exc}", hint="quote it as a POSIX shell would") from exc
    if not words:
        raise UsageError("cli_agent.command is empty", hint=INSTALL_HINTS["command"])
    return words


def _ended(returncode: int) -> str:
    return f"exited with status {returncode}" if returncode >= 0 else f"was killed by signal {-returncode}"


def fill(word: str, values: Mapping[str, str]) -> str:
    """Replace the four placeholders in one argument (other braces are left alone)."""
    return _PLACEHOLDER.sub(lambda m: values[m.group(1)], word)


class CliAgentRuntime(Runtime):
    """Runs Claude Code, Codex or a command template headless, once per agent."""

    name = "cli-agent"
    offline = False
    remote = True
    description = "a coding-assistant CLI run headless per agent (claude -p, codex exec, or a command)"

    def __init__(self, *, kill_grace_s: float = KILL_GRACE_S, max_output_bytes: int = MAX_OUTPUT_BYTES) -> None:
        self.kill_grace_s = kill_grace_s
        self.max_output_bytes = max_output_bytes

    def check_task(self, agent: AgentDefinition, config: Config, root: Path) -> None:
        """Fail before dispatch when the CLI is missing or the template is unusable (one line, exit 2)."""
        self.check_default(config, root)

    def check_default(self, config: Config, root: Path) -> None:
        """The same check, before triage: every agent on this runtime needs the one CLI."""
        settings = config.cli_agent
        if settings.tool == "command":
            resolve_executable("command", command_words(settings.command)[0], root)
        else:
            resolve_executable(settings.tool, settings.executable or settings.tool, root)

    def provenance(self, task: AgentTask) -> Provenance:
        settings = task.config.cli_agent
        if settings.tool == "claude":
            return Provenance("claude-code", "claude", "claude")
        if settings.tool == "codex":
            return Provenance("codex", "gpt", "codex")
        try:
            tool = Path(shlex.split(settings.command or "")[0]).name
        except (ValueError, IndexError):
            tool = "command"
        return Provenance("command", tool, tool)

    def invocation(self, task: AgentTask, prompt: str, prompt_file: Path, reply_file: Path) -> Invocation:
        """The argv, stdin and reply file for ``task`` under ``task.config.cli_agent``."""
        settings: CliAgentConfig = task.config.cli_agent
        root = Path(task.content.root)
        data = prompt.encode("utf-8")
        if settings.tool == "command":
            words = command_words(settings.command)
            values = {"prompt_file": str(prompt_file), "output_file": str(reply_file), "agent": task.agent.name}
            argv = [fill(word, {**values, "root": str(root)}) for word in words]
            argv[0] = resolve_executable("command", argv[0], root)
            reads_file = any("{prompt_file}" in word for word in words)
            writes_file = any("{output_file}" in word for word in words)
            return Invocation("command", tuple(argv), None if reads_file else data, reply_file if writes_file else None)
        executable = resolve_executable(settings.tool, settings.executable or settings.tool, root)
        if settings.tool == "codex":
            argv = [executable, "exec", "--skip-git-repo-check", "--sandbox", "read-only", "--json"]
            argv += ["--output-last-message", str(reply_file), "-"]
            return Invocation("codex", tuple(argv), data, reply_file)
        argv = [executable, "-p", "--output-format", "json", "--allowedTools", READ_ONLY_TOOLS]
        argv += ["--permission-mode", "default"]
        # The content file and the peer channel live in OUTPUT_DIR, which may be outside the project.
        extra = {Path(task.output_dir).resolve()}
        if task.content.content_file is not None:
            extra.add(Path(task.content.content_file).resolve().parent)
        for directory in sorted(d for d in extra if not _inside(d, root)):
            argv += ["--add-dir", str(directory)]
        env = {k: v for k, v in os.environ.items() if k not in NESTING_GUARD_VARS}
        return Invocation("claude", tuple(argv), data, None, env)

    async def run(self, task: AgentTask) -> AgentResult:
        started = time.monotonic()
        name = task.agent.name
        workdir = Path(task.output_dir) / CLI_DIR
        prompt_file = workdir / f"{name}.txt"
        reply_file = workdir / f"{name}.reply.md"
        tool = task.config.cli_agent.tool
        prompt = task.prompt.rstrip("\n") + "\n" + handing_in(task, read_only=tool != "command")
        call = self.invocation(task, prompt, prompt_file, reply_file)
        atomic_write_text(prompt_file, prompt)
        reply_file.unlink(missing_ok=True)  # a retry must not pick up the last attempt's reply
        finished = await run_in_own_group(
            call.argv,
            cwd=Path(task.content.root),
            stdin=call.stdin,
            env=call.env,
            max_bytes=self.max_output_bytes,
            grace_s=self.kill_grace_s,
        )
        if call.tool == "claude":
            reply = parse_claude(finished.stdout)
        elif call.tool == "codex":
            reply = parse_codex(finished.stdout, reply_file)
        else:
            reply = parse_command(finished.stdout, call.reply_file)
        if reply.error:
            raise CliAgentError(reply.error)
        if not reply.text.strip():
            reason = last_line(finished.stderr) or "no error output"
            raise CliAgentError(f"{call.tool_name} {_ended(finished.returncode)} without a report: {reason}")
        notes = list(reply.notes)
        text = reply.text
        if finished.stdout_cut:
            cut = f"the tool's output was cut at {self.max_output_bytes} bytes ({finished.stdout_cut} more dropped)"
            notes.append(cut)
            if text == finished.stdout:  # the report itself is what was cut
                text = text.rstrip("\n") + f"\n\n[fluxdrive: {cut}]\n"
        if finished.returncode != 0:
            notes.append(f"{call.tool_name} {_ended(finished.returncode)} after writing its report")
        path = write_agent_output(task.output_dir, name, text)
        family = model_family(reply.model) if reply.model else self.provenance(task).model_family
        provenance = Provenance(PROVIDERS[call.tool], family, reply.model or call.tool_name)
        usage = Usage(reply.tokens_in, reply.tokens_out, reply.cost_usd, time.monotonic() - started)
        return AgentResult(name, Outcome.COMPLETED, path, provenance, usage, notes=tuple(notes))
