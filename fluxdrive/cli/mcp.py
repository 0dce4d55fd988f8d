"""``fluxdrive mcp``: serve the project to a coding assistant over MCP (stdio)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from fluxdrive.errors import InputError


def mcp_command(
    root: Annotated[
        Path | None,
        typer.Option("--root", metavar="DIR", help="The project to serve (default: the current directory)."),
    ] = None,
) -> None:
    """Serve review, triage, synthesize and drill-down tools over MCP on stdin/stdout.

    Register it with an assistant, e.g. `claude mcp add fluxdrive -- fluxdrive mcp`.
    """
    from fluxdrive.mcp.server import serve

    directory = (root or Path.cwd()).resolve()
    if not directory.is_dir():
        raise InputError(f"--root {directory} is not a directory")
    serve(directory)
