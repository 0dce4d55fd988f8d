"""``fluxdrive verdicts``: read one line per agent instead of its prose.

    fluxdrive verdicts [DIR] [--attention] [--json]
    fluxdrive verdicts write <dir> <agent> <status> <summary> [--detail PATH] [--tokens N]

With no DIR, the current directory is used if it holds verdicts, else the
most recent run under ``PROJECT_ROOT/docs/research/flux-drive/``. DIR may
also be a Clavain verdicts directory (``.clavain/verdicts``): each file is
read as a fluxdrive or a Clavain record by its shape (``fluxdrive.reports.clavain``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

from fluxdrive.cli._io import out, out_json, warn
from fluxdrive.core.project import find_project_root
from fluxdrive.errors import InputError
from fluxdrive.exchange import verdicts


class _DirOrCommand(TyperGroup):
    """A group whose first word is either a subcommand or the optional DIR."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        if args and not args[0].startswith("-") and args[0] not in self.commands:
            ctx.meta["verdicts_dir"] = args[0]
            args = args[1:]
        return super().parse_args(ctx, args)

    def collect_usage_pieces(self, ctx: Any) -> list[str]:
        return [
            "[OPTIONS]",
            "[DIR]",
            "| write DIR AGENT STATUS SUMMARY [--detail PATH] [--tokens N]",
        ]


app = typer.Typer(
    cls=_DirOrCommand,
    invoke_without_command=True,
    short_help="List agents' one-line verdicts, or write one.",
    help=(
        "List agents' verdict records (STATUS AGENT SUMMARY) from DIR: a run's output "
        "directory or its verdicts/ folder, or a Clavain .clavain/verdicts/ folder (each "
        "record is recognized by its shape). Without DIR: the current directory if it "
        "holds verdicts, else the latest run under docs/research/flux-drive/."
    ),
)


def _latest_run(start: Path) -> Path | None:
    from fluxdrive.workspace import latest_run

    return latest_run(find_project_root(start), "verdicts")


def _default_dir() -> Path:
    here = Path.cwd()
    if verdicts.verdicts_dir(here).is_dir() or any(here.glob("*.json")):
        return here
    latest = _latest_run(here)
    if latest is None:
        raise InputError(
            "no verdicts here and no runs under docs/research/flux-drive/",
            hint="pass the run's output directory: fluxdrive verdicts DIR",
        )
    return latest


@app.callback()
def show(
    ctx: typer.Context,
    attention: Annotated[bool, typer.Option("--attention", help="Only agents that need attention.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print records as JSON.")] = False,
) -> None:
    """List verdict records: a table, the count by status and total tokens."""
    if ctx.invoked_subcommand is not None:
        if ctx.meta.get("verdicts_dir"):
            raise typer.BadParameter(f"unexpected argument {ctx.meta['verdicts_dir']!r}")
        return
    given = ctx.meta.get("verdicts_dir")
    loaded = verdicts.load_verdicts(Path(given) if given else _default_dir())
    for problem in loaded.problems:
        warn(problem)
    records = verdicts.attention(loaded.records) if attention else loaded.records
    if as_json:
        out_json(
            {
                "schema_version": verdicts.SCHEMA_VERSION,
                "directory": str(loaded.directory),
                "counts": verdicts.count_by_status(loaded.records),
                "total_tokens": verdicts.total_tokens(loaded.records),
                "total_cost_usd": verdicts.total_cost(loaded.records),
                "verdicts": [_as_dict(r) for r in records],
            }
        )
        return
    if records:
        out(verdicts.render_table(records, details=attention))
    elif attention:
        out("No agents need attention.")
    summary = verdicts.count_by_status(loaded.records)
    cost = verdicts.total_cost(loaded.records)
    spent = f"{verdicts.total_tokens(loaded.records):,} tokens" + (f", ${cost:.4f}" if cost else "")
    out(f"{summary} | {spent} | {loaded.directory}")


def _as_dict(record: verdicts.VerdictRecord) -> dict[str, Any]:
    return {
        "schema_version": record.schema_version,
        "agent": record.agent,
        "status": record.status,
        "summary": record.summary,
        "detail_path": record.detail_path,
        "tokens": record.tokens,
        "cost_usd": record.cost_usd,
        "timestamp": record.timestamp,
        "source": record.source,  # "clavain" for a record read from .clavain/verdicts
        "model": record.model,
        "findings_count": record.findings_count,
    }


@app.command("write")
def write(
    directory: Annotated[Path, typer.Argument(metavar="DIR", help="The run's output directory.")],
    agent: Annotated[str, typer.Argument(metavar="AGENT", help="Agent name, e.g. fd-safety.")],
    status: Annotated[
        str,
        typer.Argument(
            metavar="STATUS",
            help="CLEAN, NEEDS_ATTENTION or ERROR; also Clavain's BLOCKED (could not complete), "
            "COMPLETE, PARTIAL or FAILED.",
        ),
    ],
    summary: Annotated[str, typer.Argument(metavar="SUMMARY", help="One line.")],
    detail: Annotated[
        str | None,
        typer.Option("--detail", metavar="PATH", help="The full report (default: DIR/AGENT.md if present)."),
    ] = None,
    tokens: Annotated[int, typer.Option("--tokens", metavar="N", min=0, help="Tokens the agent spent.")] = 0,
) -> None:
    """Write DIR/verdicts/AGENT.json atomically.

    STATUS is one of CLEAN, NEEDS_ATTENTION, ERROR (what fluxdrive's agents
    report) or BLOCKED, COMPLETE, PARTIAL, FAILED (Clavain's other statuses).
    """
    record = verdicts.write_verdict(
        directory, agent, status, summary, detail_path=detail, tokens=tokens, statuses=verdicts.ALL_STATUSES
    )
    out(f"{record.status} {record.agent}: {record.summary}")
