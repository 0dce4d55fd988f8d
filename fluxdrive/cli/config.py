"""``fluxdrive config``: the effective configuration and where each value came from."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from fluxdrive._columns import format_columns
from fluxdrive._project import project_from_option
from fluxdrive.cli._io import out, out_json

if TYPE_CHECKING:  # the config models load only when a command runs
    from fluxdrive.config import LoadedConfig

SCHEMA_VERSION = 1

app = typer.Typer(help="Show the effective configuration.", no_args_is_help=True)


def _value(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def render_config(loaded: LoadedConfig) -> str:
    """The layers consulted, then KEY VALUE SOURCE for every key."""
    lines = ["Layers (later wins):"]
    for layer in loaded.layers:
        state = "present" if layer.present else "absent"
        lines.append(f"  {layer.name:<9} {layer.location} ({state})")
    rows = [(key, _value(value), source) for key, value, source in loaded.items()]
    return "\n".join(lines) + "\n\n" + format_columns(("KEY", "VALUE", "SOURCE"), rows)


@app.command("show")
def show(
    project: Annotated[
        Path | None,
        typer.Option(
            "--project",
            metavar="PATH",
            help="Project whose .fluxdrive/config.toml applies (default: current directory).",
        ),
    ] = None,
    assignments: Annotated[
        list[str] | None,
        typer.Option(
            "--set",
            metavar="KEY=VALUE",
            help="Override a key, e.g. --set dispatch.max_concurrency=4 (repeatable).",
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print as JSON.")] = False,
    only_changed: Annotated[bool, typer.Option("--changed", help="Only keys not at their default.")] = False,
) -> None:
    """Print every key's effective value and the layer that set it."""
    from fluxdrive.config import load_config, parse_assignments

    root = project_from_option(project)
    flags = parse_assignments(assignments or [])
    loaded = load_config(root, flags=flags, flag_labels={k: f"flag --set {k}" for k in flags})
    if as_json:
        values = {
            key: {"value": value, "source": source}
            for key, value, source in loaded.items()
            if not only_changed or source != "default"
        }
        out_json(
            {
                "schema_version": SCHEMA_VERSION,
                "project_root": str(root),
                "layers": [
                    {"name": layer.name, "location": layer.location, "present": layer.present}
                    for layer in loaded.layers
                ],
                "values": values,
            }
        )
        return
    if only_changed:
        rows = [(k, _value(v), s) for k, v, s in loaded.items() if s != "default"]
        out(format_columns(("KEY", "VALUE", "SOURCE"), rows) if rows else "All keys at their defaults.")
        return
    out(render_config(loaded))
