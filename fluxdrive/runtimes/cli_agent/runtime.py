"""The ``cli-agent`` runtime: a coding-assistant CLI, run headless, is the reviewer.

Why: whoever is already logged in to Claude Code or Codex can review with the
model, tools and context handling those CLIs bring - and any other agent CLI
plugs in through a command template - while fluxdrive never holds an API key.
The CLI runs once per agent, in the project root, read-only, with the agent's
prompt (saved as ``OUTPUT_DIR/prompts-cli/<agent>.txt``). Its final message
becomes the agent's report through the completion contract; the usage and the
model it reports become the result's usage and provenance.

The process tree runs in a group of its own that is always killed
(:mod:`.process`); what each CLI prints is read by :mod:`.replies`.

    tool=claude   claude -p --output-format json --allowedTools Read,Grep,Glob [--model M] --permission-mode default
    tool=codex    codex exec --skip-git-repo-check --sandbox read-only --json [--model M] --output-last-message FILE -
    tool=command  cli_agent.command, split like a POSIX shell would, then {prompt_file} {output_file}
                  {agent} {root} filled in each argument (never run through a shell)
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from fluxdrive.contracts import classify_text, write_agent_output
from fluxdrive.core.atomic import atomic_write_text
from fluxdrive.errors import UsageError
from fluxdrive.runtimes.base import AgentResult, AgentTask, Outcome, Provenance, Runtime, Usage
from fluxdrive.runtimes.cli_agent.process import KILL_GRACE_S, MAX_OUTPUT_BYTES, CliAgentError, run_in_own_group
from fluxdrive.runtimes.cli_agent.replies import last_line, parse_claude, parse_codex, parse_command
from fluxdrive.runtimes.families import PROVIDER_PREFIXES, model_family

if TYPE_CHECKING:
    from fluxdrive.agents import AgentDefinition
    from fluxdrive.config.model import CliAgentConfig, Config

CLI_DIR = "prompts-cli"
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

    def __init__(
        self,
        model: str | None = None,
        *,
        kill_grace_s: float = KILL_GRACE_S,
        max_output_bytes: int = MAX_OUTPUT_BYTES,
    ) -> None:
        self.default_model = model
        self.kill_grace_s = kill_grace_s
        self.max_output_bytes = max_output_bytes

    def model_for(self, task: AgentTask) -> str | None:
        """The model the CLI is asked for (``--model``), or None for the CLI's own default.

        Same precedence as the llm runtime: ``[agents.<name>] model``, the
        definition's ``model:``, then ``--model``. A provider prefix
        (``anthropic:opus``) is dropped: the CLI knows its provider.
        """
        override = task.config.agents.get(task.agent.name)
        chosen = (override.model if override else None) or task.agent.model or self.default_model
        if not chosen:
            return None
        head, sep, tail = chosen.partition(":")
        return tail if sep and head in PROVIDER_PREFIXES and tail else chosen

    @classmethod
    def create(cls, model: str | None = None) -> CliAgentRuntime:
        """The review's instance; ``model`` is passed to the CLI as its ``--model``."""
        return cls(model)

    def check(self, config: Config, root: Path, agent: AgentDefinition | None = None) -> None:
        """Fail before dispatch when the CLI is missing or the template is unusable (one line, exit 2).

        The same for every agent (and before triage): every agent on this runtime needs the one CLI.
        """
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
        model = self.model_for(task)
        chosen = ["--model", model] if model else []
        if settings.tool == "codex":
            argv = [executable, "exec", "--skip-git-repo-check", "--sandbox", "read-only", "--json", *chosen]
            argv += ["--output-last-message", str(reply_file), "-"]
            return Invocation("codex", tuple(argv), data, reply_file)
        argv = [executable, "-p", "--output-format", "json", "--allowedTools", READ_ONLY_TOOLS, *chosen]
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
        if finished.returncode < 0 or (finished.returncode != 0 and not classify_text(text).usable_index):
            # a crash is not a review: printed text from a tool that then died proves nothing was checked
            reason = last_line(finished.stderr) or "no error output"
            raise CliAgentError(f"{call.tool_name} {_ended(finished.returncode)}: {reason}")
        if finished.returncode != 0:
            notes.append(f"{call.tool_name} {_ended(finished.returncode)} after writing its report")
        path = write_agent_output(task.output_dir, name, text)
        family = model_family(reply.model) if reply.model else self.provenance(task).model_family
        provenance = Provenance(PROVIDERS[call.tool], family, reply.model or call.tool_name)
        usage = Usage(reply.tokens_in, reply.tokens_out, reply.cost_usd, time.monotonic() - started)
        return AgentResult(name, Outcome.COMPLETED, path, provenance, usage, notes=tuple(notes))
