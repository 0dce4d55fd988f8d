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
    from fluxdrive import api

    def review(target: str, *, cwd: Path, output_dir: Path, stdin_text: str | None) -> Any:
        settings = api.ReviewSettings(
            yes=True,
            runtime=runtime,
            model=model,
            agents=tuple(agents or ()),
            output_dir=output_dir,
            cwd=cwd,
            stdin_text=stdin_text,
            overrides={"synthesis.measured": False},  # what past runs measured must not feed back into this one
        )
        return api.run(target, settings)

    return review


def _evaluate(
    fixtures: Path, runtime: str, model: str | None, agents: list[str] | None, *, qualify: bool
) -> tuple[dict[str, Any], Any, list[str]]:
    """Run the suite, gate it with eval.thresholds, record it in the history: (document, run, reasons)."""
    from fluxdrive.cli._io import warn
    from fluxdrive.config.loader import load_config
    from fluxdrive.eval import find_fixtures, render_json, run_eval
    from fluxdrive.eval.gate import gate
    from fluxdrive.eval.judged import judged
    from fluxdrive.runs.history import HistoryUnavailableError, open_history, record_eval
    from fluxdrive.runs.precision import record as record_precision

    found = find_fixtures(fixtures)
    thresholds = load_config(Path.cwd()).config.eval.thresholds
    note(f"eval: {len(found)} fixture(s), runtime {runtime}" + (f", model {model}" if model else ""))
    result = run_eval(found, _review(runtime, model, agents), {"runtime": runtime, "model": model, "agents": agents})
    document = render_json(result)
    reasons = gate(document, thresholds)
    document["gate"] = {"passed": not reasons, "reasons": reasons}
    try:
        with open_history() as connection:
            record_eval(connection, document, suite=str(fixtures.resolve()), reasons=reasons, qualify=qualify)
            record_precision(connection, judged(result))  # each finding right or wrong: measured precision
    except HistoryUnavailableError as error:
        warn(f"{error}; the eval run is not recorded")
    return document, result, reasons


def _spread(repeats: list[dict[str, Any]]) -> str:
    """min / median / max of the overall metrics over the repeats."""
    import statistics

    parts = []
    for name in ("recall", "recall_p0p1", "precision", "f1"):
        values = [m[name] for m in repeats if m.get(name) is not None]
        if values:
            low, mid, high = min(values), statistics.median(values), max(values)
            parts.append(f"{name} {low * 100:.0f}/{mid * 100:.0f}/{high * 100:.0f}%")
    return f"over {len(repeats)} runs (min/median/max): " + ", ".join(parts)


def _gate_lines(reasons: list[str]) -> str:
    return "gate: PASS" if not reasons else "gate: FAIL\n" + "\n".join(f"  {r}" for r in reasons)


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
    repeat: Annotated[
        int, typer.Option("--repeat", min=1, max=50, help="Run the suite N times (LLM runs vary) and show the spread.")
    ] = 1,
) -> None:
    """Review every fixture and print recall, precision, F1, severity and location accuracy, decoys flagged.

    The run is gated by eval.thresholds (a P0 miss fails) and recorded in the history database.
    Exit codes: 0 the gate passes (and nothing regressed below --fail-below), 1 the gate fails or a
    metric regressed, 2 a malformed fixture or option.
    """
    from fluxdrive.core.atomic import atomic_write_json
    from fluxdrive.eval import render_table
    from fluxdrive.eval.compare import load_run, regressions

    baseline = load_run(fail_below) if fail_below is not None else None
    chosen = [a.strip() for a in agents.split(",") if a.strip()] if agents else None
    runs = [_evaluate(fixtures, runtime, model, chosen, qualify=False) for _ in range(repeat)]
    document, result, reasons = runs[-1]
    if repeat > 1:
        document["repeats"] = [d["overall"]["metrics"] for d, _r, _g in runs]
    if json_out is not None:
        atomic_write_json(json_out, document)
    if as_json:
        out_json(document)
    else:
        out(render_table(result))
        if repeat > 1:
            out(_spread(document["repeats"]))
        out(_gate_lines(reasons))
    worse = regressions(document, baseline) if baseline is not None else []
    for line in worse:
        note(f"regression: {line}")
    if reasons or worse:  # the exit code is the gate's: CI must not read "gate: FAIL" as a pass
        raise typer.Exit(1)


@app.command("qualify")
def qualify(
    model: Annotated[str, typer.Option("--model", metavar="MODEL", help="The model to qualify, e.g. openai:gpt-4o.")],
    fixtures: Annotated[Path, typer.Argument(help="The suite (default: evals/).")] = Path("evals"),
    runtime: Annotated[str, typer.Option("--runtime", metavar="NAME", help="llm or cli-agent.")] = "llm",
) -> None:
    """Run the suite with a model, apply eval.thresholds, record the result; exit 1 when it does not qualify."""
    from fluxdrive.eval import render_table

    _document, result, reasons = _evaluate(fixtures, runtime, model, None, qualify=True)
    out(render_table(result))
    out(_gate_lines(reasons).replace("gate:", f"qualify {model}:"))
    if reasons:
        raise typer.Exit(1)


