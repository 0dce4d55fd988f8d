"""One rate limit for a fleet, against a real redis-server: separate processes, AIMD, shared backoff, crashes.

The provider in the end-to-end test is the wire-level fake (tests/fakes/llm_server.py).
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from fluxdrive.runtimes.llm.limiter import AdaptiveLimiter
from fluxdrive.runtimes.llm.shared_limit import SharedLimiter, identity_key
from tests.conftest import REPO, committed_copy
from tests.fakes.llm_server import Error, FakeProvider, Text
from tests.servers import RedisServer, free_port, redis_server

pytestmark = pytest.mark.timeout(120)

# One "machine": 6 concurrent requests through its limiter; each holder records the fleet-wide number in flight.
HOLDERS = """
import asyncio, sys
import redis
from fluxdrive.runtimes.llm.limiter import AdaptiveLimiter
from fluxdrive.runtimes.llm.shared_limit import SharedLimiter
url, prefix, kind = sys.argv[1], sys.argv[2], sys.argv[3]
r = redis.Redis.from_url(url)
peak = r.register_script("local n = redis.call('INCR', KEYS[1]) "
                         "if n > tonumber(redis.call('GET', KEYS[2]) or '0') then redis.call('SET', KEYS[2], n) end")
limiter = SharedLimiter(url, prefix, 3) if kind == "shared" else AdaptiveLimiter(3)
async def one():
    async with limiter.slot():
        peak(keys=[prefix + ":test:now", prefix + ":test:peak"])
        await asyncio.sleep(0.15)
        r.decr(prefix + ":test:now")
async def main():
    await asyncio.gather(*(one() for _ in range(6)))
asyncio.run(main())
"""

HOLD_AND_HANG = """
import asyncio, sys
from fluxdrive.runtimes.llm.shared_limit import SharedLimiter
limiter = SharedLimiter(sys.argv[1], sys.argv[2], 3, lease_s=1.0)
async def hold():
    async with limiter.slot():
        await asyncio.sleep(3600)
async def main():
    tasks = [asyncio.ensure_future(hold()) for _ in range(3)]
    await asyncio.sleep(0.5)
    print("holding", flush=True)
    await asyncio.gather(*tasks)
