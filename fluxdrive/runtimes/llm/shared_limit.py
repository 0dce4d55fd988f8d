"""One rate limit for a fleet: the AIMD concurrency cap and the 429 backoff, shared through Redis.

Each review process has its own :class:`~fluxdrive.runtimes.llm.limiter.AdaptiveLimiter`;
N machines reviewing with one provider key would together send N times
what the provider allows. With ``dispatch.rate_limit_url = "redis://..."``
every process using the same URL and the same provider key shares one
:class:`SharedLimiter` state in Redis:

- **slots are leases**, not counters: a sorted set of lease ids scored by
  their expiry (Redis server time), taken and given back by Lua scripts, so
  a machine that dies holding slots blocks nobody past its leases' expiry;
- **AIMD**: ``halve_after`` consecutive 429s fleet-wide halve the cap (never
  below ``dispatch.min_concurrency``); as many consecutive successes as the
  cap raise it by one (never above ``dispatch.max_concurrency``);
- **shared backoff**: a 429's wait (``Retry-After`` or the backoff) becomes
  a fleet-wide "not before" time that every process's next slot waits for.

The keys are ``fluxdrive:ratelimit:<sha256 of provider, base URL and key>``:
never the key itself. A rate limiter must not fail a review: if Redis is
unreachable (at the start or mid-run) the process limits itself locally
with an :class:`AdaptiveLimiter` and says so once in its events.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import random
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from fluxdrive.runtimes.llm.limiter import AdaptiveLimiter

POLL_S = 0.03  # how often a waiting request asks for a slot (plus jitter)
CONNECT_TIMEOUT_S = 2.0

# KEYS: leases, cap, not_before. ARGV: lease ms, lease id, default cap. Returns 0 (taken), -1 (full), or ms to wait.
_ACQUIRE = """
local now = redis.call('TIME')
local now_ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
local not_before = tonumber(redis.call('GET', KEYS[3]) or '0')
if not_before > now_ms then return not_before - now_ms end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now_ms)
local cap = tonumber(redis.call('GET', KEYS[2]) or ARGV[3])
if redis.call('ZCARD', KEYS[1]) < cap then
  redis.call('ZADD', KEYS[1], now_ms + tonumber(ARGV[1]), ARGV[2])
  redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[1]) * 2)
  return 0
end
return -1
"""

# KEYS: cap, streak429, successes. ARGV: status kind (429|ok), halve_after, floor, ceiling, default cap.
# Returns the cap after the change (the same when nothing changed).
_RECORD = """
local cap = tonumber(redis.call('GET', KEYS[1]) or ARGV[5])
if ARGV[1] == '429' then
  redis.call('DEL', KEYS[3])
  local streak = redis.call('INCR', KEYS[2])
  if streak >= tonumber(ARGV[2]) and cap > tonumber(ARGV[3]) then
    cap = math.max(tonumber(ARGV[3]), math.floor(cap / 2))
    redis.call('SET', KEYS[1], cap)
    redis.call('SET', KEYS[2], 0)
  end
else
  redis.call('SET', KEYS[2], 0)
  local ok = redis.call('INCR', KEYS[3])
  if ok >= cap and cap < tonumber(ARGV[4]) then
    cap = cap + 1
    redis.call('SET', KEYS[1], cap)
    redis.call('SET', KEYS[3], 0)
  end
end
return cap
"""

# KEYS: not_before. ARGV: ms from now. Moves the fleet's "not before" later, never earlier.
_PAUSE = """
local now = redis.call('TIME')
local until_ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000) + tonumber(ARGV[1])
if until_ms > tonumber(redis.call('GET', KEYS[1]) or '0') then
  redis.call('SET', KEYS[1], until_ms, 'PX', tonumber(ARGV[1]) + 1000)
