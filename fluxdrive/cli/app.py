"""The root ``fluxdrive`` command: global options and the command groups.

Each group lives in its own module and stays thin: parse, call the library,
print. Errors are not handled here but in the single boundary in
``fluxdrive.cli.main``.
"""

from __future__ import annotations

from typing import Annotated

import typer

from fluxdrive.cli import (
    agent,
    agents,
    baseline,
    config,
    domains,
    evals,
    feedback,
    findings,
    fix,
    fleet,
    gate,
    history,
    kb,
    knowledge,
    mcp,
    publish,
    research,
    review,
    rules,
    schema,
    synthesize,
    triage,
    verdicts,
)
from fluxdrive.core.version import __version__

app = typer.Typer(
    name="fluxdrive",
    help=(
        "fluxdrive runs a team of specialist reviewers over code, documents and diffs, "
        "lets them share critical findings while they work, and merges what they found "
        "into one deterministic verdict. Exit codes: 0 ok (verdict below --fail-on), "
        "1 verdict at or above --fail-on, 2 usage or input error, 3 no verdict possible."
    ),
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
    add_completion=True,
    no_args_is_help=True,
)


def _print_version(value: bool) -> None:
    if value:
        typer.echo(f"fluxdrive {__version__}")
        raise typer.Exit()


@app.callback()
def root(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_print_version, is_eager=True, help="Print the version and exit."),
    ] = False,
    debug: Annotated[bool, typer.Option("--debug", help="Show tracebacks for unexpected errors.")] = False,
) -> None:
    """Global options (handled before any command runs)."""


app.add_typer(findings.app, name="findings")
app.add_typer(verdicts.app, name="verdicts")
app.add_typer(config.app, name="config")
app.add_typer(agents.app, name="agents")
app.add_typer(agent.app, name="agent")
app.add_typer(rules.app, name="rules")
app.add_typer(schema.app, name="schema")
app.add_typer(evals.app, name="eval")
app.command("synthesize")(synthesize.synthesize_command)
app.command("triage")(triage.triage_command)
app.command("review")(review.review_command)
app.command("research")(research.research_command)
app.command("gate")(gate.gate_command)
app.add_typer(domains.app, name="domains")
app.add_typer(feedback.app, name="feedback")
app.command("history")(history.history_command)
app.command("mcp")(mcp.mcp_command)
app.add_typer(knowledge.app, name="knowledge")
app.add_typer(kb.app, name="kb")
app.add_typer(publish.app, name="publish")
app.command("fix")(fix.fix_command)
app.add_typer(baseline.app, name="baseline")
app.add_typer(fleet.app, name="fleet")
