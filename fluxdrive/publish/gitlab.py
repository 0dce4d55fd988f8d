"""Publish a review to a GitLab merge request: one diff discussion per finding, one summary note.

    publish_gitlab(output_dir, root=root, env=os.environ) -> GitLabPublishResult

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
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fluxdrive.errors import UsageError
from fluxdrive.publish.diff import Anchor, DiffIndex, context_old_lines, right_side_hunks
from fluxdrive.publish.gitlab_api import DEFAULT_API_URL, GitLabApiError, GitLabClient, project_path
from fluxdrive.publish.render import FINDING_MARKER_RE, SUMMARY_MARKER, finding_comment, summary_comment
from fluxdrive.publish.report import PublishedFinding, RunReport, load_run

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
class GitLabPublishResult:
    """What was posted."""

    project: str
    merge_request: int
    commit: str
    verdict: str
    discussions_posted: int = 0
    already_posted: int = 0
    outside_diff: int = 0
    resolved: int = 0
    summary_note_id: int | None = None
    summary_updated: bool = False
    notes: list[str] = field(default_factory=list)


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
            found.index.files[new] = right_side_hunks(text)
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


def _token(env: Mapping[str, str]) -> str:
    token = (env.get("GITLAB_TOKEN") or "").strip()
    if token:
        return token
    if env.get("CI_JOB_TOKEN"):
        hint = (
            "CI_JOB_TOKEN cannot post merge request notes or discussions: add a project access token "
            "(scope api, role Developer) as a masked CI/CD variable named GITLAB_TOKEN"
        )
    else:
        hint = "export a GitLab access token with the api scope (in CI: a masked CI/CD variable GITLAB_TOKEN)"
    raise UsageError("GITLAB_TOKEN is not set", hint=hint)


# --- posting ------------------------------------------------------------------------------------------


def no_quick_actions(body: str) -> str:
    """``body`` with every line that starts with ``/`` (a GitLab quick action) defused by a zero-width space."""
    return _QUICK_ACTION.sub("\\1\u200b/", body)


def _anchor(finding: PublishedFinding, diffs: _Diffs) -> Anchor | None:
    for place in finding.places:
        if place.start:
            found = diffs.index.anchor(place.path, place.start, place.end)
            if found:
                return found
    return None


def _discussion(finding: PublishedFinding, anchor: Anchor, diffs: _Diffs, version: Mapping[str, Any]) -> dict[str, Any]:
    """The ``POST .../discussions`` body: the finding on the anchor's last line (one line: GitLab's multi-line
    ranges need line codes, and the other lines are named in the body)."""
    others = [str(p) for p in finding.places if not (p.path == anchor.path and p.start <= anchor.line <= p.end)]
    position: dict[str, Any] = {
        "position_type": "text",
        "base_sha": version["base_commit_sha"],
        "start_sha": version["start_commit_sha"],
        "head_sha": version["head_commit_sha"],
        "old_path": diffs.old_path.get(anchor.path, anchor.path),
        "new_path": anchor.path,
        "new_line": anchor.line,
    }
    old_line = diffs.unchanged.get(anchor.path, {}).get(anchor.line)
    if old_line is not None:
        position["old_line"] = old_line  # an unchanged line: GitLab wants both numbers
    return {"body": no_quick_actions(finding_comment(finding, extra_places=others)), "position": position}


def _latest_version(gl: GitLabClient, mr: MergeRequest) -> dict[str, Any]:
    versions = gl.json("GET", f"{mr.path}/versions")
    latest = versions[0] if isinstance(versions, list) and versions else None
    if not isinstance(latest, dict) or not all(
        latest.get(k) for k in ("base_commit_sha", "start_commit_sha", "head_commit_sha")
    ):
        raise GitLabApiError(
            f"GET {mr.path}/versions: the merge request has no diff version yet",
            hint="GitLab prepares it right after a push: run the job again in a moment",
        )
    return latest


def _merge_request_diffs(gl: GitLabClient, mr: MergeRequest) -> list[Any]:
    try:
        return gl.paginate(f"{mr.path}/diffs")
    except GitLabApiError as exc:
        if exc.status != 404:
            raise
    changes = gl.json("GET", f"{mr.path}/changes")  # GitLab before 15.7 has no /diffs
    listed = (changes or {}).get("changes") if isinstance(changes, dict) else None
    return listed if isinstance(listed, list) else []


def _publish(gl: GitLabClient, mr: MergeRequest, report: RunReport, *, summary_url: str | None) -> GitLabPublishResult:
    version = _latest_version(gl, mr)
    head = str(version["head_commit_sha"])
    result = GitLabPublishResult(mr.project, mr.iid, head, report.verdict)
    diffs = _Diffs.from_diffs(_merge_request_diffs(gl, mr))

    posted: dict[str, dict[str, Any]] = {}
    for discussion in gl.paginate(f"{mr.path}/discussions"):
        notes = discussion.get("notes") if isinstance(discussion, dict) else None
        first = notes[0] if isinstance(notes, list) and notes and isinstance(notes[0], dict) else {}
        marker = FINDING_MARKER_RE.search(str(first.get("body") or ""))
        if marker:
            posted.setdefault(marker.group(1), discussion)

    inline: list[PublishedFinding] = []
    outside: list[PublishedFinding] = []
    seen: set[str] = set()
    for finding in report.findings:
        anchor = _anchor(finding, diffs)
        if anchor is None:
            outside.append(finding)
            continue
        if finding.fingerprint in posted or finding.fingerprint in seen:
            inline.append(finding)
            result.already_posted += finding.fingerprint in posted
            continue
        try:
            gl.json("POST", f"{mr.path}/discussions", json=_discussion(finding, anchor, diffs, version))
        except GitLabApiError as exc:
            if exc.status != 400 or not _LINE_CODE.search(exc.message):
                raise
            result.notes.append(f"GitLab refused the line of {finding.id} ({exc.message}); it is in the summary")
            outside.append(finding)
            continue
        seen.add(finding.fingerprint)
        inline.append(finding)
        result.discussions_posted += 1
    result.outside_diff = len(outside)

    current = {f.fingerprint for f in report.findings}
    for fp, discussion in sorted(posted.items()):
        first = discussion["notes"][0]
        if fp in current or not first.get("resolvable") or first.get("resolved"):
            continue
        try:
            gl.json("PUT", f"{mr.path}/discussions/{discussion['id']}", params={"resolved": "true"})
        except GitLabApiError as exc:
            if exc.status != 403:
                raise
            result.notes.append(f"could not resolve the discussion of a fixed finding ({exc.message})")
            continue
        result.resolved += 1

    body = no_quick_actions(
        summary_comment(
            report, sha=head, inline=inline, outside=outside, resolved=result.resolved, summary_url=summary_url
        )
    )
    existing = next(
        (
            n
            for n in gl.paginate(f"{mr.path}/notes")
            if isinstance(n, dict) and not n.get("system") and SUMMARY_MARKER in str(n.get("body") or "")
        ),
        None,
    )
    if existing is not None:
        gl.json("PUT", f"{mr.path}/notes/{existing['id']}", json={"body": body})
        result.summary_note_id, result.summary_updated = int(existing["id"]), True
    else:
        created = gl.json("POST", f"{mr.path}/notes", json={"body": body})
        result.summary_note_id = int((created or {}).get("id") or 0) or None
    return result


# --- entry point --------------------------------------------------------------------------------------


def publish_gitlab(
    output_dir: Path,
    *,
    root: Path,
    env: Mapping[str, str],
    project: str | None = None,
    mr: int | None = None,
    api_url: str | None = None,
    summary_url: str | None = None,
    client: Callable[[str, str], GitLabClient] | None = None,
) -> GitLabPublishResult:
    """Publish the run in ``output_dir`` to a GitLab merge request (see the module docstring).

    ``root`` is the repository root the finding paths are relative to; ``env`` supplies ``CI_*`` and
    ``GITLAB_TOKEN`` (``os.environ`` in a job). ``client`` builds the API client from (token, api_url) -
    for tests.
    """
    if summary_url is not None and not summary_url.startswith(("https://", "http://")):
        raise UsageError(f"--summary-url must be an http(s) URL, got {summary_url!r}")
    token = _token(env)
    target = resolve_merge_request(env, project=project, mr=mr, api_url=api_url)
    report = load_run(Path(output_dir), root)
    factory: Callable[[str, str], GitLabClient] = client or GitLabClient
    with factory(token, target.api_url) as gl:
        return _publish(gl, target, report, summary_url=summary_url)


def describe_gitlab(result: GitLabPublishResult) -> str:
    """One line saying what was posted."""
    parts = [f"{result.discussions_posted} new discussion(s)"]
    if result.already_posted:
        parts.append(f"{result.already_posted} already discussed")
    if result.outside_diff:
        parts.append(f"{result.outside_diff} outside the diff (in the summary)")
    if result.resolved:
        parts.append(f"{result.resolved} fixed finding(s) resolved")
    verb = "updated" if result.summary_updated else "posted"
    parts.append(f"summary note {result.summary_note_id} {verb}")
    where = f"{result.project}!{result.merge_request}"
    return f"Published to {where} at {result.commit[:12]}: " + "; ".join(parts) + "."
