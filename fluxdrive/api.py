"""The review API every front door calls: plan, approve, execute, then read the run directory.

::

    plan = plan_review("src/", ReviewSettings(yes=True))    # frozen: what will run, at what cost
    plan = approve(plan, ask=input, say=print)              # the approval gate (None: rejected)
    run = execute(plan, backend=connect_backend(plan.config))   # None: this process; a Ray cluster
    RunDirectory(run.output_dir).findings()                 # the one typed reader of what it wrote

The CLI's ``review``, ``triage`` and ``gate``, the MCP server, fleet and
eval all go through :func:`plan_review`, so the plan a front door shows is
the plan a review runs. :func:`run_review` and :func:`review` with
:class:`ReviewOptions` are the library's older one-call entry points, kept as
a thin facade over the same road.
"""

from __future__ import annotations

import shutil
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fluxdrive.config.model import Config
from fluxdrive.core.interrupt import Interrupt
from fluxdrive.errors import FluxdriveError, ReviewError, UsageError
from fluxdrive.launch.execute import Interaction, ReviewRun, execute, expand_mode, reject
from fluxdrive.launch.plan import Ask, ReviewPlan, TargetArg, plan_review
from fluxdrive.launch.progress import Progress
from fluxdrive.launch.settings import ExpandChoice, ReviewSettings, flag_overrides
from fluxdrive.runtimes import Backend, Runtime
from fluxdrive.scale.backend import connect_backend
from fluxdrive.synthesis import Synthesis
from fluxdrive.triage.gate import Decision, run_gate

if TYPE_CHECKING:
    from fluxdrive.reports.diff_filter import FilterMode

__all__ = [
    "Interaction",
    "ReviewOptions",
    "ReviewPlan",
    "ReviewRun",
    "ReviewSettings",
    "approve",
    "connect_backend",
    "execute",
    "plan_review",
    "review",
    "run",
    "run_review",
    "synthesize_run",
]


def approve(plan: ReviewPlan, *, ask: Ask | None = None, say: Callable[[str], None] | None = None) -> ReviewPlan | None:
    """The approval gate: the plan as approved (a person may edit it), or None when rejected.

    ``settings.yes`` approves as computed; otherwise a person answers through ``ask``, and without one
    (a script, CI) this is one readable line and exit 2.
    """
    if plan.settings.yes:
        return plan
    if ask is None:
        raise UsageError(
            "the triage needs approval, and there is no terminal to ask in",
            hint="run it in a terminal, or pass --yes to approve the plan as computed",
        )
    width = shutil.get_terminal_size((120, 24)).columns
    decision, edited = run_gate(plan.triage, ask, say or _write_stdout, width=width)
    return plan.with_triage(edited) if decision is Decision.APPROVED else None


def run(
    target: TargetArg,
    settings: ReviewSettings,
    interaction: Interaction | None = None,
    *,
    cluster: str | None = None,
    backend: Backend | None = None,
) -> ReviewRun:
    """Plan, approve and execute one review (what ``fluxdrive review`` does). ``cluster`` (a Ray address, or
    the config's ``dispatch.backend``) picks the backend unless one is given."""
    talk = interaction or Interaction()
    expand_mode(settings, talk.ask)  # a script that cannot choose how to expand fails before anything runs
    chosen = backend

    def connect(config: Config) -> None:  # an unreachable cluster fails before the run's directory is claimed
        nonlocal chosen
        chosen = chosen or connect_backend(config, cluster)

    plan = plan_review(target, settings, ask=talk.ask, before_writing=connect)
    approved = approve(plan, ask=talk.ask, say=talk.say)
    if approved is None:
        if talk.progress is not None:
            talk.progress.close()
        return reject(plan)
    return execute(approved, chosen, talk)


def synthesize_run(output_dir: Path) -> tuple[Synthesis, list[Path], Config]:
    """Synthesize (again) the agent reports in a run's directory under its project's config, and write the
    reports (``fluxdrive synthesize``, the MCP tool): the synthesis, the files written, the config used.

    The findings are finished as the review finished them: a diff review's ``--filter`` (recorded in the
    findings.json being replaced, applied to the run's ``input.diff``) and the suggested fixes, so a
    re-synthesis neither brings back what the filter left out nor loses what ``fluxdrive fix`` applies."""
    from fluxdrive.config import load_config
    from fluxdrive.core.masking import known_secrets
    from fluxdrive.core.project import find_project_root
    from fluxdrive.core.secret_values import collect as collect_secrets
    from fluxdrive.fixes import attach_suggestions
    from fluxdrive.reports import write_reports
    from fluxdrive.reports.diff_filter import DiffLines, apply_filter
    from fluxdrive.synthesis import synthesize

    root = find_project_root(output_dir)
    config = load_config(root).config
    recorded = _recorded_filter(Path(output_dir))
    with known_secrets(collect_secrets(root)):  # the project's secret values, masked in every report
        result = synthesize(output_dir, config)
        if recorded is not None:
            mode, diff = recorded
            result = apply_filter(result, DiffLines.from_diff(diff), mode)
        result = attach_suggestions(result, root)
        return result, write_reports(result), config


