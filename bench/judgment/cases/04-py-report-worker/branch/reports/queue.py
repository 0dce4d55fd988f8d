"""Job queue on Redis lists: producers LPUSH jobs, workers BRPOP them.

Jobs are pickled so that producers can pass datetimes and Decimals.
"""

import os
import pickle

import redis

QUEUE = "reports:jobs"


def connect() -> redis.Redis:
    """Connection from REDIS_URL."""
    return redis.Redis.from_url(os.environ.get("REDIS_URL", "redis://localhost:6379/0"))


def enqueue(client: redis.Redis, job: dict) -> None:
    """Queue one job."""
    client.lpush(QUEUE, pickle.dumps(job))


def next_job(client: redis.Redis, timeout: int = 5) -> dict | None:
    """The next job, or None after `timeout` seconds without one."""
    item = client.brpop(QUEUE, timeout=timeout)
    if item is None:
        return None
    return pickle.loads(item[1])
