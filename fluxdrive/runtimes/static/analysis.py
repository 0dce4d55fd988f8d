"""One analysis per reviewed content, shared by every agent that reviews it.

Each analyzer runs at most once per content, the first time any agent needs
it: when seven agents start together, ruff still runs once. The analysis is
thread-safe (agents await it from worker threads) and remembers each
analyzer's wall time for the report and the benchmark.

An agent cancelled while it waits (Ctrl-C, SIGTERM, its deadline) withdraws
its place: a pass it queued for is skipped, and the pass in progress is
stopped - its worker processes ended - once no agent waits for it any more.
Why: the waits run in daemon threads that outlive the cancelled agents; left
alone, each would start its own pass in turn, and the interpreter's exit
waits for every pool's workers to finish.

Every waiting agent may also give an ``activity`` callback: the analysis
tells each one which analyzers are running or done and how many files the
per-file pass has covered, as that changes. Why: the pass is most of a long
static review, and without it a CI log is silent until every agent is done.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import replace
from pathlib import Path
from typing import Any

from fluxdrive.config.model import StaticConfig
from fluxdrive.core.pool import PoolStoppedError, Stop
from fluxdrive.runtimes.base import ReviewContent
from fluxdrive.runtimes.static.analyzers import ruff
from fluxdrive.runtimes.static.analyzers.base import AnalyzerContext, AnalyzerOutput
from fluxdrive.runtimes.static.analyzers.registry import per_file, run_named, run_one
from fluxdrive.runtimes.static.excludes import read_excludes
from fluxdrive.runtimes.static.ownership import ANALYZER_ORDER, Ownership
from fluxdrive.runtimes.static.parallel import ChunkMapper, run_per_file
from fluxdrive.runtimes.static.project_modules import read_declarations
from fluxdrive.runtimes.static.source import load_sources, review_scope

FLOW_FAMILIES = ("javascript", "go")

Activity = Callable[[str, int, int], None]  # (what is running and done, files analyzed, files in the pass)


class Analysis:
    """Lazily computed analyzer outputs for one content."""

    def __init__(
        self,
        content: ReviewContent,
        settings: StaticConfig,
        ownership: Ownership,
        mapper: ChunkMapper | None = None,
    ) -> None:
        self.content = content
        self.mapper = mapper  # where the per-file pass runs on a cluster (None: this machine)
        self.settings = settings
        self.ownership = ownership
        self.load_seconds = 0.0
        self._context: AnalyzerContext | None = None
        self._outputs: dict[str, AnalyzerOutput] = {}
        self.pass_seconds = 0.0
        self._guard = threading.Lock()
        self._compute = threading.Lock()
        self._requested: set[str] = set()
        self._waiting: set[object] = set()  # the tokens of agents waiting in ensure()
        self._stop: Stop | None = None  # the pass in progress
        self._watchers: dict[object, Activity] = {}  # the activity callbacks of waiting agents, by token
        self._states: dict[str, str] = {}  # analyzer -> "running" | "done", for the activity callbacks
        self._files = [0, 0]  # files the per-file pass has analyzed, and will

    def context(self) -> AnalyzerContext:
        """The loaded sources (read from disk once)."""
        with self._guard:
            if self._context is None:
                started = time.monotonic()
                root = Path(self.content.root).resolve()
                named, reviewed = review_scope(self.content.input_type, self.content.files)
                files, limit = self.content.files, self.settings.max_file_bytes
                revision = self.content.settings_revision
                excludes, note = read_excludes(root, self.settings.exclude, revision)
                loaded = load_sources(
                    root, files, max_bytes=limit, named=named, reviewed=reviewed, excludes=excludes, revision=revision
                )
                if note is not None:
                    loaded = replace(loaded, notes=(*loaded.notes, note))
                declared = read_declarations(root, revision)
                flow_declared = {  # a diff runs under its base commit's declarations, like taint.yaml
                    family: read_declarations(root, revision, f".fluxdrive/taint-{family}.yaml")
                    for family in FLOW_FAMILIES
                }
                self._context = AnalyzerContext(
                    root,
                    loaded,
                    self.settings,
                    self.ownership.ruff_select,
                    declarations=declared,
                    flow_declarations=flow_declared,
                )
                self.load_seconds = time.monotonic() - started
            return self._context

    def request(self, names: Iterable[str]) -> None:
        """Announce analyzers an agent is about to :meth:`ensure`.

        Agents launched together announce theirs first; whichever computes
        first then runs every announced analyzer in one pass (one set of
        workers, each file parsed once, the import graph from the workers'
        outlines) instead of one pass per agent.
        """
        with self._guard:
            self._requested.update(names)

    def waiter(self, activity: Activity | None = None) -> object:
        """A token for an agent about to :meth:`ensure`; :meth:`withdraw` it when that agent is cancelled.

        ``activity`` hears of the analysis's progress until the agent stops waiting."""
        token = object()
        with self._guard:
            self._waiting.add(token)
            if activity is not None:
                self._watchers[token] = activity
        return token

    def withdraw(self, token: object) -> None:
        """The agent holding ``token`` waits no more: skip its queued pass; stop the pass nobody waits for."""
        with self._guard:
            self._waiting.discard(token)
            self._watchers.pop(token, None)
            stop = self._stop if not self._waiting else None
        if stop is not None:
            stop.set()

    def ensure(self, names: Iterable[str], token: object | None = None) -> list[AnalyzerOutput]:
        """Run the named (and announced) analyzers that have not run yet; return the named ones, in order.

        Missing analyzers run together: ruff in a thread (it is a subprocess),
        the per-file analyzers in one pass over the sources (in worker
        processes for large inputs), then the import graph. With the
        ``token`` of :meth:`waiter`: :class:`~fluxdrive.core.pool.PoolStoppedError` when it
        was withdrawn before the pass began, or the pass was stopped.
        """
        wanted = [name for name in ANALYZER_ORDER if name in set(names)]
        context = self.context()
        with self._compute:
            with self._guard:
                if token is not None and token not in self._waiting:
                    raise PoolStoppedError("its agent was cancelled while it waited")
                batch = set(wanted) | self._requested
                stop = self._stop = Stop()
            missing = [name for name in ANALYZER_ORDER if name in batch and name not in self._outputs]
            try:
                self._run(context, missing, stop)
            finally:
                with self._guard:
                    self._stop = None
                    self._waiting.discard(token)
                    self._watchers.pop(token, None)
        return [self._outputs[name] for name in wanted]

    def _run(self, context: AnalyzerContext, missing: list[str], stop: Stop) -> None:
        if not missing:
            return
        shared_pass = [name for name in missing if name in per_file()]
        later = {"architecture"}  # runs after the pass
        self._mark([n for n in missing if n not in later], "running", files=len(context.sources) if shared_pass else 0)
        collected: list[ruff.Collected | AnalyzerOutput] = []
        ruff_thread = None
        if "ruff" in missing:
            ruff_thread = self._in_thread("ruff", lambda: ruff.collect(context), collected)
        flowed: list[AnalyzerOutput] = []
        flows_thread = None
        if "flows" in missing:  # the per-file pass runs in worker processes: this thread has the parent's core
            flows_thread = self._in_thread("flows", lambda: run_named("flows", context), flowed)
        if shared_pass:
            started = time.monotonic()
            self._outputs.update(
                run_per_file(context, shared_pass, mapper=self.mapper, stop=stop, advance=self._advance)
            )
            self.pass_seconds += time.monotonic() - started
            self._mark(shared_pass, "done")
        if "architecture" in missing:  # the import graph reads every file together
            self._mark(["architecture"], "running")
            self._store("architecture", context)
            self._mark(["architecture"], "done")
        if flows_thread is not None:
            flows_thread.join()
            self._outputs["flows"] = flowed[0] if flowed else AnalyzerOutput("flows", error="flows did not finish")
        if ruff_thread is not None:
            ruff_thread.join()
            self._outputs["ruff"] = _ruff_output(context, collected)

    def _in_thread(self, name: str, work: Callable[[], object], into: list[Any]) -> threading.Thread:
        """``work()`` in a daemon thread, its result appended to ``into``; analyzer ``name`` is done when it returns."""

        def target() -> None:
            into.append(work())
            self._mark([name], "done")

        thread = threading.Thread(target=target, daemon=True)
        thread.start()
        return thread

    def _mark(self, names: Iterable[str], state: str, files: int | None = None) -> None:
        """Analyzers ``names`` are now ``state`` (``files``: a new per-file pass of that many files begins)."""
        with self._guard:
            self._states.update(dict.fromkeys(names, state))
            if files is not None:
                self._files = [0, files]
        self._tell()

    def _advance(self, count: int) -> None:
        """The per-file pass has analyzed ``count`` more files."""
        with self._guard:
            self._files[0] += count
        self._tell()

    def _tell(self) -> None:
        """Every waiting agent's activity callback hears where the analysis is."""
        with self._guard:
            watchers = list(self._watchers.values())
            done, total = self._files
            states = dict(self._states)
        groups = {state: [n for n in ANALYZER_ORDER if states.get(n) == state] for state in ("done", "running")}
        what = "analyzers: " + "; ".join(f"{', '.join(group)} {state}" for state, group in groups.items() if group)
        for watcher in watchers:
            watcher(what, done, total)

    def _store(self, name: str, context: AnalyzerContext) -> None:
        self._outputs[name] = run_named(name, context)

    @property
    def outputs(self) -> dict[str, AnalyzerOutput]:
        """Every analyzer output computed so far."""
        return dict(self._outputs)


def _ruff_output(context: AnalyzerContext, collected: list[ruff.Collected | AnalyzerOutput]) -> AnalyzerOutput:
    """ruff's output from what its thread collected (an error output when the thread died)."""
    if not collected:
        return AnalyzerOutput("ruff", error="ruff failed: its thread ended without a result")
    done = collected[0]
    return done if isinstance(done, AnalyzerOutput) else run_one("ruff", lambda c: ruff.finish(c, done), context)
