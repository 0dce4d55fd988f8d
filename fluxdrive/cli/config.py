"""``fluxdrive config``: the effective configuration and where each value came from."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from fluxdrive.cli._io import out, out_json
from fluxdrive.cli.triage import TrustProjectConfig
from fluxdrive.config.trust import TRUST_HINT
from fluxdrive.core.columns import format_columns
from fluxdrive.core.masking import scrub
from fluxdrive.core.project import project_from_option

if TYPE_CHECKING:  # the config models load only when a command runs
    from fluxdrive.config import LoadedConfig

SCHEMA_VERSION = 1

app = typer.Typer(help="Show the effective configuration.", no_args_is_help=True)


def _value(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def render_config(loaded: LoadedConfig, *, only_changed: bool = False) -> str:
    """The layers consulted, KEY VALUE SOURCE for every key, then what the project was not allowed to set."""
    lines = ["Layers (later wins):"]
    for layer in loaded.layers:
        state = "present" if layer.present else "absent"
        lines.append(f"  {layer.name:<9} {layer.location} ({state})")
    rows = [
        (key, _value(value), source) for key, value, source in loaded.items() if not only_changed or source != "default"
    ]
    text = format_columns(("KEY", "VALUE", "SOURCE"), rows) if rows else "All keys at their defaults."
    text = ("\n".join(lines) + "\n\n" if not only_changed else "") + text
    return text.rstrip("\n") + _render_ignored(loaded)


def _render_ignored(loaded: LoadedConfig) -> str:
    """The project's privileged settings that were ignored, each with why (README "Security model")."""
    if not loaded.ignored:
        return ""
    rows = [(item.key, _value(scrub(str(item.value))), f"it {item.reason}") for item in loaded.ignored]
    head = f"\n\nIgnored from {loaded.ignored[0].source} (the project is not trusted; {TRUST_HINT}):\n"
    return head + format_columns(("KEY", "VALUE", "WHY"), rows)


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
    trust_project_config: TrustProjectConfig = False,
) -> None:
    """Print every key's effective value and the layer that set it, and what the project was not allowed to set."""
    from fluxdrive.config import load_config, parse_assignments

    root = project_from_option(project)
    flags = parse_assignments(assignments or [])
    if trust_project_config:
        flags["trust.project_config"] = True
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
                "ignored": [
                    {"key": item.key, "value": scrub(str(item.value)), "source": item.source, "reason": item.reason}
                    for item in loaded.ignored
                ],
            }
        )
        return
    out(render_config(loaded, only_changed=only_changed))
