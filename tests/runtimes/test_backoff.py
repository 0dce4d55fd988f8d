"""Retries, backoff and the adaptive cap, below the agent, over real HTTP to the fake provider.

The transport under test wraps httpx2's real transport; only the waiting is
recorded instead of slept (the delays themselves are what is asserted).
"""

from __future__ import annotations

import asyncio
import email.utils
import socket
import time
from collections.abc import Iterator

import httpx2
import pytest

from fluxdrive.runtimes.llm.backoff import Backoff, BackoffTransport, EndpointUnreachable, retry_after
from fluxdrive.runtimes.llm.limiter import AdaptiveLimiter
from tests.fakes.llm_server import Error, FakeProvider, Slow, Text

BODY = {"model": "gpt-4o", "messages": [{"role": "user", "content": "hello"}]}


@pytest.fixture
def fake() -> Iterator[FakeProvider]:
    with FakeProvider(default=Text("hi")) as provider:
        yield provider


def _post(url: str, transport: BackoffTransport, timeout: float = 30.0, body: object = BODY) -> httpx2.Response:
    async def go() -> httpx2.Response:
        async with httpx2.AsyncClient(transport=transport, timeout=timeout) as client:
            return await client.post(url, json=body, headers={"Authorization": "Bearer sk-test"})

    return asyncio.run(go())


def _transport(limiter: AdaptiveLimiter, waits: list[float], retries: int = 5) -> BackoffTransport:
    async def record(seconds: float) -> None:
        waits.append(seconds)

    backoff = Backoff(base=2.0, factor=2.0, maximum=60.0)
    return BackoffTransport(
        httpx2.AsyncHTTPTransport(), limiter=limiter, retries=retries, backoff=backoff, sleep=record
    )


def test_rate_limits_and_server_errors_are_retried_until_the_answer(fake: FakeProvider) -> None:
    fake.set_default([Error(429, retry_after=7), Error(503), Error(529), Text("finally")])
    limiter, waits = AdaptiveLimiter(cap=6, halve_after=3), []
    transport = _transport(limiter, waits)

    response = _post(f"{fake.base_url_openai}/chat/completions", transport)

    assert response.status_code == 200 and "finally" in response.text
    assert fake.count() == 4 and transport.retried == 3
    assert waits[0] == 7, "Retry-After is honoured"
    assert 0 <= waits[1] <= 4 and 0 <= waits[2] <= 8, "full jitter below base * factor**attempt"
    assert limiter.rate_limited == 1 and limiter.cap == 6


def test_out_of_retries_returns_the_last_answer(fake: FakeProvider) -> None:
    fake.set_default(Error(500))
    waits: list[float] = []

    response = _post(f"{fake.base_url_openai}/chat/completions", _transport(AdaptiveLimiter(cap=2), waits, retries=2))

    assert response.status_code == 500 and fake.count() == 3 and len(waits) == 2


def test_client_errors_are_not_retried(fake: FakeProvider) -> None:
    fake.set_default(Error(400))
    waits: list[float] = []

    response = _post(f"{fake.base_url_openai}/chat/completions", _transport(AdaptiveLimiter(cap=2), waits))

    assert response.status_code == 400 and fake.count() == 1 and waits == []


def test_a_dead_endpoint_is_one_clear_error_after_the_retries() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    waits: list[float] = []

    with pytest.raises(EndpointUnreachable, match=rf"cannot reach http://127.0.0.1:{port} after 3 attempts"):
        _post(f"http://127.0.0.1:{port}/v1/chat/completions", _transport(AdaptiveLimiter(cap=2), waits, retries=2))
    assert len(waits) == 2


def test_a_silent_endpoint_is_retried_then_one_clear_error(fake: FakeProvider) -> None:
    fake.set_default([Slow(30, Text("too late")), Text("in time")])
    waits: list[float] = []

    response = _post(f"{fake.base_url_openai}/chat/completions", _transport(AdaptiveLimiter(cap=2), waits), 0.3)

    assert response.status_code == 200 and "in time" in response.text and len(waits) == 1

    fake.set_default(Slow(30, Text("too late")))
    silent = {**BODY, "messages": [{"role": "user", "content": "a new conversation"}]}
    with pytest.raises(EndpointUnreachable, match=r"no answer from http://127.0.0.1:\d+ within the request timeout"):
        _post(
            f"{fake.base_url_openai}/chat/completions", _transport(AdaptiveLimiter(cap=2), [], retries=1), 0.3, silent
        )
    assert fake.count() == 4


def test_sustained_429s_halve_the_cap_down_to_the_floor() -> None:
    limiter = AdaptiveLimiter(cap=6, halve_after=2)
    for status in (429, 500, 429):  # a server error says nothing about the rate limit
        limiter.record(status)
    assert limiter.cap == 3
    limiter.record(429)
    limiter.record(200)  # a success ends the streak
    limiter.record(429)
    assert limiter.cap == 3
    for _ in range(10):
        limiter.record(429)
    assert limiter.cap == 1 and limiter.rate_limited == 14
    assert limiter.events == [
        "sustained rate limiting: concurrency cap lowered to 3",
        "sustained rate limiting: concurrency cap lowered to 1",
    ]


def test_the_cap_bounds_requests_in_flight() -> None:
    limiter = AdaptiveLimiter(cap=2)
    peak = 0

    async def request() -> None:
        nonlocal peak
        async with limiter.slot():
            peak = max(peak, limiter.in_flight)
            await asyncio.sleep(0.01)

    async def burst() -> None:
        await asyncio.gather(*(request() for _ in range(8)))

    asyncio.run(burst())
    assert peak == 2 and limiter.in_flight == 0


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({"retry-after": "12"}, 12.0),
        ({"retry-after": "0.5"}, 0.5),
        ({"retry-after-ms": "250"}, 0.25),
        ({"retry-after": "soon"}, None),
        ({}, None),
    ],
)
def test_retry_after_forms(headers: dict[str, str], expected: float | None) -> None:
    assert retry_after(httpx2.Response(429, headers=headers)) == expected


def test_retry_after_as_an_http_date() -> None:
    when = email.utils.formatdate(time.time() + 30, usegmt=True)
    wait = retry_after(httpx2.Response(429, headers={"retry-after": when}))
    assert wait is not None and 25 <= wait <= 31


def test_backoff_delays_grow_and_are_capped() -> None:
    backoff = Backoff(base=2.0, factor=2.0, maximum=60.0)
    assert [backoff.delay(n, rng=lambda: 1.0) for n in range(7)] == [2, 4, 8, 16, 32, 60, 60]
    assert backoff.delay(3, rng=lambda: 0.0) == 0
