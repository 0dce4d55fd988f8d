"""``fluxdrive agents``: the built-in and project agent definitions."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from fluxdrive._columns import format_columns
from fluxdrive._project import find_project_root
from fluxdrive.cli._io import out, out_json

if TYPE_CHECKING:  # the definitions' pydantic models load only when a command runs
    from fluxdrive.agents import AgentDefinition, Roster


def _roster(project: Path | None) -> Roster:
    from fluxdrive.agents import load_roster

    return load_roster(find_project_root(project or Path.cwd()))


app = typer.Typer(help="List and inspect agent definitions.", no_args_is_help=True)

ProjectOption = Annotated[
    Path | None,
    typer.Option(
        "--project",
        metavar="PATH",
        help="Project whose .fluxdrive/agents/ apply (default: from the current directory).",
    ),
]


def _summary(agent: AgentDefinition) -> dict[str, Any]:
    return {
        "name": agent.name,
        "kind": agent.kind,
        "category": agent.category,
        "prefix": agent.prefix,
        "origin": agent.origin,
        "description": agent.description,
        "domains": agent.domains,
        "adjacent": agent.adjacent,
        "exempt_from_dropout": agent.exempt_from_dropout,
        "offline": agent.static.offline,
        "source": str(agent.source),
    }


@app.command("list")
def list_agents(
    project: ProjectOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print as JSON.")] = False,
) -> None:
    """List every agent with its kind, prefix and origin."""
    roster = _roster(project)
    ordered = sorted(roster, key=lambda a: (a.kind != "review", a.name))
    if as_json:
        out_json({"schema_version": 1, "agents": [_summary(a) for a in ordered]})
        return
    rows = [
        (
            a.name,
            a.kind,
            a.prefix,
            a.origin + (" (overrides built-in)" if a.name in roster.overridden else ""),
            ("exempt " if a.exempt_from_dropout else "") + a.description,
        )
        for a in ordered
    ]
    out(format_columns(("NAME", "KIND", "PREFIX", "ORIGIN", "DESCRIPTION"), rows, max_last=90))


@app.command("show")
def show(
    name: Annotated[str, typer.Argument(metavar="NAME", help="Agent name, e.g. fd-safety.")],
    project: ProjectOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the whole definition as JSON.")] = False,
) -> None:
    """Print one agent's definition: its front matter and instructions."""
    agent = _roster(project).get(name)
    if as_json:
        out_json(agent.model_dump(mode="json"))
        return
    header = agent.model_dump(mode="json", exclude={"instructions", "source", "origin"})
    lines = [f"# {agent.name} ({agent.origin}: {agent.source})", ""]
    for key, value in header.items():
        lines.append(f"{key}: {value}")
    out("\n".join(lines) + "\n\n" + agent.instructions)
