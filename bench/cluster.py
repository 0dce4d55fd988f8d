"""Benchmark scale-out: a 1,000,000-line tree reviewed here and on a 2-node Ray cluster, Ray's cost per agent.

What it does, all on this machine (the point is overhead and correctness, not speed-up: both "nodes"
share the same 2 cores):

1. Builds a tree of about 1M lines of real Python: ten copies of the installed sources of pydantic,
   rich and typer (``copy00/`` ... ``copy09/``), as a project.
2. Starts a Ray cluster on loopback (a head and one worker node, one CPU each, token auth; ended by pid).
3. Reviews the tree with ``fluxdrive review`` locally, then with ``--cluster``; prints both wall times,
   the ratio, and whether findings.json is the same (timestamps and the timing-dependent timeline
   events aside - two local runs differ there too).
4. Measures Ray's overhead per agent: the same static agent on a one-file content run directly and
   as a Ray task through the ray backend (``RayRuntime``), median of ``--agents`` runs each, and
   the round trip of an empty Ray task.
5. Measures the per-file pass's throughput on one core (``analyze_chunk`` over one copy, in-process)
   and prints the projection of ``docs/scale-out.md``: the wall time of a 10M-line review on
   10 nodes x 16 cores.

Run: ``.venv/bin/python bench/cluster.py [--copies 10] [--agents 20]`` (needs the cluster extra:
``make .venv/.dev-installed`` installs it). It takes about ten minutes.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tests.servers import ray_cluster  # noqa: E402  (the same loopback cluster the tests use)

PACKAGES = ("pydantic", "rich", "typer")
TARGET_LINES = 1_000_000
PROJECTED_LINES = 10_000_000
PROJECTED_NODES, PROJECTED_CORES = 10, 16


def build_tree(root: Path, copies: int) -> int:
    """``copies`` copies of the three packages under ``root/copyNN``; the number of lines."""
    (root / ".git").mkdir(parents=True)
    sources = [Path(importlib.import_module(name).__file__ or "").parent for name in PACKAGES]
    for index in range(copies):
        for source in sources:
            shutil.copytree(
                source, root / f"copy{index:02d}" / source.name, ignore=shutil.ignore_patterns("__pycache__", "*.so")
            )
    return sum(p.read_text(encoding="utf-8", errors="replace").count("\n") for p in root.rglob("*.py"))


def review(root: Path, out: Path, env: dict[str, str], *extra: str) -> float:
    """Seconds one ``fluxdrive review`` of the tree takes (exit 0 or 1: a verdict was reached)."""
    command = [str(Path(sys.executable).with_name("fluxdrive")), "review", ".", "--yes", "-q", "--format", "json"]
    started = time.perf_counter()
    done = subprocess.run(
        [*command, "--output-dir", str(out), *extra], cwd=root, env=env, capture_output=True, text=True, check=False
    )
    seconds = time.perf_counter() - started
    if done.returncode not in (0, 1):
        raise SystemExit(f"review failed ({done.returncode}): {done.stderr[-2000:]}")
    return seconds


def untimed(path: Path) -> str:
    """findings.json without timestamps and the timeline's events (who acknowledged whom depends on timing)."""
    data = json.loads(path.read_text())
    entries = [{k: v for k, v in e.items() if k != "timestamp"} for e in data["timeline"]["entries"]]
    data["timeline"] = sorted(entries, key=lambda e: json.dumps(e, sort_keys=True))
    return re.sub(r'"\d{4}-\d\d-\d\dT[\d:.]+Z"', '"<time>"', json.dumps(data, sort_keys=True))


def agent_overhead(address: str, runs: int, tmp: Path) -> dict[str, float]:
    """Median seconds: one static agent run here, the same as a Ray task, and an empty Ray task."""
    from fluxdrive.agents import builtin_agents
    from fluxdrive.config import Config
    from fluxdrive.runtimes import AgentTask, ReviewContent
    from fluxdrive.runtimes.static import StaticRuntime
    from fluxdrive.scale import ray_session
    from fluxdrive.scale.ray_backend import RayBackend, RayRuntime

    project = tmp / "one-file"
    project.mkdir()
    (project / "app.py").write_text("import subprocess\n\ndef run(cmd):\n    return subprocess.call(cmd, shell=True)\n")
    config = Config().model_copy(
        update={"dispatch": Config().dispatch.model_copy(update={"backend": "ray", "cluster": address})}
    )
    agent = builtin_agents()["fd-safety"]
    content = ReviewContent(project, ("app.py",))

    def task(out: Path) -> AgentTask:
        out.mkdir(parents=True)
        return AgentTask(agent, "", content, out, out / "peer-findings.jsonl", config)

    backend = RayBackend.connect(config)
    remote = RayRuntime(StaticRuntime(), backend, None)
    ray = ray_session.connect(address)
    empty = ray_session.remote(ray_session.node_id, num_cpus=0.1)
    ray.get(empty.remote())
    asyncio.run(remote.run(task(tmp / "warm")))  # the first task starts a worker process: not per-agent cost
    local_s, ray_s, empty_s = [], [], []
    for index in range(runs):
        started = time.perf_counter()
        asyncio.run(StaticRuntime().run(task(tmp / f"local{index}")))
        local_s.append(time.perf_counter() - started)
        started = time.perf_counter()
        asyncio.run(remote.run(task(tmp / f"ray{index}")))
        ray_s.append(time.perf_counter() - started)
        started = time.perf_counter()
        ray.get(empty.remote())
        empty_s.append(time.perf_counter() - started)
    return {
        "local": statistics.median(local_s),
        "ray": statistics.median(ray_s),
        "empty": statistics.median(empty_s),
    }


