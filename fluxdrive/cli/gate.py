"""``fluxdrive gate``: review the change about to ship, and exit 0 (ship) or 1 (do not) for hooks and CI.

Thin: choose the change, plan the reviewers (:mod:`fluxdrive.triage.quality_gate`),
run the review, decide, write ``gate.json`` beside the review, print the
verdict and the decision. Exit codes: 0 pass, 1 fail (blocking findings, an
incomplete review, fd-safety missing on a ship-class change), 2 usage or
input error, 3 no verdict possible.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path
from typing import Annotated

import typer

from fluxdrive.cli._io import out, warn
from fluxdrive.errors import NothingToReviewError, UsageError

FAIL_ON = ("risky", "needs-changes", "never")


def _change(root: Path, diff: str | None, staged: bool) -> tuple[str | None, bool, str]:
    """(diff ref, staged, label): staged changes, else the working tree against HEAD, else the branch."""
    from fluxdrive.core import git as _git

    if diff is not None or staged:
        return diff, staged, f"changes since {diff}" if diff else "staged changes"
    if _git.diff(root, None, staged=True).strip():
        return None, True, "staged changes"
    if _git.diff(root, "HEAD").strip():
        return "HEAD", False, "working tree against HEAD"
    base = _git.merge_base(root)
    if base is not None:
        return base, False, f"branch against its merge-base {base[:12]}"
    raise NothingToReviewError("nothing to gate: no staged, unstaged or branch changes")


def _slug(label: str) -> str:
    """A folder name for the change a gate reviews: ``staged-changes``, ``working-tree-against-head``..."""
    return re.sub(r"[^a-z0-9]+", "-", label.lower()).strip("-")[:60] or "change"


def gate_command(
    diff: Annotated[str | None, typer.Option("--diff", metavar="REF", help="Gate the changes since a git ref.")] = None,
    staged: Annotated[bool, typer.Option("--staged", help="Gate the staged changes only.")] = False,
    fail_on: Annotated[
        str,
        typer.Option(
            "--fail-on", metavar="needs-changes|risky|never", help="Block at or above this verdict (P1 blocks)."
        ),
    ] = "needs-changes",
    skip_safety: Annotated[
        str | None,
        typer.Option(
            "--skip-safety",
            metavar="REASON",
            help="Let a ship-class change pass without fd-safety; the reason is recorded in gate.json.",
        ),
    ] = None,
    runtime: Annotated[str, typer.Option("--runtime", help="static (offline), llm or cli-agent.")] = "static",
    model: Annotated[str | None, typer.Option("--model", metavar="PROVIDER:MODEL", help="Model for llm.")] = None,
    output_dir: Annotated[
        Path | None, typer.Option("--output-dir", metavar="DIR", help="Where the review and gate.json go.")
    ] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress on stderr.")] = False,
) -> None:
    """Gate the change before shipping: staged, else uncommitted, else the branch; exit 1 blocks.

    A change under 20 lines in one file gets fd-quality plus what it forces:
    a ship-class path (plugin manifest, MCP config, hook script, keys,
    shell-out) or an added line that reaches a dangerous sink (shell, eval,
    deserialization, SQL, HTML) always needs fd-safety. An incomplete review
    fails closed. Writes gate.json with the gate's own run
    (docs/research/flux-drive/gate-<change>/).
    """
    from fluxdrive import api
    from fluxdrive.agents import load_roster
    from fluxdrive.core import git as _git
    from fluxdrive.core.atomic import atomic_write_json
    from fluxdrive.core.project import find_project_root
    from fluxdrive.exchange import verdicts
    from fluxdrive.launch.progress import PlainProgress, Recorder, heartbeat_from
    from fluxdrive.reports import render_console
    from fluxdrive.reports.console import agent_lines
    from fluxdrive.triage.quality_gate import SAFETY, decide, diff_size, plan_gate
    from fluxdrive.workspace import runs_root

    if fail_on not in FAIL_ON:
        raise UsageError(f"unknown --fail-on value {fail_on!r}", hint="use needs-changes, risky or never")
    root = find_project_root(Path.cwd())
    try:
        ref, staged, label = _change(root, diff, staged)
    except NothingToReviewError as exc:
        out(f"Gate: PASS ({exc})")
        raise typer.Exit(0) from None
    size = diff_size(_git.diff(root, ref, staged=staged))
    plan = plan_gate(size, load_roster(root).of_kind("review"))
    progress = Recorder() if quiet else PlainProgress(sys.stderr, heartbeat_s=heartbeat_from(os.environ))
    progress.phase(f"Gate: {label}, {size.lines} changed line(s) in {len(size.paths)} file(s)")
    for reason in plan.reasons:
        progress.phase(f"Gate: {reason}")
    settings = api.ReviewSettings(
        yes=True,
        agents=tuple(plan.agents or ()),
        agents_chosen_by="the gate's small-change plan",
        runtime=runtime,
        model=model,
        # its own folder: a gate never takes the place of the review of the same change
        output_dir=output_dir if output_dir is not None else runs_root(root) / f"gate-{_slug(label)}",
        diff_ref=ref,
        staged=staged,
        cwd=root,
    )
    run = api.run(None, settings, api.Interaction(progress=progress))
    result = run.synthesis
    if result is None:
        warn("no agent report to synthesize: the gate fails closed")
        raise typer.Exit(3)
    decision = decide(
        plan,
        verdict=result.verdict,
        incomplete=result.incomplete,
        completed=result.agents_completed,
        counts=result.counts(),
        fail_on=fail_on,
        skip_safety=skip_safety,
    )
    if decision.safety.startswith("skipped"):
        verdicts.write_verdict(
            run.output_dir, SAFETY, "NEEDS_ATTENTION",
            f"not run: skipped on a ship-class change ({skip_safety})", detail_path=None, tokens=0,
        )  # fmt: skip
    atomic_write_json(run.output_dir / "gate.json", decision.record())
    seconds = {n: r.usage.wall_s for n, r in (run.manifest.agents.items() if run.manifest else []) if r.usage}
    out(render_console(result, run.files, agents=agent_lines(result, seconds)))
    out(f"Gate: {'PASS' if decision.passed else 'FAIL'} - " + "; ".join(decision.reasons))
    if result.verdict == "error":
        raise typer.Exit(3)
    raise typer.Exit(0 if decision.passed else 1)
