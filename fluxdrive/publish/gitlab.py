"""Publish a review to a GitLab merge request: one diff discussion per finding, one summary note.

    post(GitLabPublisher, output_dir, root=root, env=os.environ) -> PublishResult
    publish_gitlab(output_dir, root=root, env=os.environ)        (the same)

:class:`GitLabPublisher` is GitLab's context and wire calls; which findings
go inline, the bodies and the idempotent summary are the shared driver's
(:mod:`fluxdrive.publish.driver`).

**Where.** The API from ``CI_API_V4_URL`` (default https://gitlab.com/api/v4),
the project from ``CI_MERGE_REQUEST_PROJECT_ID`` (else ``CI_PROJECT_ID``),
the merge request from ``CI_MERGE_REQUEST_IID`` - GitLab CI's predefined
variables in a merge request pipeline; ``api_url``, ``project`` and ``mr``
override them. The token comes from ``GITLAB_TOKEN`` only (sent as
``PRIVATE-TOKEN``): ``CI_JOB_TOKEN`` cannot write notes or discussions.

**Flow** (REST API v4, all under ``/projects/:id/merge_requests/:iid``):

1. ``GET .../versions``: the latest diff version (first) gives the position's
   ``base_sha``, ``start_sha`` and ``head_sha``.
2. ``GET .../diffs`` (paginated; ``GET .../changes`` before GitLab 15.7):
   the new-file lines of each hunk (:mod:`fluxdrive.publish.diff`), and for
   an unchanged line its old number too (GitLab wants both there, only
   ``new_line`` on an added line).
3. ``GET .../discussions`` (paginated): the discussions earlier runs started,
   by the ``<!-- fluxdrive:finding:<fingerprint> -->`` marker of their first
   note.
4. A finding with a place in the diff and no discussion yet gets
   ``POST .../discussions`` with a ``text`` position on its line. Should
   GitLab refuse the line (400 ``line_code``: the merge request moved since
   the review), that finding joins the summary. A finding outside the diff
   goes to the summary only.
5. A fingerprint discussed before and absent now was fixed: its discussion
   is resolved (``PUT .../discussions/:id?resolved=true``), unless already
   resolved - a discussion a person resolved is never reopened.
6. The summary note (``<!-- fluxdrive:summary -->``) is found among
   ``GET .../notes`` and edited in place (``PUT .../notes/:id``), or created
   once (``POST .../notes``).

Bodies are :mod:`fluxdrive.publish.render`'s, the same as on GitHub, with one
more guard: no line of a body can start with ``/``, so review text cannot run
a GitLab quick action (``/merge``, ``/approve``, ``/close``...).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from fluxdrive.errors import UsageError
from fluxdrive.publish.base import InlineComment, Publisher, PublishResult, ReviewRound
from fluxdrive.publish.diff import DiffIndex, context_old_lines
from fluxdrive.publish.driver import post
from fluxdrive.publish.gitlab_api import DEFAULT_API_URL, GitLabApiError, GitLabClient, project_path

_QUICK_ACTION = re.compile(r"(?m)^([ \t]*)/")
_LINE_CODE = re.compile(r"(?i)line_code|line code|position")


@dataclass(frozen=True)
class MergeRequest:
    """Where to publish: the API, the project (an ID or ``group/name``) and the merge request IID."""

    api_url: str
    project: str
    iid: int

    @property
    def path(self) -> str:
        """``/projects/:id/merge_requests/:iid``."""
        return f"{project_path(self.project)}/merge_requests/{self.iid}"


@dataclass
class _Diffs:
    """The merge request's commentable lines: hunks by new path, old paths, old numbers of unchanged lines."""

    index: DiffIndex = field(default_factory=DiffIndex)
    old_path: dict[str, str] = field(default_factory=dict)
    unchanged: dict[str, dict[int, int]] = field(default_factory=dict)

    @classmethod
    def from_diffs(cls, diffs: Iterable[Mapping[str, Any]]) -> _Diffs:
        """From ``GET .../diffs`` (or ``.../changes``) objects; a deleted file, or one whose diff GitLab left
        out (``too_large``, binary), has no commentable line."""
        found = cls()
        for item in diffs:
            new, old, patch = item.get("new_path"), item.get("old_path"), item.get("diff")
            if not isinstance(new, str):
                continue
            text = (
                patch if isinstance(patch, str) and not item.get("deleted_file") and not item.get("too_large") else ""
            )
            found.index.add(new, text)
            found.old_path[new] = old if isinstance(old, str) and old else new
            found.unchanged[new] = context_old_lines(text)
        return found


