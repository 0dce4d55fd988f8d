"""The static analysis's per-file pass as Ray tasks over shards of the files.

The chunks are cut and merged by :mod:`fluxdrive.runtimes.static.parallel`
exactly as for local worker processes, and each shard runs the same
``analyze_chunk`` on the same sources (shipped as data, so a node needs no
copy of the project). The import graph and ruff stay on the driver: the
graph needs every file's outline (which the shards send back), and ruff is a
multithreaded native binary whose per-directory rules (missing
``__init__.py``) would change if its files were split.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from fluxdrive.runtimes.static.parallel import ChunkJob, ChunkResult, analyze_chunk
from fluxdrive.scale import ray_session

SHARDS_PER_CPU = 2  # a little more than one per CPU, so one slow shard does not leave the others idle


def analyze_on_node(*job: object) -> tuple[ChunkResult, str]:
    """``analyze_chunk`` in a Ray task, and the node it ran on."""
    return analyze_chunk(*job), ray_session.node_id()  # type: ignore[arg-type]


@dataclass
class RayShards:
    """A :class:`~fluxdrive.runtimes.static.parallel.ChunkMapper` on the cluster at ``address``."""

    address: str
    min_lines: int
    shards: int = 0
    nodes: set[str] = field(default_factory=set)

    def note(self) -> str | None:
        """What run.json says about where the analysis ran (None when it stayed here)."""
        if not self.shards:
            return None
        return f"static analysis: the per-file pass ran as {self.shards} Ray tasks on {len(self.nodes)} node(s)"

    def shard_count(self) -> int:
        ray_session.connect(self.address)
        return ray_session.cluster_cpus() * SHARDS_PER_CPU

    def map(self, jobs: Sequence[ChunkJob]) -> list[ChunkResult]:
        ray = ray_session.connect(self.address)
        analyze = ray_session.remote(analyze_on_node, num_cpus=1, max_retries=1)
        placed: list[tuple[ChunkResult, str]] = ray.get([analyze.remote(*job) for job in jobs])
        self.shards += len(placed)
        self.nodes.update(node for _result, node in placed)
        return [result for result, _node in placed]
