"""The per-file pass as tasks of a backend (a Ray cluster), over shards of the files.

The chunks are cut and merged by :mod:`.parallel` exactly as for local
worker processes, and each shard runs the same ``analyze_chunk`` on the same
sources (shipped as data, so a node needs no copy of the project). The
import graph and ruff stay on the driver: the graph needs every file's
outline (which the shards send back), and ruff is a multithreaded native
binary whose per-directory rules (missing ``__init__.py``) would change if
its files were split.

Why the runtime owns this and not the backend: the backend only offers
``map`` and ``capacity`` (:class:`~fluxdrive.runtimes.base.Backend`); what
is worth distributing, and how to cut it, is the static runtime's knowledge.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from fluxdrive.runtimes.base import Backend
from fluxdrive.runtimes.static.parallel import ChunkJob, ChunkResult, analyze_chunk

SHARDS_PER_CPU = 2  # a little more than one per CPU, so one slow shard does not leave the others idle


@dataclass
class Placed:
    """Where the per-file passes of one review ran: how many shards, on which nodes (for run.json)."""

    shards: int = 0
    nodes: set[str] = field(default_factory=set)

    def note(self) -> str | None:
        """What run.json says about where the analysis ran (None when it stayed here)."""
        if not self.shards:
            return None
        return f"static analysis: the per-file pass ran as {self.shards} Ray tasks on {len(self.nodes)} node(s)"


@dataclass
class BackendShards:
    """A :class:`~fluxdrive.runtimes.static.parallel.ChunkMapper` over ``backend``'s tasks."""

    backend: Backend
    min_lines: int  # smaller inputs stay on this machine (dispatch.shard_min_lines)
    placed: Placed

    def shard_count(self) -> int:
        return self.backend.capacity() * SHARDS_PER_CPU

    def map(self, jobs: Sequence[ChunkJob]) -> list[ChunkResult]:
        results: list[tuple[ChunkResult, str]] = self.backend.map(analyze_chunk, jobs)
        self.placed.shards += len(results)
        self.placed.nodes.update(node for _result, node in results)
        return [result for result, _node in results]
