"""A fake GitHub API at the wire: a real HTTP server on 127.0.0.1 speaking GitHub's REST and GraphQL shapes.

Just the endpoints fluxdrive's publisher uses, with the validation GitHub does on them:

    GET   /repos/{o}/{r}/pulls/{n}                          the pull request (head.sha)
    GET   /repos/{o}/{r}/pulls/{n}/files                    paginated (per_page, page, Link), ``patch`` hunks
    POST  /repos/{o}/{r}/pulls/{n}/reviews                  200; atomic; 422 for a line outside the diff
    GET   /repos/{o}/{r}/pulls/{n}/comments                 paginated review comments
    POST  /repos/{o}/{r}/pulls/{n}/comments/{id}/replies    201
    GET   /repos/{o}/{r}/issues/{n}/comments                paginated issue comments
    POST  /repos/{o}/{r}/issues/{n}/comments                201
    PATCH /repos/{o}/{r}/issues/comments/{id}               200
    POST  /repos/{o}/{r}/check-runs                         201; at most 50 annotations
    PATCH /repos/{o}/{r}/check-runs/{id}                    200; annotations appended
    POST  /graphql                                          reviewThreads query, resolveReviewThread mutation

Every request needs ``Authorization: Bearer <token>`` (or ``token <token>``), else 401 "Bad credentials";
an unsupported ``X-GitHub-Api-Version`` gets 400. Requests are recorded without the Authorization value.
``fail(...)`` scripts failures (a 502, a secondary rate limit) for the next matching requests.

    with FakeGitHub(token="ghs_test") as gh:
        gh.add_pull(7, head_sha="abc", files=pull_files_from_git(repo, "main", "HEAD"))
        ... GITHUB_API_URL=gh.url ...
        assert gh.review_comments(7)[0]["line"] == 10
"""

from __future__ import annotations

import itertools
import json
import re
import subprocess
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from tests.fakes.rest_fake import Failure, LoopbackServer, Recorded

__all__ = ["FakeGitHub", "Recorded", "pull_files_from_git"]

SUPPORTED_VERSIONS = {"2022-11-28", "2026-03-10"}
DOCS = "https://docs.github.com/rest"
REVIEW_DOCS = "https://docs.github.com/rest/pulls/reviews#create-a-review-for-a-pull-request"
CONCLUSIONS = {"action_required", "cancelled", "failure", "neutral", "success", "skipped", "stale", "timed_out"}
_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,\d+)? @@")


@dataclass
class _Pull:
    number: int
    head_sha: str
    files: list[dict[str, Any]]
    hunks: dict[str, list[set[int]]] = field(default_factory=dict)


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _right_hunks(patch: str) -> list[set[int]]:
    hunks: list[set[int]] = []
    line = 0
    for text in patch.splitlines():
        header = _HUNK.match(text)
        if header:
            line = int(header.group(1))
            hunks.append(set())
        elif hunks and not text.startswith(("\\", "-")):
            hunks[-1].add(line)
            line += 1
    return hunks


def pull_files_from_git(repo: Path, base: str, head: str = "HEAD") -> list[dict[str, Any]]:
    """The ``GET /pulls/{n}/files`` objects of ``base...head`` in a real git repository (patch without headers)."""

    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True).stdout

    files = []
    statuses = {"A": "added", "M": "modified", "D": "removed", "R": "renamed"}
    for row in git("diff", "--name-status", "-M", f"{base}...{head}").splitlines():
        parts = row.split("\t")
        status, name = statuses.get(parts[0][0], "modified"), parts[-1]
        diff = git("diff", "-M", f"{base}...{head}", "--", *parts[1:])
        body = diff[diff.index("@@") :] if "@@" in diff else ""
        added = sum(1 for x in body.splitlines() if x.startswith("+"))
        removed = sum(1 for x in body.splitlines() if x.startswith("-"))
        item: dict[str, Any] = {
            "sha": git("rev-parse", f"{head}:{name}").strip() if status != "removed" else "0" * 40,
            "filename": name,
            "status": status,
            "additions": added,
            "deletions": removed,
            "changes": added + removed,
            "blob_url": f"https://github.com/o/r/blob/{head}/{name}",
            "raw_url": f"https://github.com/o/r/raw/{head}/{name}",
            "contents_url": f"https://api.github.com/repos/o/r/contents/{name}?ref={head}",
            "patch": body.rstrip("\n"),
        }
        if status == "renamed":
            item["previous_filename"] = parts[1]
        files.append(item)
    return files


