"""Publish a review to a GitHub pull request: one review with inline comments, one summary comment.

    post(GitHubPublisher, output_dir, root=root, env=os.environ) -> PublishResult
    publish_github(output_dir, root=root, env=os.environ)        (the same)

:class:`GitHubPublisher` is GitHub's context and wire calls; which findings
go inline, the bodies and the idempotent summary are the shared driver's
(:mod:`fluxdrive.publish.driver`).

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
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from fluxdrive.errors import InputError, UsageError
from fluxdrive.publish.api import DEFAULT_API_URL, GitHubApiError, GitHubClient
from fluxdrive.publish.base import FAIL_ON_RANK, VERDICT_RANK, InlineComment, Publisher, PublishResult, ReviewRound
from fluxdrive.publish.diff import DiffIndex
from fluxdrive.publish.driver import post
from fluxdrive.publish.render import (
    FINDING_MARKER_RE,
    RESOLVED_MARKER,
    RESOLVED_MARKER_RE,
    check_summary,
    plain,
    review_body,
)
from fluxdrive.publish.report import RunReport

MODES = ("review", "checks")
CHECK_NAME = "fluxdrive"
MAX_ANNOTATIONS = 50  # per request (Checks API)
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


# --- the publisher ------------------------------------------------------------------------------------


class GitHubPublisher(Publisher):
    """A pull request review with inline comments and a summary comment, or a check run (``--mode checks``)."""

    name = "github"
    token_env_var = "GITHUB_TOKEN"  # noqa: S105 - the name of the variable, not a token
    modes = MODES
    inline_in_one_request = True  # one review carries every inline comment
    suggestion_fence = "suggestion"  # the comment spans exactly the lines replaced (start_line..line)

    def __init__(
        self,
        target: Target,
        token: str,
        *,
        api_url: str = DEFAULT_API_URL,
        graphql_url: str | None = None,
        request_changes: bool = False,
        client: Callable[[str, str, str | None], GitHubClient] | None = None,
    ) -> None:
        self.target = target
        self._token = token
        self._api_url = api_url
        self._graphql_url = graphql_url
        self._request_changes = request_changes
        self._factory = client or (lambda t, a, g: GitHubClient(t, a, graphql_url=g))
        self._replied: set[str] = set()

    @classmethod
    def from_env(
        cls,
        env: Mapping[str, str],
        *,
        mode: str = "review",
        repo: str | None = None,
        pr: int | None = None,
        sha: str | None = None,
        request_changes: bool = False,
        client: Callable[[str, str, str | None], GitHubClient] | None = None,
    ) -> GitHubPublisher:
        """``GITHUB_*`` (see the module docstring); ``client`` builds the API client from (token, api_url,
        graphql_url) - for tests."""
        token = cls.token(env)
        target = resolve_target(env, repo=repo, pr=pr, sha=sha, need_pr=mode == "review")
        return cls(
            target,
            token,
            api_url=(env.get("GITHUB_API_URL") or DEFAULT_API_URL).rstrip("/"),
            graphql_url=env.get("GITHUB_GRAPHQL_URL") or None,
            request_changes=request_changes,
            client=client,
        )

    @classmethod
    def token_hint(cls, env: Mapping[str, str]) -> str:
        return "in a workflow add 'env: GITHUB_TOKEN: ${{ github.token }}'; locally export a token"

    @property
    def where(self) -> str:
        return self.target.repository + (f"#{self.target.number}" if self.target.number else "")

    def connect(self) -> GitHubClient:
        self.gh = self._factory(self._token, self._api_url, self._graphql_url)
        return self.gh

    @property
    def _pulls(self) -> str:
        return f"/repos/{self.target.owner}/{self.target.name}/pulls/{self.target.number}"

    @property
    def _issues(self) -> str:
        return f"/repos/{self.target.owner}/{self.target.name}/issues"

    def head(self) -> str:
        if not self.target.sha:
            pull = self.gh.json("GET", self._pulls)
            sha = str(((pull or {}).get("head") or {}).get("sha") or "")
            self.target = Target(self.target.owner, self.target.name, self.target.number, sha)
        return self.target.sha

    # --- review mode ----------------------------------------------------------------------------------

    def changed_lines(self) -> DiffIndex:
        return DiffIndex.from_pull_files(self.gh.paginate(f"{self._pulls}/files"))

    def threads(self) -> Iterable[tuple[str, Any]]:
        """The pull request's review comments that start a thread; the "Resolved in" replies are noted."""
        for comment in self.gh.paginate(f"{self._pulls}/comments"):
            body = str(comment.get("body") or "")
            if comment.get("in_reply_to_id"):
                self._replied.update(RESOLVED_MARKER_RE.findall(body))
                continue
            yield body, comment

    def post_inline(self, comments: Sequence[InlineComment], state: ReviewRound) -> list[InlineComment]:
        """One review (COMMENT, or REQUEST_CHANGES on a risky verdict when asked) with every comment; a review
        without comments when GitHub refuses a line (422). No review when there is nothing new to say."""
        report, result = state.report, state.result
        event = "REQUEST_CHANGES" if self._request_changes and report.verdict == "risky" else "COMMENT"
        if not comments and not (event == "REQUEST_CHANGES" and not state.earlier):
            return []
        sha = self.target.sha
        payload = {
            "commit_id": sha,
            "event": event,
            "body": review_body(report, len(comments), sha),
            "comments": [_comment(c) for c in comments],
        }
        refused: list[InlineComment] = []
        try:
            review = self.gh.json("POST", f"{self._pulls}/reviews", json=payload)
        except GitHubApiError as exc:
            if exc.status != 422 or not comments:
                raise
            result.notes.append(f"GitHub refused the inline comments ({exc.message}); they are in the summary")
            refused = list(comments)
            payload.update(comments=[], body=review_body(report, 0, sha))
            review = self.gh.json("POST", f"{self._pulls}/reviews", json=payload)
        result.review_id = (review or {}).get("id")
        result.review_event = event
        return refused

    def resolve(self, stale: Mapping[str, Any], result: PublishResult) -> None:
        """Resolve the threads through GraphQL; reply "Resolved in <sha>" where GraphQL is refused."""
        try:
            threads = self._review_threads()
            for fp in sorted(stale):
                thread = threads.get(fp)
                if thread is None or thread.get("isResolved"):
                    continue
                self.gh.graphql(RESOLVE_MUTATION, {"threadId": thread["id"]})
                result.resolved += 1
            return
        except GitHubApiError as exc:
            result.notes.append(f"could not resolve threads through GraphQL ({exc.message}); replying instead")
        for fp, comment in sorted(stale.items()):
            if fp in self._replied:
                continue
            body = f"Resolved in {self.target.sha}: fluxdrive no longer reports this finding.\n\n"
            body += RESOLVED_MARKER.format(fp)
            self.gh.json("POST", f"{self._pulls}/comments/{comment['id']}/replies", json={"body": body})
            result.resolved_by_reply += 1

    def _review_threads(self) -> dict[str, dict[str, Any]]:
        """Fingerprint -> review thread (``id``, ``isResolved``) of the threads fluxdrive started."""
        found: dict[str, dict[str, Any]] = {}
        cursor: str | None = None
        target = self.target
        for _ in range(50):
            data = self.gh.graphql(
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

    def comments(self) -> Iterable[tuple[Any, str]]:
        for comment in self.gh.paginate(f"{self._issues}/{self.target.number}/comments"):
            yield comment.get("id"), str(comment.get("body") or "")

    def edit_summary(self, comment_id: Any, body: str) -> None:
        self.gh.json("PATCH", f"{self._issues}/comments/{comment_id}", json={"body": body})

    def add_summary(self, body: str) -> int | None:
        created = self.gh.json("POST", f"{self._issues}/{self.target.number}/comments", json={"body": body})
        return int((created or {}).get("id") or 0) or None

    # --- checks mode ----------------------------------------------------------------------------------

    def set_status(self, report: RunReport, result: PublishResult, *, fail_on: str) -> None:
        """One check run, completed, with the first 50 annotations; a PATCH per further 50."""
        annotations = annotations_for(report)
        conclusion = conclusion_for(report, fail_on)
        output = {"title": plain(f"fluxdrive: {report.verdict}", 255), "summary": check_summary(report)}
        runs = f"/repos/{self.target.owner}/{self.target.name}/check-runs"
        created = self.gh.json(
            "POST",
            runs,
            json={
                "name": CHECK_NAME,
                "head_sha": self.target.sha,
                "status": "completed",
                "conclusion": conclusion,
                "output": {**output, "annotations": annotations[:MAX_ANNOTATIONS]},
            },
        )
        run_id = int((created or {}).get("id") or 0)
        for start in range(MAX_ANNOTATIONS, len(annotations), MAX_ANNOTATIONS):
            batch = annotations[start : start + MAX_ANNOTATIONS]
            self.gh.json("PATCH", f"{runs}/{run_id}", json={"output": {**output, "annotations": batch}})
        result.status_id, result.conclusion, result.annotations = run_id or None, conclusion, len(annotations)

    # --- what was posted ------------------------------------------------------------------------------

    @classmethod
    def inline_said(cls, result: PublishResult) -> str:
        if not result.review_id:
            return "no new inline comments"
        return f"review {result.review_id} ({result.review_event}) with {result.inline_posted} inline comment(s)"

    @classmethod
    def status_said(cls, result: PublishResult) -> str:
        return (
            f"Check run {result.status_id} on {result.commit[:12]} in {result.where}: {result.conclusion}, "
            f"{result.annotations} annotation(s)."
        )


def _comment(comment: InlineComment) -> dict[str, Any]:
    """The review's comment object: RIGHT-side line, and the range's first line for several."""
    anchor = comment.anchor
    posted: dict[str, Any] = {"path": anchor.path, "line": anchor.line, "side": "RIGHT", "body": comment.body}
    if anchor.start_line is not None:
        posted["start_line"] = anchor.start_line
        posted["start_side"] = "RIGHT"
    return posted


# --- the functions of before the protocol --------------------------------------------------------------


publish_github = partial(post, GitHubPublisher)
"""``publish_github(output_dir, root=root, env=os.environ, **options)``: :func:`~fluxdrive.publish.post` with
:class:`GitHubPublisher` (``root`` is the repository root the finding paths are relative to)."""
describe = GitHubPublisher.describe
