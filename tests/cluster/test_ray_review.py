"""Reviews on a real Ray cluster: one loopback cluster (a head and a worker node, token auth) for the module.

What is checked against the real thing, never a fake of Ray:
- a static review on the cluster (its per-file pass in Ray tasks on both
  nodes) writes the local run's findings.json byte for byte;
- llm agents run as Ray tasks on two nodes and see each other's blocking
  findings while they work (through a real redis-server stream);
- a node killed mid-run: its agent is retried on another node, and the
  review completes with every report;
- ``fluxdrive fleet run`` reviews 20 repositories on the cluster into one table;
- every connection the cluster's processes hold is on loopback, a client with
  the wrong token is refused, and once the test ends the nodes by the pids it
  started no process of the cluster is left.
The LLM provider is the wire-level fake (tests/fakes/llm_server.py).
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.adversarial.test_cluster_connect import stale_address_review
from tests.conftest import REPO, committed_copy
from tests.fakes.llm_server import Echo, FakeProvider, Slow, Text, ToolCall
from tests.servers import (
    RayCluster,
    RedisServer,
    alive,
    connections,
    descendants,
    free_port,
    is_loopback,
    ray_cluster,
    redis_server,
)

pytestmark = pytest.mark.timeout(300)

FIXTURES = REPO / "tests" / "fixtures" / "projects"
CLEAN = "### Findings Index\nVerdict: safe\n\n### Summary\nNothing in my lane.\n"
FORWARD = 'dispatch.forward_env=["OPENAI_BASE_URL","OPENAI_API_KEY"]'


@dataclass
class Servers:
    cluster: RayCluster
    redis: RedisServer
    temp: Path
    client_port: int


@pytest.fixture(scope="module")
def servers() -> Iterator[Servers]:
    # A short directory: Ray's Unix sockets live under it and their paths may not exceed 107 bytes.
    pids: set[int] = set()
    with (
        tempfile.TemporaryDirectory(prefix="fdray") as temp,
        ray_cluster(Path(temp), head_cpus=1, client_port=(client_port := free_port())) as cluster,
        redis_server(Path(temp)) as redis,
    ):
        cluster.add_worker(num_cpus=1)
        yield Servers(cluster, redis, Path(temp), client_port)
        pids = set().union(*(descendants(node.pid) for node in cluster.nodes))
    assert [pid for pid in pids if alive(pid)] == []  # ended by pid: nothing of the cluster outlives the module


def fluxdrive(
    servers: Servers, *args: str | Path, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """The installed CLI as a real subprocess, with the cluster's token in its environment."""
    exe = Path(sys.executable).parent / "fluxdrive"
    return subprocess.run(
        [str(exe), *map(str, args)],
        cwd=cwd,
        env={**servers.cluster.client_env(), **(env or {})},
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )


def _untimed(text: str) -> str:
    """findings.json without what records timing: its timestamps, and the timeline's events and their
    counts - which agent acknowledged (or contradicted) a peer's blocking finding depends on who finished
    first, in two local runs as well, and so does each finding's ``acknowledged_by`` and the confidence an
    acknowledgment raises. The peer findings themselves (the timeline's entries) must match."""
    data = json.loads(text)
    entries = [{k: v for k, v in e.items() if k != "timestamp"} for e in data["timeline"]["entries"]]
    data["timeline"] = sorted(entries, key=lambda e: json.dumps(e, sort_keys=True))
    for finding in data["findings"]:
        finding.pop("acknowledged_by", None)
        finding.pop("confidence", None)
    untimed = json.dumps(data, indent=2, ensure_ascii=False)
    return re.sub(r'"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z"', '"<time>"', untimed)


