"""The five tools as the model sees them: names, parameters and docstrings become the tool schema.

Why a module of its own: pydantic-ai reads these signatures (``RunContext``
included) to build the JSON schemas it sends to the provider, so they must be
importable at module level - and they are built once per review, then shared
by every agent through ``deps`` (:class:`Tools`), instead of once per agent.
The reading tools run in daemon threads (:func:`fluxdrive.core.threads.in_daemon_thread`):
when the agent's deadline cancels it, the await ends at once and no tool -
not even a pathological regular expression - holds the run or the process.
What the tools may touch is decided by :class:`~fluxdrive.runtimes.llm.tools.Workspace`
and :class:`~fluxdrive.runtimes.llm.tools.PeerChannel`, never here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pydantic_ai import RunContext, Tool

from fluxdrive.core.threads import in_daemon_thread
from fluxdrive.runtimes.llm.tools import PeerChannel, Workspace


@dataclass(frozen=True, slots=True)
class Tools:
    """What one agent's tools act on: its confined workspace and its view of the peer channel."""

    workspace: Workspace
    peers: PeerChannel


async def read_file(ctx: RunContext[Tools], path: str, start: int = 1, end: int | None = None) -> str:
    """Read a file of the project, with line numbers.

    Args:
        path: path relative to the project root
        start: first line to return (1-based)
        end: last line to return; omit for the rest of the file
    """
    return await in_daemon_thread(ctx.deps.workspace.read_file, path, start, end)


async def list_files(ctx: RunContext[Tools], glob: str = "**/*") -> str:
    """List the project's files (honouring .gitignore) that match a glob such as '**/*.py' or 'src/**'.

    Args:
        glob: shell-style pattern relative to the project root
    """
    return await in_daemon_thread(ctx.deps.workspace.list_files, glob)


async def grep(ctx: RunContext[Tools], pattern: str, glob: str = "**/*") -> str:
    """Search the project's files for a regular expression; returns path:line: text.

    Args:
        pattern: Python regular expression
        glob: only files matching this pattern
    """
    return await in_daemon_thread(ctx.deps.workspace.grep, pattern, glob)


def share_finding(
    ctx: RunContext[Tools],
    severity: Literal["blocking", "notable"],
    category: str,
    summary: str,
    file_refs: list[str],
) -> str:
    """Share a finding with the other reviewers on the peer-findings channel.

    Args:
        severity: blocking (invalidates another reviewer's likely analysis) or notable (may change it)
        category: kebab-case category, e.g. sql-injection
        summary: one or two sentences
        file_refs: locations as path:line
    """
    return ctx.deps.peers.share(severity, category, summary, file_refs)


def read_peer_findings(ctx: RunContext[Tools], severity: Literal["blocking", "notable", "all"] = "all") -> str:
    """Read the findings other reviewers have shared so far (JSON lines).

    Args:
        severity: blocking, notable or all
    """
    return ctx.deps.peers.read(severity)


READ_TOOLS = [Tool(f, takes_ctx=True) for f in (read_file, list_files, grep)]
TOOLS = [*READ_TOOLS, *(Tool(f, takes_ctx=True) for f in (share_finding, read_peer_findings))]
