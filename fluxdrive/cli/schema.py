"""``fluxdrive schema``: the JSON Schemas of the files fluxdrive writes."""

from __future__ import annotations

import typer

from fluxdrive.cli._io import out_json

app = typer.Typer(help="Print the JSON Schema of a file format.", no_args_is_help=True)


@app.command("findings")
def findings() -> None:
    """The JSON Schema of findings.json."""
    from fluxdrive.reports import json_schema

    out_json(json_schema())


@app.command("run")
def run() -> None:
    """The JSON Schema of run.json (written by launch, read by synthesis)."""
    from fluxdrive.contracts.run_manifest import RunManifest

    schema = RunManifest.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "fluxdrive run.json"
    out_json(schema)


@app.command("ground-truth")
def ground_truth() -> None:
    """The JSON Schema of an eval fixture's ground-truth.json (fluxdrive eval)."""
    from fluxdrive.eval import ground_truth_schema

    out_json(ground_truth_schema())
