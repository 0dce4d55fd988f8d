"""``fluxdrive synthesize``: merge a directory of agent reports into one verdict."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from fluxdrive.cli._io import out, warn
from fluxdrive.errors import EXIT_FAIL_ON, EXIT_NO_VERDICT, UsageError

# "incomplete" ranks with "safe" here: what fails it is the incomplete check below (unless allowed).
VERDICT_RANK = {"safe": 0, "incomplete": 0, "needs-changes": 1, "risky": 2}
FAIL_ON_RANK = {"needs-changes": 1, "risky": 2, "never": 99}


def fail_on_rank(value: str) -> int:
    """The verdict rank at which a run exits 1 (validated)."""
    if value not in FAIL_ON_RANK:
        raise UsageError(f"unknown --fail-on value {value!r}", hint="use risky, needs-changes or never")
    return FAIL_ON_RANK[value]


def exit_for(verdict: str, fail_on: str, *, incomplete: bool = False, allow_incomplete: bool = False) -> None:
    """Exit 3 when no verdict was possible, 1 at or above --fail-on or when the review is incomplete
    (an agent failed, was cut off or could not be read) unless that is allowed, else return."""
    if verdict == "error":
        raise typer.Exit(EXIT_NO_VERDICT)
    if VERDICT_RANK[verdict] >= fail_on_rank(fail_on) or (incomplete and not allow_incomplete):
        raise typer.Exit(EXIT_FAIL_ON)


# Shared by every command that ends in a verdict (synthesize, review, agent): one flag, one help text.
FailOn = Annotated[
    str | None,
    typer.Option(
        "--fail-on",
        metavar="risky|needs-changes|never",
        help="Exit 1 at or above this verdict (default: config output.fail_on).",
    ),
]
AllowIncomplete = Annotated[
    bool,
    typer.Option(
        "--allow-incomplete",
        help="Do not fail when an agent failed, was cut off or wrote nothing readable (default: config "
        "output.allow_incomplete).",
    ),
]


def synthesize_command(
    output_dir: Annotated[
        Path, typer.Argument(metavar="OUTPUT_DIR", help="A run's output directory of <agent>.md reports.")
    ],
    as_json: Annotated[bool, typer.Option("--json", help="Print findings.json instead of the short report.")] = False,
    verbose: Annotated[bool, typer.Option("--verbose", help="List every finding, ignoring the output budget.")] = False,
    fail_on: FailOn = None,
    allow_incomplete: AllowIncomplete = False,
) -> None:
    """Validate, deduplicate and converge the reports in OUTPUT_DIR; write findings.json, summary.md, findings.sarif."""
    from fluxdrive.api import synthesize_run
    from fluxdrive.reports import render_console, render_json

    if fail_on is not None:
        fail_on_rank(fail_on)
    result, files, config = synthesize_run(output_dir)
    if as_json:
        out(render_json(result))
    else:
        out(render_console(result, files, budget=config.output.stdout_budget_chars, verbose=verbose))
    for note in result.notes:
        warn(note)
    exit_for(
        result.verdict,
        fail_on or config.output.fail_on,
        incomplete=bool(result.incomplete),
        allow_incomplete=allow_incomplete or config.output.allow_incomplete,
    )
