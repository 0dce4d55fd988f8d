"""The ``cli-agent`` runtime: Claude Code, Codex or any agent CLI, run headless as the reviewer."""

from fluxdrive.runtimes.cli_agent.process import CliAgentError, Finished, end_group, run_in_own_group
from fluxdrive.runtimes.cli_agent.replies import Reply, parse_claude, parse_codex, parse_command
from fluxdrive.runtimes.cli_agent.runtime import CliAgentRuntime
from fluxdrive.runtimes.families import model_family

__all__ = [
    "CliAgentError",
    "CliAgentRuntime",
    "Finished",
    "Reply",
    "end_group",
    "model_family",
    "parse_claude",
    "parse_codex",
    "parse_command",
    "run_in_own_group",
]