def test_a_static_review_on_the_cluster_writes_the_local_findings_byte_for_byte(
    servers: Servers, tmp_path: Path
) -> None:
    # Real code nobody wrote for this test: fluxdrive's own launch package (~5,000 lines, a dozen findings).
    project = tmp_path / "project"
    project.mkdir()
    (project / ".git").mkdir()
    subprocess.run(["cp", "-r", str(REPO / "fluxdrive" / "launch"), str(project / "launch")], check=True)
    common = ("review", "launch", "--yes", "-q", "--format", "json")
    local = fluxdrive(servers, *common, "--output-dir", tmp_path / "local", cwd=project)
    remote = fluxdrive(
        servers, *common, "--output-dir", tmp_path / "ray", "--cluster", servers.cluster.address,
        "--set", "dispatch.shard_min_lines=1", cwd=project,
    )  # fmt: skip
    assert local.returncode == remote.returncode == 0, local.stderr + remote.stderr  # findings, none at the gate
    assert json.loads(remote.stdout)["verdict"] == json.loads(local.stdout)["verdict"]
    local_text = _untimed((tmp_path / "local" / "findings.json").read_text())
    assert _untimed((tmp_path / "ray" / "findings.json").read_text()) == local_text
    assert len(json.loads(local_text)["findings"]) > 5
    placement = json.loads((tmp_path / "ray" / "run.json").read_text())["placement"]
    # Two shards per cluster CPU; where Ray places them is its choice (both nodes unless one is busy starting).
    assert len(placement) == 1 and re.fullmatch(
        r"static analysis: the per-file pass ran as 4 Ray tasks on [12] node\(s\)", placement[0]
    )


def test_a_ray_client_address_reviews_the_same(servers: Servers, tmp_path: Path) -> None:
    project = committed_copy(FIXTURES / "py-webapp", tmp_path / "shop")
    common = ("review", "shop", "--yes", "-q", "--format", "json", "--set", "dispatch.shard_min_lines=1")
    local = fluxdrive(servers, *common, "--output-dir", tmp_path / "local", cwd=project)
    client = fluxdrive(
        servers, *common, "--output-dir", tmp_path / "client", "--cluster", f"ray://127.0.0.1:{servers.client_port}",
        cwd=project,
    )  # fmt: skip
    assert local.returncode == client.returncode == 1, client.stderr[-2000:]
    local_text = _untimed((tmp_path / "local" / "findings.json").read_text())
    assert _untimed((tmp_path / "client" / "findings.json").read_text()) == local_text
    placement = json.loads((tmp_path / "client" / "run.json").read_text())["placement"]
    assert len(placement) == 1 and "Ray tasks" in placement[0]


def test_llm_agents_on_two_nodes_see_each_others_blocking_findings_through_redis(
    servers: Servers, tmp_path: Path
) -> None:
    project = committed_copy(FIXTURES / "py-webapp", tmp_path / "shop")
    with FakeProvider(default=Text(CLEAN)) as fake:
        blocking = {
            "severity": "blocking",
            "category": "sql-injection",
            "summary": "SQL built with an f-string in shop/db.py lets a caller inject arbitrary SQL",
            "file_refs": ["shop/db.py:1"],
        }
        # fd-safety shares at once and stays busy; fd-correctness reads a few seconds later (the two Ray tasks
        # may start seconds apart on a loaded machine: the margin keeps "later" true).
        fake.script("Review task for fd-safety", [ToolCall("share_finding", blocking), Slow(7, Text(CLEAN))])
        fake.script(
            "Review task for fd-correctness",
            [
                Slow(4, ToolCall("read_peer_findings", {"severity": "blocking"})),
                Echo("### Findings Index\nVerdict: safe\n\n### Summary\nPeers: {result}\n"),
            ],
        )
        env = {"OPENAI_BASE_URL": fake.base_url_openai, "OPENAI_API_KEY": f"sk-test-{uuid.uuid4().hex}"}
        done = fluxdrive(
            servers, "review", "shop", "--yes", "--set", "evidence.enabled=false", "--runtime", "llm", "--model", "openai:gpt-4o",
            "--agents", "safety,correctness", "--cluster", servers.cluster.address, "--output-dir", tmp_path / "run",
            "--set", FORWARD, "--set", "dispatch.remote_agent_cpus=1", "--set", f"channel.url={servers.redis.url}",
            cwd=project, env=env,
        )  # fmt: skip
        seen = fake.tool_results("Review task for fd-correctness")
    assert done.returncode == 0, done.stdout + done.stderr
    assert len(seen) == 1 and json.loads(seen[0])["agent"] == "fd-safety"  # it saw the peer's finding mid-run
    run = tmp_path / "run"
    placement = json.loads((run / "run.json").read_text())["placement"]
    assert placement == ["llm agents ran as Ray tasks on 2 node(s)"]  # one CPU each: one agent per node
    mirrored = [json.loads(line) for line in (run / "peer-findings.jsonl").read_text().splitlines()]
    assert [(f["agent"], f["category"]) for f in mirrored] == [("fd-safety", "sql-injection")]
    marker = json.loads((run / "peer-findings.stream.json").read_text())
    import redis

    entries = redis.Redis.from_url(servers.redis.url).xrange(marker["stream"])
    assert len(entries) == 1 and b"sql-injection" in entries[0][1][b"line"]


