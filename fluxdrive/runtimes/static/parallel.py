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
Local workers get a few chunks each (:data:`CHUNKS_PER_WORKER`), handed out as
they free up: the ``advance`` callback then hears of files done while the pass
runs (the heartbeat and the terminal's progress bar), not once at its end.

A :class:`ChunkMapper` replaces the local process pool when the review runs
on a backend (a cluster: :mod:`.shards`): the same chunks, the same
``analyze_chunk``, the same merge - only where the chunks run changes, so a
cluster run's findings are byte for byte the local run's.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from concurrent.futures import Future, as_completed
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from fluxdrive.config.model import StaticConfig
from fluxdrive.core.pool import Stop, in_worker, worker_pool
from fluxdrive.runtimes.static.analyzers.base import AnalyzerContext, AnalyzerOutput, Outline
from fluxdrive.runtimes.static.analyzers.registry import run_named
from fluxdrive.runtimes.static.bounds import limit_memory
from fluxdrive.runtimes.static.source import LoadedSources, Source

PARALLEL_MIN_LINES = 20_000
MAX_WORKERS = 4
CHUNKS_PER_WORKER = 4  # more chunks than workers: progress moves while the pass runs, and the load evens out


@dataclass(frozen=True, slots=True)
class ChunkResult:
    """What one chunk produced: per-analyzer outputs, the secret values found, the outlines of the files parsed."""

    outputs: tuple[AnalyzerOutput, ...]
    secrets: tuple[tuple[str, int, str], ...]
    outlines: dict[str, Outline | None]


# analyze_chunk's arguments
ChunkJob = tuple[
    str, Sequence[Source], Sequence[str], StaticConfig, Sequence[str], tuple[bytes | None, str | None], str
]


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
    root: str,
    sources: Sequence[Source],
    names: Sequence[str],
    settings: StaticConfig,
    ruff_select: Sequence[str],
    declarations: tuple[bytes | None, str | None] = (None, None),
    reviewed: str = "",
) -> ChunkResult:
    """Run the named per-file analyzers on one chunk (in a worker or in-process).

    ``declarations``: taint.yaml; ``reviewed``: the directory the user named (places are judged below it).
    """
    lines = sum(s.text.count("\n") for s in sources)
    loaded = LoadedSources(tuple(sources), (), lines, reviewed=reviewed)
    context = AnalyzerContext(Path(root), loaded, settings, tuple(ruff_select), declarations=declarations)
    outputs = tuple(run_named(name, context) for name in names)
    secrets = tuple((path, line, value) for (path, line), values in context.mask.values.items() for value in values)
    return ChunkResult(outputs, secrets, context.parsed_outlines())


def _bounded_chunk(job: ChunkJob) -> ChunkResult:
    """:func:`analyze_chunk` in a local worker, under an address-space ceiling (:func:`bounds.limit_memory`).

    Why here and not in ``analyze_chunk``: a cluster worker (Ray) maps far more address space than it uses,
    so only our own spawn workers are capped; a file that exhausts the cap is skipped by its analyzer.
    """
    limit_memory()
    return analyze_chunk(*job)


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
    context: AnalyzerContext,
    names: Sequence[str],
    workers: int | None = None,
    mapper: ChunkMapper | None = None,
    stop: Stop | None = None,
    advance: Callable[[int], None] | None = None,
) -> dict[str, AnalyzerOutput]:
    """The merged outputs of the per-file analyzers ``names`` over every source (``stop`` ends the workers).

    ``advance(n)`` is called (from this thread) each time ``n`` more files are analyzed."""
    advanced = advance or (lambda _n: None)
    sources = list(context.sources)
    count = workers if workers is not None else min(os.cpu_count() or 1, MAX_WORKERS)
    small = workers is None and context.loaded.lines < PARALLEL_MIN_LINES

    def job(chunk: Sequence[Source]) -> ChunkJob:
        return (
            str(context.root),
            chunk,
            names,
            context.settings,
            context.ruff_select,
            context.declarations,
            context.loaded.reviewed,
        )

    if mapper is not None and context.loaded.lines >= mapper.min_lines and len(sources) >= 2:
        results = mapper.map([job(chunk) for chunk in _chunks(sources, mapper.shard_count())])
        advanced(len(sources))
    elif count <= 1 or small or len(sources) < 2 or in_worker():  # a fleet worker analyzes in-process
        results = [analyze_chunk(*job(sources))]
        advanced(len(sources))
    else:
        chunks = _chunks(sources, count * CHUNKS_PER_WORKER)
        # Workers die with the review, even on kill -9, and stop at once on Ctrl-C or SIGTERM (fluxdrive.core.pool).
        with worker_pool(min(count, len(chunks)), stop) as pool:
            submit: Callable[..., Future[ChunkResult]] = pool.submit
            futures = {submit(_bounded_chunk, job(chunk)): len(chunk) for chunk in chunks}
            for future in as_completed(futures):
                future.result()  # a failed chunk (or a stopped pool) ends the pass here, as before
                advanced(futures[future])
            results = [future.result() for future in futures]  # chunk order: the merge is the same every time
    for result in results:
        for path, line, value in result.secrets:
            context.mask.add(path, line, value)
        context.adopt_outlines(result.outlines)
    return {name: _merge(name, [r.outputs[i] for r in results]) for i, name in enumerate(names)}
