"""``fluxdrive triage``: phase 1 only - profile, domains, scores, stages - and the approval gate."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from fluxdrive.cli._io import out, read_stdin, warn

TargetArg = Annotated[
    list[str] | None,
    typer.Argument(
        metavar="TARGET...",
        help="A file, document, directory, diff file, or '-' for a diff on stdin; several files or directories "
        "are reviewed together (a pre-commit hook's file list).",
    ),
]

TrustProjectConfig = Annotated[
    bool,
    typer.Option(
        "--trust-project-config",
        help="Also use the privileged settings of the project's own files (runtimes, models, commands, addresses, "
        "budgets): only for a repository you trust (README 'Security model').",
    ),
]


def one_target(targets: list[str] | None) -> str | list[str] | None:
    """The TARGET argument as the library takes it: one path, a list of several, or None."""
    if not targets:
        return None
    return targets[0] if len(targets) == 1 else list(targets)


def gate(plan: object, *, stream_to_stderr: bool = False) -> object | None:
    """The approval gate on a terminal (stdout, or stderr when stdout carries JSON); None when rejected."""
    from fluxdrive.api import ReviewPlan, approve

    assert isinstance(plan, ReviewPlan)
    if plan.settings.yes:
        return plan
    if not (sys.stdin.isatty() and (sys.stdout.isatty() or stream_to_stderr)):
        return approve(plan)  # no terminal: one line, exit 2

    def write(text: str) -> None:
        (sys.stderr if stream_to_stderr else sys.stdout).write(text if text.endswith("\n") else text + "\n")

    def read(prompt: str) -> str:
        write(prompt)
        return input()

    return approve(plan, ask=read, say=write)


def triage_command(
    target: TargetArg = None,
    output_dir: Annotated[
        Path | None,
        typer.Option(
            "--output-dir",
            metavar="DIR",
            help="Where triage.json goes (default: docs/research/flux-drive/<stem>-<hash>).",
        ),
    ] = None,
    diff: Annotated[
        str | None, typer.Option("--diff", metavar="REF", help="Triage the changes since a git ref.")
    ] = None,
    staged: Annotated[bool, typer.Option("--staged", help="Triage the staged changes.")] = False,
    project: Annotated[
        Path | None,
        typer.Option("--project", metavar="DIR", help="The project the input belongs to (default: its repository)."),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print triage.json instead of the table.")] = False,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Approve the computed plan without asking.")] = False,
    no_cache: Annotated[
        bool, typer.Option("--no-cache", help="Detect domains again, ignoring .fluxdrive/domains.yaml.")
    ] = False,
    runtime: Annotated[
        str,
        typer.Option(
            "--runtime",
            metavar="NAME",
            help="Price the plan for this runtime: stages apply only when every candidate would exceed the budget.",
        ),
    ] = "static",
    model: Annotated[
        str | None, typer.Option("--model", metavar="PROVIDER:MODEL", help="Model the plan is priced for.")
    ] = None,
    trust_project_config: TrustProjectConfig = False,
) -> None:
    """Phase 1 only: profile the input, detect domains, score agents, assign stages; ask for approval."""
    from fluxdrive.api import ReviewPlan, ReviewSettings, plan_review
    from fluxdrive.launch.execute import write_plan
    from fluxdrive.triage import render_table
    from fluxdrive.triage.engine import dumps

    given = one_target(target)
    settings = ReviewSettings(
        diff_ref=diff,
        staged=staged,
        stdin_text=read_stdin() if given == "-" else None,
        project=project,
        runtime=runtime,
        model=model,
        use_cache=not no_cache,
        overrides={"trust.project_config": True} if trust_project_config else {},
        output_dir=output_dir,
        over_budget=True,  # shown, not refused: the plan says what review would need --over-budget for
        yes=yes,
    )
    plan = plan_review(given, settings, check_runtimes=False)
    for line in [*plan.notes, *(s for s in plan.steps if s.startswith("Budget:"))]:
        warn(line)
    approved = gate(plan, stream_to_stderr=as_json)
    if approved is None:
        write_plan(plan, command="triage")
        out("rejected at the approval gate; nothing was dispatched")
        raise typer.Exit(0)
    assert isinstance(approved, ReviewPlan)
    directory = write_plan(approved, command="triage")
    result = approved.triage
    out(
        dumps(result)
        if as_json
        else render_table(result) + f"\nWritten: {directory}/triage.json, triage-table.md, input-profile.json"
    )
