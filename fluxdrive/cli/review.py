"""``fluxdrive review``: the whole protocol on one input - triage, approval, launch, synthesis."""

from __future__ import annotations

import math
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from fluxdrive.cli._flags import takes
from fluxdrive.cli._io import note, out, read_stdin, terminal, warn
from fluxdrive.cli.synthesize import AllowIncomplete, FailOn, exit_for, fail_on_rank
from fluxdrive.cli.triage import TargetArg, TrustProjectConfig, one_target
from fluxdrive.errors import EXIT_INTERRUPTED, NothingToReviewError, UsageError
from fluxdrive.launch.settings import ReviewSettings, flag_overrides

if TYPE_CHECKING:
    from fluxdrive.api import Interaction, ReviewRun

EXPAND = ("ask", "recommended", "all", "none")
FORMATS = ("console", "json", "markdown", "sarif", "codeclimate")
VERDICTS_FORMATS = ("fluxdrive", "clavain", "both")


def _ask(prompt: str) -> str:
    sys.stderr.write(prompt if prompt.endswith(" ") else prompt + " ")
    sys.stderr.flush()
    return input()


def _say(text: str) -> None:
    sys.stderr.write(text if text.endswith("\n") else text + "\n")


@dataclass(frozen=True)
class ReviewFlags:
    """``fluxdrive review``'s arguments and options, parsed by Typer (see :mod:`fluxdrive.cli._flags`)."""

    target: TargetArg = None
    yes: Annotated[
        bool, typer.Option("--yes", "-y", help="Approve the triage and accept the expansion recommendation.")
    ] = False
    expand: Annotated[
        str | None,
        typer.Option(
            "--expand",
            metavar="recommended|all|none|ask",
            help="After Stage 1: launch the recommended agents, all of Stage 2, none, or ask (default on a terminal).",
        ),
    ] = None
    agents: Annotated[
        str | None, typer.Option("--agents", metavar="A,B,C", help="Review with exactly these agents.")
    ] = None
    runtime: Annotated[
        str, typer.Option("--runtime", metavar="NAME", help="Runtime for the agents: static, llm or cli-agent.")
    ] = "static"
    model: Annotated[
        str | None,
        typer.Option(
            "--model",
            metavar="PROVIDER:MODEL",
            help="Model for --runtime llm, e.g. anthropic:claude-sonnet-4-6; for cli-agent the CLI's model, e.g. opus.",
        ),
    ] = None
    over_budget: Annotated[
        bool,
        typer.Option(
            "--over-budget",
            help="Dispatch even when the token estimate exceeds the budget (never past --max-cost / budget.max_usd).",
        ),
    ] = False
    max_cost: Annotated[
        float | None,
        typer.Option(
            "--max-cost",
            metavar="USD",
            min=0.000001,
            help="Hard cost ceiling in US dollars (budget.max_usd): refused before dispatch when the estimate is "
            "over it, and no model request starts that could pass it. --over-budget does not lift it.",
        ),
    ] = None
    llm_triage: Annotated[
        bool, typer.Option("--llm-triage", help="Let the model refine the base scores (0 stays absolute).")
    ] = False
    output_dir: Annotated[
        Path | None,
        typer.Option("--output-dir", metavar="DIR", help="Where reports go (default: docs/research/flux-drive/...)."),
    ] = None
    fail_on: FailOn = None
    allow_incomplete: AllowIncomplete = False
    output_format: Annotated[
        str,
        typer.Option(
            "--format",
            metavar="console|json|markdown|sarif|codeclimate",
            help="What to print on stdout (codeclimate: GitLab's Code Quality report).",
        ),
    ] = "console"
    timeout: Annotated[
        float | None, typer.Option("--timeout", metavar="SECONDS", help="Per-agent timeout (overrides config).")
    ] = None
    max_concurrency: Annotated[
        int | None, typer.Option("--max-concurrency", metavar="N", help="Agents in flight at once.")
    ] = None
    cluster: Annotated[
        str | None,
        typer.Option(
            "--cluster",
            metavar="ADDRESS",
            help="Run on a Ray cluster: auto, HOST:PORT or ray://HOST:10001 (default: config dispatch.cluster, "
            "then RAY_ADDRESS; without one the review runs here). Needs the cluster extra.",
        ),
    ] = None
    no_research: Annotated[bool, typer.Option("--no-research", help="Skip research between the stages.")] = False
    no_dropout: Annotated[bool, typer.Option("--no-dropout", help="Never drop redundant Stage 2 agents.")] = False
    diff: Annotated[str | None, typer.Option("--diff", metavar="REF", help="Review the changes since a git ref.")] = (
        None
    )
    staged: Annotated[bool, typer.Option("--staged", help="Review the staged changes.")] = False
    publish: Annotated[
        str | None,
        typer.Option(
            "--publish",
            metavar="github|checks|gitlab",
            help="Post the review to the pull request (GITHUB_TOKEN, Actions event): a review with inline "
            "comments and a summary comment, or a check run with annotations; gitlab: merge-request "
            "discussions and a summary note (GITLAB_TOKEN, CI_* variables).",
        ),
    ] = None
    line_filter: Annotated[
        str | None,
        typer.Option(
            "--filter",
            metavar="added|diff_context|file|nofilter",
            help="A diff review's findings (reviewdog's modes): on added lines (default), in the diff's hunks, "
            "in changed files, or all; the verdict follows, and the summary counts what was left out.",
        ),
    ] = None
    since_last: Annotated[
        bool, typer.Option("--since-last", help="Review what changed since this branch's last reviewed commit.")
    ] = False
    baseline: Annotated[
        Path | None,
        typer.Option(
            "--baseline",
            metavar="FILE",
            help="Report only findings not in this baseline (fluxdrive baseline write); say how many were suppressed.",
        ),
    ] = None
    import_sarif: Annotated[
        list[Path] | None,
        typer.Option(
            "--import-sarif",
            metavar="FILE",
            help="Bring another analyzer's SARIF 2.1.0 results (semgrep, CodeQL, bandit...) in as evidence: one "
            "at a fluxdrive finding's place about the same weakness corroborates it, any other is a finding of "
            "its own naming the tool and rule (repeatable; config imports.sarif).",
        ),
    ] = None
    project: Annotated[
        Path | None,
        typer.Option(
            "--project",
            metavar="DIR",
            help="The project the input belongs to (default: the git repository of the input or, for a diff, "
            "the one its paths are in).",
        ),
    ] = None
    assignments: Annotated[
        list[str] | None,
        typer.Option("--set", metavar="KEY=VALUE", help="Override a config key for this run (repeatable)."),
    ] = None
    verdicts_format: Annotated[
        str | None,
        typer.Option(
            "--verdicts-format",
            metavar="fluxdrive|clavain|both",
            help="Also write Clavain verdict records to .clavain/verdicts/ (clavain, both); "
            "default: config verdicts.format.",
        ),
    ] = None
    trust_project_config: TrustProjectConfig = False
    verbose: Annotated[bool, typer.Option("--verbose", help="List every finding, ignoring the output budget.")] = False
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress on stderr.")] = False

    def settings(self, stdin_text: str | None) -> ReviewSettings:
        """The review these flags ask for."""
        overrides = flag_overrides(
            timeout_s=self.timeout,
            max_concurrency=self.max_concurrency,
            research=not self.no_research,
            dropout=not self.no_dropout,
        )
        return ReviewSettings(
            diff_ref=self.diff,
            staged=self.staged,
            since_last=self.since_last,
            stdin_text=stdin_text,
            project=self.project,
            agents=tuple(a.strip() for a in (self.agents or "").split(",") if a.strip()),
            runtime=self.runtime,
            model=self.model,
            llm_triage=self.llm_triage,
            overrides={**_settings(self.assignments, self.verdicts_format, self.trust_project_config), **overrides},
            yes=self.yes,
            expand=self.expand,  # type: ignore[arg-type]
            over_budget=self.over_budget,
            max_usd=self.max_cost,
            output_dir=self.output_dir,
            baseline=self.baseline,
            import_sarif=tuple(self.import_sarif or ()),
            line_filter=self.line_filter,
        )


