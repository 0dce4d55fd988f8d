"""A small synchronous GitLab REST API v4 client: the shared :class:`RestClient` with GitLab's ways.

Every request carries ``PRIVATE-TOKEN: <token>`` (a project, group or
personal access token with the ``api`` scope). Lists are followed through
``Link: <...>; rel="next"`` and, where an instance leaves it out, through
``X-Next-Page``. Retries (5xx, 429 with ``Retry-After``, network errors) and
token masking are :class:`~fluxdrive.publish.api.RestClient`'s. GitLab's
error bodies are ``{"message": "..."}``, ``{"message": {"field": [...]}}`` or
``{"error": "..."}``; each becomes one line.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

import httpx2

from fluxdrive.publish.api import ApiError, RestClient

DEFAULT_API_URL = "https://gitlab.com/api/v4"


class GitLabApiError(ApiError):
    """GitLab refused a request, or could not be reached (exit 2)."""

    label = "gitlab"


def project_path(project: str) -> str:
    """``/projects/:id`` for a numeric ID or a ``group/name`` path (URL-encoded, as GitLab wants it)."""
    return f"/projects/{quote(str(project).strip(), safe='')}"


class GitLabClient(RestClient):
    """``with GitLabClient(token, api_url) as gl: gl.paginate("/projects/1/merge_requests/2/notes")``."""

    error = GitLabApiError
    default_api_url = DEFAULT_API_URL

    def headers(self, token: str) -> Mapping[str, str]:
        return {"Accept": "application/json", "PRIVATE-TOKEN": token}

    def hint(self, status: int | None) -> str | None:
        if status == 401:
            return "the token was refused: check GITLAB_TOKEN (a project or personal access token, scope api)"
        if status == 403:
            return (
                "the token may lack the api scope or a role on the project (Reporter to comment, Developer to resolve)"
            )
        if status == 404:
            return "check the project and merge request (--project-id, --mr); a token without access sees 404"
        return None

    def error_text(self, body: dict[str, Any], reason: str) -> str:
        """GitLab's ``message`` (a string or a field -> errors object) or ``error`` (and its description)."""
        message = body.get("message")
        if isinstance(message, dict):
            parts = []
            for name, problems in message.items():
                listed = problems if isinstance(problems, list) else [problems]
                parts.append(f"{name} {', '.join(str(p) for p in listed)}")
            return "; ".join(parts)
        if message:
            return str(message)
        text = str(body.get("error") or reason)
        if body.get("error_description"):
            text = f"{text}: {body['error_description']}"
        return text

    def next_page(self, response: httpx2.Response) -> str | None:
        """``Link`` rel="next" on this API, else the same request with ``page`` set to ``X-Next-Page`` (empty on
        the last page)."""
        found = super().next_page(response)
        if found and found.startswith(self.api_url + "/"):
            return found  # (a Link elsewhere - a proxy's host - falls back to X-Next-Page on this API)
        number = response.headers.get("x-next-page", "").strip()
        if not number.isdigit():
            return None
        return str(response.request.url.copy_set_param("page", number))
