"""``fluxdrive fix [RUN] [--apply] [--unsafe]``: a review's suggested fixes, as a diff or written to the files.

Dry run by default: the unified diff of every fix is printed and nothing is written. ``--apply`` writes
the files the fixes change (atomically, only inside the project root, symlinks resolved) and nothing
else. Only fixes ruff marks ``safe`` are used unless ``--unsafe``. Exit codes: 0 done (or nothing to
fix); 2 a fix's lines changed since the review, a file is outside the project, or the run is unreadable
- one line, nothing written.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from fluxdrive.cli._io import note, out
from fluxdrive.cli.publish import OutputDir, ProjectRoot, latest_run
from fluxdrive.core.project import find_project_root


def fix_command(
    output_dir: OutputDir = None,
    apply: Annotated[
        bool, typer.Option("--apply", help="Write the fixes to the files (default: print the diff).")
    ] = False,
    unsafe: Annotated[
        bool,
        typer.Option("--unsafe", help="Also use fixes that change behaviour (ruff's 'unsafe', fluxdrive's rewrites)."),
    ] = False,
    project: ProjectRoot = None,
) -> None:
    """Print the unified diff of the review's suggested fixes; with --apply, write them (exit 2 if a fixed
    line changed since the review)."""
    from fluxdrive.fixes import plan_fixes, write_fixes

    directory = output_dir if output_dir is not None else latest_run(Path.cwd())
    root = find_project_root(project or Path.cwd())
    plan = plan_fixes(directory, root, unsafe=unsafe)
    if plan.files:
        out(plan.diff().rstrip("\n"))
    for suggestion, why in plan.left:
        note(f"not applied: {suggestion.path}:{suggestion.start} ({suggestion.source}): {why}")
    if not plan.files:
        note("no fix to apply")
        return
    if apply:
        written = write_fixes(plan, root)
        note(f"applied {len(plan.applied)} fix(es) to {len(written)} file(s)")
    else:
        note(f"{len(plan.applied)} fix(es) in {len(plan.files)} file(s); --apply writes them")