@takes(ReviewFlags)
def review_command(flags: ReviewFlags) -> None:
    """Review TARGET: triage, approval, Stage 1, research, expansion, Stage 2, synthesis; print the verdict."""
    from fluxdrive import api
    from fluxdrive.launch.progress import Recorder, heartbeat_from, progress_for
    from fluxdrive.reports import render_codeclimate, render_console, render_json, render_sarif, render_summary
    from fluxdrive.reports.console import agent_lines, colour_verdict

    _check_options(flags)
    output_format, fail_on = flags.output_format, flags.fail_on
    given = one_target(flags.target)
    interactive = sys.stdin.isatty() and sys.stderr.isatty() and given != "-"
    stdin_text = read_stdin() if given == "-" else None
    quiet = flags.quiet
    beat = heartbeat_from(os.environ)
    progress = Recorder() if quiet else progress_for(sys.stderr, live=interactive, heartbeat_s=beat)
    talk = api.Interaction(progress=progress, ask=_ask if interactive else None, say=_say)
    run = _run(given, flags.settings(stdin_text), talk, flags.cluster, output_format)
    if not run.approved:
        out("rejected at the approval gate; nothing was dispatched")
        raise typer.Exit(0)
    result = run.synthesis
    if result is None:
        warn("no agent report to synthesize")
        raise typer.Exit(EXIT_INTERRUPTED if run.interrupted else 3)
    _say_notes(result.notes, run.notes, [] if quiet else result.info)
    budget = 4000
    if run.triage is not None:
        budget = run.triage.config.output.stdout_budget_chars
    seconds = {
        name: record.usage.wall_s
        for name, record in (run.manifest.agents.items() if run.manifest else [])
        if record.usage
    }
    if output_format == "json":
        out(render_json(result))
    elif output_format == "markdown":
        out(render_summary(result))
    elif output_format == "sarif":
        out(render_sarif(result))
    elif output_format == "codeclimate":
        out(render_codeclimate(result))
    else:
        width, colour = terminal()
        lines = agent_lines(result, seconds)
        text = render_console(result, run.files, budget=budget, verbose=flags.verbose, agents=lines, width=width)
        out(text, colour=colour_verdict if colour else None, verdict=result.verdict)
    if run.interrupted:
        warn("interrupted: the report covers the agents that finished")
        raise typer.Exit(EXIT_INTERRUPTED)
    if flags.publish is not None:
        _publish(flags.publish, run, fail_on)
    output = run.triage.config.output if run.triage else None
    exit_for(
        result.verdict,
        fail_on or (output.fail_on if output else "risky"),
        incomplete=bool(result.incomplete),
        allow_incomplete=flags.allow_incomplete or bool(output and output.allow_incomplete),
    )


