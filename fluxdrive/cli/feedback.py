"""``fluxdrive feedback``: tell fluxdrive whether a finding was right (it trains trust).

The verdict is recorded against the project the run reviewed: ``input.project_root``
in the run's ``run.json`` (beside findings.json), else the repository enclosing
findings.json. Never the current directory: a discard made from elsewhere, or on
a run written with ``--output-dir`` outside the project, still counts for the
project the run names.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from fluxdrive.cli._io import out

app = typer.Typer(
    help="Record whether findings were accepted or discarded (feeds the trust multiplier).", no_args_is_help=True
)

FindingsArg = Annotated[
    Path, typer.Argument(metavar="FINDINGS", help="A run's findings.json, or the run's output directory.")
]
IdArg = Annotated[str, typer.Argument(metavar="FINDING_ID", help="A finding id, e.g. P1-3.")]


MAX_FINDINGS_BYTES = 256 * 1024 * 1024
OURS = "pass a findings.json fluxdrive wrote"


def _agents_of(findings: Path, finding_id: str) -> list[str]:
    """The agents that reported ``finding_id`` in a findings.json; any other shape is one clear line.

    The file is validated before anything reaches the history: a list of
    agents that is really a string must not record trust for "f", "d", "-"...
    """
    from fluxdrive.core.paths import AGENT_NAME, read_regular, require_file
    from fluxdrive.core.structured import load_json
    from fluxdrive.errors import InputError, UsageError

    require_file(findings, "findings file")
    not_ours = InputError(f"{findings} is not a fluxdrive findings.json", hint=OURS)
    try:
        document = load_json(read_regular(findings, "findings file", limit=MAX_FINDINGS_BYTES), str(findings))
    except UnicodeDecodeError:
        raise not_ours from None
    except ValueError as exc:
        reason = exc.msg if isinstance(exc, json.JSONDecodeError) else str(exc)
        raise InputError(f"{findings} is not valid JSON: {reason}", hint=OURS) from None
    if not isinstance(document, dict):
        raise not_ours
    listed = [document.get("findings", []), document.get("improvements", [])]
    if not all(isinstance(items, list) for items in listed):
        raise not_ours
    entries = {f["id"]: f for items in listed for f in items if isinstance(f, dict) and isinstance(f.get("id"), str)}
    if finding_id not in entries:
        known = ", ".join(sorted(entries)[:8])
        raise UsageError(
            f"no finding {finding_id!r} in {findings}",
            hint=f"ids there: {known}" if known else "the file has no findings",
        )
    agents = entries[finding_id].get("agents") or []
    if not isinstance(agents, list) or not all(isinstance(a, str) and AGENT_NAME.match(a) for a in agents):
        raise InputError(f"{findings}: finding {finding_id} has no valid list of agents", hint=OURS)
    return list(agents)


def _project_of(findings: Path) -> str:
    """The project the run behind ``findings`` reviewed (see the module docstring)."""
    from fluxdrive.contracts.run_manifest import RUN_FILE, ManifestError, load_manifest
    from fluxdrive.core.project import find_project_root
    from fluxdrive.errors import InputError

    try:
        manifest = load_manifest(findings.parent)
    except ManifestError as exc:
        raise InputError(
            str(exc), hint=f"fix or remove {findings.parent / RUN_FILE}: it names the project the feedback is for"
        ) from None
    recorded = manifest.input.project_root if manifest is not None and manifest.input is not None else ""
    if recorded and Path(recorded).is_absolute():
        return str(Path(recorded).resolve())
    return str(find_project_root(findings).resolve())


def _record(target: Path, finding_id: str, accepted: bool) -> None:
    from fluxdrive.config import load_config
    from fluxdrive.runs.history import open_history, record_feedback, trust_for

    findings = target / "findings.json" if target.is_dir() else target
    agents = _agents_of(findings, finding_id)
    project = _project_of(findings)
    with open_history() as connection:
        record_feedback(connection, agents=agents, project=project, finding_id=finding_id, accepted=accepted)
    trust = trust_for(project, load_config(Path(project)).config.scoring)
    verb = "accepted" if accepted else "discarded"
    shown = ", ".join(f"{a} trust {trust.get(a, 1.0):.2f}" for a in agents)
    out(f"{verb} {finding_id} ({shown}) in {project}")


@app.command("accept")
def accept(findings: FindingsArg, finding_id: IdArg) -> None:
    """The finding was right: credit the agents that reported it."""
    _record(findings, finding_id, True)


@app.command("discard")
def discard(findings: FindingsArg, finding_id: IdArg) -> None:
    """The finding was wrong or not worth it: count it against its agents."""
    _record(findings, finding_id, False)
