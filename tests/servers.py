"""Real servers for tests: a redis-server and a Ray cluster, on loopback only, ended by pid.

Every server binds 127.0.0.1 and is reached there, never through another
address of the machine. What a test starts it ends by the pid it started
(a process group for Ray's daemons), never with ``ray stop`` or ``pkill``,
which would hit other runs on the machine.

Ray on loopback, as measured with Ray 2.60 on Linux: a head started with
``--node-ip-address 127.0.0.1`` under ``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0``
listens on 127.0.0.1 only, but ``ray start`` then refuses to add a worker
node ("Multi-node Ray clusters are not supported"); with the variable unset,
a worker joins, but Ray rewrites the addresses 127.0.0.1/localhost to the
machine's outward IP (``services.resolve_ip_for_localhost``) and connects
there. The extra worker node is therefore started through ``ray start``'s
own entry point with that one rewrite disabled, so that it registers and
connects as 127.0.0.1. Clients present the cluster's token
(``RAY_AUTH_MODE=token``, ``RAY_AUTH_TOKEN``).
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

LOOPBACK = "127.0.0.1"
REDIS_SERVER = shutil.which("redis-server") or "/usr/bin/redis-server"
# `ray start` with the loopback rewrite disabled (see the module docstring).
_RAY_START = (
    "import sys, ray._private.services as s\n"
    "s.resolve_ip_for_localhost = lambda host: host\n"
    "from ray.scripts.scripts import main\n"
    "sys.argv = ['ray', *sys.argv[1:]]\n"
    "main()\n"
)


def free_port() -> int:
    """A TCP port free on loopback now."""
    with socket.socket() as probe:
        probe.bind((LOOPBACK, 0))
        return int(probe.getsockname()[1])


def _end(process: subprocess.Popen[bytes], grace_s: float = 15) -> None:
    """End ``process`` and its process group by pid: SIGTERM, then SIGKILL after ``grace_s``."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=grace_s)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=grace_s)


def _wait_for_port(port: int, process: subprocess.Popen[bytes], timeout_s: float, what: str) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{what} exited with {process.returncode} before listening on {LOOPBACK}:{port}")
        with socket.socket() as probe:
            if probe.connect_ex((LOOPBACK, port)) == 0:
                return
        time.sleep(0.1)
    raise RuntimeError(f"{what} did not listen on {LOOPBACK}:{port} within {timeout_s} s")


@dataclass
class RedisServer:
    """A redis-server of one test: no persistence, loopback only."""

    port: int
    process: subprocess.Popen[bytes]

    @property
    def url(self) -> str:
        """The redis:// URL clients use."""
        return f"redis://{LOOPBACK}:{self.port}/0"


@contextlib.contextmanager
def redis_server(directory: Path, *, port: int | None = None, args: Sequence[str] = ()) -> Iterator[RedisServer]:
    """Start redis-server on a free (or the given) loopback port, with extra ``args``; end it by pid afterwards."""
    port = free_port() if port is None else port
    command = [REDIS_SERVER, "--bind", LOOPBACK, "--port", str(port), "--save", "", "--appendonly", "no"]
    command += ["--dir", str(directory), "--protected-mode", "yes", *args]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        _wait_for_port(port, process, 20, "redis-server")
        yield RedisServer(port, process)
    finally:
        _end(process)


@dataclass
class RayCluster:
    """A local Ray cluster of one test: a head and worker nodes, each a ``ray start --block`` process group."""

    port: int
    token: str
    temp_dir: Path
    nodes: list[subprocess.Popen[bytes]] = field(default_factory=list)

    @property
    def address(self) -> str:
        """The GCS address drivers connect to."""
        return f"{LOOPBACK}:{self.port}"

    def client_env(self) -> dict[str, str]:
        """Environment of a driver (or a ``fluxdrive`` subprocess) that connects with the cluster's token."""
        return {**self.node_env(), "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0"}

    def node_env(self) -> dict[str, str]:
        """The cluster's token, and Ray's temp directory under the test's own (``RAY_TMPDIR``): no session files,
        logs or ``ray_current_cluster`` left in the machine's ``/tmp/ray``, where ``--cluster auto`` looks."""
        return {**os.environ, **_ray_env(self.token), "RAY_TMPDIR": str(self.temp_dir)}

    def add_worker(self, num_cpus: int = 1) -> subprocess.Popen[bytes]:
        """Start one more worker node (its own raylet) and wait until the cluster counts it."""
        command = [sys.executable, "-c", _RAY_START, "start", "--address", self.address]
        command += ["--node-ip-address", LOOPBACK, "--num-cpus", str(num_cpus), "--disable-usage-stats", "--block"]
        env = self.node_env()
        env.pop("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", None)
        log = self.temp_dir / f"worker-{len(self.nodes)}.log"
        process = _start(command, env, log)
        self.nodes.append(process)
        deadline = time.monotonic() + 60
        while b"Ray runtime started" not in log.read_bytes():  # its raylet has registered with the head
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the Ray worker node did not start: {log.read_text(errors='replace')[-2000:]}")
            time.sleep(0.2)
        return process

    def end(self) -> None:
        """End every node by its pid (workers first, then the head)."""
        for process in reversed(self.nodes):
            _end(process, grace_s=RAY_GRACE_S)


RAY_GRACE_S = 5  # ``ray start --block`` may take 15 s and more to stop its daemons; its group is ours to kill


def _ray_env(token: str) -> dict[str, str]:
    return {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": token, "RAY_USAGE_STATS_ENABLED": "0"}


def _start(command: list[str], env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    with log.open("wb") as out:
        return subprocess.Popen(command, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)


@contextlib.contextmanager
def ray_cluster(temp_dir: Path, *, head_cpus: int = 1, client_port: int | None = None) -> Iterator[RayCluster]:
    """Start a Ray head on loopback with token authentication (and a Ray Client server on ``client_port``);
    end every node it gained by pid."""
    ray = Path(sys.executable).with_name("ray")
    cluster = RayCluster(free_port(), secrets.token_hex(16), temp_dir)
    command = [str(ray), "start", "--head", "--node-ip-address", LOOPBACK, "--port", str(cluster.port)]
    command += ["--num-cpus", str(head_cpus), "--include-dashboard", "false", "--disable-usage-stats"]
    if client_port is not None:
        command += ["--ray-client-server-port", str(client_port)]
    command += ["--temp-dir", str(temp_dir / "ray"), "--block"]
    # RAY_TMPDIR: the address file `ray start` leaves for `auto` goes under the test's directory, not /tmp/ray.
    env = {
        **os.environ,
        **_ray_env(cluster.token),
        "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0",
        "RAY_TMPDIR": str(temp_dir),
    }
    head = _start(command, env, temp_dir / "head.log")
    cluster.nodes.append(head)
    try:
        _wait_for_port(cluster.port, head, 60, "the Ray head")
        if client_port is not None:
            _wait_for_port(client_port, head, 60, "the Ray Client server")
        yield cluster
    finally:
        cluster.end()


def descendants(root: int) -> set[int]:
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


def connections(pids: set[int]) -> list[str]:
    """Established TCP connections (local and peer address) of ``pids``, from ``ss -tnp``."""
    shown = subprocess.run(["ss", "-tnpH"], capture_output=True, text=True, check=True).stdout
    return [" ".join(line.split()[3:5]) for line in shown.splitlines() if any(f"pid={pid}," in line for pid in pids)]


def is_loopback(endpoint: str) -> bool:
    host = endpoint.rsplit(":", 1)[0].strip("[]")
    return host in ("127.0.0.1", "::1", "::ffff:127.0.0.1")


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"