end
return until_ms
"""


def identity_key(provider: str, base_url: str | None, key: str | None) -> str:
    """The Redis key prefix for one provider key: a digest, never the key."""
    digest = hashlib.sha256(f"{provider}\0{base_url or ''}\0{key or ''}".encode()).hexdigest()[:16]
    return f"fluxdrive:ratelimit:{digest}"


@dataclass
class SharedLimiter:
    """The :class:`AdaptiveLimiter` interface, with the state in Redis for every process of a fleet."""

    url: str
    prefix: str
    cap: int  # the fleet-wide cap as last seen (starts at the configured maximum)
    floor: int = 1
    halve_after: int = 3
    lease_s: float = 180.0
    events: list[str] = field(default_factory=list)
    rate_limited: int = 0
    in_flight: int = 0
    _ceiling: int = 0
    _client: Any = None
    _scripts: dict[str, Any] = field(default_factory=dict)
    _local: AdaptiveLimiter | None = None

    def __post_init__(self) -> None:
        self._ceiling = self._ceiling or self.cap

    def _redis(self) -> Any:
        if self._client is None:
            import redis

            self._client = redis.Redis.from_url(
                self.url, socket_connect_timeout=CONNECT_TIMEOUT_S, socket_timeout=CONNECT_TIMEOUT_S
            )
            self._scripts = {
                name: self._client.register_script(body)
                for name, body in (("acquire", _ACQUIRE), ("record", _RECORD), ("pause", _PAUSE))
            }
        return self._client

    def _keys(self, *names: str) -> list[str]:
        return [f"{self.prefix}:{name}" for name in names]

    def _call(self, script: str, keys: list[str], args: list[Any]) -> Any:
        self._redis()
        return self._scripts[script](keys=keys, args=args)

    def _fall_back(self, exc: BaseException) -> AdaptiveLimiter:
        """Redis is gone: limit this process on its own from now on (said once)."""
        if self._local is None:
            self._local = AdaptiveLimiter(max(self.floor, self.cap), self.floor, self.halve_after)
            self.events.append(f"shared rate limit (redis) unreachable ({type(exc).__name__}): limiting locally")
        return self._local

    @property
    def degraded(self) -> bool:
        """True once the limiter has fallen back to local limiting."""
        return self._local is not None

    @contextlib.asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        """Hold one of the fleet's slots while a request is in flight."""
        if self._local is not None:
            async with self._local.slot():
                yield
            return
        lease = uuid.uuid4().hex
        leases, cap, not_before = self._keys("leases", "cap", "not_before")
        try:
            while True:
                answer = int(self._call("acquire", [leases, cap, not_before], [int(self.lease_s * 1000), lease,
                                                                               self._ceiling]))  # fmt: skip
                if answer == 0:
                    break
                wait = answer / 1000 if answer > 0 else POLL_S
                await asyncio.sleep(wait + random.random() * POLL_S)  # noqa: S311 - jitter, not a secret
        except Exception as exc:  # redis errors and OSError alike: never fail the request for the limiter
            if not self._is_redis_failure(exc):
                raise
            async with self._fall_back(exc).slot():
                yield
            return
        self.in_flight += 1
        try:
            yield
        finally:
            self.in_flight -= 1
            with contextlib.suppress(Exception):
                self._redis().zrem(leases, lease)

    @staticmethod
    def _is_redis_failure(exc: BaseException) -> bool:
        import redis

        return isinstance(exc, redis.RedisError | OSError)

    def record(self, status: int | None) -> None:
        """A 429 extends the fleet's streak; a success (< 400) counts toward the next increase."""
        if status == 429:
            self.rate_limited += 1
        if self._local is not None:
            self._local.record(status)
            return
        if status != 429 and (status is None or status >= 400):
            return
        keys = self._keys("cap", "streak429", "successes")
        args = ["429" if status == 429 else "ok", self.halve_after, self.floor, self._ceiling, self._ceiling]
        try:
            cap = int(self._call("record", keys, args))
        except Exception as exc:
            if not self._is_redis_failure(exc):
                raise
            self._fall_back(exc).record(status)
            return
        if cap < self.cap:
            self.events.append(f"shared rate limit (redis): sustained rate limiting, cap lowered to {cap} fleet-wide")
        self.cap = cap

    def pause(self, seconds: float) -> None:
        """A 429 asked to wait: every process of the fleet waits before its next request."""
        if self._local is not None or seconds <= 0:
            return
        try:
            self._call("pause", self._keys("not_before"), [int(seconds * 1000)])
        except Exception as exc:
            if not self._is_redis_failure(exc):
                raise
            self._fall_back(exc)
