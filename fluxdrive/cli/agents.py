"""``fluxdrive agents``: the built-in and project agent definitions."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from fluxdrive.cli._io import out, out_json
from fluxdrive.core.columns import format_columns
from fluxdrive.core.project import project_file, project_from_option

if TYPE_CHECKING:  # the definitions' pydantic models load only when a command runs
    from fluxdrive.agents import AgentDefinition, Roster


def _roster(project: Path | None) -> Roster:
    from fluxdrive.agents import load_roster

    return load_roster(project_from_option(project))


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
        "offline": not agent.needs_model,
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


@app.command("new")
def new(
    domains: Annotated[
        list[str] | None, typer.Argument(metavar="[DOMAIN]...", help="Domains to cover (default: the detected ones).")
    ] = None,
    project: ProjectOption = None,
    force: Annotated[bool, typer.Option("--force", help="Overwrite an existing project agent of that name.")] = False,
) -> None:
    """Write a project reviewer specialised in each domain to .fluxdrive/agents/ (it needs a model to run)."""
    from fluxdrive.agents import load_roster
    from fluxdrive.config import load_config
    from fluxdrive.core.atomic import atomic_write_text
    from fluxdrive.errors import UsageError
    from fluxdrive.triage.agent_gen import generate_agent
    from fluxdrive.triage.domains import detect_cached

    root = project_from_option(project)
    wanted = list(domains or [])
    if not wanted:
        detection = detect_cached(root, load_config(root).config.domains)
        wanted = [d.profile for d in detection.detected if d.profile != "general"]
        if not wanted:
            raise UsageError("no domain detected in this project", hint="name one: fluxdrive agents new web-api")
    for domain in wanted:
        roster = load_roster(root)
        name, text = generate_agent(domain, roster)
        # inside the project only: a committed .fluxdrive link must not carry the write (or a mkdir) outside
        path = project_file(root, Path(".fluxdrive") / "agents" / f"{name}.md", "the agent definition")
        if path.exists() and not force:
            out(f"{name}: {path} exists (pass --force to overwrite)")
            continue
        atomic_write_text(path, text)
        load_roster(root).get(name)  # what we wrote must load; a bad file would fail every later command
        out(f"{name}: wrote {path}")
