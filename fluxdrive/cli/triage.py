"""``fluxdrive triage``: phase 1 only - profile, domains, scores, stages - and the approval gate."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from fluxdrive.cli._io import out, read_stdin, warn
from fluxdrive.errors import UsageError

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


def approve(result: object, *, yes: bool, stream_to_stderr: bool = False) -> bool:
    """Run the approval gate unless --yes; False when the person rejected the plan."""
    from fluxdrive.triage.engine import Triage
    from fluxdrive.triage.gate import Decision, run_gate

    assert isinstance(result, Triage)
    if yes:
        return True
    if not (sys.stdin.isatty() and (sys.stdout.isatty() or stream_to_stderr)):
        raise UsageError(
            "the triage needs approval, and there is no terminal to ask in",
            hint="run it in a terminal, or pass --yes to approve the plan as computed",
        )

    def write(text: str) -> None:
        (sys.stderr if stream_to_stderr else sys.stdout).write(text if text.endswith("\n") else text + "\n")

    def read(prompt: str) -> str:
        write(prompt)
        return input()

    import shutil

    return run_gate(result, read, write, width=shutil.get_terminal_size((120, 24)).columns) is Decision.APPROVED


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
    from fluxdrive.config import load_config
    from fluxdrive.launch.plan import apply_cost_model
    from fluxdrive.launch.runtimes import RuntimePool
    from fluxdrive.runtimes import runtime_class
    from fluxdrive.triage import render_table, triage_target, write_outputs
    from fluxdrive.triage.engine import dumps
    from fluxdrive.workspace import claim_output_dir, output_dir_for, resolve_target, run_lock

    given = one_target(target)
    stdin_text = read_stdin() if given == "-" else None
    resolved = resolve_target(given, diff_ref=diff, staged=staged, stdin_text=stdin_text, project=project)
    flags = {"trust.project_config": True} if trust_project_config else {}
    loaded = load_config(resolved.root, flags=flags, revision=resolved.settings_revision)
    config = loaded.config
    directory = claim_output_dir(output_dir_for(resolved, output_dir), resolved)
    with run_lock(directory, command="triage"):
        result = triage_target(resolved, config, use_cache=not no_cache)
        runtime_class(runtime)  # an unknown name fails with a suggestion
        apply_cost_model(result, RuntimePool(runtime, model), config, model)
        for note in [*loaded.notes(), *result.notes]:
            warn(note)
        approved = approve(result, yes=yes, stream_to_stderr=as_json)
        write_outputs(result, directory)
    if not approved:
        out("rejected at the approval gate; nothing was dispatched")
        raise typer.Exit(0)
    out(
        dumps(result)
        if as_json
        else render_table(result) + f"\nWritten: {directory}/triage.json, triage-table.md, input-profile.json"
    )
