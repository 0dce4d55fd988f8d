"""Job queue on Redis lists: producers LPUSH JSON jobs, workers BRPOP them."""

import json
import os

import redis

QUEUE = "reports:jobs"


def connect() -> redis.Redis:
    """Connection from REDIS_URL."""
    return redis.Redis.from_url(os.environ.get("REDIS_URL", "redis://localhost:6379/0"))


def enqueue(client: redis.Redis, job: dict) -> None:
    """Queue one job."""
    client.lpush(QUEUE, json.dumps(job))


def next_job(client: redis.Redis, timeout: int = 5) -> dict | None:
    """The next job, or None after `timeout` seconds without one."""
    item = client.brpop(QUEUE, timeout=timeout)
    if item is None:
        return None
    return json.loads(item[1])
