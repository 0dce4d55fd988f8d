"""``fluxdrive eval``: run a reviewer over fixtures with ground truth and measure what it found."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

import typer

from fluxdrive.cli._io import note, out, out_json

app = typer.Typer(
    help="Measure a reviewer, model or configuration against fixtures with ground truth (evals/README.md).",
    no_args_is_help=True,
)

InputChoice = Literal["document", "project", "diff"]


@app.command("new")
def new(
    directory: Annotated[Path, typer.Argument(help="The fixture directory to create (its name is the fixture_id).")],
    input_kind: Annotated[
        str, typer.Option("--input", metavar="KIND", help="document (document.md), project (project/) or diff.")
    ] = "project",
) -> None:
    """Scaffold a fixture: ground-truth.json to fill in and an input of the kind asked for."""
    from fluxdrive.errors import UsageError
    from fluxdrive.eval import scaffold

    if input_kind not in ("document", "project", "diff"):
        raise UsageError(f"--input {input_kind}: expected document, project or diff")
    kind: Any = input_kind
    for path in scaffold(directory, kind):
        out(str(path))


def _review(runtime: str, model: str | None, agents: list[str] | None) -> Any:
    """A review function for the runner: the user's review, non-interactive and quiet."""
    from fluxdrive.launch.review import ReviewOptions, run_review

    def review(target: str, *, cwd: Path, output_dir: Path, stdin_text: str | None) -> Any:
        options = ReviewOptions(
            yes=True,
            runtime=runtime,
            model=model,
            agents=agents,
            output_dir=output_dir,
            cwd=cwd,
            stdin_text=stdin_text,
        )
        return run_review(target, options)

    return review


@app.command("run")
def run(
    fixtures: Annotated[Path, typer.Argument(help="A fixture directory, or a directory of them (evals/).")],
    runtime: Annotated[str, typer.Option("--runtime", metavar="NAME", help="static, llm or cli-agent.")] = "static",
    model: Annotated[str | None, typer.Option("--model", metavar="MODEL", help="Model for --runtime llm.")] = None,
    agents: Annotated[
        str | None, typer.Option("--agents", metavar="A,B,C", help="Review with exactly these agents.")
    ] = None,
    json_out: Annotated[
        Path | None, typer.Option("--json", metavar="FILE", help="Also write every pair, miss and metric here.")
    ] = None,
    as_json: Annotated[bool, typer.Option("--as-json", help="Print the JSON instead of the table.")] = False,
    fail_below: Annotated[
        Path | None,
        typer.Option("--fail-below", metavar="BASELINE", help="Exit 1 when an overall metric drops below this run's."),
    ] = None,
) -> None:
    """Review every fixture and print recall, precision, F1, severity and location accuracy, decoys flagged."""
    from fluxdrive._atomic import atomic_write_json
    from fluxdrive.eval import find_fixtures, render_json, render_table, run_eval
    from fluxdrive.eval.compare import load_run, regressions

    baseline = load_run(fail_below) if fail_below is not None else None
    chosen = [a.strip() for a in agents.split(",") if a.strip()] if agents else None
    found = find_fixtures(fixtures)
    note(f"eval: {len(found)} fixture(s), runtime {runtime}" + (f", model {model}" if model else ""))
    result = run_eval(found, _review(runtime, model, chosen), {"runtime": runtime, "model": model, "agents": chosen})
    document = render_json(result)
    if json_out is not None:
        atomic_write_json(json_out, document)
    if as_json:
        out_json(document)
    else:
        out(render_table(result))
    if baseline is not None:
        worse = regressions(document, baseline)
        for line in worse:
            note(f"regression: {line}")
        if worse:
            raise typer.Exit(1)


@app.command("compare")
def compare_runs(
    run_a: Annotated[Path, typer.Argument(help="The first run's JSON (eval run --json), e.g. before a change.")],
    run_b: Annotated[Path, typer.Argument(help="The second run's JSON, e.g. after it.")],
) -> None:
    """Every metric of two runs with its delta, and the fixtures whose results moved."""
    from fluxdrive.eval.compare import compare, load_run

    out(compare(load_run(run_a), load_run(run_b)))
