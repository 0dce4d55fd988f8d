"""The static runtime on a backend: its agents stay here, its per-file pass goes through ``Backend.map``.

The backend here is a real one of the protocol that runs each job in a
worker process of this machine and names a node per job (a Ray cluster does
the same on its nodes; ``tests/cluster`` runs that one for real). What must
hold is the runtime's side: the agents are never shipped, the pass is cut
into ``capacity() * 2`` shards, the reports are byte for byte the local
run's (but for the peer acknowledgements, which follow the agents' scheduling), and run.json's placement line says where the pass ran.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path
from typing import Any

from fluxdrive.agents import builtin_agents
from fluxdrive.config import Config
from fluxdrive.runtimes import Runtime
from fluxdrive.runtimes.static import StaticRuntime
from tests.static.test_static_runtime import _copy, _review
from tests.static.test_static_runtime import reports_without_peers as _reports

AGENTS = ["fd-correctness", "fd-quality", "fd-safety"]


class ProcessBackend:
    """Each job in a spawned process; job ``i`` is said to run on node ``i % 2`` (two 'nodes')."""

    def __init__(self) -> None:
        self.shipped: list[str] = []
        self.jobs = 0

    def ship(self, runtime: Runtime, model: str | None) -> Runtime:
        self.shipped.append(runtime.name)
        return runtime

    def map(self, function: Callable[..., Any], jobs: Sequence[tuple[Any, ...]]) -> list[tuple[Any, str]]:
        self.jobs += len(jobs)
        with ProcessPoolExecutor(2, mp_context=get_context("spawn")) as pool:
            futures = [pool.submit(function, *job) for job in jobs]
            return [(future.result(), f"node-{index % 2}") for index, future in enumerate(futures)]

    def capacity(self) -> int:
        return 2

    def placement(self) -> list[str]:
        return []


def test_the_per_file_pass_runs_on_the_backend_and_the_reports_are_the_local_ones(tmp_path: Path) -> None:
    root = _copy("py-webapp", tmp_path)
    config = Config.model_validate({"dispatch": {"shard_min_lines": 1}})
    local_runtime = StaticRuntime()
    _review(root, AGENTS, config, local_runtime)
    local = _reports(tmp_path / "py-webapp-out")
    assert local_runtime.placement() == []
    shutil.rmtree(tmp_path / "py-webapp-out")

    backend = ProcessBackend()
    runtime = StaticRuntime()
    kept = runtime.distribute(backend, None)
    assert kept is runtime and backend.shipped == []  # the agents stay here: they share one analysis
    _review(root, AGENTS, config, runtime)
    remote = _reports(tmp_path / "py-webapp-out")

    assert remote == local and len(remote) == len(AGENTS)
    assert backend.jobs == 4  # capacity() * 2 shards
    assert runtime.placement() == ["static analysis: the per-file pass ran as 4 Ray tasks on 2 node(s)"]


def test_small_inputs_stay_here_and_capabilities_are_data(tmp_path: Path) -> None:
    root = _copy("py-webapp", tmp_path)
    backend = ProcessBackend()
    runtime = StaticRuntime().distribute(backend, None)
    _review(root, ["fd-quality"], Config(), runtime)  # far below dispatch.shard_min_lines
    assert backend.jobs == 0 and runtime.placement() == []
    assert StaticRuntime.costs_tokens is False
    agents = builtin_agents()
    assert all(StaticRuntime().can_run(a) == (not a.needs_model) for a in agents.values())
