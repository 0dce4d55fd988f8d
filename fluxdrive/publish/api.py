"""A small synchronous GitHub REST/GraphQL client: headers, pagination, retries, a masked token.

:class:`RestClient` is the part any JSON REST API shares (retries, pagination,
error messages with the token masked); :class:`GitHubClient` adds GitHub's
headers, hints and GraphQL, and :mod:`fluxdrive.publish.gitlab_api` GitLab's.

Every GitHub request carries ``Accept: application/vnd.github+json``,
``X-GitHub-Api-Version: 2022-11-28`` and ``Authorization: Bearer <token>``.
A 5xx, a network error, a 429 or a 403 that is a rate limit (a
``retry-after`` header, ``x-ratelimit-remaining: 0`` or a message naming the
secondary rate limit) is retried a few times with a short, bounded backoff;
anything else fails at once with a :class:`GitHubApiError` naming the method,
the path, the status and GitHub's message - never a header, and the token is
replaced by ``****`` wherever a message might echo it. Every request body is
masked here, at the one place all publishers send through (credential shapes
and the known secret values of the run), so no publisher can forget to.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Mapping
from typing import Any, Self

import httpx2

from fluxdrive.core.masking import MASK, scrub, scrub_tree
from fluxdrive.core.version import __version__
from fluxdrive.errors import FluxdriveError

API_VERSION = "2022-11-28"
DEFAULT_API_URL = "https://api.github.com"
RETRIES = 3
BACKOFF_S = 1.0
MAX_WAIT_S = 60.0
MAX_PAGES = 100  # 100 per page: 3,000 files (GitHub's own cap on /pulls/{n}/files) is 30 pages
_NEXT = re.compile(r'<([^>]+)>;\s*rel="next"')
_RATE_LIMIT_MESSAGE = re.compile(r"(?i)rate limit")


class ApiError(FluxdriveError):
    """A forge's API refused a request, or could not be reached (exit 2)."""

    label = "api"

    def __init__(self, message: str, *, status: int | None = None, hint: str | None = None) -> None:
        super().__init__(message, hint=hint)
        self.status = status


class GitHubApiError(ApiError):
    """GitHub refused a request, or could not be reached (exit 2)."""

    label = "github"


class GraphQLError(GitHubApiError):
    """A GraphQL request answered 200 with ``errors``."""


def _hint(status: int | None) -> str | None:
    if status == 401:
        return "the token was refused: check GITHUB_TOKEN"
    if status in (403, 404):
        return "the token may lack a permission (pull-requests: write, issues: write, checks: write)"
    return None


