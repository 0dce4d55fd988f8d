"""A fake GitLab REST API v4 at the wire: a real HTTP server on 127.0.0.1 speaking GitLab's shapes.

Just the merge request endpoints fluxdrive's publisher uses, under ``/api/v4/projects/:id/merge_requests/:iid``
(``:id`` numeric or the URL-encoded ``group/name`` path), with the validation GitLab does on them:

    GET  .../versions                    diff versions, newest first (base/start/head_commit_sha)
    GET  .../diffs                       paginated (page, per_page; X-Next-Page, X-Total..., Link)
    GET  .../changes                     the merge request with ``changes`` (what GitLab < 15.7 has)
    GET  .../discussions                 paginated; each {id, individual_note, notes[]}
    POST .../discussions                 201; a ``text`` position must be on a diff line, else 400
                                         ``Note {:line_code=>["can't be blank", "must be a valid line code"]}``
    PUT  .../discussions/:discussion_id  ``resolved`` (query or body) -> 200, the discussion
    GET  .../notes                       paginated; every note (system, discussion and diff notes too)
    POST .../notes                       201
    PUT  .../notes/:note_id              200

Every request needs ``PRIVATE-TOKEN: <token>`` (or ``Authorization: Bearer <token>``), else 401
``{"message": "401 Unauthorized"}``; a missing parameter is 400 ``{"error": "body is missing"}``; an unknown
route 404 ``{"error": "404 Not Found"}``. Requests are recorded without the token. A line of a note body
that starts with ``/`` is run as a quick action (recorded in ``quick_actions``), as GitLab does.
``fail(...)`` scripts failures for the next matching requests. ``diffs_endpoint=False`` plays an instance
older than 15.7; ``link_header=False`` one that sends only ``X-Next-Page``.

    with FakeGitLab(token="glpat-test") as gl:
        gl.add_merge_request(7, **merge_request_from_git(repo, "main", "HEAD"))
        ... CI_API_V4_URL=gl.url ...
"""

from __future__ import annotations

import hashlib
import itertools
import json
import re
import subprocess
import threading
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlencode, urlsplit

from tests.fakes.rest_fake import Failure, LoopbackServer, Recorded

__all__ = ["FakeGitLab", "Recorded", "merge_request_from_git"]

LINE_CODE_ERROR = '400 Bad request - Note {:line_code=>["can\'t be blank", "must be a valid line code"]}'
_HUNK = re.compile(r"^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@")
_QUICK = re.compile(r"(?m)^/([a-z_]+)")


@dataclass
class _MergeRequest:
    iid: int
    versions: list[dict[str, Any]]
    diffs: list[dict[str, Any]]
    lines: dict[str, dict[int, int | None]] = field(default_factory=dict)  # new_path -> new_line -> old_line


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.000Z")


def _diff_lines(diff: str) -> dict[int, int | None]:
    """new line -> old line (None for an added line) of every new-side line of a diff."""
    lines: dict[int, int | None] = {}
    old = new = 0
    started = False
    for text in diff.splitlines():
        header = _HUNK.match(text)
        if header:
            old, new, started = int(header.group(1)), int(header.group(2)), True
        elif not started or text.startswith("\\"):
            continue
        elif text.startswith("-"):
            old += 1
        elif text.startswith("+"):
            lines[new] = None
            new += 1
        else:
            lines[new] = old
            new, old = new + 1, old + 1
    return lines


def merge_request_from_git(repo: Path, target: str, head: str = "HEAD") -> dict[str, Any]:
    """``versions`` and ``diffs`` of a merge request of ``head`` into ``target`` in a real git repository."""

    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True).stdout

    base = git("merge-base", target, head).strip()
    version = {
        "head_commit_sha": git("rev-parse", head).strip(),
        "base_commit_sha": base,
        "start_commit_sha": git("rev-parse", target).strip(),
        "created_at": _now(),
        "merge_request_id": 93958054,
        "state": "collected",
        "real_size": "",
        "patch_id_sha": hashlib.sha1(base.encode()).hexdigest(),
    }
    diffs = []
    for row in git("diff", "--name-status", "-M", f"{base}...{head}").splitlines():
        parts = row.split("\t")
        status, old, new = parts[0][0], parts[1], parts[-1]
        text = git("diff", "-M", f"{base}...{head}", "--", *parts[1:])
        diffs.append(
            {
                "old_path": old,
                "new_path": new,
                "a_mode": "0" if status == "A" else "100644",
                "b_mode": "0" if status == "D" else "100644",
                "new_file": status == "A",
                "renamed_file": status == "R",
                "deleted_file": status == "D",
                "generated_file": False,
                "collapsed": False,
                "too_large": False,
                "diff": text[text.index("@@") :] if "@@" in text else "",
            }
        )
    version["real_size"] = str(len(diffs))
    return {"versions": [version], "diffs": diffs}


