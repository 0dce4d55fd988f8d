"""``fluxdrive agent run``: run one agent on a file, directory or document."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated

import typer

from fluxdrive.cli._io import out
from fluxdrive.cli.synthesize import FailOn, exit_for, fail_on_rank
from fluxdrive.errors import UsageError

app = typer.Typer(help="Run a single agent.", no_args_is_help=True)


@app.command("run")
def run(
    name: Annotated[str, typer.Argument(metavar="NAME", help="Agent name, e.g. fd-safety.")],
    path: Annotated[Path, typer.Argument(metavar="PATH", help="A file, directory or markdown document.")],
    output_dir: Annotated[
        Path | None,
        typer.Option(
            "--output-dir",
            metavar="DIR",
            help="Where NAME.md goes (default: docs/research/flux-drive/<stem>-<hash>).",
        ),
    ] = None,
    runtime: Annotated[
        str, typer.Option("--runtime", metavar="NAME", help="Runtime that executes the agent.")
    ] = "static",
    fail_on: FailOn = None,
) -> None:
    """Run agent NAME on PATH; write NAME.md, its verdict record and channel lines."""
    from fluxdrive.agents import load_roster
    from fluxdrive.config import load_config
    from fluxdrive.contracts import classify_output
    from fluxdrive.runtimes import AgentTask, ReviewContent, run_guarded, runtime_class
    from fluxdrive.workspace import claim_output_dir, default_output_dir, project_root, review_files, run_lock

    if fail_on is not None:
        fail_on_rank(fail_on)
    root = project_root(path)
    files = review_files(path, root)
    config = load_config(root).config
    agent = load_roster(root, trusted=config.trust.project_config).get(name)
    if agent.kind != "review":
        raise UsageError(
            f"{name} is a research agent",
            hint="research agents answer questions between review stages; run a review agent",
        )
    runtime_impl = runtime_class(runtime)()
    directory = claim_output_dir(output_dir or default_output_dir(root, path))
    is_document = path.is_file() and path.suffix.lower() in {".md", ".markdown", ".mdx"}
    content = ReviewContent(
        root=root,
        files=files,
        input_type="document" if is_document else ("file" if path.is_file() else "directory"),
        label=str(path),
    )
    timeout = config.dispatch.timeout_remote_s if runtime_impl.remote else config.dispatch.timeout_local_s
    task = AgentTask(agent, "", content, directory, directory / "peer-findings.jsonl", config, timeout)
    with run_lock(directory, command=f"agent run {agent.name}"):
        result = asyncio.run(run_guarded(runtime_impl, task))
    classified = classify_output(result.output_path)
    verdict = classified.verdict
    out(f"{agent.name}: {verdict} ({classified.reason}) -> {result.output_path}")
    for note in result.notes:
        out(f"  note: {note}")
    exit_for(verdict, fail_on or config.output.fail_on)