def test_a_node_killed_mid_run_is_retried_on_another_node(servers: Servers, tmp_path: Path) -> None:
    victim = servers.cluster.add_worker(num_cpus=1)  # a third node: each of three agents gets one CPU
    project = committed_copy(FIXTURES / "py-webapp", tmp_path / "shop")
    with FakeProvider(default=Slow(6, Text(CLEAN))) as fake:

        def kill_once_all_three_are_running() -> None:
            deadline = time.monotonic() + 120
            while len(fake.requests) < 3 and time.monotonic() < deadline:
                time.sleep(0.1)
            os.killpg(victim.pid, signal.SIGKILL)  # the node's raylet and its workers, by the pid we started

        killer = threading.Thread(target=kill_once_all_three_are_running, daemon=True)
        killer.start()
        env = {"OPENAI_BASE_URL": fake.base_url_openai, "OPENAI_API_KEY": f"sk-test-{uuid.uuid4().hex}"}
        done = fluxdrive(
            servers, "review", "shop", "--yes", "--set", "evidence.enabled=false", "--runtime", "llm", "--model", "openai:gpt-4o",
            "--agents", "safety,correctness,quality", "--cluster", servers.cluster.address,
            "--output-dir", tmp_path / "run", "--set", FORWARD, "--set", "dispatch.remote_agent_cpus=1",
            cwd=project, env=env,
        )  # fmt: skip
        killer.join(timeout=5)
    victim.wait(timeout=30)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "All 3 reviewers reported" in done.stdout
    assert "marked dead" not in done.stdout  # Ray's cluster events go to stderr, never into the report
    notes = json.loads((tmp_path / "run" / "run.json").read_text())["notes"]
    assert sum("its Ray node or worker died" in n and "retried once" in n for n in notes) == 1, notes
    findings = json.loads((tmp_path / "run" / "findings.json").read_text())
    assert findings["complete"] is True


def test_a_deadline_cancels_the_remote_agent_and_leaves_its_stub(servers: Servers, tmp_path: Path) -> None:
    project = committed_copy(FIXTURES / "py-webapp", tmp_path / "shop")
    with FakeProvider(default=Slow(120, Text(CLEAN))) as fake:
        env = {"OPENAI_BASE_URL": fake.base_url_openai, "OPENAI_API_KEY": f"sk-test-{uuid.uuid4().hex}"}
        started = time.monotonic()
        done = fluxdrive(
            servers, "review", "shop", "--yes", "--runtime", "llm", "--model", "openai:gpt-4o", "--agents", "safety",
            "--timeout", "4", "--cluster", servers.cluster.address, "--output-dir", tmp_path / "run",
            "--set", FORWARD, "--set", "dispatch.retries=0", cwd=project, env=env,
        )  # fmt: skip
        took = time.monotonic() - started
    assert took < 60  # the driver did not wait for the 120 s answer
    assert done.returncode == 3 and "INCOMPLETE" in done.stdout, done.stdout + done.stderr  # no verdict, never SAFE
    assert "timed out after 4 s" in (tmp_path / "run" / "fd-safety.md").read_text()
    # The cancelled task gave its CPU back: two one-CPU tasks at once still run side by side on both nodes.
    both = (
        "import ray, time\n"
        f"ray.init(address='{servers.cluster.address}', log_to_driver=False)\n"
        "def where():\n    time.sleep(2)\n    return ray.get_runtime_context().get_node_id()\n"
        "task = ray.remote(num_cpus=1)(where)\n"
        "print(len(set(ray.get([task.remote(), task.remote()], timeout=60))))\n"
    )
    probe = subprocess.run(
        [sys.executable, "-c", both], env=servers.cluster.client_env(), capture_output=True, text=True, timeout=120,
        check=False,
    )  # fmt: skip
    assert probe.stdout.strip() == "2", probe.stderr[-1500:]