def per_core_rate(root: Path) -> tuple[float, int]:
    """Lines per second of the per-file pass on one core (one copy of the tree, in this process)."""
    from fluxdrive.config import Config
    from fluxdrive.runtimes.static.analyzers.registry import per_file
    from fluxdrive.runtimes.static.parallel import analyze_chunk
    from fluxdrive.runtimes.static.source import load_sources
    from fluxdrive.workspace import review_files

    copy = root / "copy00"
    loaded = load_sources(copy, review_files(copy, copy), max_bytes=5_000_000)
    started = time.perf_counter()
    analyze_chunk(str(copy), loaded.sources, per_file(), Config().static, ())
    return loaded.lines / (time.perf_counter() - started), loaded.lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--copies", type=int, default=10, help="copies of pydantic+rich+typer (10: ~1M lines)")
    parser.add_argument("--agents", type=int, default=20, help="agent runs for the overhead medians")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="fdbench") as temp:
        tmp = Path(temp)
        lines = build_tree(tmp / "tree", args.copies)
        print(f"tree: {lines:,} lines of Python ({args.copies} copies of {', '.join(PACKAGES)})")
        with ray_cluster(tmp, head_cpus=1) as cluster:
            cluster.add_worker(num_cpus=1)
            env = cluster.client_env()
            local_env = {k: v for k, v in env.items() if k != "RAY_ADDRESS"}
            local = review(tmp / "tree", tmp / "out-local", local_env)
            print(f"local review:         {local:8.1f} s  ({lines / local:,.0f} lines/s on {os.cpu_count()} cores)")
            on_ray = review(tmp / "tree", tmp / "out-ray", env, "--cluster", cluster.address)
            placement = json.loads((tmp / "out-ray" / "run.json").read_text())["placement"]
            print(f"review on 2 Ray nodes:{on_ray:8.1f} s  ratio {on_ray / local:.2f} x local ({'; '.join(placement)})")
            same = untimed(tmp / "out-local" / "findings.json") == untimed(tmp / "out-ray" / "findings.json")
            count = len(json.loads((tmp / "out-local" / "findings.json").read_text())["findings"])
            print(f"findings.json:        {'identical' if same else 'DIFFERENT'} ({count} findings)")
            os.environ.update(env)  # this process connects too, with the cluster's token
            cost = agent_overhead(cluster.address, args.agents, tmp)
            extra = cost["ray"] - cost["local"]
            print(
                f"per agent:            {cost['local'] * 1000:8.1f} ms here, {cost['ray'] * 1000:.1f} ms as a Ray task "
                f"(+{extra * 1000:.1f} ms); an empty Ray task {cost['empty'] * 1000:.1f} ms (medians of {args.agents})"
            )
        rate, sample = per_core_rate(tmp / "tree")
        print(f"per-file pass:        {rate:8,.0f} lines/s on one core ({sample:,} lines)")
        projection(lines, local, rate, extra)


def projection(lines: int, local: float, rate: float, overhead: float) -> None:
    """The 10M-line projection: the per-file pass spread over every core, the rest on the driver."""
    cores_here = 2
    parallel_here = lines / (rate * cores_here)  # the per-file pass, spread over this machine's cores
    serial_here = max(0.0, local - parallel_here)  # loading, ruff, the import graph, agents, synthesis
    scale = PROJECTED_LINES / lines
    cores = PROJECTED_NODES * PROJECTED_CORES
    shards = cores * 2
    parallel = PROJECTED_LINES / (rate * cores) + shards * overhead / cores
    serial = serial_here * scale
    print(
        f"projection:           {PROJECTED_LINES:,} lines on {PROJECTED_NODES} x {PROJECTED_CORES} cores: "
        f"~{serial + parallel:,.0f} s (driver-side {serial:,.0f} s scaled linearly from {serial_here:.0f} s here, "
        f"per-file pass {parallel:,.1f} s over {shards} shards); one 2-core machine: ~{local * scale:,.0f} s"
    )


if __name__ == "__main__":
    main()