@app.command("compare")
def compare_runs(
    run_a: Annotated[Path, typer.Argument(help="The first run's JSON (eval run --json), e.g. before a change.")],
    run_b: Annotated[Path, typer.Argument(help="The second run's JSON, e.g. after it.")],
) -> None:
    """Every metric of two runs with its delta, and the fixtures whose results moved."""
    from fluxdrive.eval.compare import compare, load_run

    out(compare(load_run(run_a), load_run(run_b)))


@app.command("report")
def report(
    run_json: Annotated[
        Path, typer.Argument(help="A run's JSON (eval run --json), or a suite directory (its baseline.json).")
    ],
    fmt: Annotated[
        str, typer.Option("--format", metavar="FORMAT", help="md, json, html or summary (per lane, as in the README).")
    ] = "md",
) -> None:
    """A recorded run as markdown, JSON, a self-contained HTML page (misses and decoys hit included) or a summary."""
    from fluxdrive.errors import UsageError
    from fluxdrive.eval.compare import load_run
    from fluxdrive.eval.formats import RENDERERS, render

    if fmt not in RENDERERS:
        raise UsageError(f"--format {fmt}: expected " + ", ".join(RENDERERS))
    out(render(load_run(run_json), fmt).rstrip("\n"))


@app.command("baseline")
def baseline(
    fixtures: Annotated[Path, typer.Argument(help="The suite (default: evals/).")] = Path("evals"),
    output: Annotated[
        Path | None, typer.Option("--out", metavar="FILE", help="Where to write it (default: SUITE/baseline.json).")
    ] = None,
) -> None:
    """Run the suite with the static runtime and write the baseline that eval run --fail-below holds to."""
    from fluxdrive.core.atomic import atomic_write_json
    from fluxdrive.eval.compare import BASELINE

    document, _result, _reasons = _evaluate(fixtures, "static", None, None, qualify=False)
    target = output if output is not None else fixtures / BASELINE
    atomic_write_json(target, document)
    out(f"baseline written to {target}: {len(document['fixtures'])} fixture(s)")


@app.command("import")
def import_benchmark(
    benchmark: Annotated[
        str,
        typer.Argument(
            metavar="FORMAT", help="The benchmark's format: aacr (AACR-Bench), ossf-cve (OpenSSF CVE Benchmark)."
        ),
    ],
    source: Annotated[
        Path,
        typer.Argument(help="The benchmark's data (aacr: the dir with positive_samples.json; ossf-cve: its checkout)."),
    ],
    directory: Annotated[Path, typer.Argument(help="Where the fixtures are written (existing ones are kept).")],
    limit: Annotated[
        int | None, typer.Option("--limit", min=1, help="Import at most N cases, PRs or CVEs (dataset order).")
    ] = None,
    language: Annotated[
        str | None,
        typer.Option("--language", metavar="L", help="Only cases whose language is L (Go, C++, TypeScript...)."),
    ] = None,
    repos: Annotated[
        Path | None,
        typer.Option("--repos", metavar="DIR", help="Upstream repositories as owner+name/ (default SOURCE/repos)."),
    ] = None,
) -> None:
    """Turn a public code-review benchmark with line-level ground truth into diff fixtures.

    Exit codes: 0 the import ran (the summary says what was skipped and why), 2 bad input (unknown
    FORMAT, unreadable data, no repositories directory).
    """
    from fluxdrive.eval.importers import Options
    from fluxdrive.eval.importers import import_benchmark as run_import

    summary = run_import(benchmark, source, directory, Options(limit=limit, language=language, repos=repos))
    for line in summary.lines():
        out(line)


@app.command("mine")
def mine_history(
    directory: Annotated[Path, typer.Argument(help="Where to write the fixtures (created if missing).")],
    since: Annotated[
        str | None, typer.Option("--since", metavar="DATE", help="Only commits after DATE (YYYY-MM-DD).")
    ] = None,
    limit: Annotated[int | None, typer.Option("--limit", min=1, metavar="N", help="The newest N fixes only.")] = None,
    repo: Annotated[Path, typer.Option("--repo", metavar="PATH", help="The repository (default: this one).")] = Path(),
    negatives: Annotated[
        int | None, typer.Option("--negatives", min=0, metavar="N", help="Clean changes to write (default: as many).")
    ] = None,
    max_files: Annotated[int, typer.Option("--max-files", min=1, help="Skip fixes touching more code files.")] = 5,
) -> None:
    """Past bugs as fixtures: each fix commit's introducing change (SZZ), plus clean changes no fix touched.

    Exit codes: 0 done (the summary says what was written and skipped), 2 not a repository or a bad option.
    """
    import datetime

    from fluxdrive.errors import UsageError
    from fluxdrive.eval.mine import MineOptions, mine, render_summary

    if since is not None:
        try:
            datetime.date.fromisoformat(since)
        except ValueError:
            raise UsageError(f"--since {since}: expected a date as YYYY-MM-DD") from None
    options = MineOptions(since=since, limit=limit, negatives=negatives, max_files=max_files)
    out(render_summary(mine(repo.resolve(), directory, options), directory))