asyncio.run(main())
"""


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    with redis_server(tmp_path_factory.mktemp("redis")) as running:
        yield running


def _peak(server: RedisServer, kind: str) -> int:
    prefix = f"fluxdrive:ratelimit:test-{uuid.uuid4().hex[:8]}"
    machines = [subprocess.Popen([sys.executable, "-c", HOLDERS, server.url, prefix, kind], cwd=REPO) for _ in range(2)]
    assert [m.wait(timeout=60) for m in machines] == [0, 0]
    return int(redis.Redis.from_url(server.url).get(f"{prefix}:test:peak") or 0)


def test_two_machines_together_respect_one_cap(server: RedisServer) -> None:
    assert _peak(server, "shared") == 3  # 12 requests from two processes, never more than 3 in flight
    assert _peak(server, "local") > 3  # what two local limiters of cap 3 allow together (up to 6)


def test_429s_in_one_process_lower_the_cap_the_other_sees_and_successes_raise_it(server: RedisServer) -> None:
    prefix = identity_key("openai", None, f"sk-{uuid.uuid4().hex}")
    a = SharedLimiter(server.url, prefix, 4, floor=1, halve_after=2)
    b = SharedLimiter(server.url, prefix, 4, floor=1, halve_after=2)
    a.record(429)
    a.record(429)
    assert a.cap == 2 and a.events == [
        "shared rate limit (redis): sustained rate limiting, cap lowered to 2 fleet-wide"
    ]
    for _ in range(2):
        b.record(429)
    assert b.cap == 1  # b continued a's fleet-wide state: halved again, to the floor
    b.record(429)
    b.record(429)
    assert b.cap == 1  # never below the floor
    caps = []
    for _ in range(1 + 2 + 3):  # additive increase: as many successes as the cap raise it by one
        b.record(200)
        caps.append(b.cap)
    assert caps == [2, 2, 3, 3, 3, 4]
    for _ in range(10):
        b.record(200)
    assert b.cap == 4  # never above the configured maximum


def test_a_429_pauses_the_whole_fleet(server: RedisServer) -> None:
    prefix = identity_key("anthropic", None, f"sk-{uuid.uuid4().hex}")
    a = SharedLimiter(server.url, prefix, 3)
    b = SharedLimiter(server.url, prefix, 3)

    async def b_waits() -> float:
        started = time.monotonic()
        async with b.slot():
            return time.monotonic() - started

    a.pause(1.0)
    assert asyncio.run(b_waits()) >= 0.9


def test_slots_of_a_killed_machine_expire_with_their_leases(server: RedisServer) -> None:
    prefix = identity_key("openai", "http://127.0.0.1:1/v1", f"sk-{uuid.uuid4().hex}")
    machine = subprocess.Popen(
        [sys.executable, "-c", HOLD_AND_HANG, server.url, prefix], cwd=REPO, stdout=subprocess.PIPE, text=True
    )
    try:
        assert machine.stdout is not None and machine.stdout.readline().strip() == "holding"
        assert redis.Redis.from_url(server.url).zcard(f"{prefix}:leases") == 3  # the fleet's cap is all taken
    finally:
        os.kill(machine.pid, signal.SIGKILL)  # dies holding its three slots, by the pid this test started
        machine.communicate(timeout=10)
    here = SharedLimiter(server.url, prefix, 3)

    async def take() -> float:
        started = time.monotonic()
        async with here.slot():
            return time.monotonic() - started

    assert asyncio.run(asyncio.wait_for(take(), timeout=10)) < 5  # blocked only until the 1 s leases expired


def test_an_unreachable_redis_falls_back_to_local_limiting_once() -> None:
    limiter = SharedLimiter(f"redis://127.0.0.1:{free_port()}/0", identity_key("openai", None, "k"), 2)

    async def twice() -> None:
        for _ in range(2):
            async with limiter.slot():
                limiter.record(200)

    asyncio.run(twice())
    assert limiter.degraded
    assert len(limiter.events) == 1 and "unreachable" in limiter.events[0] and "limiting locally" in limiter.events[0]
    assert isinstance(limiter._local, AdaptiveLimiter)


def test_a_review_shares_its_limit_in_redis_without_the_key(server: RedisServer, tmp_path: Path) -> None:
    project = committed_copy(REPO / "tests" / "fixtures" / "projects" / "py-webapp", tmp_path / "shop")
    key = f"sk-test-{uuid.uuid4().hex}"
    clean = "### Findings Index\nVerdict: safe\n\n### Summary\nNothing in my lane.\n"
    with FakeProvider(default=Text(clean)) as fake:
        fake.script("Review task for fd-safety", [Error(429, retry_after=0.2), Text(clean)])
        base_url = fake.base_url_openai
        env = {**os.environ, "OPENAI_BASE_URL": base_url, "OPENAI_API_KEY": key,
               "FLUXDRIVE_DISPATCH__BACKOFF_BASE_S": "0.01"}  # fmt: skip
        done = subprocess.run(
            [sys.executable, "-m", "fluxdrive", "review", "shop", "--yes", "--runtime", "llm", "--model",
             "openai:gpt-4o", "--agents", "safety", "--set", f"dispatch.rate_limit_url={server.url}",
                 "--set", "evidence.enabled=false"],
            cwd=project, env=env, capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    client = redis.Redis.from_url(server.url)
    prefix = identity_key("openai", base_url, key)
    assert int(client.get(f"{prefix}:successes") or 0) >= 1  # the run's answers were counted fleet-wide
    dump = json.dumps([[k.decode(), repr(client.dump(k))] for k in client.keys("*")])
    assert key not in dump and key[8:] not in dump  # no trace of the API key in Redis
