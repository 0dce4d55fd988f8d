"""Rate limits and flaky endpoints, handled below the agent: retries with backoff and an adaptive cap.

Every HTTP request to a provider goes through :class:`BackoffTransport`. A
429, a 5xx or Anthropic's 529 "overloaded", a connection that fails and an
answer that does not come within the request timeout are retried with
exponential backoff and full jitter (base 2 s, factor 2, at most 60 s),
honouring ``Retry-After`` when the provider sends it - so a
transient failure never becomes an agent failure. When the retries run out
the last answer is returned (the SDK turns it into its error) or, for a
dead or silent endpoint, one clear :class:`EndpointUnreachable`.

A :class:`~fluxdrive.runtimes.llm.limiter.Limiter` bounds the requests in
flight: this process's :class:`~fluxdrive.runtimes.llm.limiter.AdaptiveLimiter`
or a fleet's :class:`~fluxdrive.runtimes.llm.shared_limit.SharedLimiter`;
:func:`limiter_for` picks one from the configuration.
"""

from __future__ import annotations

import asyncio
import contextlib
import email.utils
import errno
import random
import socket
import time
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING

import httpx2

from fluxdrive.runtimes.llm.limiter import AdaptiveLimiter, Limiter
from fluxdrive.runtimes.llm.shared_limit import SharedLimiter, identity_key

if TYPE_CHECKING:
    from fluxdrive.config.model import Config
    from fluxdrive.runtimes.llm.models import ModelSpec

RETRY_STATUSES = frozenset({408, 409, 425, 429, 500, 502, 503, 504, 529})
_ERRNO_REASONS = {
    errno.ECONNREFUSED: "connection refused",
    errno.ECONNRESET: "connection reset",
    errno.EHOSTUNREACH: "host unreachable",
    errno.ENETUNREACH: "network is unreachable",
}
# Who hears about a retry (the agent's live progress line); set per agent run by the llm runtime.
RETRY_LISTENER: ContextVar[Callable[[str], None] | None] = ContextVar("fluxdrive_retry_listener", default=None)


class EndpointUnreachable(httpx2.TransportError):
    """The provider could not be reached at all, even after the retries."""


def retry_after(response: httpx2.Response) -> float | None:
    """Seconds the provider asked to wait (``Retry-After`` as seconds or an HTTP date, or ``retry-after-ms``)."""
    value = response.headers.get("retry-after")
    if value:
        with contextlib.suppress(ValueError):
            return max(0.0, float(value))
        with contextlib.suppress(TypeError, ValueError):
            return max(0.0, email.utils.parsedate_to_datetime(value).timestamp() - time.time())
    millis = response.headers.get("retry-after-ms")
    if millis:
        with contextlib.suppress(ValueError):
            return max(0.0, float(millis) / 1000)
    return None


@dataclass(frozen=True, slots=True)
class Backoff:
    """Exponential backoff with full jitter: ``uniform(0, min(maximum, base * factor**attempt))``."""

    base: float = 2.0
    factor: float = 2.0
    maximum: float = 60.0

    def delay(self, attempt: int, rng: Callable[[], float] = random.random) -> float:
        """How long to wait before retry number ``attempt`` (0-based)."""
        return rng() * min(self.maximum, self.base * self.factor**attempt)