def _check_options(flags: ReviewFlags) -> None:
    """Every option checked before anything runs: one line and exit 2 for a bad value."""
    fail_on, expand, publish, output_format = flags.fail_on, flags.expand, flags.publish, flags.output_format
    timeout, max_concurrency = flags.timeout, flags.max_concurrency
    if fail_on is not None:
        fail_on_rank(fail_on)
    if expand is not None and expand not in EXPAND:
        raise UsageError(f"unknown --expand value {expand!r}", hint="use recommended, all, none or ask")
    if flags.line_filter is not None:
        from fluxdrive.reports.diff_filter import check_mode

        check_mode(flags.line_filter)
    if publish is not None:
        from fluxdrive.publish.registry import resolve

        resolve(publish)  # a publisher or an alias (checks), else one line naming them
    if output_format not in FORMATS:
        raise UsageError(f"unknown --format {output_format!r}", hint="use " + ", ".join(FORMATS))
    if timeout is not None and not (math.isfinite(timeout) and timeout > 0):
        raise UsageError(f"--timeout must be a positive number of seconds, got {timeout}")
    if max_concurrency is not None and max_concurrency < 1:
        raise UsageError("--max-concurrency must be at least 1")


def _publish(where: str, run: ReviewRun, fail_on: str | None) -> None:
    """``--publish github|checks|gitlab``: the finished run to the pull/merge request (one line, exit 2 on failure)."""
    import os

    from fluxdrive.publish import post
    from fluxdrive.publish.registry import resolve

    forge, mode = resolve(where)
    root = Path(run.triage.profile.root) if run.triage else Path.cwd()
    output = run.triage.config.output.fail_on if run.triage else "risky"
    result = post(forge, run.output_dir, root=root, env=os.environ, mode=mode, fail_on=fail_on or output)
    for text in [forge.describe(result), *result.notes]:
        note(text)


def _say_notes(warnings: list[str], after: list[str], info: list[str]) -> None:
    """Warnings (also what happened after synthesis) as warnings; what the run also did as plain notes."""
    for text in dict.fromkeys([*warnings, *after]):
        warn(text)
    for text in info:
        note(text)


def _settings(assignments: list[str] | None, verdicts_format: str | None, trust: bool = False) -> dict[str, Any]:
    """The --set assignments, --verdicts-format as config verdicts.format, --trust-project-config."""
    from fluxdrive.config import parse_assignments

    settings = parse_assignments(assignments or [])
    if trust:
        settings["trust.project_config"] = True
    if verdicts_format is not None:
        if verdicts_format not in VERDICTS_FORMATS:
            raise UsageError(f"unknown --verdicts-format {verdicts_format!r}", hint="use fluxdrive, clavain or both")
        settings["verdicts.format"] = verdicts_format
    return settings


def _run(
    target: str | list[str] | None, settings: ReviewSettings, talk: Interaction, cluster: str | None, output_format: str
) -> ReviewRun:
    """The review, with an empty diff ending the command as a pass."""
    from fluxdrive import api

    try:
        return api.run(target, settings, talk, cluster=cluster)
    except NothingToReviewError as exc:
        _nothing_to_review(exc, output_format)
        raise typer.Exit(0) from None


def _nothing_to_review(reason: NothingToReviewError, output_format: str) -> None:
    """An empty diff passes (exit 0): a line on stderr, and for machine formats a valid, empty document."""
    import json

    from fluxdrive.reports.sarif import SARIF_SCHEMA, empty_run

    if output_format in ("sarif", "json", "codeclimate"):
        warn(f"nothing to review: {reason.message}")
    if output_format == "codeclimate":
        out("[]")  # GitLab's Code Quality report with no issues
    elif output_format == "sarif":
        log = {"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [empty_run()]}
        out(json.dumps(log, indent=2))
    elif output_format == "json":
        out(json.dumps({"verdict": None, "nothing_to_review": True, "reason": reason.message, "findings": []}))
    else:
        out(f"Nothing to review: {reason.message}")