def test_fleet_run_reviews_20_repositories_on_the_cluster_into_one_table(servers: Servers, tmp_path: Path) -> None:
    names = sorted(p.name for p in FIXTURES.iterdir())
    lines = []
    for i in range(20):
        repo = committed_copy(FIXTURES / names[i % len(names)], tmp_path / f"repo{i:02d}")
        lines.append(repo.name)
    (tmp_path / "repos.txt").write_text("# the fleet\n" + "\n".join(lines) + "\n")
    # The truth: each fixture reviewed once, locally (processes, no cluster), into a separate output root.
    (tmp_path / "truth.txt").write_text("\n".join(lines[: len(names)]) + "\n")
    local = fluxdrive(
        servers, "fleet", "run", "truth.txt", "--max-parallel", "2", "--format", "json",
        "--output-root", tmp_path / "truth", cwd=tmp_path, env={"RAY_ADDRESS": ""},
    )  # fmt: skip
    truth = json.loads(local.stdout)["repositories"]
    on_ray = fluxdrive(
        servers, "fleet", "run", "repos.txt", "--cluster", servers.cluster.address, "--max-parallel", "2",
        cwd=tmp_path,
    )  # fmt: skip
    assert on_ray.returncode == 1, on_ray.stderr  # the fixtures hold planted defects: risky fails the gate
    table = on_ray.stdout.splitlines()
    assert table[0].split()[:2] == ["repository", "verdict"]
    assert [row.split()[0] for row in table[1:21]] == lines  # the list's order, whatever order they finished in
    assert table[-1].startswith("20 repositories:")
    for index, line in enumerate(table[1:21]):
        expected = truth[index % len(names)]
        verdict, *counts = line.split()[1:6]
        assert verdict.rstrip("*").lower() == expected["verdict"]  # the cluster's verdicts are the local ones
        assert [int(c) for c in counts] == [expected["counts"][s] for s in ("P0", "P1", "P2", "P3")]
        output = tmp_path / line.split()[-1]
        assert output.parent.parent.parent.parent == tmp_path / lines[index]  # the run lands in its repository
        assert (output / "findings.json").is_file()


def test_the_cluster_is_on_loopback_only_and_refuses_a_wrong_token(servers: Servers) -> None:
    pids = set().union(*(descendants(node.pid) for node in servers.cluster.nodes if node.poll() is None))
    held = connections(pids)
    assert held  # the raylets and workers are connected to the head
    assert all(is_loopback(a) and is_loopback(b) for a, b in (c.split() for c in held)), held
    shown = subprocess.run(["ss", "-tlnpH"], capture_output=True, text=True, check=True).stdout
    listening = [line.split()[3] for line in shown.splitlines() if any(f"pid={pid}," in line for pid in pids)]
    assert listening and all(is_loopback(address) for address in listening), listening  # the client server too
    env = {**servers.cluster.client_env(), "RAY_AUTH_TOKEN": "not-the-token"}
    env |= {"RAY_gcs_rpc_server_reconnect_timeout_s": "3", "RAY_gcs_server_request_timeout_seconds": "3"}
    refused = subprocess.run(
        [sys.executable, "-c", f"import ray; ray.init(address='{servers.cluster.address}')"],
        env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert refused.returncode != 0


def test_an_unreachable_cluster_is_one_line_and_exit_2(servers: Servers, tmp_path: Path) -> None:
    project = committed_copy(FIXTURES / "py-webapp", tmp_path / "shop")
    closed = f"127.0.0.1:{_closed_port()}"
    done = fluxdrive(servers, "review", "shop", "--yes", "--cluster", closed, cwd=project)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        f"fluxdrive: error: cannot connect to the Ray cluster at {closed}: Connection refused "
        "(hint: start it with 'ray start --head', or pass the head's GCS address (HOST:PORT))"
    ]
    assert not (project / "docs").exists()  # nothing was written


def _closed_port() -> int:
    from tests.servers import free_port

    return free_port()


def test_auto_with_a_stale_address_file_says_so_while_another_cluster_runs(servers: Servers, tmp_path: Path) -> None:
    """Ray lets any running GCS on the machine win over the address file of the last ``ray start``: a stale
    file next to another cluster (this module's, started with a token this client lacks) waited for minutes."""
    done, port, _project = stale_address_review(tmp_path)
    assert done.returncode == 2, done.stderr[-2000:]
    assert f"cannot connect to the Ray cluster at auto (127.0.0.1:{port})" in done.stderr.strip().splitlines()[-1]
