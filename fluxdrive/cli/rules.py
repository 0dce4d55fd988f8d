"""``fluxdrive rules list``: every rule the static runtime ships, and who reports it."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from fluxdrive.cli._io import out, out_json
from fluxdrive.core.columns import format_columns
from fluxdrive.core.project import project_from_option

app = typer.Typer(help="List the static runtime's rules and checks.", no_args_is_help=True)


def _row(rule: str, languages: list[str], severity: str, agent: str | None, summary: str) -> dict[str, Any]:
    return {"rule": rule, "languages": languages, "severity": severity, "agent": agent, "summary": summary}


def catalog(project: Path | None) -> list[dict[str, Any]]:
    """One row per rule: id, languages, agent, severity, summary."""
    from fluxdrive.agents import load_roster
    from fluxdrive.runtimes.static.analyzers.ruff import ruff_table
    from fluxdrive.runtimes.static.checks.engine.registry import registered_checks
    from fluxdrive.runtimes.static.hits import Claim
    from fluxdrive.runtimes.static.ownership import ARCHITECTURE_CHECKS, Ownership
    from fluxdrive.runtimes.static.rules import load_rules

    owner = Ownership.from_agents(load_roster(project_from_option(project))).owner
    rows = [
        _row(spec.rule_id, spec.languages, spec.severity, owner(Claim("rules", spec.owner_tag), spec.rule_id), spec.why)
        for spec in load_rules()
    ]
    for check in registered_checks().values():
        languages = ["python"] if check.kind == "python" else ["markdown"]
        rows.append(
            _row(check.rule_id, languages, check.severity, owner(Claim("fluxdrive", check.name)), check.summary)
        )
    graph_languages = ["python", "javascript", "typescript"]
    rows.extend(
        _row(f"fluxdrive:{name}", graph_languages, "P2-P3", owner(Claim("fluxdrive", name)), "import-graph analysis")
        for name in sorted(ARCHITECTURE_CHECKS)
    )
    rows.extend(
        _row(f"ruff:{code}*", ["python"], entry["severity"], owner(Claim("ruff", code)), entry["why"])
        for code, entry in ruff_table()["codes"].items()
    )
    rows.extend(
        _row(f"lizard:{kind}", ["many"], "P2-P3", owner(Claim("lizard", kind)), f"function {kind} above the threshold")
        for kind in ("complexity", "length", "parameters")
    )
    secrets = "hard-coded credentials (value masked in every output)"
    rows.append(_row("detect-secrets:*", ["any"], "P0", owner(Claim("secrets", "secrets")), secrets))
    return rows


@app.command("list")
def list_rules(
    language: Annotated[
        str | None, typer.Option("--language", metavar="LANG", help="Only rules for this language.")
    ] = None,
    agent: Annotated[str | None, typer.Option("--agent", metavar="NAME", help="Only rules this agent reports.")] = None,
    project: Annotated[
        Path | None,
        typer.Option("--project", metavar="PATH", help="Project whose agent overrides apply."),
    ] = None,
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
