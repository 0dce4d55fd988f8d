"""``fluxdrive publish github|gitlab [OUTPUT_DIR]``: post a review's findings to a pull or merge request.

Without OUTPUT_DIR: the current directory if it holds findings.json, else the
latest run under ``PROJECT_ROOT/docs/research/flux-drive/``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Any

import typer

from fluxdrive.cli._io import note, out
from fluxdrive.core.masking import known_secrets
from fluxdrive.core.project import find_project_root
from fluxdrive.core.secret_values import collect as collect_secrets
from fluxdrive.errors import InputError

app = typer.Typer(
    help="Publish a review where people read it (GitHub pull requests, GitLab merge requests).",
    no_args_is_help=True,
)

# what every publisher's command takes
OutputDir = Annotated[
    Path | None,
    typer.Argument(metavar="OUTPUT_DIR", help="The review's output directory (default: the latest run)."),
]
ProjectRoot = Annotated[
    Path | None,
    typer.Option("--project", metavar="DIR", help="The repository root finding paths are relative to."),
]
LineFilter = Annotated[
    str | None,
    typer.Option(
        "--filter",
        metavar="added|diff_context|file|nofilter",
        help="Findings shown (reviewdog's modes): on added lines, in the diff's hunks, in changed files, or all "
        "(default: the review's, else added).",
    ),
]


def latest_run(start: Path) -> Path:
    """The current directory if it holds findings.json, else the newest run under docs/research/flux-drive/."""
    here = Path(start)
    if (here / "findings.json").is_file():
        return here
    from fluxdrive.workspace import latest_run as newest

    found = newest(find_project_root(here), "findings.json")
    if found is None:
        raise InputError(
            "no findings.json here and no runs under docs/research/flux-drive/",
            hint="pass the review's output directory: fluxdrive publish github DIR (or gitlab DIR)",
        )
    return found


def _post(host: str, output_dir: Path | None, project: Path | None, /, **options: Any) -> None:
    """Post the run (given, else the latest) through the publisher called ``host``, with its options; the
    finding paths are relative to ``project`` (default: the current directory's project root). Positional:
    ``project`` is also the name of a GitLab option (the project ID)."""
    from fluxdrive.publish import post, publisher

    forge = publisher(host)
    directory = output_dir if output_dir is not None else latest_run(Path.cwd())
    root = find_project_root(project or Path.cwd())
    with known_secrets(collect_secrets(root)):  # the project's secret values never reach the forge
        result = post(forge, directory, root=root, env=os.environ, **options)
    for line in result.notes:
        note(line)
    out(forge.describe(result))


@app.command("github")
def github(
    output_dir: OutputDir = None,
    mode: Annotated[
        str,
        typer.Option(
            "--mode",
            metavar="review|checks",
            help="review: a pull request review with inline comments plus a summary comment; checks: a check "
            "run with annotations.",
        ),
    ] = "review",
    repo: Annotated[
        str | None, typer.Option("--repo", metavar="OWNER/NAME", help="Repository (default: GITHUB_REPOSITORY).")
    ] = None,
    pr: Annotated[
        int | None,
        typer.Option("--pr", metavar="N", min=1, help="Pull request (default: from GITHUB_EVENT_PATH)."),
    ] = None,
    sha: Annotated[
        str | None,
        typer.Option("--sha", metavar="SHA", help="Commit the comments belong to (default: the PR's head)."),
    ] = None,
    request_changes: Annotated[
        bool, typer.Option("--request-changes", help="Request changes (instead of comment) on a risky verdict.")
    ] = False,
    summary_url: Annotated[
        str | None, typer.Option("--summary-url", metavar="URL", help="Link the summary comment to the full report.")
    ] = None,
    fail_on: Annotated[
        str,
        typer.Option(
            "--fail-on",
            metavar="risky|needs-changes|never",
            help="--mode checks: the check fails at or above this verdict.",
        ),
    ] = "risky",
    line_filter: LineFilter = None,
    project: ProjectRoot = None,
) -> None:
    """Post the review in OUTPUT_DIR to a pull request: inline comments on changed lines, one summary comment
    edited in place on re-runs, threads of fixed findings resolved. Token: GITHUB_TOKEN."""
    _post(
        "github",
        output_dir,
        project,
        mode=mode,
        repo=repo,
        pr=pr,
        sha=sha,
        request_changes=request_changes,
        summary_url=summary_url,
        fail_on=fail_on,
        line_filter=line_filter,
    )


@app.command("gitlab")
def gitlab(
    output_dir: OutputDir = None,
    project_id: Annotated[
        str | None,
        typer.Option(
            "--project-id",
            metavar="ID",
            help="Project ID or group/name path (default: CI_MERGE_REQUEST_PROJECT_ID, else CI_PROJECT_ID).",
        ),
    ] = None,
    mr: Annotated[
        int | None,
        typer.Option("--mr", metavar="IID", min=1, help="Merge request IID (default: CI_MERGE_REQUEST_IID)."),
    ] = None,
    api_url: Annotated[
        str | None,
        typer.Option("--api-url", metavar="URL", help="REST API v4 root (default: CI_API_V4_URL, else gitlab.com)."),
    ] = None,
    summary_url: Annotated[
        str | None, typer.Option("--summary-url", metavar="URL", help="Link the summary note to the full report.")
    ] = None,
    line_filter: LineFilter = None,
    project: ProjectRoot = None,
) -> None:
    """Post the review in OUTPUT_DIR to a merge request: a diff discussion per finding on a changed line, one
    summary note edited in place on re-runs, discussions of fixed findings resolved. Token: GITLAB_TOKEN."""
    _post(
        "gitlab",
        output_dir,
        project,
        project=project_id,
        mr=mr,
        api_url=api_url,
        summary_url=summary_url,
        line_filter=line_filter,
    )
