"""What a front door decides before a review: one frozen value, built once and passed down.

The CLI, the MCP server, the library, fleet and eval each turn their own
inputs (flags, tool arguments, keyword arguments) into a
:class:`ReviewSettings`; from there every front door takes the same road
(:func:`~fluxdrive.launch.plan.plan_review`, then
:func:`~fluxdrive.launch.execute.execute`). Flags that are config keys
(``--timeout``, ``--max-concurrency``, ``--no-research``, ``--set``...) are
config overrides here, applied once when the config is loaded, instead of
travelling as options to be patched in later.

How a person is asked (the approval gate, the expansion question), where
progress goes and how a run is interrupted are not settings: they are the
interaction :func:`~fluxdrive.launch.execute.execute` is given.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from fluxdrive.config.model import Config
    from fluxdrive.runtimes import Runtime

ExpandChoice = Literal["ask", "recommended", "all", "none"]


@dataclass(frozen=True)
class ReviewSettings:
    """Everything that decides what a review covers, who reviews and how it runs."""

    # The input (with the TARGET given to plan_review): a diff, the staged changes, stdin, the project.
    diff_ref: str | None = None
    staged: bool = False
    since_last: bool = False  # the diff since this branch's last reviewed commit
    stdin_text: str | None = None
    project: Path | None = None
    cwd: Path | None = None
    # The reviewers.
    agents: tuple[str, ...] = ()  # exactly these agents, all in Stage 1
    agents_chosen_by: str = "--agents"  # who chose them (the quality gate's plan), as notes say it
    runtime: str | Runtime = "static"
    model: str | None = None
    llm_triage: bool = False
    use_cache: bool = True  # False: detect domains again (triage --no-cache)
    # The config: a loaded Config (the library), else the project's files with these dotted keys set on top.
    config: Config | None = None
    overrides: Mapping[str, Any] = field(default_factory=dict)
    # The run.
    yes: bool = False  # approve the plan, and accept the expansion recommendation unless ``expand`` says more
    expand: ExpandChoice | None = None
    over_budget: bool = False
    max_usd: float | None = None  # --max-cost: the hard money ceiling (budget.max_usd); --over-budget never lifts it
    output_dir: Path | None = None
    baseline: Path | None = None  # report only findings not in this baseline
    import_sarif: tuple[Path | str, ...] = ()  # other analyzers' SARIF results merged into the findings
    # A diff review's findings filter (reviewdog's modes, fluxdrive.reports.diff_filter); None: ``added``,
    # the lines the change added - what the static runtime has always limited a diff review to.
    line_filter: str | None = None

    def but(self, **changes: Any) -> ReviewSettings:
        """These settings with ``changes``."""
        return replace(self, **changes)


def flag_overrides(
    *,
    timeout_s: float | None = None,
    max_concurrency: int | None = None,
    research: bool = True,
    dropout: bool = True,
) -> dict[str, Any]:
    """The config keys that review flags stand for (``--timeout``, ``--max-concurrency``, ``--no-research``,
    ``--no-dropout``), for :attr:`ReviewSettings.overrides`."""
    keys: dict[str, Any] = {}
    if timeout_s is not None:
        keys |= {"dispatch.timeout_local_s": timeout_s, "dispatch.timeout_remote_s": timeout_s}
    if max_concurrency is not None:
        keys["dispatch.max_concurrency"] = max_concurrency
    if not research:
        keys["research.enabled"] = False
    if not dropout:
        keys["dropout.enabled"] = False
    return keys
