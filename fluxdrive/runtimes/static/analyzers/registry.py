"""The static runtime's analyzers, as the ``fluxdrive.analyzers`` entry-point group declares them.

fluxdrive's own analyzers are declared in its ``pyproject.toml`` the way a
plugin declares one, and loaded once per process (the parent and each
worker). Their order is fixed, never the install order: the built-ins in
:data:`~fluxdrive.runtimes.static.ownership.ANALYZER_ORDER` first, then any
other by name, so outputs merge the same way on every machine.

Why this module and not the analysis: the analysis (which runs the pass)
and the per-file workers (which run one chunk) both need the table and
:func:`run_one`; here, below both, neither imports the other.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable

from fluxdrive import extensions
from fluxdrive.runtimes.static.analyzers.base import Analyzer, AnalyzerContext, AnalyzerOutput
from fluxdrive.runtimes.static.ownership import ANALYZER_ORDER

Run = Callable[[AnalyzerContext], AnalyzerOutput]


@functools.cache
def _loaded() -> tuple[dict[str, Analyzer], tuple[str, ...]]:
    loaded = extensions.load(extensions.ANALYZERS)
    found = {name: a for name, a in loaded.objects.items() if isinstance(a, Analyzer)}
    notes = [f"analyzer {name} did not load ({why})" for name, why in loaded.broken.items()]
    notes += [f"analyzer {name} is not an Analyzer; left out" for name in loaded.objects if name not in found]
    rank = {name: i for i, name in enumerate(ANALYZER_ORDER)}
    ordered = dict(sorted(found.items(), key=lambda item: (rank.get(item[0], len(rank)), item[0])))
    return ordered, tuple(sorted(notes))


@functools.cache
def analyzers() -> dict[str, Run]:
    """Each analyzer's ``run`` by name, in the fixed order (the one table: tests may swap an entry)."""
    return {name: analyzer.run for name, analyzer in _loaded()[0].items()}


def per_file() -> tuple[str, ...]:
    """The analyzers that join the per-file pass, in order."""
    return tuple(name for name, analyzer in _loaded()[0].items() if analyzer.per_file)


def load_notes() -> tuple[str, ...]:
    """One line per analyzer entry point that did not load."""
    return _loaded()[1]


def run_named(name: str, context: AnalyzerContext) -> AnalyzerOutput:
    """Run the analyzer ``name`` (an error output when it is not installed)."""
    analyzer = analyzers().get(name)
    if analyzer is None:
        return AnalyzerOutput(name, error=f"{name} is not installed (no fluxdrive.analyzers entry point loaded it)")
    return run_one(name, analyzer, context)


def run_one(name: str, analyzer: Run, context: AnalyzerContext) -> AnalyzerOutput:
    """Run one analyzer; a crash becomes an error output, never an exception."""
    started = time.monotonic()
    try:
        return analyzer(context)
    except Exception as exc:  # an analyzer bug must not take the agents down
        return AnalyzerOutput(
            name, error=f"{name} failed: {type(exc).__name__}: {exc}", seconds=time.monotonic() - started
        )
