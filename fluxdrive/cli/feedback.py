"""``fluxdrive feedback``: tell fluxdrive whether a finding was right (it trains trust)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from fluxdrive.cli._io import out

app = typer.Typer(
    help="Record whether findings were accepted or discarded (feeds the trust multiplier).", no_args_is_help=True
)

FindingsArg = Annotated[Path, typer.Argument(metavar="FINDINGS_JSON", help="A run's findings.json.")]
IdArg = Annotated[str, typer.Argument(metavar="FINDING_ID", help="A finding id, e.g. P1-3.")]


def _record(findings: Path, finding_id: str, accepted: bool) -> None:
    import json

    from fluxdrive._paths import read_text
    from fluxdrive._project import find_project_root
    from fluxdrive.config import load_config
    from fluxdrive.errors import InputError, UsageError
    from fluxdrive.history import open_history, record_feedback, trust_for

    try:
        document = json.loads(read_text(findings, "findings file"))
    except json.JSONDecodeError as exc:
        raise InputError(
            f"{findings} is not valid JSON: {exc.msg}", hint="pass a findings.json fluxdrive wrote"
        ) from None
    if not isinstance(document, dict) or not isinstance(document.get("findings", []), list):
        raise InputError(f"{findings} is not a fluxdrive findings.json", hint="pass a findings.json fluxdrive wrote")
    entries = {
        f.get("id"): f for f in document.get("findings", []) + document.get("improvements", []) if isinstance(f, dict)
    }
    if finding_id not in entries:
        known = ", ".join(sorted(k for k in entries if k)[:8])
        raise UsageError(
            f"no finding {finding_id!r} in {findings}",
            hint=f"ids there: {known}" if known else "the file has no findings",
        )
    agents = list(entries[finding_id].get("agents") or [])
    project = str(find_project_root(findings).resolve())
    with open_history() as connection:
        record_feedback(connection, agents=agents, project=project, finding_id=finding_id, accepted=accepted)
    trust = trust_for(project, load_config(Path(project)).config.scoring)
    verb = "accepted" if accepted else "discarded"
    shown = ", ".join(f"{a} trust {trust.get(a, 1.0):.2f}" for a in agents)
    out(f"{verb} {finding_id} ({shown})")


@app.command("accept")
def accept(findings: FindingsArg, finding_id: IdArg) -> None:
    """The finding was right: credit the agents that reported it."""
    _record(findings, finding_id, True)


@app.command("discard")
def discard(findings: FindingsArg, finding_id: IdArg) -> None:
    """The finding was wrong or not worth it: count it against its agents."""
    _record(findings, finding_id, False)
