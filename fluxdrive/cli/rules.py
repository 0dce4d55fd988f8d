"""``fluxdrive rules list``: every rule the static runtime ships, and who reports it."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from fluxdrive._columns import format_columns
from fluxdrive._project import find_project_root
from fluxdrive.cli._io import out, out_json

app = typer.Typer(help="List the static runtime's rules and checks.", no_args_is_help=True)


def catalog(project: Path | None) -> list[dict[str, Any]]:
    """One row per rule: id, engine, languages, agent, severity, summary."""
    from fluxdrive.agents import load_roster
    from fluxdrive.runtimes.static.analyzers.ruff import ruff_table
    from fluxdrive.runtimes.static.checks.base import registered_checks
    from fluxdrive.runtimes.static.hits import Claim
    from fluxdrive.runtimes.static.ownership import ARCHITECTURE_CHECKS, Ownership
    from fluxdrive.runtimes.static.rules import load_rules

    ownership = Ownership.from_agents(load_roster(find_project_root(project or Path.cwd())))
    rows: list[dict[str, Any]] = []
    for spec in load_rules():
        rows.append({"rule": spec.rule_id, "languages": spec.languages, "severity": spec.severity,
                     "agent": ownership.owner(Claim("rules", spec.owner_tag), spec.rule_id), "summary": spec.why})  # fmt: skip
    for check in registered_checks().values():
        language = ["python"] if check.kind == "python" else ["markdown"]
        rows.append({"rule": check.rule_id, "languages": language, "severity": check.severity,
                     "agent": ownership.owner(Claim("fluxdrive", check.name)), "summary": check.summary})  # fmt: skip
    for name in sorted(ARCHITECTURE_CHECKS):
        rows.append({"rule": f"fluxdrive:{name}", "languages": ["python", "javascript", "typescript"], "severity": "P1-P3",
                     "agent": ownership.owner(Claim("fluxdrive", name)), "summary": "import-graph analysis"})  # fmt: skip
    for code, entry in ruff_table()["codes"].items():
        rows.append({"rule": f"ruff:{code}*", "languages": ["python"], "severity": entry["severity"],
                     "agent": ownership.owner(Claim("ruff", code)), "summary": entry["why"]})  # fmt: skip
    for kind in ("complexity", "length", "parameters"):
        rows.append({"rule": f"lizard:{kind}", "languages": ["many"], "severity": "P1-P2",
                     "agent": ownership.owner(Claim("lizard", kind)), "summary": f"function {kind} above the configured threshold"})  # fmt: skip
    rows.append({"rule": "detect-secrets:*", "languages": ["any"], "severity": "P0", "agent": ownership.owner(Claim("secrets", "secrets")),
                 "summary": "hard-coded credentials (value masked in every output)"})  # fmt: skip
    return rows


@app.command("list")
def list_rules(
    language: Annotated[str | None, typer.Option("--language", metavar="LANG", help="Only rules for this language.")] = None,
    agent: Annotated[str | None, typer.Option("--agent", metavar="NAME", help="Only rules this agent reports.")] = None,
    project: Annotated[Path | None, typer.Option("--project", metavar="PATH", help="Project whose agent overrides apply.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print as JSON.")] = False,
) -> None:
    """List every rule with its language, agent and severity."""
    rows = [
        r for r in catalog(project)
        if (language is None or language in r["languages"]) and (agent is None or r["agent"] == agent)
    ]  # fmt: skip
    if as_json:
        out_json({"schema_version": 1, "rules": rows})
        return
    table = [(r["rule"], ",".join(r["languages"]), r["agent"] or "-", r["severity"]) for r in rows]
    out(format_columns(("RULE", "LANGUAGES", "AGENT", "SEVERITY"), table))
    out(f"{len(rows)} rules")
