"""``fluxdrive fleet run REPOS.txt``: review many repositories as jobs, gather one verdict table.

    fluxdrive fleet run REPOS.txt [--cluster ADDRESS] [--max-parallel N] [--runtime NAME]
                                  [--output-root DIR] [--format table|json] [--set KEY=VALUE]

The library is :mod:`fluxdrive.scale.fleet`.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Annotated

import typer

from fluxdrive.cli._io import out, warn
from fluxdrive.cli.synthesize import fail_on_rank
from fluxdrive.errors import UsageError

app = typer.Typer(
    short_help="Review many repositories as jobs (locally or on a Ray cluster) into one verdict table.",
    help=(
        "Review every repository listed in a file, at most --max-parallel at a time, each as its own job "
        "(a Ray task with --cluster, a local process otherwise), and print one verdict table. Each review's "
        "run lands in its repository (docs/research/flux-drive/), or under --output-root."
    ),
    no_args_is_help=True,
)


@app.command("run")
def run_command(
    repos: Annotated[
        Path,
        typer.Argument(metavar="REPOS.txt", help="One repository path per line (# comments; relative to the file)."),
    ],
    cluster: Annotated[
        str | None,
        typer.Option(
            "--cluster",
            metavar="ADDRESS",
            help="Ray cluster: auto, HOST:PORT or ray://HOST:10001 (default: RAY_ADDRESS; none: local processes).",
        ),
    ] = None,
    max_parallel: Annotated[int, typer.Option("--max-parallel", metavar="N", help="Reviews in flight at once.")] = 4,
    runtime: Annotated[str, typer.Option("--runtime", help="Runtime of every review: static, llm, cli-agent.")] = (
        "static"
    ),
    model: Annotated[str | None, typer.Option("--model", help="provider:model for the llm runtime.")] = None,
    agents: Annotated[
        str | None, typer.Option("--agents", help="Comma-separated agents for every review (skips triage's choice).")
    ] = None,
    output_root: Annotated[
        Path | None,
        typer.Option("--output-root", metavar="DIR", help="Write each run to DIR/<repo>-<hash> instead of the repo."),
    ] = None,
    output_format: Annotated[str, typer.Option("--format", help="table or json.")] = "table",
    fail_on: Annotated[
        str, typer.Option("--fail-on", help="Exit 1 when any repository is at or above: risky, needs-changes, never.")
    ] = "risky",
    assignments: Annotated[
        list[str] | None,
        typer.Option("--set", metavar="KEY=VALUE", help="A config override for every review (repeatable)."),
    ] = None,
    job_cpus: Annotated[
        float, typer.Option("--job-cpus", metavar="N", help="CPUs each review declares on the cluster.")
    ] = 1.0,
    yes: Annotated[
        bool,
        typer.Option("--yes", "-y", help="Accepted like every review command's; a fleet always approves its plans."),
    ] = False,
) -> None:
    """Review every repository of REPOS.txt; exit 3 if one could not be reviewed, 1 if one fails the gate."""
    from fluxdrive.config import parse_assignments
    from fluxdrive.scale.fleet import FleetJob, exit_code, output_dir_under, read_repos, render_table, run_fleet
    from fluxdrive.scale.ray_session import cluster_address

    if output_format not in ("table", "json"):
        raise UsageError(f"unknown --format {output_format!r}", hint="use table or json")
    if max_parallel < 1:
        raise UsageError("--max-parallel must be at least 1")
    if not job_cpus > 0:
        raise UsageError("--job-cpus must be positive")
    gate = fail_on_rank(fail_on)
    settings = parse_assignments(assignments or [])
    listed = read_repos(repos)
    root = output_root.resolve() if output_root is not None else None
    jobs = [
        FleetJob(
            str(repo),
            str(output_dir_under(root, repo)) if root is not None else None,
            runtime,
            model,
            tuple(a.strip() for a in agents.split(",") if a.strip()) if agents else None,
            settings,
        )
        for repo in listed
    ]
    address = cluster_address(cluster)
    where = f"the Ray cluster at {address}" if address else f"{min(max_parallel, len(jobs))} local process(es)"
    sys.stderr.write(f"fleet: {len(jobs)} repositories on {where}, at most {max_parallel} at a time\n")

    def said(row: object) -> None:
        from fluxdrive.scale.fleet import FleetRow

        if isinstance(row, FleetRow):
            shown = row.error if row.error else row.verdict
            sys.stderr.write(f"fleet: {Path(row.repo).name}: {shown} ({row.seconds:.1f} s)\n")

    rows = run_fleet(jobs, max_parallel=max_parallel, cluster=address, job_cpus=job_cpus, on_row=said)
    if output_format == "json":
        out(json.dumps({"repositories": [row.record() for row in rows]}, indent=2))
    else:
        out(render_table(rows, Path(os.path.commonpath([str(r) for r in listed])) if len(listed) > 1 else None))
    for row in rows:
        if row.error:
            warn(f"{row.repo}: {row.error}")
    raise typer.Exit(exit_code(rows, gate))
