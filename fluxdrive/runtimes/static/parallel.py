"""Run the per-file analyzers over chunks of sources in worker processes.

detect-secrets, lizard, the pattern rules and fluxdrive's checks each look at
one file at a time and are pure Python (or hold the GIL), so threads cannot
use a second core. Large inputs are split into balanced chunks, each chunk is
analyzed in a worker process by exactly the same analyzer functions, and the
outputs are merged in chunk order - deterministic whatever the scheduling.
Each chunk also sends back the outline (imports, function spans) of every
file it parsed, so the import graph and the grouping of findings by function
never parse a file a second time in the parent.
Small inputs stay in-process: a worker's start-up would cost more than it saves.

A :class:`ChunkMapper` replaces the local process pool when the review runs
on a cluster (``fluxdrive.scale.shards``): the same chunks, the same
``analyze_chunk``, the same merge - only where the chunks run changes, so a
cluster run's findings are byte for byte the local run's.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from fluxdrive._lifeline import die_with_parent
from fluxdrive.config.model import StaticConfig
from fluxdrive.runtimes.static.analyzers.base import AnalyzerContext, AnalyzerOutput, Outline
from fluxdrive.runtimes.static.source import LoadedSources, Source

PARALLEL_MIN_LINES = 20_000
MAX_WORKERS = 4


@dataclass(frozen=True, slots=True)
class ChunkResult:
    """What one chunk produced: per-analyzer outputs, the secret values found, the outlines of the files parsed."""

    outputs: tuple[AnalyzerOutput, ...]
    secrets: tuple[tuple[str, int, str], ...]
    outlines: dict[str, Outline | None]


ChunkJob = tuple[str, Sequence[Source], Sequence[str], StaticConfig, Sequence[str]]  # analyze_chunk's arguments


class ChunkMapper(Protocol):
    """Runs chunk jobs somewhere else (a cluster) and returns their results in job order."""

    @property
    def min_lines(self) -> int:
        """Inputs smaller than this stay on this machine."""
        ...

    def shard_count(self) -> int:
        """How many chunks to cut the sources into."""
        ...

    def map(self, jobs: Sequence[ChunkJob]) -> list[ChunkResult]:
        """``analyze_chunk(*job)`` for every job, results in job order."""
        ...


def _chunks(sources: Sequence[Source], count: int) -> list[list[Source]]:
    """Split sources into ``count`` chunks of similar size, keeping a stable order."""
    buckets: list[list[Source]] = [[] for _ in range(count)]
    sizes = [0] * count
    for source in sorted(sources, key=lambda s: (-len(s.text), s.name)):
        target = sizes.index(min(sizes))
        buckets[target].append(source)
        sizes[target] += len(source.text)
    return [sorted(b, key=lambda s: s.name) for b in buckets if b]


def analyze_chunk(
    root: str, sources: Sequence[Source], names: Sequence[str], settings: StaticConfig, ruff_select: Sequence[str]
) -> ChunkResult:
    """Run the named per-file analyzers on one chunk (in a worker or in-process)."""
    from fluxdrive.runtimes.static.analysis import ANALYZERS, run_one

    lines = sum(s.text.count("\n") for s in sources)
    context = AnalyzerContext(Path(root), LoadedSources(tuple(sources), (), lines), settings, tuple(ruff_select))
    outputs = tuple(run_one(name, ANALYZERS[name], context) for name in names)
    secrets = tuple((path, line, value) for (path, line), values in context.mask.values.items() for value in values)
    return ChunkResult(outputs, secrets, context.parsed_outlines())


def _worker_start() -> None:
    """Workers leave Ctrl-C to the parent, which cancels the run (no traceback per worker), and die with it:
    a review killed with ``kill -9`` must not leave its pool and resource tracker running for minutes."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    die_with_parent()


def _merge(name: str, parts: Sequence[AnalyzerOutput]) -> AnalyzerOutput:
    errors = sorted({p.error for p in parts if p.error})
    hits = sorted((hit for part in parts for hit in part.hits), key=lambda h: (h.path, h.line, h.rule, h.title))
    return AnalyzerOutput(
        name,
        tuple(hits),
        tuple(sorted(note for part in parts for note in part.notes)),
        sum(p.seconds for p in parts),
        "; ".join(errors) if errors else None,
    )


def run_per_file(
    context: AnalyzerContext, names: Sequence[str], workers: int | None = None, mapper: ChunkMapper | None = None
) -> dict[str, AnalyzerOutput]:
    """The merged outputs of the per-file analyzers ``names`` over every source."""
    sources = list(context.sources)
    count = workers if workers is not None else min(os.cpu_count() or 1, MAX_WORKERS)
    small = workers is None and context.loaded.lines < PARALLEL_MIN_LINES
    if mapper is not None and context.loaded.lines >= mapper.min_lines and len(sources) >= 2:
        chunks = _chunks(sources, mapper.shard_count())
        args = (str(context.root), names, context.settings, context.ruff_select)
        results = mapper.map([(args[0], chunk, *args[1:]) for chunk in chunks])
    elif count <= 1 or small or len(sources) < 2:
        results = [analyze_chunk(str(context.root), sources, names, context.settings, context.ruff_select)]
    else:
        chunks = _chunks(sources, count)
        ctx = multiprocessing.get_context("spawn")  # the caller may hold threads; never fork
        with ProcessPoolExecutor(max_workers=len(chunks), mp_context=ctx, initializer=_worker_start) as pool:
            submit: Callable[..., object] = pool.submit
            futures = [
                submit(analyze_chunk, str(context.root), chunk, names, context.settings, context.ruff_select)
                for chunk in chunks
            ]
            results = [future.result() for future in futures]  # type: ignore[attr-defined]
    for result in results:
        for path, line, value in result.secrets:
            context.mask.add(path, line, value)
        context.adopt_outlines(result.outlines)
    return {name: _merge(name, [r.outputs[i] for r in results]) for i, name in enumerate(names)}