class RestClient:
    """What every JSON REST client here shares: one ``httpx2`` pool on ``api_url`` with ``headers``, requests
    retried on 5xx, network errors and rate limits, list endpoints followed page by page, and errors raised
    as ``error`` with the token masked. Subclasses set ``error`` and ``default_api_url``, say how the token
    is sent (:meth:`headers`) and may override :meth:`hint`, :meth:`message` and :meth:`next_page`."""

    error: type[ApiError] = ApiError
    default_api_url: str = ""

    def __init__(
        self,
        token: str,
        api_url: str | None = None,
        *,
        timeout: float = 30.0,
        retries: int = RETRIES,
        backoff: float = BACKOFF_S,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self._token = token
        self.api_url = (api_url or self.default_api_url).rstrip("/")
        self._retries = retries
        self._backoff = backoff
        self._sleep = sleep
        self._client = httpx2.Client(
            base_url=self.api_url,
            timeout=httpx2.Timeout(timeout, connect=min(timeout, 10.0)),
            headers={**self.headers(token), "User-Agent": f"fluxdrive/{__version__}"},
            follow_redirects=True,
        )

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the connection pool."""
        self._client.close()

    def mask(self, text: str) -> str:
        """``text`` with the token masked (and everything :func:`scrub` masks)."""
        if self._token:
            text = text.replace(self._token, MASK)
        return scrub(text)

    def mask_payload(self, body: Any) -> Any:
        """Every string of a JSON body masked, on its way out: whatever a publisher renders (a finding's
        title, a code excerpt, a summary), no secret - by shape or a known value of the run - reaches the forge."""
        return None if body is None else scrub_tree(body)

    # --- what differs between APIs ----------------------------------------------------------------

    def headers(self, token: str) -> Mapping[str, str]:
        """The headers every request carries: the API's media type and how it takes ``token``."""
        return {"Accept": "application/json"}

    def hint(self, status: int | None) -> str | None:
        """How to fix a refusal with this status (None: no advice)."""
        return None

    def message(self, response: httpx2.Response) -> str:
        """The API's own words from an error body (:meth:`error_text` of a JSON object), else the start of
        the body; on one line, at most 500 characters."""
        try:
            body = response.json()
        except ValueError:
            return " ".join(response.text[:200].split()) or response.reason_phrase
        if not isinstance(body, dict):
            return response.reason_phrase
        return " ".join(self.error_text(body, response.reason_phrase).split())[:500]

    def error_text(self, body: dict[str, Any], reason: str) -> str:
        """The words of a JSON error object: GitHub's ``message`` (and ``errors``); ``reason`` without them."""
        message = str(body.get("message") or reason)
        errors = body.get("errors")
        if isinstance(errors, list) and errors:
            details = [e if isinstance(e, str) else str(e.get("message") or e) for e in errors]
            message = f"{message}: {'; '.join(details)}"
        return message

    def next_page(self, response: httpx2.Response) -> str | None:
        """The next page of a list, from ``Link: <...>; rel="next"``."""
        found = _NEXT.search(response.headers.get("link", ""))
        return found.group(1) if found else None

    # --- requests ---------------------------------------------------------------------------------

    def request(
        self, method: str, path: str, *, json: Any = None, params: Mapping[str, Any] | None = None
    ) -> httpx2.Response:
        """One request, retried on 5xx, network errors and rate limits; raises on any other failure."""
        what = f"{method} {self.mask(path.split('?', 1)[0])}"
        payload = self.mask_payload(json)
        attempt = 0
        while True:
            try:
                response = self._client.request(method, path, json=payload, params=params)
            except httpx2.TransportError as exc:
                if attempt >= self._retries:
                    raise self.error(f"{what}: {self.mask(type(exc).__name__ + ': ' + str(exc))}") from None
                self._sleep(self._wait(attempt, None))
                attempt += 1
                continue
            if response.status_code < 400:
                return response
            if attempt < self._retries and self._retryable(response):
                self._sleep(self._wait(attempt, response))
                attempt += 1
                continue
            message = self.message(response)
            raise self.error(
                f"{what}: {response.status_code} {self.mask(message)}",
                status=response.status_code,
                hint=self.hint(response.status_code),
            )

    def json(self, method: str, path: str, *, json: Any = None, params: Mapping[str, Any] | None = None) -> Any:
        """The decoded JSON body of a request (None for an empty body)."""
        response = self.request(method, path, json=json, params=params)
        if not response.content:
            return None
        try:
            return response.json()
        except ValueError:
            raise self.error(f"{method} {path}: the answer is not JSON") from None

    def paginate(self, path: str, params: Mapping[str, Any] | None = None) -> list[Any]:
        """Every item of a list endpoint, following :meth:`next_page` (100 per page)."""
        items: list[Any] = []
        url: str | None = path
        query: Mapping[str, Any] | None = {"per_page": 100, **(params or {})}
        for _ in range(MAX_PAGES):
            if url is None:
                break
            response = self.request("GET", url, params=query)
            page = response.json()
            if not isinstance(page, list):
                raise self.error(f"GET {path}: expected a list, got {type(page).__name__}")
            items.extend(page)
            found = self.next_page(response)
            # the token goes only where the API is: a next page elsewhere ends the list
            url = found if found and found.startswith(self.api_url + "/") else None
            query = None
        return items

    # --- retries ----------------------------------------------------------------------------------

    def _retryable(self, response: httpx2.Response) -> bool:
        status = response.status_code
        if status >= 500 or status == 429:
            return True
        if status != 403:
            return False
        headers = response.headers
        return (
            "retry-after" in headers
            or headers.get("x-ratelimit-remaining") == "0"
            or bool(_RATE_LIMIT_MESSAGE.search(self.message(response)))
        )

    def _wait(self, attempt: int, response: httpx2.Response | None) -> float:
        """Seconds before the next try: ``retry-after``, else until ``x-ratelimit-reset``, else exponential."""
        if response is not None:
            retry_after = response.headers.get("retry-after")
            if retry_after is not None:
                try:
                    return min(max(float(retry_after), 0.0), MAX_WAIT_S)
                except ValueError:
                    pass
            if response.headers.get("x-ratelimit-remaining") == "0":
                try:
                    return min(max(float(response.headers["x-ratelimit-reset"]) - time.time(), 0.0), MAX_WAIT_S)
                except (KeyError, ValueError):
                    pass
        return min(float(self._backoff) * 2.0**attempt, MAX_WAIT_S)


class GitHubClient(RestClient):
    """``with GitHubClient(token, api_url) as gh: gh.request("GET", "/repos/o/r/pulls/1/files")``."""

    error = GitHubApiError
    default_api_url = DEFAULT_API_URL

    def __init__(
        self, token: str, api_url: str | None = None, *, graphql_url: str | None = None, **options: Any
    ) -> None:
        super().__init__(token, api_url, **options)
        self.graphql_url = graphql_url or f"{self.api_url}/graphql"

    def headers(self, token: str) -> Mapping[str, str]:
        return {
            "Accept": "application/vnd.github+json",
            "X-GitHub-Api-Version": API_VERSION,
            "Authorization": f"Bearer {token}",
        }

    def hint(self, status: int | None) -> str | None:
        return _hint(status)

    def graphql(self, query: str, variables: Mapping[str, Any]) -> dict[str, Any]:
        """``POST {api}/graphql`` (``GITHUB_GRAPHQL_URL`` on GitHub Enterprise Server): the ``data`` object;
        raises :class:`GraphQLError` when GitHub answers with ``errors``."""
        body = self.json("POST", self.graphql_url, json={"query": query, "variables": dict(variables)})
        if not isinstance(body, dict):
            raise GraphQLError("POST /graphql: the answer is not a JSON object")
        errors = body.get("errors")
        if errors:
            messages = "; ".join(str(e.get("message", e)) if isinstance(e, dict) else str(e) for e in errors)
            raise GraphQLError(f"POST /graphql: {self.mask(messages)}")
        data = body.get("data")
        return data if isinstance(data, dict) else {}
