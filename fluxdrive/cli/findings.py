"""``fluxdrive findings``: the peer-findings channel from the shell.

The argument shapes are exactly those of the seed's helper script, so agents
that were told to call it can call us instead:

    fluxdrive findings write <file> <severity> <agent> <category> <summary> [file_refs...]
    fluxdrive findings read <file> [--severity blocking|notable|all]
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from fluxdrive.cli._io import note, out, out_json, warn
from fluxdrive.core.columns import format_columns
from fluxdrive.exchange import channel

app = typer.Typer(
    help="Share and read critical findings between agents during a run.",
    no_args_is_help=True,
)

FileArg = Annotated[Path, typer.Argument(metavar="FILE", help="The channel, e.g. OUTPUT_DIR/peer-findings.jsonl.")]


@app.command("write")
def write(
    file: FileArg,
    severity: Annotated[str, typer.Argument(metavar="SEVERITY", help="blocking or notable.")],
    agent: Annotated[str, typer.Argument(metavar="AGENT", help="The agent sharing it, e.g. fd-safety.")],
    category: Annotated[str, typer.Argument(metavar="CATEGORY", help="A kebab-case tag, e.g. auth-bypass.")],
    summary: Annotated[str, typer.Argument(metavar="SUMMARY", help="One or two sentences.")],
    file_refs: Annotated[
        list[str] | None, typer.Argument(metavar="[FILE_REFS]...", help="file:line references.")
    ] = None,
) -> None:
    """Append one finding as a single atomic line."""
    result = channel.append(file, severity, agent, category, summary, file_refs or ())
    for adjustment in result.adjustments:
        warn(adjustment)


@app.command("read")
def read(
    file: FileArg,
    severity: Annotated[
        str, typer.Option("--severity", metavar="blocking|notable|all", help="Which findings.")
    ] = "all",
    agent: Annotated[str | None, typer.Option("--agent", help="Only this agent's findings.")] = None,
) -> None:
    """Print findings as a JSON array ([] when the file does not exist)."""
    result = channel.read(file, severity=severity, agent=agent)
    if result.skipped:
        note(f"skipped {result.skipped} incomplete or invalid line(s) in {file}")
    out_json([finding.to_dict() for finding in result.findings])


@app.command("timeline")
def timeline(file: FileArg) -> None:
    """Print every finding in time order as a table."""
    result = channel.read(file)
    if result.skipped:
        note(f"skipped {result.skipped} incomplete or invalid line(s) in {file}")
    ordered = channel.timeline(result.findings)
    if not ordered:
        out("No peer findings shared yet.")
        return
    rows = [(f.timestamp, f.agent, f.severity, f.category, f.summary + _refs(f.file_refs)) for f in ordered]
    out(format_columns(("TIME", "AGENT", "SEVERITY", "CATEGORY", "SUMMARY"), rows))
    blocking = sum(1 for f in ordered if f.severity == "blocking")
    out(f"{len(ordered)} finding(s): {blocking} blocking, {len(ordered) - blocking} notable")


def _refs(refs: tuple[str, ...]) -> str:
    return f" [{', '.join(refs)}]" if refs else ""