# --- where to publish ---------------------------------------------------------------------------------


def resolve_merge_request(
    env: Mapping[str, str], *, project: str | None = None, mr: int | None = None, api_url: str | None = None
) -> MergeRequest:
    """The API, project and merge request from the options, else GitLab CI's predefined variables."""
    url = (api_url or env.get("CI_API_V4_URL") or DEFAULT_API_URL).strip().rstrip("/")
    if not url.startswith(("https://", "http://")):
        raise UsageError(f"--api-url must be an http(s) URL, got {url!r}", hint="e.g. https://gitlab.com/api/v4")
    project_id = (project or env.get("CI_MERGE_REQUEST_PROJECT_ID") or env.get("CI_PROJECT_ID") or "").strip()
    if not project_id:
        raise UsageError("no GitLab project to publish to", hint="run in GitLab CI or pass --project-id ID")
    raw = mr if mr is not None else (env.get("CI_MERGE_REQUEST_IID") or "").strip() or None
    if raw is None:
        raise UsageError(
            "no merge request to publish to",
            hint="run in a merge request pipeline (CI_MERGE_REQUEST_IID), or pass --project-id ID --mr IID",
        )
    try:
        iid = int(raw)
    except ValueError:
        iid = 0
    if iid < 1:
        raise UsageError(f"bad merge request IID {raw!r}")
    return MergeRequest(url, project_id, iid)


# --- posting ------------------------------------------------------------------------------------------


def no_quick_actions(body: str) -> str:
    """``body`` with every line that starts with ``/`` (a GitLab quick action) defused by a zero-width space."""
    return _QUICK_ACTION.sub("\\1\u200b/", body)


# --- the publisher ------------------------------------------------------------------------------------