class BackoffTransport(httpx2.AsyncBaseTransport):
    """Retries a request on 429/5xx/overload, connection failures and timeouts; respects the limiter."""

    def __init__(
        self,
        inner: httpx2.AsyncBaseTransport,
        *,
        limiter: Limiter,
        retries: int,
        backoff: Backoff,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self.inner = inner
        self.limiter = limiter
        self.retries = retries
        self.backoff = backoff
        self.sleep = sleep
        self.retried = 0

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        await request.aread()  # the body must be re-sendable
        failure: Exception | None = None
        for attempt in range(self.retries + 1):
            response: httpx2.Response | None = None
            async with self.limiter.slot():
                try:
                    response = await self.inner.handle_async_request(request)
                except (httpx2.ConnectError, httpx2.TimeoutException, httpx2.RemoteProtocolError) as exc:
                    failure = exc
            self.limiter.record(response.status_code if response is not None else None)
            if response is not None and response.status_code not in RETRY_STATUSES:
                return response
            if attempt == self.retries:
                if response is not None:
                    return response
                where = f"{request.url.scheme}://{request.url.host}:{request.url.port or ''}"
                if isinstance(failure, httpx2.ReadTimeout | httpx2.WriteTimeout):
                    problem = f"no answer from {where} within the request timeout (llm.request_timeout_s)"
                else:
                    problem = f"cannot reach {where}"
                raise EndpointUnreachable(f"{problem} after {self.retries + 1} attempts: {failure}") from failure
            wait = retry_after(response) if response is not None else None
            if wait is None:
                wait = self.backoff.delay(attempt)
            if response is not None:
                await response.aread()
                await response.aclose()
            self.retried += 1
            wait = min(wait, self.backoff.maximum)
            if response is not None and response.status_code == 429:
                self.limiter.pause(wait)  # a fleet's shared limiter makes every process wait, not just this one
            listener = RETRY_LISTENER.get()
            if listener is not None:
                with contextlib.suppress(Exception):  # a progress line must never fail a request
                    reason = _reason(response, failure)
                    listener(f"retrying ({reason}), attempt {attempt + 2} of {self.retries + 1} in {wait:.1f} s")
            await self.sleep(wait)
        raise AssertionError("unreachable")  # pragma: no cover

    async def aclose(self) -> None:
        await self.inner.aclose()


def _reason(response: httpx2.Response | None, failure: Exception | None) -> str:
    """``HTTP 429``, ``connection refused``, ``no answer within the request timeout``..."""
    if response is not None:
        return f"HTTP {response.status_code}"
    if isinstance(failure, httpx2.TimeoutException):
        return "no answer within the request timeout"
    seen: set[int] = set()
    current: BaseException | None = failure
    while current is not None and id(current) not in seen:  # the transport wraps the socket's OSError
        seen.add(id(current))
        if isinstance(current, socket.gaierror):
            return "host name not resolved"
        if isinstance(current, OSError) and current.errno in _ERRNO_REASONS:
            return _ERRNO_REASONS[current.errno]
        text = str(current).lower()
        for marker in ("connection refused", "connection reset", "network is unreachable"):
            if marker in text:
                return marker
        current = current.__cause__ or current.__context__
    return "cannot connect" if isinstance(failure, httpx2.ConnectError) else type(failure).__name__


def limiter_for(config: Config, spec: ModelSpec | None = None) -> Limiter:
    """The adaptive cap configured for a run: ``dispatch.max_concurrency``, floor, ``llm.halve_after_429``;
    shared by a fleet (``dispatch.rate_limit_url``) per provider key when ``spec`` says which key."""
    dispatch = config.dispatch
    if dispatch.rate_limit_url and spec is not None:
        return SharedLimiter(
            dispatch.rate_limit_url,
            identity_key(spec.provider, spec.base_url, spec.key),
            dispatch.max_concurrency,
            dispatch.min_concurrency,
            config.llm.halve_after_429,
            lease_s=config.llm.request_timeout_s + 60,
        )
    return AdaptiveLimiter(dispatch.max_concurrency, dispatch.min_concurrency, config.llm.halve_after_429)


def client_for(config: Config, limiter: Limiter) -> tuple[httpx2.AsyncClient, BackoffTransport]:
    """An HTTP client whose every request goes through the configured retries, backoff and ``limiter``."""
    dispatch = config.dispatch
    transport = BackoffTransport(
        httpx2.AsyncHTTPTransport(),
        limiter=limiter,
        retries=config.llm.http_retries,
        backoff=Backoff(dispatch.backoff_base_s, dispatch.backoff_factor, dispatch.backoff_max_s),
    )
    return httpx2.AsyncClient(transport=transport, timeout=config.llm.request_timeout_s), transport
