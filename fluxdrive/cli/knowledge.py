"""``fluxdrive knowledge``: list, show, confirm, retract and restore the project's knowledge entries."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from fluxdrive.cli._io import out

if TYPE_CHECKING:
    from fluxdrive.knowledge import Store

app = typer.Typer(
    help="The project's knowledge store: lessons from earlier reviews, injected into agents' prompts.",
    no_args_is_help=True,
)

IdArg = Annotated[str, typer.Argument(metavar="ENTRY_ID", help="An entry id (its file name without .md).")]
ProjectOpt = Annotated[
    Path | None, typer.Option("--project", metavar="DIR", help="The project (default: the current one).")
]


def _store(project: Path | None) -> tuple[Store, int]:
    """The store of the project around ``project`` (or the current directory), and the decay limit."""
    from fluxdrive.config import load_config
    from fluxdrive.core.project import project_directory, project_from_option
    from fluxdrive.knowledge import Store

    root = project_from_option(project)
    settings = load_config(root).config.knowledge
    return Store.load(project_directory(root, settings.directory, "knowledge.directory")), settings.decay_reviews


@app.command("list")
def list_command(
    archived: Annotated[bool, typer.Option("--archived", help="Also list archived entries.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the entries as JSON.")] = False,
    project: ProjectOpt = None,
) -> None:
    """Every entry with its last confirmation and decay status (reviews unconfirmed out of the limit)."""
    from fluxdrive.cli._io import warn
    from fluxdrive.core.columns import format_columns

    store, limit = _store(project)
    rows = [(e, "active") for e in store.active.values()]
    if archived:
        rows += [(e, "archived") for e in store.archived.values()]
    rows.sort(key=lambda row: (row[1], row[0].id))
    for problem in store.problems:
        warn(f"skipped: {problem}")
    if as_json:
        data = [
            {
                "id": e.id,
                "status": status,
                "title": e.title,
                "last_confirmed": e.last_confirmed.isoformat(),
                "provenance": e.provenance,
                "reviews_unconfirmed": e.reviews_unconfirmed,
                "decay_limit": limit,
                "agents": list(e.agents),
            }
            for e, status in rows
        ]
        out(json.dumps({"schema_version": 1, "entries": data}, indent=2))
        return
    if not rows:
        out(f"No knowledge entries in {store.directory}.")
        return
    table = [
        (e.id, status, e.last_confirmed.isoformat(), e.provenance, f"{e.reviews_unconfirmed}/{limit}", e.title)
        for e, status in rows
    ]
    out(format_columns(("ID", "STATUS", "CONFIRMED", "PROVENANCE", "DECAY", "TITLE"), table, max_last=70))


@app.command("show")
def show(entry_id: IdArg, project: ProjectOpt = None) -> None:
    """Print one entry's file."""
    from fluxdrive.knowledge import render_entry

    store, _limit = _store(project)
    entry = store.archived[entry_id] if entry_id in store.archived else store.get(entry_id)
    out(render_entry(entry).rstrip("\n"))


@app.command("confirm")
def confirm(entry_id: IdArg, project: ProjectOpt = None) -> None:
    """A person checked the entry: lastConfirmed today, provenance independent, decay count reset."""
    store, _limit = _store(project)
    entry = store.confirm(entry_id, date.today())
    out(f"confirmed {entry.id} ({entry.last_confirmed.isoformat()})")


@app.command("retract")
def retract(entry_id: IdArg, project: ProjectOpt = None) -> None:
    """The entry is wrong: delete it (active or archived)."""
    store, _limit = _store(project)
    store.retract(entry_id)
    out(f"retracted {entry_id}")


@app.command("restore")
def restore(entry_id: IdArg, project: ProjectOpt = None) -> None:
    """Bring an archived entry back (confirmed today)."""
    store, _limit = _store(project)
    entry = store.restore(entry_id, date.today())
    out(f"restored {entry.id}")