def _recorded_filter(output_dir: Path) -> tuple[FilterMode, str] | None:
    """The ``--filter`` mode a diff review recorded in its findings.json and the diff it reviewed
    (``input.diff``); None when the run has neither (a first synthesis, a review of files)."""
    from fluxdrive.core.paths import read_regular
    from fluxdrive.reports.diff_filter import check_mode
    from fluxdrive.runs.directory import RunDirectory

    try:
        recorded = RunDirectory(output_dir).findings().line_filter
        if recorded is None:
            return None
        diff = read_regular(output_dir / "input.diff", "the reviewed diff", follow=False).decode("utf-8")
        return check_mode(recorded.mode), diff
    except (FluxdriveError, OSError, UnicodeDecodeError):
        return None


@dataclass
class ReviewOptions:
    """Everything ``fluxdrive review`` accepts, as one library call (the older entry point; new code builds a
    :class:`ReviewSettings` and an :class:`Interaction`).

    ``ask`` reads a person's answer (the approval gate and the expansion
    choice); without it the review is non-interactive and needs ``yes`` and
    an ``expand`` choice (``yes`` alone accepts the expansion recommendation).
    """

    yes: bool = False
    expand: ExpandChoice | None = None
    agents: Sequence[str] | None = None
    agents_chosen_by: str = "--agents"
    runtime: str | Runtime = "static"
    model: str | None = None
    over_budget: bool = False
    llm_triage: bool = False
    output_dir: Path | None = None
    timeout_s: float | None = None
    max_concurrency: int | None = None
    cluster: str | None = None  # a Ray address: agents and analysis shards run on that cluster
    research: bool = True
    dropout: bool = True
    diff_ref: str | None = None
    staged: bool = False
    project: Path | None = None
    stdin_text: str | None = None
    cwd: Path | None = None
    config: Config | None = None
    settings: dict[str, Any] = field(default_factory=dict)
    progress: Progress | None = None
    ask: Ask | None = None
    say: Callable[[str], None] | None = None
    baseline: Path | None = None
    since_last: bool = False
    interrupt: Interrupt | None = None
    import_sarif: Sequence[Path | str] = ()

    def review_settings(self) -> ReviewSettings:
        """The same review as :class:`ReviewSettings`."""
        keys = flag_overrides(
            timeout_s=self.timeout_s, max_concurrency=self.max_concurrency, research=self.research, dropout=self.dropout
        )
        return ReviewSettings(
            diff_ref=self.diff_ref,
            staged=self.staged,
            since_last=self.since_last,
            stdin_text=self.stdin_text,
            project=self.project,
            cwd=self.cwd,
            agents=tuple(self.agents or ()),
            agents_chosen_by=self.agents_chosen_by,
            runtime=self.runtime,
            model=self.model,
            llm_triage=self.llm_triage,
            config=self.config,
            overrides={**self.settings, **keys},
            yes=self.yes,
            expand=self.expand,
            over_budget=self.over_budget,
            output_dir=self.output_dir,
            baseline=self.baseline,
            import_sarif=tuple(self.import_sarif),
        )

    def interaction(self) -> Interaction:
        """How the review reaches a person."""
        return Interaction(self.progress, self.ask, self.say, self.interrupt)


def run_review(target: TargetArg, options: ReviewOptions | None = None) -> ReviewRun:
    """Review ``target`` (a path; several paths, reviewed together; ``-`` with ``options.stdin_text``; or None
    with ``diff_ref``/``staged``)."""
    options = options or ReviewOptions()
    return run(target, options.review_settings(), options.interaction(), cluster=options.cluster)


def review(target: str | Path | None, options: ReviewOptions | None = None) -> Synthesis:
    """Review ``target`` and return the synthesis (the library's one-call entry point).

    Non-interactive unless ``options.ask`` is given: pass ``yes=True`` (and
    an ``expand`` choice to override the recommendation). Raises
    :class:`~fluxdrive.errors.ReviewError` when there is nothing to return:
    the plan was rejected, or no agent ran.
    """
    result = run_review(target, options)
    if result.synthesis is None:
        reason = "the plan was rejected at the approval gate" if not result.approved else "no agent report was written"
        raise ReviewError(f"no review result: {reason}", hint=f"see {result.output_dir}")
    return result.synthesis


def _write_stdout(text: str) -> None:
    sys.stdout.write(text if text.endswith("\n") else text + "\n")
