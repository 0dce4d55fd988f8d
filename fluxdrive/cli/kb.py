"""``fluxdrive kb``: remember, process, analyze, review and apply - the knowledge-base maintenance pipeline."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from fluxdrive.cli._io import out

app = typer.Typer(
    help="Maintain the project's knowledge base: remember, process, analyze, review, apply.", no_args_is_help=True
)
ProjectOpt = Annotated[
    Path | None, typer.Option("--project", metavar="DIR", help="The project (default: the current one).")
]


def _where(project: Path | None) -> tuple[Path, Path, int]:
    """Project root, kb directory and swarm size, from the project's config."""
    from fluxdrive.config import load_config
    from fluxdrive.core.project import project_directory, project_from_option

    root = project_from_option(project)
    settings = load_config(root).config.kb
    return root, project_directory(root, settings.directory, "kb.directory"), settings.swarm_concurrency


@app.command("remember")
def remember_command(
    title: Annotated[str, typer.Argument(help="A short title.")],
    content: Annotated[str, typer.Argument(help="What to remember (a few sentences).")],
    category: Annotated[
        str, typer.Option("--category", "-c", help="architecture, patterns, dependencies, workflows or gotchas.")
    ] = "patterns",
    refs: Annotated[
        list[str] | None, typer.Option("--ref", metavar="PATH[:SYMBOL]", help="A file or symbol it is about.")
    ] = None,
    project: ProjectOpt = None,
) -> None:
    """Queue an item and return at once; `fluxdrive kb process` takes it in."""
    from fluxdrive.core.masking import known_secrets
    from fluxdrive.core.secret_values import collect
    from fluxdrive.kb import remember

    root, kb_dir, _swarm = _where(project)
    with known_secrets(collect(root)):  # the project's own secret values are never stored
        queued = remember(kb_dir, title, content, category, list(refs or []))
    out(f"queued {queued.name}")


@app.command("process")
def process_command(project: ProjectOpt = None) -> None:
    """Take the remember queue in, one item at a time: duplicates dropped, conflicts to review, the rest added."""
    from fluxdrive.kb import process_queue

    _root, kb_dir, _swarm = _where(project)
    out(process_queue(kb_dir).line())


@app.command("analyze")
def analyze_command(
    force: Annotated[bool, typer.Option("--force", help="Run even if this commit was analyzed already.")] = False,
    concurrency: Annotated[
        int | None,
        typer.Option("--concurrency", min=1, max=32, help="Inquisitors in flight (default kb.swarm_concurrency)."),
    ] = None,
    model: Annotated[
        str | None,
        typer.Option("--model", metavar="PROVIDER:MODEL", help="Investigate with a model (reads the code) as well."),
    ] = None,
    project: ProjectOpt = None,
) -> None:
    """Check every item against the current code; write reviews (auto-fixes included), drop moot ones."""
    from fluxdrive.kb import analyze
    from fluxdrive.kb.inquisitor import Inquisitor, static_inquisitor

    root, kb_dir, swarm = _where(project)
    inquisitor: Inquisitor = static_inquisitor
    if model:
        from fluxdrive.config import load_config
        from fluxdrive.kb.on_model import model_inquisitor
        from fluxdrive.runtimes.llm.models import parse_model

        parse_model(model)  # a wrong model string or a missing key: one line, before anything runs
        inquisitor = model_inquisitor(model, load_config(root).config)
    out(analyze(root, kb_dir, concurrency=concurrency or swarm, force=force, inquisitor=inquisitor).line())


@app.command("review")
def review_command(project: ProjectOpt = None) -> None:
    """Answer the pending reviews in a terminal UI (answers are saved as you go)."""
    import sys

    from fluxdrive.errors import UsageError
    from fluxdrive.kb import ReviewSession

    _root, kb_dir, _swarm = _where(project)
    session = ReviewSession.open(kb_dir)
    if session.done:
        out("No review is waiting for an answer.")
        return
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        raise UsageError(
            f"{len(session.reviews)} review(s) wait for answers, and there is no terminal to ask in",
            hint="run `fluxdrive kb review` in a terminal",
        )
    from fluxdrive.kb.tui import ReviewApp

    answered = ReviewApp(session).run() or 0
    pending = len(session.reviews) - session.answered_count
    left = f", {pending} still pending (skipped or not reached)" if pending else ""
    out(f"{answered} answered{left}; run `fluxdrive kb apply` to carry them out")


@app.command("apply")
def apply_command(project: ProjectOpt = None) -> None:
    """Carry out every answered and automatic review, then delete it."""
    from fluxdrive.kb import apply_reviews

    _root, kb_dir, _swarm = _where(project)
    result = apply_reviews(kb_dir)
    for line in result.lines:
        out(line)
    out(f"{len(result.lines)} applied, {result.waiting} waiting for an answer")


@app.command("status")
def status_command(project: ProjectOpt = None) -> None:
    """Items per category, queued items and reviews (waiting, answered, automatic)."""
    from fluxdrive.kb import load_reviews, queued
    from fluxdrive.kb.files import load_items

    _root, kb_dir, _swarm = _where(project)
    items = load_items(kb_dir)
    reviews = load_reviews(kb_dir)
    shown = ", ".join(f"{len(v)} {k}" for k, v in items.items() if v) or "none"
    waiting = sum(1 for r in reviews if not r.ready)
    automatic = sum(1 for r in reviews if r.auto_apply)
    out(f"Items: {shown}")
    answered = len(reviews) - waiting - automatic
    out(f"Queue: {len(queued(kb_dir))}; reviews: {waiting} waiting, {answered} answered, {automatic} automatic")
