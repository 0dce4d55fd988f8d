"""``fluxdrive research "QUESTION" [--scope PATH]``: the research agents answer a question about the project.

Thin: parse, call :func:`fluxdrive.research.research`, print the answer
(or research.json with ``--json``) and where the files went.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Annotated

import typer

from fluxdrive.cli._io import out, out_json


def research_command(
    question: Annotated[str, typer.Argument(metavar="QUESTION", help="What to find out, in plain words.")],
    scope: Annotated[
        Path | None,
        typer.Option("--scope", metavar="PATH", help="Search only this file or directory (default: the project)."),
    ] = None,
    model: Annotated[
        str | None,
        typer.Option(
            "--model",
            metavar="PROVIDER:MODEL",
            help="Let framework-docs and best-practices answer on this model (web search when "
            "BRAVE_SEARCH_API_KEY or TAVILY_API_KEY is set); without it they are skipped.",
        ),
    ] = None,
    depth: Annotated[
        str, typer.Option("--depth", metavar="quick|standard|deep", help="Per-agent timeout: 30, 120 or 300 s.")
    ] = "standard",
    output_dir: Annotated[
        Path | None,
        typer.Option("--output-dir", metavar="DIR", help="Where files go (default: docs/research/flux-research/...)."),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print research.json instead of the answer.")] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress on stderr.")] = False,
) -> None:
    """Answer QUESTION with the research agents: repo-research, git-history, learnings offline; web ones on a model.

    Writes synthesis.md (answer first, evidence with file/commit/URL citations,
    disagreements, confidence) and research.json, one report and one verdict
    record per agent.
    """
    import json

    from fluxdrive.launch.progress import PlainProgress, Recorder, heartbeat_from
    from fluxdrive.research import research

    progress = Recorder() if quiet else PlainProgress(sys.stderr, heartbeat_s=heartbeat_from(os.environ))
    result = research(question, scope=scope, model=model, depth=depth, output_dir=output_dir, progress=progress)
    if as_json:
        out_json(json.loads((result.output_dir / "research.json").read_text(encoding="utf-8")))
        return
    out(result.synthesis_path.read_text(encoding="utf-8").rstrip())
    out(f"\nWritten: {result.synthesis_path}, research.json")