class _Error(Exception):
    def __init__(self, status: int, message: str, errors: list[Any] | None = None, docs: str = DOCS) -> None:
        super().__init__(message)
        self.status, self.message, self.errors, self.docs = status, message, errors, docs

    def body(self) -> dict[str, Any]:
        body: dict[str, Any] = {"message": self.message, "documentation_url": self.docs, "status": str(self.status)}
        if self.errors is not None:
            body["errors"] = self.errors
        return body


class FakeGitHub(LoopbackServer):
    """The fake API; ``url`` is the REST base (``GITHUB_API_URL``), GraphQL is ``url + "/graphql"``."""

    def __init__(
        self,
        *,
        token: str = "ghs_fakeTokenForTests0123456789",
        owner: str = "octo",
        repo: str = "app",
        max_per_page: int = 100,
    ) -> None:
        self.token, self.owner, self.repo = token, owner, repo
        self.max_per_page = max_per_page
        self.graphql_forbidden = False
        self.requests: list[Recorded] = []
        self.pulls: dict[int, _Pull] = {}
        self.reviews: list[dict[str, Any]] = []
        self.comments: list[dict[str, Any]] = []  # review comments
        self.issue_comments: list[dict[str, Any]] = []
        self.threads: list[dict[str, Any]] = []  # {"id", "number", "isResolved", "comment_ids"}
        self.check_runs: list[dict[str, Any]] = []
        self._failures: list[Failure] = []
        self._ids = itertools.count(1_000_001)
        self._lock = threading.Lock()
        super().__init__()
        self.user = {"login": "github-actions[bot]", "id": 41898282, "type": "Bot"}

    # --- lifecycle -----------------------------------------------------------------------------------

    thread_name = "fake-github"

    def handler(self) -> type[BaseHTTPRequestHandler]:
        return _handler(self)

    @property
    def url(self) -> str:
        return self.root_url

    # --- scripting -----------------------------------------------------------------------------------

    def add_pull(self, number: int, *, head_sha: str, files: list[dict[str, Any]]) -> None:
        """Open (or update, as a push does) pull request ``number`` with these files."""
        pull = _Pull(number, head_sha, files)
        for item in files:
            patch = item.get("patch")
            pull.hunks[item["filename"]] = (
                _right_hunks(patch) if isinstance(patch, str) and item.get("status") != "removed" else []
            )
        with self._lock:
            self.pulls[number] = pull

    def fail(
        self,
        method: str,
        path: str,
        status: int,
        *,
        headers: dict[str, str] | None = None,
        message: str = "Server Error",
        times: int = 1,
    ) -> None:
        """Answer the next ``times`` requests matching ``method`` and the ``path`` regex with ``status``."""
        self._failures.append(Failure(method, re.compile(path), status, headers or {}, {"message": message}, times))

    # --- reading the state ---------------------------------------------------------------------------

    def calls(self, method: str, pattern: str) -> list[Recorded]:
        """Recorded requests with this method whose path matches ``pattern`` (a regex, fully)."""
        return [r for r in self.requests if r.method == method and re.fullmatch(pattern, r.path)]

    def review_comments(self, number: int) -> list[dict[str, Any]]:
        return [c for c in self.comments if c["_number"] == number]

    def thread_of(self, comment_id: int) -> dict[str, Any]:
        return next(t for t in self.threads if comment_id in t["comment_ids"])

    def log_text(self) -> str:
        """Everything recorded, as text (for leak checks)."""
        return "\n".join(
            json.dumps([r.method, r.path, r.query, r.headers, r.raw_body, r.status]) for r in self.requests
        ) + json.dumps([self.reviews, self.comments, self.issue_comments, self.check_runs], default=str)

    # --- dispatch ------------------------------------------------------------------------------------

    def handle(self, method: str, target: str, headers: dict[str, str], raw: str) -> tuple[int, dict[str, str], Any]:
        parts = urlsplit(target)
        path, query = parts.path, parse_qs(parts.query)
        auth = headers.get("authorization", "")
        authorized = auth in (f"Bearer {self.token}", f"token {self.token}")
        shown = {k: v for k, v in headers.items() if k != "authorization"}
        body: Any = None
        status: int = 500
        extra: dict[str, str] = {}
        answer: Any = None
        try:
            if raw:
                try:
                    body = json.loads(raw)
                except ValueError:
                    raise _Error(400, "Problems parsing JSON") from None
            if not authorized:
                raise _Error(401, "Bad credentials")
            version = headers.get("x-github-api-version")
            if version is not None and version not in SUPPORTED_VERSIONS:
                raise _Error(400, f"Unsupported 'X-GitHub-Api-Version' header: {version}")
            for failure in self._failures:
                if failure.times > 0 and failure.method == method and failure.path.fullmatch(path):
                    failure.times -= 1
                    raise _ScriptedError(failure)
            with self._lock:
                status, extra, answer = self._route(method, path, query, body, headers)
        except _ScriptedError as scripted:
            status, extra, answer = scripted.failure.status, scripted.failure.headers, scripted.failure.body
        except _Error as error:
            status, answer = error.status, error.body()
        self.requests.append(Recorded(method, path, query, shown, body, raw, status, authorized))
        return status, extra, answer

    def _route(
        self, method: str, path: str, query: dict[str, list[str]], body: Any, headers: dict[str, str]
    ) -> tuple[int, dict[str, str], Any]:
        if path == "/graphql" and method == "POST":
            return 200, {}, self._graphql(body)
        repo = f"/repos/{self.owner}/{self.repo}"
        if not path.startswith(repo + "/"):
            raise _Error(404, "Not Found")
        rest = path[len(repo) :]
        routes: list[tuple[str, str, Any]] = [
            ("GET", r"/pulls/(\d+)", self._get_pull),
            ("GET", r"/pulls/(\d+)/files", self._list_files),
            ("POST", r"/pulls/(\d+)/reviews", self._create_review),
            ("GET", r"/pulls/(\d+)/comments", self._list_review_comments),
            ("POST", r"/pulls/(\d+)/comments/(\d+)/replies", self._reply),
            ("GET", r"/issues/(\d+)/comments", self._list_issue_comments),
            ("POST", r"/issues/(\d+)/comments", self._create_issue_comment),
            ("PATCH", r"/issues/comments/(\d+)", self._update_issue_comment),
            ("POST", r"/check-runs", self._create_check_run),
            ("PATCH", r"/check-runs/(\d+)", self._update_check_run),
        ]
        for verb, pattern, handler in routes:
            match = re.fullmatch(pattern, rest)
            if match and verb == method:
                args = [int(g) for g in match.groups()]
                result = handler(*args, query=query, body=body, host=headers.get("host", ""))
                return result if isinstance(result, tuple) else (200, {}, result)
        raise _Error(404, "Not Found")

    # --- helpers -------------------------------------------------------------------------------------

    def _pull(self, number: int) -> _Pull:
        if number not in self.pulls:
            raise _Error(404, "Not Found")
        return self.pulls[number]

    def _page(
        self, items: list[Any], query: dict[str, list[str]], host: str, path: str
    ) -> tuple[int, dict[str, str], Any]:
        per_page = min(int(query.get("per_page", ["30"])[0]), self.max_per_page)
        page = max(int(query.get("page", ["1"])[0]), 1)
        chunk = items[(page - 1) * per_page : page * per_page]
        headers = {}
        last = max((len(items) + per_page - 1) // per_page, 1)
        if page < last:
            base = f"http://{host}/repos/{self.owner}/{self.repo}{path}"
            headers["Link"] = (
                f'<{base}?per_page={per_page}&page={page + 1}>; rel="next", '
                f'<{base}?per_page={per_page}&page={last}>; rel="last"'
            )
        return 200, headers, chunk

    @staticmethod
    def _require_object(body: Any) -> dict[str, Any]:
        if not isinstance(body, dict):
            raise _Error(400, "Problems parsing JSON")
        return body

    @staticmethod
    def _invalid(field_name: str, resource: str, docs: str = DOCS) -> _Error:
        return _Error(
            422,
            "Invalid request.",
            [{"resource": resource, "code": "missing_field", "field": field_name}],
            docs,
        )

    def _public(self, comment: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in comment.items() if not k.startswith("_")}

    # --- pulls ---------------------------------------------------------------------------------------

    def _get_pull(self, number: int, **_: Any) -> dict[str, Any]:
        pull = self._pull(number)
        return {
            "number": number,
            "state": "open",
            "head": {"sha": pull.head_sha, "ref": "feature"},
            "base": {"ref": "main"},
        }

    def _list_files(self, number: int, *, query: dict[str, list[str]], host: str, **_: Any) -> Any:
        return self._page(self._pull(number).files, query, host, f"/pulls/{number}/files")

    def _create_review(self, number: int, *, body: Any, **_: Any) -> Any:
        pull = self._pull(number)
        body = self._require_object(body)
        event = body.get("event")
        if event is not None and event not in ("APPROVE", "REQUEST_CHANGES", "COMMENT"):
            raise _Error(422, "Unprocessable Entity", [f"Event {event!r} is not valid"], REVIEW_DOCS)
        if event in ("REQUEST_CHANGES", "COMMENT") and not body.get("body"):
            raise _Error(422, "Unprocessable Entity", ["Body is required when event is " + event], REVIEW_DOCS)
        commit = body.get("commit_id", pull.head_sha)
        if commit != pull.head_sha:
            raise _Error(422, "Unprocessable Entity", [f"No commit found for SHA: {commit}"], REVIEW_DOCS)
        comments = body.get("comments") or []
        if not isinstance(comments, list):
            raise self._invalid("comments", "PullRequestReview", REVIEW_DOCS)
        problems: list[str] = []
        for comment in comments:
            if not isinstance(comment, dict) or not comment.get("path") or not comment.get("body"):
                raise self._invalid("comments", "PullRequestReview", REVIEW_DOCS)
            problems += self._line_problems(pull, comment)
        if problems:  # all or nothing, as on GitHub
            raise _Error(422, "Unprocessable Entity", [" and ".join(dict.fromkeys(problems))], REVIEW_DOCS)
        review_id = next(self._ids)
        state = {"COMMENT": "COMMENTED", "REQUEST_CHANGES": "CHANGES_REQUESTED", "APPROVE": "APPROVED"}.get(
            event or "", "PENDING"
        )
        review = {
            "id": review_id,
            "node_id": f"PRR_fake{review_id}",
            "user": self.user,
            "body": body.get("body") or "",
            "state": state,
            "html_url": f"https://github.com/{self.owner}/{self.repo}/pull/{number}#pullrequestreview-{review_id}",
            "pull_request_url": f"https://api.github.com/repos/{self.owner}/{self.repo}/pulls/{number}",
            "commit_id": commit,
            "submitted_at": _now(),
            "author_association": "CONTRIBUTOR",
            "_number": number,
        }
        self.reviews.append(review)
        for comment in comments:
            created = self._new_review_comment(number, review_id, commit, comment)
            self.threads.append(
                {
                    "id": f"PRRT_fake{created['id']}",
                    "number": number,
                    "isResolved": False,
                    "comment_ids": [created["id"]],
                }
            )
        return self._public(review)

    def _line_problems(self, pull: _Pull, comment: dict[str, Any]) -> list[str]:
        path, line, side = comment["path"], comment.get("line"), comment.get("side", "RIGHT")
        start, start_side = comment.get("start_line"), comment.get("start_side")
        if "position" in comment:
            return []
        if path not in pull.hunks:
            return ["Pull request review thread path is invalid", "Pull request review thread diff hunk can't be blank"]
        if not isinstance(line, int) or side not in ("LEFT", "RIGHT"):
            return ["Pull request review thread line must be part of the diff"]
        if start_side is not None and start is None:
            return ["Pull request review thread start side requires a start line"]
        hunks = pull.hunks[path] if side == "RIGHT" else []
        where = next((i for i, h in enumerate(hunks) if line in h), None)
        if where is None:
            return [
                "Pull request review thread line must be part of the diff",
                "Pull request review thread diff hunk can't be blank",
            ]
        if start is not None:
            if not isinstance(start, int) or start >= line:
                return ["Pull request review thread start line must precede the end line."]
            if start not in hunks[where]:
                return ["Pull request review thread start line must be part of the same hunk as the line."]
        return []

    def _new_review_comment(
        self, number: int, review_id: int, commit: str, comment: dict[str, Any], reply_to: int | None = None
    ) -> dict[str, Any]:
        comment_id = next(self._ids)
        created = {
            "url": f"https://api.github.com/repos/{self.owner}/{self.repo}/pulls/comments/{comment_id}",
            "pull_request_review_id": review_id,
            "id": comment_id,
            "node_id": f"PRRC_fake{comment_id}",
            "diff_hunk": "@@ fake @@",
            "path": comment["path"],
            "commit_id": commit,
            "original_commit_id": commit,
            "user": self.user,
            "body": comment["body"],
            "created_at": _now(),
            "updated_at": _now(),
            "html_url": f"https://github.com/{self.owner}/{self.repo}/pull/{number}#discussion_r{comment_id}",
            "pull_request_url": f"https://api.github.com/repos/{self.owner}/{self.repo}/pulls/{number}",
            "author_association": "CONTRIBUTOR",
            "start_line": comment.get("start_line"),
            "original_start_line": comment.get("start_line"),
            "start_side": comment.get("start_side"),
            "line": comment.get("line"),
            "original_line": comment.get("line"),
            "side": comment.get("side", "RIGHT"),
            "subject_type": "line",
            "_number": number,
        }
        if reply_to is not None:
            created["in_reply_to_id"] = reply_to
        self.comments.append(created)
        return created

    def _list_review_comments(self, number: int, *, query: dict[str, list[str]], host: str, **_: Any) -> Any:
        self._pull(number)
        items = [self._public(c) for c in self.review_comments(number)]
        return self._page(items, query, host, f"/pulls/{number}/comments")

    def _reply(self, number: int, comment_id: int, *, body: Any, **_: Any) -> Any:
        self._pull(number)
        body = self._require_object(body)
        parent = next((c for c in self.review_comments(number) if c["id"] == comment_id), None)
        if parent is None:
            raise _Error(404, "Not Found")
        if not body.get("body"):
            raise self._invalid("body", "PullRequestReviewComment")
        root = parent.get("in_reply_to_id") or parent["id"]
        reply = dict(parent, body=body["body"])
        created = self._new_review_comment(number, parent["pull_request_review_id"], parent["commit_id"], reply, root)
        self.thread_of(root)["comment_ids"].append(created["id"])
        return 201, {}, self._public(created)

    # --- issue comments ------------------------------------------------------------------------------

    def _list_issue_comments(self, number: int, *, query: dict[str, list[str]], host: str, **_: Any) -> Any:
        self._pull(number)
        items = [self._public(c) for c in self.issue_comments if c["_number"] == number]
        return self._page(items, query, host, f"/issues/{number}/comments")

    def _create_issue_comment(self, number: int, *, body: Any, **_: Any) -> Any:
        self._pull(number)
        body = self._require_object(body)
        if not isinstance(body.get("body"), str) or not body["body"]:
            raise self._invalid("body", "IssueComment")
        if len(body["body"]) > 65536:
            raise _Error(
                422,
                "Validation Failed",
                [
                    {
                        "resource": "IssueComment",
                        "code": "custom",
                        "field": "body",
                        "message": "body is too long (maximum is 65536 characters)",
                    }
                ],
            )
        comment_id = next(self._ids)
        comment = {
            "id": comment_id,
            "node_id": f"IC_fake{comment_id}",
            "url": f"https://api.github.com/repos/{self.owner}/{self.repo}/issues/comments/{comment_id}",
            "html_url": f"https://github.com/{self.owner}/{self.repo}/pull/{number}#issuecomment-{comment_id}",
            "body": body["body"],
            "user": self.user,
            "created_at": _now(),
            "updated_at": _now(),
            "issue_url": f"https://api.github.com/repos/{self.owner}/{self.repo}/issues/{number}",
            "author_association": "CONTRIBUTOR",
            "_number": number,
        }
        self.issue_comments.append(comment)
        return 201, {}, self._public(comment)

    def _update_issue_comment(self, comment_id: int, *, body: Any, **_: Any) -> Any:
        body = self._require_object(body)
        comment = next((c for c in self.issue_comments if c["id"] == comment_id), None)
        if comment is None:
            raise _Error(404, "Not Found")
        if not isinstance(body.get("body"), str) or not body["body"]:
            raise self._invalid("body", "IssueComment")
        comment.update(body=body["body"], updated_at=_now())
        return self._public(comment)

    # --- check runs ----------------------------------------------------------------------------------

    def _check_output(self, output: Any) -> list[dict[str, Any]]:
        if not isinstance(output, dict) or not output.get("title") or not output.get("summary"):
            raise self._invalid("output", "CheckRun")
        annotations = output.get("annotations") or []
        if len(annotations) > 50:
            raise _Error(422, "Only 50 annotations are allowed per request", None, DOCS)
        for a in annotations:
            needed = ("path", "start_line", "end_line", "annotation_level", "message")
            if not isinstance(a, dict) or any(a.get(k) in (None, "") for k in needed):
                raise self._invalid("annotations", "CheckRun")
            if a["annotation_level"] not in ("notice", "warning", "failure") or a["start_line"] > a["end_line"]:
                raise _Error(422, "Invalid request.", [f"annotation {a['path']} is invalid"], DOCS)
        return list(annotations)

    def _create_check_run(self, *, body: Any, **_: Any) -> Any:
        body = self._require_object(body)
        for name in ("name", "head_sha"):
            if not body.get(name):
                raise self._invalid(name, "CheckRun")
        status = body.get("status", "queued")
        conclusion = body.get("conclusion")
        if status == "completed" and conclusion not in CONCLUSIONS:
            raise _Error(422, "Invalid request.", ["conclusion is required when status is completed"], DOCS)
        annotations = self._check_output(body["output"]) if "output" in body else []
        run_id = next(self._ids)
        run = {
            "id": run_id,
            "node_id": f"CR_fake{run_id}",
            "head_sha": body["head_sha"],
            "external_id": body.get("external_id", ""),
            "url": f"https://api.github.com/repos/{self.owner}/{self.repo}/check-runs/{run_id}",
            "html_url": f"https://github.com/{self.owner}/{self.repo}/runs/{run_id}",
            "status": status,
            "conclusion": conclusion,
            "started_at": _now(),
            "completed_at": _now() if status == "completed" else None,
            "name": body["name"],
            "output": {
                "title": (body.get("output") or {}).get("title"),
                "summary": (body.get("output") or {}).get("summary"),
                "text": (body.get("output") or {}).get("text"),
                "annotations_count": len(annotations),
                "annotations_url": f"https://api.github.com/repos/{self.owner}/{self.repo}/check-runs/{run_id}/annotations",
            },
            "pull_requests": [],
            "_annotations": annotations,
        }
        self.check_runs.append(run)
        return 201, {}, self._public(run)

    def _update_check_run(self, run_id: int, *, body: Any, **_: Any) -> Any:
        body = self._require_object(body)
        run = next((r for r in self.check_runs if r["id"] == run_id), None)
        if run is None:
            raise _Error(404, "Not Found")
        if "output" in body:
            run["_annotations"] += self._check_output(body["output"])
            run["output"].update(
                title=body["output"]["title"],
                summary=body["output"]["summary"],
                annotations_count=len(run["_annotations"]),
            )
        for key in ("status", "conclusion", "name"):
            if key in body:
                run[key] = body[key]
        return self._public(run)

    # --- GraphQL -------------------------------------------------------------------------------------

    def _graphql(self, body: Any) -> dict[str, Any]:
        if not isinstance(body, dict) or not isinstance(body.get("query"), str):
            raise _Error(400, "Problems parsing JSON")
        query, variables = body["query"], body.get("variables") or {}
        if self.graphql_forbidden:
            return {
                "data": None,
                "errors": [{"type": "FORBIDDEN", "message": "Resource not accessible by integration"}],
            }
        if re.search(r"\bmutation\b", query) and "resolveReviewThread(" in query:
            thread_id = variables.get("threadId")
            thread = next((t for t in self.threads if t["id"] == thread_id), None)
            if thread is None:
                return {
                    "data": {"resolveReviewThread": None},
                    "errors": [
                        {
                            "type": "NOT_FOUND",
                            "path": ["resolveReviewThread"],
                            "message": f"Could not resolve to a node with the global id of '{thread_id}'",
                        }
                    ],
                }
            thread["isResolved"] = True
            return {"data": {"resolveReviewThread": {"thread": {"id": thread["id"], "isResolved": True}}}}
        if "reviewThreads(" in query and "pullRequest(" in query and "repository(" in query:
            if variables.get("owner") != self.owner or variables.get("name") != self.repo:
                return {
                    "data": {"repository": None},
                    "errors": [
                        {"type": "NOT_FOUND", "path": ["repository"], "message": "Could not resolve to a Repository"}
                    ],
                }
            number = variables.get("number")
            if number not in self.pulls:
                return {
                    "data": {"repository": {"pullRequest": None}},
                    "errors": [
                        {
                            "type": "NOT_FOUND",
                            "path": ["repository", "pullRequest"],
                            "message": f"Could not resolve to a PullRequest with the number of {number}.",
                        }
                    ],
                }
            first_match = re.search(r"reviewThreads\(\s*first:\s*(\d+)", query)
            first = int(first_match.group(1)) if first_match else 100
            if first > 100:
                return {"errors": [{"type": "EXCESSIVE_PAGINATION", "message": "first exceeds 100"}]}
            threads = [t for t in self.threads if t["number"] == number]
            start = int(variables["cursor"]) if variables.get("cursor") else 0
            chunk = threads[start : start + first]
            nodes = []
            for t in chunk:
                firsts = [c for c in self.comments if c["id"] == t["comment_ids"][0]]
                nodes.append(
                    {
                        "id": t["id"],
                        "isResolved": t["isResolved"],
                        "comments": {"nodes": [{"databaseId": c["id"], "body": c["body"]} for c in firsts]},
                    }
                )
            end = start + len(chunk)
            return {
                "data": {
                    "repository": {
                        "pullRequest": {
                            "reviewThreads": {
                                "pageInfo": {
                                    "hasNextPage": end < len(threads),
                                    "endCursor": str(end) if chunk else None,
                                },
                                "nodes": nodes,
                            }
                        }
                    }
                }
            }
        return {"errors": [{"message": "the fake knows only reviewThreads and resolveReviewThread"}]}


class _ScriptedError(Exception):
    def __init__(self, failure: Failure) -> None:
        super().__init__(failure.status)
        self.failure = failure


def _handler(fake: FakeGitHub) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _serve(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length).decode("utf-8") if length else ""
            headers = {k.lower(): v for k, v in self.headers.items()}
            status, extra, answer = fake.handle(self.command, self.path, headers, raw)
            data = b"" if answer is None else json.dumps(answer).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json; charset=utf-8")
            self.send_header("Content-Length", str(len(data)))
            self.send_header("X-GitHub-Media-Type", "github.v3; format=json")
            for key, value in extra.items():
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_POST = do_PATCH = do_PUT = do_DELETE = _serve  # noqa: N815

    return Handler


def iter_markers(bodies: list[str], pattern: str) -> Iterator[str]:
    """Every match of ``pattern`` group 1 in ``bodies``."""
    for body in bodies:
        yield from re.findall(pattern, body)
