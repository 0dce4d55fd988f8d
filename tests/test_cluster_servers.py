"""The real servers the scale-out work is tested on start on loopback only and end by pid.

A Ray head plus one extra worker node with token authentication, and a
redis-server with Streams: both must be reachable on 127.0.0.1, open no
connection to any other address, refuse a client without the token, and
leave no process behind once the test ends them by pid.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.servers import LOOPBACK, REDIS_SERVER, RayCluster, ray_cluster, redis_server

pytestmark = pytest.mark.timeout(240)

DRIVER = """
import collections, ray
ray.init(address="{address}", log_to_driver=False)
@ray.remote(num_cpus=1)
def where(i):
    import time
    time.sleep(0.5)
    return ray.get_runtime_context().get_node_id()
nodes = collections.Counter(ray.get([where.remote(i) for i in range(8)]))
print(len(ray.nodes()), len(nodes))
"""


def _descendants(root: int) -> set[int]:
    """Every live process below ``root`` (read from /proc), and root itself."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    found, todo = set(), [root]
    while todo:
        pid = todo.pop()
        if pid not in found:
            found.add(pid)
            todo.extend(children.get(pid, []))
    return found


def _connections(pids: set[int]) -> list[str]:
    """Established TCP connections (local and peer address) of ``pids``, from ``ss -tnp``."""
    shown = subprocess.run(["ss", "-tnpH"], capture_output=True, text=True, check=True).stdout
    return [" ".join(line.split()[3:5]) for line in shown.splitlines() if any(f"pid={pid}," in line for pid in pids)]


def _is_loopback(endpoint: str) -> bool:
    host = endpoint.rsplit(":", 1)[0].strip("[]")
    return host in ("127.0.0.1", "::1", "::ffff:127.0.0.1")


@pytest.fixture
def cluster() -> Iterator[RayCluster]:
    # A short directory: Ray's Unix sockets live under it and their paths may not exceed 107 bytes.
    with tempfile.TemporaryDirectory(prefix="fdray") as temp, ray_cluster(Path(temp)) as running:
        yield running


def test_a_two_node_ray_cluster_runs_on_loopback_with_a_token(cluster: RayCluster) -> None:
    cluster.add_worker(num_cpus=1)
    driver = DRIVER.format(address=cluster.address)
    done = subprocess.run(
        [sys.executable, "-c", driver], env=cluster.client_env(), capture_output=True, text=True, timeout=180
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["2", "2"]  # two nodes, and the tasks ran on both
    pids = set().union(*(_descendants(node.pid) for node in cluster.nodes))
    connections = _connections(pids)
    assert connections, "the cluster's processes hold no connection at all: ss saw nothing"
    assert [c for c in connections if not all(_is_loopback(e) for e in c.split())] == []

    env = cluster.client_env()
    env["RAY_AUTH_TOKEN"] = "not-the-token"
    refused = subprocess.run(
        [sys.executable, "-c", f"import ray; ray.init(address='{cluster.address}')"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert refused.returncode != 0

    cluster.end()
    assert [pid for pid in pids if Path(f"/proc/{pid}").exists() and _alive(pid)] == []


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.skipif(not Path(REDIS_SERVER).exists(), reason="redis-server is missing: scripts/install-redis.sh")
def test_redis_server_serves_streams_on_loopback_and_ends_by_pid(tmp_path: Path) -> None:
    import redis

    with redis_server(tmp_path) as server:
        client = redis.Redis.from_url(server.url)
        first = client.xadd("fd:probe", {"line": "one"}, maxlen=10)
        client.xadd("fd:probe", {"line": "two"}, maxlen=10)
        assert [fields[b"line"] for _id, fields in client.xrange("fd:probe", min=first)] == [b"one", b"two"]
        assert client.config_get("bind")["bind"] == LOOPBACK
        client.close()
        pid = server.process.pid
    assert not _alive(pid)
