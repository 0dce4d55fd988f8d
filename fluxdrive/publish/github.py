"""Publish a review to a GitHub pull request: one review with inline comments, one summary comment.

    publish_github(output_dir, root=root, env=os.environ) -> PublishResult

**Where.** The pull request comes from the Actions event payload
(``GITHUB_EVENT_PATH``: ``pull_request.number``, ``pull_request.head.sha``),
the repository from ``GITHUB_REPOSITORY``, the API from ``GITHUB_API_URL``
(default https://api.github.com; GraphQL at ``GITHUB_GRAPHQL_URL``, default
``{api}/graphql``) and the token from ``GITHUB_TOKEN`` only. ``repo``, ``pr``
and ``sha`` override them for local use (without a sha the pull request's
head is asked for).

**Review mode** (default):

1. ``GET /repos/{o}/{r}/pulls/{n}/files`` (paginated): the RIGHT-side lines
   of each hunk (:mod:`fluxdrive.publish.diff`).
2. ``GET /repos/{o}/{r}/pulls/{n}/comments`` (paginated): the inline comments
   earlier runs posted, by the fingerprint in their marker.
3. A finding with a place in the diff and no comment yet becomes an inline
   comment of ONE ``POST /repos/{o}/{r}/pulls/{n}/reviews`` (``event``
   COMMENT, or REQUEST_CHANGES on a risky verdict when asked). A finding
   outside the diff goes to the summary comment only. Should GitHub still
   refuse a line (422: the head moved since the review), the review is posted
   again without inline comments and those findings join the summary.
4. A fingerprint commented before and absent now was fixed: its thread is
   resolved through GraphQL (``repository.pullRequest.reviewThreads``, then
   ``resolveReviewThread``); if GraphQL is refused, the comment gets a
   "Resolved in <sha>" reply instead (``POST .../comments/{id}/replies``).
   Threads a person resolved are never reopened.
5. The summary comment (``<!-- fluxdrive:summary -->``) is found among
   ``GET /repos/{o}/{r}/issues/{n}/comments`` and edited in place
   (``PATCH /repos/{o}/{r}/issues/comments/{id}``), or created once
   (``POST /repos/{o}/{r}/issues/{n}/comments``).

**Checks mode**: one ``POST /repos/{o}/{r}/check-runs`` (completed, with a
conclusion from the verdict and ``fail_on``) carrying the first 50
annotations, and a ``PATCH /repos/{o}/{r}/check-runs/{id}`` per further 50.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fluxdrive.errors import InputError, UsageError
from fluxdrive.publish.api import DEFAULT_API_URL, GitHubApiError, GitHubClient
from fluxdrive.publish.diff import Anchor, DiffIndex
from fluxdrive.publish.render import (
    FINDING_MARKER_RE,
    RESOLVED_MARKER,
    RESOLVED_MARKER_RE,
    SUMMARY_MARKER,
    check_summary,
    finding_comment,
    plain,
    review_body,
    summary_comment,
)
from fluxdrive.publish.report import PublishedFinding, RunReport, load_run

MODES = ("review", "checks")
CHECK_NAME = "fluxdrive"
MAX_ANNOTATIONS = 50  # per request (Checks API)
VERDICT_RANK = {"safe": 0, "needs-changes": 1, "risky": 2}  # "incomplete" is not ranked: it always fails
FAIL_ON_RANK = {"needs-changes": 1, "risky": 2, "never": 99}
LEVELS = {"P0": "failure", "P1": "failure", "P2": "warning", "P3": "notice"}

THREADS_QUERY = """
query($owner: String!, $name: String!, $number: Int!, $cursor: String) {
  repository(owner: $owner, name: $name) {
    pullRequest(number: $number) {
      reviewThreads(first: 100, after: $cursor) {
        pageInfo { hasNextPage endCursor }
        nodes {
          id
          isResolved
          comments(first: 1) { nodes { databaseId body } }
        }
      }
    }
  }
}
"""
RESOLVE_MUTATION = """
mutation($threadId: ID!) {
  resolveReviewThread(input: {threadId: $threadId}) {
    thread { id isResolved }
  }
}
"""


@dataclass(frozen=True)
class Target:
    """The repository, the pull request (None in checks mode outside one) and the commit."""

    owner: str
    name: str
    number: int | None
    sha: str

    @property
    def repository(self) -> str:
        """``owner/name``."""
        return f"{self.owner}/{self.name}"


@dataclass
class PublishResult:
    """What was posted."""

    mode: str
    repository: str
    pull_request: int | None
    commit: str
    verdict: str
    review_id: int | None = None
    review_event: str | None = None
    inline_posted: int = 0
    already_posted: int = 0
    outside_diff: int = 0
    resolved: int = 0
    resolved_by_reply: int = 0
    summary_comment_id: int | None = None
    summary_updated: bool = False
    check_run_id: int | None = None
    conclusion: str | None = None
    annotations: int = 0
    notes: list[str] = field(default_factory=list)


# --- where to publish ---------------------------------------------------------------------------------


def _event(env: Mapping[str, str]) -> dict[str, Any]:
    path = env.get("GITHUB_EVENT_PATH")
    if not path:
        return {}
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise InputError(f"cannot read the event payload GITHUB_EVENT_PATH={path}: {exc}") from None
    return data if isinstance(data, dict) else {}


def _split_repo(value: str) -> tuple[str, str]:
    owner, _, name = value.strip().partition("/")
    if not owner or not name or "/" in name:
        raise UsageError(f"bad repository {value!r}", hint="use OWNER/NAME, e.g. --repo octo/app")
    return owner, name


def resolve_target(
    env: Mapping[str, str],
    *,
    repo: str | None = None,
    pr: int | None = None,
    sha: str | None = None,
    need_pr: bool = True,
) -> Target:
    """The repository, pull request and commit from the options, else the Actions environment."""
    event = _event(env)
    pull = event.get("pull_request")
    pull = pull if isinstance(pull, dict) else {}
    repository = event.get("repository")
    full_name = (
        repo or env.get("GITHUB_REPOSITORY") or (repository.get("full_name") if isinstance(repository, dict) else None)
    )
    if not full_name:
        raise UsageError("no repository to publish to", hint="run in GitHub Actions or pass --repo OWNER/NAME")
    owner, name = _split_repo(str(full_name))
    number = pr if pr is not None else pull.get("number")
    if number is not None and (not isinstance(number, int) or number < 1):
        raise UsageError(f"bad pull request number {number!r}")
    if number is None and need_pr:
        raise UsageError(
            "no pull request to publish to",
            hint="run on a pull_request event, or pass --repo OWNER/NAME --pr N (or use --mode checks)",
        )
    head_object = pull.get("head")
    head = (
        head_object.get("sha") if isinstance(head_object, dict) and (pr is None or pr == pull.get("number")) else None
    )
    commit = sha or head or ("" if need_pr else env.get("GITHUB_SHA", ""))
    if not commit and not need_pr:
        raise UsageError("no commit to attach the check run to", hint="pass --sha SHA")
    return Target(owner, name, number, str(commit))


def _token(env: Mapping[str, str]) -> str:
    token = (env.get("GITHUB_TOKEN") or "").strip()
    if not token:
        raise UsageError(
            "GITHUB_TOKEN is not set",
            hint="in a workflow add 'env: GITHUB_TOKEN: ${{ github.token }}'; locally export a token",
        )
    return token


# --- review mode --------------------------------------------------------------------------------------


def _anchor(finding: PublishedFinding, diff: DiffIndex) -> Anchor | None:
    for place in finding.places:
        if place.start:
            found = diff.anchor(place.path, place.start, place.end)
            if found:
                return found
    return None


def _comment(finding: PublishedFinding, anchor: Anchor) -> dict[str, Any]:
    others = [str(p) for p in finding.places if not (p.path == anchor.path and p.start <= anchor.line <= p.end)]
    comment: dict[str, Any] = {
        "path": anchor.path,
        "line": anchor.line,
        "side": "RIGHT",
        "body": finding_comment(finding, extra_places=others),
    }
    if anchor.start_line is not None:
        comment["start_line"] = anchor.start_line
        comment["start_side"] = "RIGHT"
    return comment


def _threads(gh: GitHubClient, target: Target) -> dict[str, dict[str, Any]]:
    """Fingerprint -> review thread (``id``, ``isResolved``) of the threads fluxdrive started."""
    found: dict[str, dict[str, Any]] = {}
    cursor: str | None = None
    for _ in range(50):
        data = gh.graphql(
            THREADS_QUERY, {"owner": target.owner, "name": target.name, "number": target.number, "cursor": cursor}
        )
        threads = ((data.get("repository") or {}).get("pullRequest") or {}).get("reviewThreads") or {}
        for node in threads.get("nodes") or []:
            first = ((node.get("comments") or {}).get("nodes") or [{}])[0] or {}
            marker = FINDING_MARKER_RE.search(str(first.get("body") or ""))
            if marker and marker.group(1) not in found:
                found[marker.group(1)] = node
        page = threads.get("pageInfo") or {}
        if not page.get("hasNextPage"):
            break
        cursor = page.get("endCursor")
    return found


def _resolve(
    gh: GitHubClient, target: Target, stale: dict[str, dict[str, Any]], replied: set[str], result: PublishResult
) -> None:
    """Resolve the threads of fixed findings; reply "Resolved in <sha>" where GraphQL is refused."""
    try:
        threads = _threads(gh, target)
        for fp in sorted(stale):
            thread = threads.get(fp)
            if thread is None or thread.get("isResolved"):
                continue
            gh.graphql(RESOLVE_MUTATION, {"threadId": thread["id"]})
            result.resolved += 1
        return
    except GitHubApiError as exc:
        result.notes.append(f"could not resolve threads through GraphQL ({exc.message}); replying instead")
    base = f"/repos/{target.owner}/{target.name}/pulls/{target.number}/comments"
    for fp, comment in sorted(stale.items()):
        if fp in replied:
            continue
        body = f"Resolved in {target.sha}: fluxdrive no longer reports this finding.\n\n{RESOLVED_MARKER.format(fp)}"
        gh.json("POST", f"{base}/{comment['id']}/replies", json={"body": body})
        result.resolved_by_reply += 1


def _publish_review(
    gh: GitHubClient, target: Target, report: RunReport, *, request_changes: bool, summary_url: str | None
) -> PublishResult:
    owner, name, number = target.owner, target.name, target.number
    pulls = f"/repos/{owner}/{name}/pulls/{number}"
    if not target.sha:
        head = gh.json("GET", pulls)
        target = Target(owner, name, number, str(((head or {}).get("head") or {}).get("sha") or ""))
    result = PublishResult("review", target.repository, number, target.sha, report.verdict)
    diff = DiffIndex.from_pull_files(gh.paginate(f"{pulls}/files"))

    posted: dict[str, dict[str, Any]] = {}
    replied: set[str] = set()
    for comment in gh.paginate(f"{pulls}/comments"):
        body = str(comment.get("body") or "")
        if comment.get("in_reply_to_id"):
            replied.update(RESOLVED_MARKER_RE.findall(body))
            continue
        marker = FINDING_MARKER_RE.search(body)
        if marker:
            posted.setdefault(marker.group(1), comment)

    new: list[tuple[PublishedFinding, dict[str, Any]]] = []
    inline: list[PublishedFinding] = []
    outside: list[PublishedFinding] = []
    seen: set[str] = set()
    for finding in report.findings:
        anchor = _anchor(finding, diff)
        if anchor is None:
            outside.append(finding)
            continue
        inline.append(finding)
        if finding.fingerprint in posted:
            result.already_posted += 1
        elif finding.fingerprint not in seen:
            new.append((finding, _comment(finding, anchor)))
        seen.add(finding.fingerprint)

    event = "REQUEST_CHANGES" if request_changes and report.verdict == "risky" else "COMMENT"
    # a review only when there is something new to say inline (or changes to request for the first time)
    if new or (event == "REQUEST_CHANGES" and not posted):
        payload = {
            "commit_id": target.sha,
            "event": event,
            "body": review_body(report, len(new), target.sha),
            "comments": [c for _, c in new],
        }
        try:
            review = gh.json("POST", f"{pulls}/reviews", json=payload)
        except GitHubApiError as exc:
            if exc.status != 422 or not new:
                raise
            result.notes.append(f"GitHub refused the inline comments ({exc.message}); they are in the summary")
            moved = [f for f, _ in new]
            inline = [f for f in inline if f not in moved]
            outside += moved
            new = []
            payload.update(comments=[], body=review_body(report, 0, target.sha))
            review = gh.json("POST", f"{pulls}/reviews", json=payload)
        result.review_id = (review or {}).get("id")
        result.review_event = event
        result.inline_posted = len(new)
    result.outside_diff = len(outside)

    current = {f.fingerprint for f in report.findings}
    stale = {fp: c for fp, c in posted.items() if fp not in current}
    if stale:
        _resolve(gh, target, stale, replied, result)

    body = summary_comment(
        report,
        sha=target.sha,
        inline=inline,
        outside=outside,
        resolved=result.resolved + result.resolved_by_reply,
        summary_url=summary_url,
    )
    issues = f"/repos/{owner}/{name}/issues"
    existing = next(
        (c for c in gh.paginate(f"{issues}/{number}/comments") if SUMMARY_MARKER in str(c.get("body") or "")), None
    )
    if existing is not None:
        gh.json("PATCH", f"{issues}/comments/{existing['id']}", json={"body": body})
        result.summary_comment_id, result.summary_updated = int(existing["id"]), True
    else:
        created = gh.json("POST", f"{issues}/{number}/comments", json={"body": body})
        result.summary_comment_id = int((created or {}).get("id") or 0) or None
    return result


# --- checks mode --------------------------------------------------------------------------------------


def conclusion_for(report: RunReport, fail_on: str) -> str:
    """``failure`` at or above ``fail_on``, without a verdict or for an incomplete review; ``neutral`` with
    findings, else ``success``.

    Why ``failure`` for an incomplete review (fd-safety crashed, timed out, its provider answered 500):
    branch protection passes a required check whose conclusion is ``success``, ``neutral`` or
    ``skipped``, so only ``failure`` (or ``action_required``, which GitHub wants a ``details_url`` for)
    blocks the merge. A review that did not cover the change has not shown it safe, whatever
    ``--fail-on`` says about findings.
    """
    if fail_on not in FAIL_ON_RANK:
        raise UsageError(f"unknown --fail-on value {fail_on!r}", hint="use risky, needs-changes or never")
    if not report.complete or report.verdict == "incomplete":
        return "failure"
    if report.verdict not in VERDICT_RANK or VERDICT_RANK[report.verdict] >= FAIL_ON_RANK[fail_on]:
        return "failure"
    return "neutral" if report.findings else "success"


def annotations_for(report: RunReport) -> list[dict[str, Any]]:
    """One annotation per finding with a file place."""
    annotations = []
    for finding in report.findings:
        place = finding.place
        if place is None:
            continue
        message = " ".join(x for x in (finding.why, f"Fix: {finding.fix}" if finding.fix else "") if x)
        details = [f"{finding.id}; agents: {', '.join(finding.agents)}"]
        details += [f"rule: {finding.rules[0]}"] if finding.rules else []
        details += [f"also at: {', '.join(str(p) for p in finding.places[1:20])}"] if len(finding.places) > 1 else []
        annotations.append(
            {
                "path": place.path,
                "start_line": max(place.start, 1),
                "end_line": max(place.end, place.start, 1),
                "annotation_level": LEVELS.get(finding.severity, "warning"),
                # annotations are plain text on GitHub (no Markdown, no HTML): masked and bounded only
                "title": plain(f"{finding.severity}: {finding.title}", 255),
                "message": plain(message or finding.title, 4000),
                "raw_details": plain("\n".join(details), 4000),
            }
        )
    return annotations


def _publish_checks(gh: GitHubClient, target: Target, report: RunReport, *, fail_on: str) -> PublishResult:
    result = PublishResult("checks", target.repository, target.number, target.sha, report.verdict)
    annotations = annotations_for(report)
    conclusion = conclusion_for(report, fail_on)
    output = {"title": plain(f"fluxdrive: {report.verdict}", 255), "summary": check_summary(report)}
    created = gh.json(
        "POST",
        f"/repos/{target.owner}/{target.name}/check-runs",
        json={
            "name": CHECK_NAME,
            "head_sha": target.sha,
            "status": "completed",
            "conclusion": conclusion,
            "output": {**output, "annotations": annotations[:MAX_ANNOTATIONS]},
        },
    )
    run_id = int((created or {}).get("id") or 0)
    for start in range(MAX_ANNOTATIONS, len(annotations), MAX_ANNOTATIONS):
        gh.json(
            "PATCH",
            f"/repos/{target.owner}/{target.name}/check-runs/{run_id}",
            json={"output": {**output, "annotations": annotations[start : start + MAX_ANNOTATIONS]}},
        )
    result.check_run_id, result.conclusion, result.annotations = run_id or None, conclusion, len(annotations)
    return result


# --- entry point --------------------------------------------------------------------------------------


def publish_github(
    output_dir: Path,
    *,
    root: Path,
    env: Mapping[str, str],
    mode: str = "review",
    repo: str | None = None,
    pr: int | None = None,
    sha: str | None = None,
    request_changes: bool = False,
    summary_url: str | None = None,
    fail_on: str = "risky",
    client: Callable[[str, str, str | None], GitHubClient] | None = None,
) -> PublishResult:
    """Publish the run in ``output_dir`` to GitHub (see the module docstring).

    ``root`` is the repository root the finding paths are relative to (an
    absolute path under it is made relative); ``env`` supplies ``GITHUB_*``
    (``os.environ`` in a workflow). ``client`` builds the API client from
    (token, api_url, graphql_url) - for tests.
    """
    if mode not in MODES:
        raise UsageError(f"unknown --mode {mode!r}", hint="use review or checks")
    if summary_url is not None and not summary_url.startswith(("https://", "http://")):
        raise UsageError(f"--summary-url must be an http(s) URL, got {summary_url!r}")
    if fail_on not in FAIL_ON_RANK:
        raise UsageError(f"unknown --fail-on value {fail_on!r}", hint="use risky, needs-changes or never")
    token = _token(env)
    target = resolve_target(env, repo=repo, pr=pr, sha=sha, need_pr=mode == "review")
    report = load_run(Path(output_dir), root)
    api_url = (env.get("GITHUB_API_URL") or DEFAULT_API_URL).rstrip("/")
    graphql_url = env.get("GITHUB_GRAPHQL_URL") or None
    factory = client or (lambda t, a, g: GitHubClient(t, a, graphql_url=g))
    with factory(token, api_url, graphql_url) as gh:
        if mode == "checks":
            return _publish_checks(gh, target, report, fail_on=fail_on)
        return _publish_review(gh, target, report, request_changes=request_changes, summary_url=summary_url)


def describe(result: PublishResult) -> str:
    """One or two lines saying what was posted."""
    where = f"{result.repository}" + (f"#{result.pull_request}" if result.pull_request else "")
    if result.mode == "checks":
        return (
            f"Check run {result.check_run_id} on {result.commit[:12]} in {where}: {result.conclusion}, "
            f"{result.annotations} annotation(s)."
        )
    parts = []
    if result.review_id:
        parts.append(f"review {result.review_id} ({result.review_event}) with {result.inline_posted} inline comment(s)")
    else:
        parts.append("no new inline comments")
    if result.already_posted:
        parts.append(f"{result.already_posted} already commented")
    if result.outside_diff:
        parts.append(f"{result.outside_diff} outside the diff (in the summary)")
    if result.resolved or result.resolved_by_reply:
        parts.append(f"{result.resolved + result.resolved_by_reply} fixed finding(s) resolved")
    verb = "updated" if result.summary_updated else "posted"
    parts.append(f"summary comment {result.summary_comment_id} {verb}")
    return f"Published to {where} at {result.commit[:12]}: " + "; ".join(parts) + "."
