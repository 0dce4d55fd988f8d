"""``fluxdrive feedback``: tell fluxdrive whether a finding was right (it trains trust and measured precision).

The verdict is recorded against the project the run reviewed: ``input.project_root``
in the run's ``run.json`` (beside findings.json), else the repository enclosing
findings.json. Never the current directory: a discard made from elsewhere, or on
a run written with ``--output-dir`` outside the project, still counts for the
project the run names.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from fluxdrive.cli._io import out

if TYPE_CHECKING:  # imported when a command runs: the CLI starts without the reports and synthesis
    from fluxdrive.runs.directory import RunDirectory

app = typer.Typer(
    help="Record whether findings were accepted or discarded (feeds the trust multiplier).", no_args_is_help=True
)

FindingsArg = Annotated[
    Path, typer.Argument(metavar="FINDINGS", help="A run's findings.json, or the run's output directory.")
]
IdArg = Annotated[str, typer.Argument(metavar="FINDING_ID", help="A finding id, e.g. P1-3.")]


MAX_FINDINGS_BYTES = 256 * 1024 * 1024
OURS = "pass a findings.json fluxdrive wrote"


def _agents_of(run: RunDirectory, finding_id: str) -> list[str]:
    """The agents that reported ``finding_id`` in the run's findings file; any other shape is one clear line.

    The file is validated (:meth:`RunDirectory.findings`) before anything
    reaches the history: a list of agents that is really a string must not
    record trust for "f", "d", "-"...
    """
    from fluxdrive.core.paths import AGENT_NAME
    from fluxdrive.errors import InputError, UsageError

    document = run.findings()
    entries = {f.id: f.agents for f in document.findings} | {f.id: f.agents for f in document.improvements}
    if finding_id not in entries:
        known = ", ".join(sorted(entries)[:8])
        findings = run.path / run.findings_file
        raise UsageError(
            f"no finding {finding_id!r} in {findings}",
            hint=f"ids there: {known}" if known else "the file has no findings",
        )
    agents = entries[finding_id]
    if not all(AGENT_NAME.match(a) for a in agents):
        raise InputError(f"{run.path / run.findings_file}: finding {finding_id} has no valid list of agents", hint=OURS)
    return list(agents)


def _judged_keys(run: RunDirectory, finding_id: str) -> list[tuple[str, str]]:
    """The keys a verdict on the finding counts for in the measured precision (its rules, its agent-model pairs)."""
    from fluxdrive.synthesis.measured import keys_of

    document = run.findings()
    for finding in document.findings:
        if finding.id == finding_id:
            return keys_of(finding.rules, finding.agents, finding.provenance)
    return []  # an improvement: no rule or model is judged by it


def _project_of(run: RunDirectory) -> str:
    """The project the run reviewed (see the module docstring)."""
    from fluxdrive.core.project import find_project_root

    manifest = run.manifest()
    recorded = manifest.input.project_root if manifest.input is not None else ""
    if recorded and Path(recorded).is_absolute():
        return str(Path(recorded).resolve())
    return str(find_project_root(run.path).resolve())


def _record(target: Path, finding_id: str, accepted: bool) -> None:
    from fluxdrive.config import load_config
    from fluxdrive.core.paths import require_file
    from fluxdrive.runs.directory import RunDirectory
    from fluxdrive.runs.history import open_history, record_feedback, trust_for
    from fluxdrive.runs.precision import record as record_precision

    findings = target / "findings.json" if target.is_dir() else target
    require_file(findings, "findings file")
    run = RunDirectory.of_findings(findings, limit=MAX_FINDINGS_BYTES)
    agents = _agents_of(run, finding_id)
    project = _project_of(run)
    with open_history() as connection:
        record_feedback(connection, agents=agents, project=project, finding_id=finding_id, accepted=accepted)
        record_precision(connection, [(_judged_keys(run, finding_id), accepted)])
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
