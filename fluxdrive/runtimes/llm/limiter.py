"""How many requests to a provider are in flight at once, for this process.

The retrying transport (:mod:`fluxdrive.runtimes.llm.backoff`) takes any
:class:`Limiter`; a fleet's limiter
(:mod:`fluxdrive.runtimes.llm.shared_limit`) falls back to this process's
:class:`AdaptiveLimiter` when Redis is gone. Both need these two names and
neither needs the other's module, so they live here, below both: the imports
point one way (backoff -> shared_limit -> limiter).

:class:`AdaptiveLimiter` bounds the requests in flight. When the provider
keeps answering 429 (``halve_after`` in a row), the cap halves (never below
``floor``) for the rest of the run: pushing harder against a rate limit only
buys more 429s.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Protocol


class Limiter(Protocol):
    """What the transport needs of a limiter: this process's (:class:`AdaptiveLimiter`) or a fleet's
    (:class:`~fluxdrive.runtimes.llm.shared_limit.SharedLimiter`)."""

    cap: int
    events: list[str]

    def slot(self) -> contextlib.AbstractAsyncContextManager[None]:
        """Hold a slot while one request is in flight."""
        ...

    def record(self, status: int | None) -> None:
        """Note one answer's status (None: no answer)."""
        ...

    def pause(self, seconds: float) -> None:
        """A rate-limited answer asked to wait ``seconds`` before the next request."""
        ...


@dataclass
class AdaptiveLimiter:
    """At most ``cap`` requests in flight; halves on sustained rate limiting."""

    cap: int
    floor: int = 1
    halve_after: int = 3
    events: list[str] = field(default_factory=list)
    rate_limited: int = 0
    in_flight: int = 0
    _streak: int = 0
    _changed: asyncio.Condition | None = None

    def _condition(self) -> asyncio.Condition:
        if self._changed is None:
            self._changed = asyncio.Condition()
        return self._changed

    @contextlib.asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        """Hold one of the ``cap`` slots while a request is in flight."""
        changed = self._condition()
        async with changed:
            await changed.wait_for(lambda: self.in_flight < self.cap)
            self.in_flight += 1
        try:
            yield
        finally:
            async with changed:
                self.in_flight -= 1
                changed.notify_all()

    def record(self, status: int | None) -> None:
        """Note one answer: a 429 extends the streak, a success ends it; server errors and dead connections
        say nothing about the rate limit, so they leave it alone."""
        if status != 429:
            if status is not None and status < 400:
                self._streak = 0
            return
        self.rate_limited += 1
        self._streak += 1
        if self._streak >= self.halve_after and self.cap > self.floor:
            self.cap = max(self.floor, self.cap // 2)
            self._streak = 0
            self.events.append(f"sustained rate limiting: concurrency cap lowered to {self.cap}")

    def pause(self, seconds: float) -> None:
        """Nothing to share: the retrying request waits by itself."""
        return None