class GitLabPublisher(Publisher):
    """A diff discussion per finding on a changed line and a summary note, on a merge request."""

    name = "gitlab"
    token_env_var = "GITLAB_TOKEN"  # noqa: S105 - the name of the variable, not a token
    suggestion_fence = "suggestion:-{above}+{below}"  # GitLab: lines above and below the commented one
    inline_noun = "discussion"
    already_said = "already discussed"
    summary_noun = "summary note"

    def __init__(
        self, target: MergeRequest, token: str, *, client: Callable[[str, str], GitLabClient] | None = None
    ) -> None:
        self.target = target
        self._token = token
        self._factory: Callable[[str, str], GitLabClient] = client or GitLabClient
        self._version: dict[str, Any] = {}
        self._diffs = _Diffs()

    @classmethod
    def from_env(
        cls,
        env: Mapping[str, str],
        *,
        mode: str = "review",
        project: str | None = None,
        mr: int | None = None,
        api_url: str | None = None,
        client: Callable[[str, str], GitLabClient] | None = None,
    ) -> GitLabPublisher:
        """``CI_*`` and ``GITLAB_TOKEN`` (see the module docstring); ``client`` builds the API client from
        (token, api_url) - for tests."""
        token = cls.token(env)
        return cls(resolve_merge_request(env, project=project, mr=mr, api_url=api_url), token, client=client)

    @classmethod
    def token_hint(cls, env: Mapping[str, str]) -> str:
        if env.get("CI_JOB_TOKEN"):
            return (
                "CI_JOB_TOKEN cannot post merge request notes or discussions: add a project access token "
                "(scope api, role Developer) as a masked CI/CD variable named GITLAB_TOKEN"
            )
        return "export a GitLab access token with the api scope (in CI: a masked CI/CD variable GITLAB_TOKEN)"

    @property
    def where(self) -> str:
        return f"{self.target.project}!{self.target.iid}"

    def connect(self) -> GitLabClient:
        self.gl = self._factory(self._token, self.target.api_url)
        return self.gl

    def head(self) -> str:
        """The latest diff version's head; its three commits are every position's."""
        path = self.target.path
        versions = self.gl.json("GET", f"{path}/versions")
        latest = versions[0] if isinstance(versions, list) and versions else None
        if not isinstance(latest, dict) or not all(
            latest.get(k) for k in ("base_commit_sha", "start_commit_sha", "head_commit_sha")
        ):
            raise GitLabApiError(
                f"GET {path}/versions: the merge request has no diff version yet",
                hint="GitLab prepares it right after a push: run the job again in a moment",
            )
        self._version = latest
        return str(latest["head_commit_sha"])

    def changed_lines(self) -> DiffIndex:
        self._diffs = _Diffs.from_diffs(self._merge_request_diffs())
        return self._diffs.index

    def _merge_request_diffs(self) -> list[Any]:
        path = self.target.path
        try:
            return self.gl.paginate(f"{path}/diffs")
        except GitLabApiError as exc:
            if exc.status != 404:
                raise
        changes = self.gl.json("GET", f"{path}/changes")  # GitLab before 15.7 has no /diffs
        listed = (changes or {}).get("changes") if isinstance(changes, dict) else None
        return listed if isinstance(listed, list) else []

    def threads(self) -> Iterable[tuple[str, Any]]:
        """Every discussion, by the body of its first note."""
        for discussion in self.gl.paginate(f"{self.target.path}/discussions"):
            notes = discussion.get("notes") if isinstance(discussion, dict) else None
            first = notes[0] if isinstance(notes, list) and notes and isinstance(notes[0], dict) else {}
            yield str(first.get("body") or ""), discussion

    def post_inline(self, comments: Sequence[InlineComment], state: ReviewRound) -> list[InlineComment]:
        """A discussion per comment; one GitLab refuses the line of (400 ``line_code``) is returned."""
        refused: list[InlineComment] = []
        for comment in comments:
            try:
                self.gl.json("POST", f"{self.target.path}/discussions", json=self._discussion(comment))
            except GitLabApiError as exc:
                if exc.status != 400 or not _LINE_CODE.search(exc.message):
                    raise
                state.result.notes.append(
                    f"GitLab refused the line of {comment.finding.id} ({exc.message}); it is in the summary"
                )
                refused.append(comment)
        return refused

    def _discussion(self, comment: InlineComment) -> dict[str, Any]:
        """The ``POST .../discussions`` body: the finding on the anchor's last line (one line: GitLab's
        multi-line ranges need line codes, and the other lines are named in the body)."""
        anchor, version = comment.anchor, self._version
        position: dict[str, Any] = {
            "position_type": "text",
            "base_sha": version["base_commit_sha"],
            "start_sha": version["start_commit_sha"],
            "head_sha": version["head_commit_sha"],
            "old_path": self._diffs.old_path.get(anchor.path, anchor.path),
            "new_path": anchor.path,
            "new_line": anchor.line,
        }
        old_line = self._diffs.unchanged.get(anchor.path, {}).get(anchor.line)
        if old_line is not None:
            position["old_line"] = old_line  # an unchanged line: GitLab wants both numbers
        return {"body": comment.body, "position": position}

    def resolve(self, stale: Mapping[str, Any], result: PublishResult) -> None:
        """``PUT .../discussions/:id?resolved=true`` for each resolvable, unresolved one."""
        for discussion in stale.values():
            first = discussion["notes"][0]
            if not first.get("resolvable") or first.get("resolved"):
                continue
            try:
                self.gl.json("PUT", f"{self.target.path}/discussions/{discussion['id']}", params={"resolved": "true"})
            except GitLabApiError as exc:
                if exc.status != 403:
                    raise
                result.notes.append(f"could not resolve the discussion of a fixed finding ({exc.message})")
                continue
            result.resolved += 1

    def comments(self) -> Iterable[tuple[Any, str]]:
        """The merge request's notes, system notes ("added 1 commit") left out."""
        for note in self.gl.paginate(f"{self.target.path}/notes"):
            if isinstance(note, dict) and not note.get("system"):
                yield note.get("id"), str(note.get("body") or "")

    def edit_summary(self, comment_id: Any, body: str) -> None:
        self.gl.json("PUT", f"{self.target.path}/notes/{comment_id}", json={"body": body})

    def add_summary(self, body: str) -> int | None:
        created = self.gl.json("POST", f"{self.target.path}/notes", json={"body": body})
        return int((created or {}).get("id") or 0) or None

    def defuse(self, body: str) -> str:
        return no_quick_actions(body)


# --- the functions of before the protocol --------------------------------------------------------------


publish_gitlab = partial(post, GitLabPublisher)
"""``publish_gitlab(output_dir, root=root, env=os.environ, **options)``: :func:`~fluxdrive.publish.post` with
:class:`GitLabPublisher`."""
describe_gitlab = GitLabPublisher.describe
