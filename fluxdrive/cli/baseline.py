"""``fluxdrive baseline``: record a review's findings so later reviews report only new ones.

    fluxdrive baseline write [OUTPUT_DIR] [-o FILE] [--project DIR]

OUTPUT_DIR defaults to the latest run under ``PROJECT_ROOT/docs/research/flux-drive/``
(found as ``fluxdrive verdicts`` finds it); FILE to ``PROJECT_ROOT/.fluxdrive/baseline.json``.
The library is :mod:`fluxdrive.runs.baseline`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from fluxdrive.cli._io import out
from fluxdrive.cli.verdicts import _latest_run
from fluxdrive.core.project import find_project_root, project_file, project_from_option
from fluxdrive.errors import InputError
from fluxdrive.runs import baseline

app = typer.Typer(
    short_help="Record a review's findings as the baseline later reviews suppress.",
    help=(
        "Record a review's findings by fingerprint (not line number) in a baseline file; "
        "'fluxdrive review --baseline FILE' then reports only findings the baseline does not hold."
    ),
    no_args_is_help=True,
)


def _run_dir(given: Path | None) -> Path:
    if given is not None:
        return given
    latest = _latest_run(Path.cwd())
    if latest is None:
        raise InputError(
            "no runs under docs/research/flux-drive/",
            hint="review first, or pass the run's output directory: fluxdrive baseline write DIR",
        )
    return latest


def _root(project: Path | None, run: baseline.RunFindings) -> Path:
    if project is not None:
        return project_from_option(project)
    recorded = Path(run.project_root) if run.project_root else None
    if recorded is not None and recorded.is_absolute() and recorded.is_dir():
        return recorded
    return find_project_root(run.directory)


@app.command("write")
def write(
    output_dir: Annotated[
        Path | None,
        typer.Argument(
            metavar="[OUTPUT_DIR]",
            help="The review's output directory (default: the latest run under docs/research/flux-drive/).",
        ),
    ] = None,
    output: Annotated[
        Path | None,
        typer.Option("--output", "-o", metavar="FILE", help="The baseline file (default: .fluxdrive/baseline.json)."),
    ] = None,
    project: Annotated[
        Path | None,
        typer.Option(
            "--project",
            metavar="DIR",
            help="Project the findings' paths are relative to (default: the one the run recorded).",
        ),
    ] = None,
) -> None:
    """Write FILE atomically from OUTPUT_DIR's findings.json (refuses to overwrite a file that is not a baseline)."""
    run = baseline.read_run(_run_dir(output_dir))
    root = _root(project, run)
    # the default lives in the project: a committed .fluxdrive link must not carry the write outside it
    path = output if output is not None else project_file(root, baseline.DEFAULT_BASELINE, "the baseline file")
    before = baseline.fingerprints_in(path)
    written = baseline.write_baseline(
        path, run.findings, root, seen_at=run.reviewed or None, source=baseline.shown_path(run.directory, root)
    )
    now = written.fingerprints
    added, kept, dropped = len(now - before), len(now & before), len(before - now)
    change = f" ({added} new, {kept} kept, {dropped} dropped)" if before else ""
    out(f"baseline {baseline.shown_path(path, root)}: {len(written.entries)} finding(s) from {written.source}{change}")
