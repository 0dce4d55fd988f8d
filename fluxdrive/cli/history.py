"""``fluxdrive history``: past runs, and what each agent spent on which model.

    fluxdrive history [--project PATH] [--limit N] [--json]
    fluxdrive history --run ID [--json]

Reads the history database (``fluxdrive.runs.history``); never creates it.
Times are shown in UTC.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from fluxdrive.cli._io import out, scrub_data
from fluxdrive.core.columns import format_columns
from fluxdrive.errors import UsageError

if TYPE_CHECKING:
    from fluxdrive.runs.history import CallRow, RunRow

SCHEMA_VERSION = 1
EMPTY = "no runs recorded yet"


def _when(timestamp: str | None) -> str:
    from fluxdrive.core.clock import parse_timestamp

    if not timestamp:
        return "-"
    try:
        return parse_timestamp(timestamp).strftime("%Y-%m-%d %H:%M:%S")
    except ValueError:
        return timestamp


def _cost(usd: float) -> str:
    return f"${usd:.4f}"


def _verdict(row: RunRow) -> str:
    verdict = row.verdict or "-"
    return f"{verdict}, interrupted" if row.interrupted else verdict


def render_runs(rows: list[RunRow]) -> str:
    """The runs table, in the order given (newest first from :func:`fluxdrive.runs.history.runs`)."""
    headers = ("RUN", "STARTED", "INPUT", "VERDICT", "AGENTS", "TOKENS", "COST", "RUNTIME")
    table = [
        (
            row.id,
            _when(row.started_at),
            row.input or "-",
            _verdict(row),
            str(row.agents),
            f"{row.tokens_in + row.tokens_out:,}",
            _cost(row.cost_usd),
            row.runtime or "-",
        )
        for row in rows
    ]
    return format_columns(headers, table)


def _totals(calls: list[CallRow]) -> dict[str, Any]:
    return {
        "calls": len(calls),
        "tokens_in": sum(c.tokens_in for c in calls),
        "tokens_out": sum(c.tokens_out for c in calls),
        "cost_usd": round(sum(c.cost_usd for c in calls), 6),
        "duration_s": round(sum(c.duration_s for c in calls), 3),
        "outcomes": dict(sorted(Counter(c.outcome for c in calls).items())),
    }


def render_run(run: RunRow, calls: list[CallRow]) -> str:
    """A run's header, one row per agent call, and a total row."""
    source = f"{run.input} ({run.input_type})" if run.input and run.input_type else run.input or "-"
    header = [
        f"run       {run.id}",
        f"input     {source}",
        f"project   {run.project}",
        f"started   {_when(run.started_at)}",
        f"finished  {_when(run.finished_at)}",
        f"runtime   {run.runtime or '-'}",
        f"verdict   {_verdict(run)}",
    ]
    headers = ("AGENT", "STAGE", "PROVIDER", "MODEL", "TOKENS IN", "TOKENS OUT", "COST", "SECONDS", "OUTCOME")
    rows = [
        (
            c.agent,
            "-" if c.stage is None else str(c.stage),
            c.provider or "-",
            c.model_id or "-",
            f"{c.tokens_in:,}",
            f"{c.tokens_out:,}",
            _cost(c.cost_usd),
            f"{c.duration_s:.1f}",
            c.outcome,
        )
        for c in calls
    ]
    totals = _totals(calls)
    outcomes = ", ".join(f"{n} {outcome}" for outcome, n in totals["outcomes"].items()) or "no calls"
    rows.append(
        (
            "total",
            "",
            "",
            "",
            f"{totals['tokens_in']:,}",
            f"{totals['tokens_out']:,}",
            _cost(totals["cost_usd"]),
            f"{totals['duration_s']:.1f}",
            outcomes,
        )
    )
    return "\n".join(header) + "\n\n" + format_columns(headers, rows)


def _json(data: dict[str, Any]) -> None:
    out(json.dumps(scrub_data(data), indent=2, sort_keys=True, ensure_ascii=False))


def history_command(
    run: Annotated[
        str | None,
        typer.Option("--run", metavar="ID", help="Show one run's agent calls (a unique prefix of its id is enough)."),
    ] = None,
    project: Annotated[
        Path | None,
        typer.Option("--project", metavar="PATH", help="Only runs of the project at PATH (default: every project)."),
    ] = None,
    limit: Annotated[int, typer.Option("--limit", metavar="N", min=1, help="How many recent runs to list.")] = 20,
    as_json: Annotated[bool, typer.Option("--json", help="Print the same data as JSON.")] = False,
) -> None:
    """List recent runs (newest first) with tokens and cost, or one run's calls per agent."""
    from fluxdrive.core.project import project_from_option
    from fluxdrive.runs.history import agent_calls, database_path, open_history, runs, runs_by_prefix

    if run is not None and not run.strip():
        raise UsageError("--run needs a run id", hint="list runs with: fluxdrive history")
    scope = str(project_from_option(project).resolve()) if project is not None else None
    database = database_path()
    # something there (a dangling link, a file where the directory should be): opening it says what is wrong
    present = os.path.lexists(database) or (database.parent.exists() and not database.parent.is_dir())
    if not present:
        if run is not None:
            raise UsageError(f"no run {run!r} recorded", hint=EMPTY)
        if as_json:
            _json({"schema_version": SCHEMA_VERSION, "project": scope, "runs": []})
        else:
            out(EMPTY)
        return
    with open_history(database) as connection:
        if run is None:
            rows = runs(connection, project=scope, limit=limit)
            if as_json:
                _json({"schema_version": SCHEMA_VERSION, "project": scope, "runs": [asdict(r) for r in rows]})
            elif rows:
                out(render_runs(rows))
            else:
                out(EMPTY if scope is None else f"{EMPTY} for {scope}")
            return
        matches = runs_by_prefix(connection, run.strip(), project=scope)
        if not matches:
            raise UsageError(f"no run {run!r} recorded", hint="list runs with: fluxdrive history")
        if len(matches) > 1:
            shown = ", ".join(m.id for m in matches[:5])
            raise UsageError(f"run id {run!r} matches {len(matches)} runs", hint=f"give more of the id: {shown}")
        chosen = matches[0]
        calls = agent_calls(connection, chosen.id)
    if as_json:
        _json(
            {
                "schema_version": SCHEMA_VERSION,
                "run": asdict(chosen),
                "calls": [asdict(c) for c in calls],
                "totals": _totals(calls),
            }
        )
    else:
        out(render_run(chosen, calls))