class _Error(Exception):
    def __init__(self, status: int, body: dict[str, Any], headers: dict[str, str] | None = None) -> None:
        super().__init__(status)
        self.status, self.body, self.headers = status, body, headers or {}


class FakeGitLab(LoopbackServer):
    """The fake API; ``url`` is the REST root (``CI_API_V4_URL``)."""

    def __init__(
        self,
        *,
        token: str = "glpat-fakeTokenForTests0123",
        project_id: int = 42,
        project_path: str = "octo/app",
        max_per_page: int = 100,
        diffs_endpoint: bool = True,
        link_header: bool = True,
    ) -> None:
        self.token, self.project_id, self.project_path = token, project_id, project_path
        self.max_per_page, self.diffs_endpoint, self.link_header = max_per_page, diffs_endpoint, link_header
        self.requests: list[Recorded] = []
        self.merge_requests: dict[int, _MergeRequest] = {}
        self.discussions: list[dict[str, Any]] = []  # with "_iid"
        self.quick_actions: list[str] = []
        self.user = {
            "id": 9001,
            "username": "project_42_bot_0123",
            "name": "fluxdrive",
            "state": "active",
            "avatar_url": None,
            "web_url": "https://gitlab.example.com/project_42_bot_0123",
        }
        self._failures: list[Failure] = []
        self._note_ids = itertools.count(1126)
        self._lock = threading.Lock()
        super().__init__()

    # --- lifecycle -----------------------------------------------------------------------------------

    thread_name = "fake-gitlab"

    def handler(self) -> type[BaseHTTPRequestHandler]:
        return _handler(self)

    @property
    def url(self) -> str:
        return self.root_url + "/api/v4"

    # --- scripting -----------------------------------------------------------------------------------

    def add_merge_request(self, iid: int, *, versions: list[dict[str, Any]], diffs: list[dict[str, Any]]) -> None:
        """Open merge request ``iid``, or push to it: the new version goes first, the diffs are replaced."""
        with self._lock:
            old = self.merge_requests.get(iid)
            known = old.versions if old else []
            numbered = [dict(v, id=next(self._note_ids)) for v in versions]
            merge_request = _MergeRequest(iid, numbered + known, diffs)
            for item in diffs:
                diff = item.get("diff")
                usable = isinstance(diff, str) and not item.get("deleted_file")
                merge_request.lines[item["new_path"]] = _diff_lines(str(diff)) if usable else {}
            self.merge_requests[iid] = merge_request

    def fail(
        self, method: str, path: str, status: int, *, headers: dict[str, str] | None = None, message: Any = "x"
    ) -> None:
        """Answer the next request matching ``method`` and the ``path`` regex (under /api/v4) with ``status``."""
        self._failures.append(Failure(method, re.compile(path), status, headers or {}, {"message": message}, 1))

    # --- reading the state ---------------------------------------------------------------------------

    def calls(self, method: str, pattern: str) -> list[Recorded]:
        """Recorded requests with this method whose path (under /api/v4) matches ``pattern`` fully."""
        return [r for r in self.requests if r.method == method and re.fullmatch(pattern, r.path)]

    def threads(self, iid: int) -> list[dict[str, Any]]:
        """The discussions of a merge request that are threads (not single notes)."""
        return [d for d in self.discussions if d["_iid"] == iid and not d["individual_note"]]

    def notes(self, iid: int) -> list[dict[str, Any]]:
        """Every note of a merge request, oldest first."""
        return [n for d in self.discussions if d["_iid"] == iid for n in d["notes"]]

    def log_text(self) -> str:
        """Everything recorded, as text (for leak checks)."""
        return "\n".join(
            json.dumps([r.method, r.path, r.query, r.headers, r.raw_body, r.status]) for r in self.requests
        ) + json.dumps(self.discussions, default=str)

    # --- dispatch ------------------------------------------------------------------------------------

    def handle(self, method: str, target: str, headers: dict[str, str], raw: str) -> tuple[int, dict[str, str], Any]:
        parts = urlsplit(target)
        path, query = parts.path, parse_qs(parts.query)
        authorized = headers.get("private-token") == self.token or headers.get("authorization") == (
            f"Bearer {self.token}"
        )
        shown = {k: v for k, v in headers.items() if k not in ("private-token", "authorization", "job-token")}
        body: Any = None
        extra: dict[str, str] = {}
        answer: Any = None
        short = path[len("/api/v4") :] if path.startswith("/api/v4/") else path
        try:
            if raw:
                try:
                    body = json.loads(raw) if "json" in headers.get("content-type", "") else parse_qs(raw)
                except ValueError:
                    raise _Error(400, {"error": "the request body is not valid JSON"}) from None
            if not authorized:
                raise _Error(401, {"message": "401 Unauthorized"})
            for failure in self._failures:
                if failure.times > 0 and failure.method == method and failure.path.fullmatch(short):
                    failure.times -= 1
                    raise _Error(failure.status, failure.body, failure.headers)
            with self._lock:
                status, extra, answer = self._route(method, short, query, body, target)
        except _Error as error:
            status, answer, extra = error.status, error.body, error.headers
        self.requests.append(Recorded(method, short, query, shown, body, raw, status, authorized))
        return status, extra, answer

    def _route(
        self, method: str, path: str, query: dict[str, list[str]], body: Any, target: str
    ) -> tuple[int, dict[str, str], Any]:
        match = re.fullmatch(r"/projects/([^/]+)/merge_requests/(\d+)(/.*)?", path)
        if not match:
            raise _Error(404, {"error": "404 Not Found"})
        project = unquote(match.group(1))
        if project not in (str(self.project_id), self.project_path):
            raise _Error(404, {"message": "404 Project Not Found"})
        iid, rest = int(match.group(2)), match.group(3) or ""
        merge_request = self.merge_requests.get(iid)
        if merge_request is None:
            raise _Error(404, {"message": "404 Not found"})
        routes: list[tuple[str, str, Any]] = [
            ("GET", r"/versions", self._versions),
            ("GET", r"/diffs", self._diffs),
            ("GET", r"/changes", self._changes),
            ("GET", r"/discussions", self._list_discussions),
            ("POST", r"/discussions", self._create_discussion),
            ("PUT", r"/discussions/([0-9a-f]{40})", self._resolve),
            ("GET", r"/notes", self._list_notes),
            ("POST", r"/notes", self._create_note),
            ("PUT", r"/notes/(\d+)", self._update_note),
        ]
        for verb, pattern, handler in routes:
            found = re.fullmatch(pattern, rest)
            if found and verb == method:
                return handler(merge_request, *found.groups(), query=query, body=body, target=target)  # type: ignore[no-any-return]
        raise _Error(404, {"error": "404 Not Found"})

    # --- helpers -------------------------------------------------------------------------------------

    def _page(self, items: list[Any], query: dict[str, list[str]], target: str) -> tuple[int, dict[str, str], Any]:
        per_page = max(min(int(query.get("per_page", ["20"])[0]), self.max_per_page), 1)
        page = max(int(query.get("page", ["1"])[0]), 1)
        total_pages = max((len(items) + per_page - 1) // per_page, 1)
        chunk = items[(page - 1) * per_page : page * per_page]
        headers = {
            "X-Page": str(page),
            "X-Per-Page": str(per_page),
            "X-Prev-Page": str(page - 1) if page > 1 else "",
            "X-Next-Page": str(page + 1) if page < total_pages else "",
            "X-Total": str(len(items)),
            "X-Total-Pages": str(total_pages),
        }
        if self.link_header:
            assert self._server is not None
            base = f"{self.url}{urlsplit(target).path[len('/api/v4') :]}"

            def link(number: int, rel: str) -> str:
                return f'<{base}?{urlencode({"page": number, "per_page": per_page})}>; rel="{rel}"'

            rels = [link(page + 1, "next")] if page < total_pages else []
            rels += [link(1, "first"), link(total_pages, "last")]
            headers["Link"] = ", ".join(rels)
        return 200, headers, chunk

    @staticmethod
    def _field(body: Any, name: str) -> Any:
        if isinstance(body, dict):
            value = body.get(name)
            return value[0] if isinstance(value, list) and value and name != "position" else value
        return None

    def _quick_actions(self, text: str) -> None:
        """Quick actions run from a note's lines that start with ``/`` (outside code blocks)."""
        fenced = False
        for line in text.splitlines():
            if line.startswith("```"):
                fenced = not fenced
            elif not fenced:
                self.quick_actions += _QUICK.findall(line)

    def _note(self, merge_request: _MergeRequest, body: str, **extra: Any) -> dict[str, Any]:
        self._quick_actions(body)
        return {
            "id": next(self._note_ids),
            "type": None,
            "body": body,
            "attachment": None,
            "author": self.user,
            "created_at": _now(),
            "updated_at": _now(),
            "system": False,
            "noteable_id": 500 + merge_request.iid,
            "noteable_type": "MergeRequest",
            "project_id": self.project_id,
            "noteable_iid": merge_request.iid,
            "resolvable": False,
            "confidential": False,
            "internal": False,
            "imported": False,
            "imported_from": "none",
            **extra,
        }

    @staticmethod
    def _public(discussion: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in discussion.items() if not k.startswith("_")}

    # --- versions and diffs --------------------------------------------------------------------------

    def _versions(self, merge_request: _MergeRequest, **_: Any) -> tuple[int, dict[str, str], Any]:
        return 200, {}, merge_request.versions

    def _diffs(
        self, merge_request: _MergeRequest, *, query: dict[str, list[str]], target: str, **_: Any
    ) -> tuple[int, dict[str, str], Any]:
        if not self.diffs_endpoint:
            raise _Error(404, {"error": "404 Not Found"})
        return self._page(merge_request.diffs, query, target)

    def _changes(self, merge_request: _MergeRequest, **_: Any) -> tuple[int, dict[str, str], Any]:
        return 200, {}, {"iid": merge_request.iid, "state": "opened", "changes": merge_request.diffs, "overflow": False}

    # --- discussions ---------------------------------------------------------------------------------

    def _list_discussions(
        self, merge_request: _MergeRequest, *, query: dict[str, list[str]], target: str, **_: Any
    ) -> tuple[int, dict[str, str], Any]:
        items = [self._public(d) for d in self.discussions if d["_iid"] == merge_request.iid]
        return self._page(items, query, target)

    def _create_discussion(
        self, merge_request: _MergeRequest, *, body: Any, **_: Any
    ) -> tuple[int, dict[str, str], Any]:
        text = self._field(body, "body")
        if not isinstance(text, str) or not text:
            raise _Error(400, {"error": "body is missing"})
        position = self._field(body, "position")
        extra: dict[str, Any] = {"type": "DiscussionNote", "resolvable": True, "resolved": False, "resolved_by": None}
        if position is not None:
            extra.update(self._position(merge_request, position))
        discussion = {
            "id": hashlib.sha1(f"{merge_request.iid}:{len(self.discussions)}:{text}".encode()).hexdigest(),
            "individual_note": False,
            "notes": [self._note(merge_request, text, **extra)],
            "_iid": merge_request.iid,
        }
        self.discussions.append(discussion)
        return 201, {}, self._public(discussion)

    def _position(self, merge_request: _MergeRequest, position: Any) -> dict[str, Any]:
        """The diff note's fields, or 400 the way GitLab refuses a position that is not on a diff line."""
        if not isinstance(position, dict):
            raise _Error(400, {"error": "position is invalid"})
        missing = [k for k in ("base_sha", "start_sha", "head_sha", "position_type") if not position.get(k)]
        if missing:
            raise _Error(400, {"error": f"position[{missing[0]}] is missing"})
        if position["position_type"] != "text":
            raise _Error(400, {"error": "position[position_type] does not have a valid value"})
        if not position.get("new_path") or not position.get("old_path"):
            raise _Error(400, {"message": '400 Bad request - Note {:position=>["is incomplete"]}'})
        latest = merge_request.versions[0]
        shas = (latest["base_commit_sha"], latest["start_commit_sha"], latest["head_commit_sha"])
        diff = next((d for d in merge_request.diffs if d["new_path"] == position["new_path"]), None)
        lines = merge_request.lines.get(position["new_path"], {})
        new_line, old_line = position.get("new_line"), position.get("old_line")
        valid = (
            (position["base_sha"], position["start_sha"], position["head_sha"]) == shas
            and diff is not None
            and diff["old_path"] == position["old_path"]
            and isinstance(new_line, int)
            and new_line in lines
            and old_line == lines[new_line]  # added: no old_line; unchanged: both numbers
        )
        if not valid:
            raise _Error(400, {"message": LINE_CODE_ERROR})
        line_code = f"{hashlib.sha1(position['new_path'].encode()).hexdigest()}_{old_line or 0}_{new_line}"
        stored = {
            "base_sha": shas[0],
            "start_sha": shas[1],
            "head_sha": shas[2],
            "old_path": position["old_path"],
            "new_path": position["new_path"],
            "position_type": "text",
            "old_line": old_line,
            "new_line": new_line,
            "line_range": None,
        }
        return {"type": "DiffNote", "commit_id": shas[2], "position": stored, "line_code": line_code}

    def _resolve(
        self, merge_request: _MergeRequest, discussion_id: str, *, query: dict[str, list[str]], body: Any, **_: Any
    ) -> tuple[int, dict[str, str], Any]:
        discussion = next(
            (d for d in self.discussions if d["_iid"] == merge_request.iid and d["id"] == discussion_id), None
        )
        if discussion is None:
            raise _Error(404, {"message": "404 Not found"})
        value: Any = query["resolved"][0] if query.get("resolved") else None
        if value is None:
            value = self._field(body, "resolved")
        if value not in ("true", "false", True, False):
            raise _Error(400, {"error": "resolved is missing"})
        resolved = value in ("true", True)
        for note in discussion["notes"]:
            if note.get("resolvable"):
                note.update(
                    resolved=resolved,
                    resolved_by=self.user if resolved else None,
                    resolved_at=_now() if resolved else None,
                )
        return 200, {}, self._public(discussion)

    # --- notes ---------------------------------------------------------------------------------------

    def _list_notes(
        self, merge_request: _MergeRequest, *, query: dict[str, list[str]], target: str, **_: Any
    ) -> tuple[int, dict[str, str], Any]:
        newest_first = sorted(self.notes(merge_request.iid), key=lambda n: -n["id"])  # GitLab: created_at desc
        return self._page(newest_first, query, target)

    def _create_note(self, merge_request: _MergeRequest, *, body: Any, **_: Any) -> tuple[int, dict[str, str], Any]:
        text = self._field(body, "body")
        if not isinstance(text, str) or not text:
            raise _Error(400, {"error": "body is missing"})
        if len(text) > 1_000_000:
            raise _Error(400, {"message": {"note": ["is too long (maximum is 1000000 characters)"]}})
        note = self._note(merge_request, text)
        self.discussions.append(
            {
                "id": hashlib.sha1(f"note:{note['id']}".encode()).hexdigest(),
                "individual_note": True,
                "notes": [note],
                "_iid": merge_request.iid,
            }
        )
        return 201, {}, note

    def _update_note(
        self, merge_request: _MergeRequest, note_id: str, *, body: Any, **_: Any
    ) -> tuple[int, dict[str, str], Any]:
        note = next((n for n in self.notes(merge_request.iid) if n["id"] == int(note_id)), None)
        if note is None:
            raise _Error(404, {"message": "404 Note Not Found"})
        text = self._field(body, "body")
        if not isinstance(text, str) or not text:
            raise _Error(400, {"error": "body is missing"})
        self._quick_actions(text)
        note.update(body=text, updated_at=_now())
        return 200, {}, note


def _handler(fake: FakeGitLab) -> type[BaseHTTPRequestHandler]:
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
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for key, value in extra.items():
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_POST = do_PUT = do_DELETE = _serve  # noqa: N815

    return Handler
