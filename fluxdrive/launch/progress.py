"""What a person (or a log) sees while agents run.

Progress goes to stderr, so stdout stays the caller's short report. On a
terminal a live table shows every agent's state and elapsed time under a
``[N/M agents complete]`` header, and below it a bar per running activity
(the static analysis's files, as its per-file pass covers them); anywhere
else (CI logs, a calling assistant, a pipe) each event is one plain line,
because a redrawn table turns into noise in a log. A long stage would then
be silent until its first agent finishes, so the plain writer adds a
heartbeat - ``Stage 1: 42 s, analyzers: ruff done; checks running
(1,210/2,034 files), 0/7 agents complete`` - whenever it has printed
nothing for :data:`HEARTBEAT_S`; a fast review prints none.
:class:`Recorder` keeps the events for the library and tests. Both writers
guard their stream (:mod:`fluxdrive.core.streams`): a reader that goes away
silences the progress, never the review.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import IO, TYPE_CHECKING, Protocol

from fluxdrive.core.masking import scrub
from fluxdrive.core.streams import guarded

if TYPE_CHECKING:
    from rich.console import RenderableType

HEARTBEAT_S = 10.0  # a plain log hears from a running stage at least this often (and a fast stage not at all)
HEARTBEAT_ENV = "FLUXDRIVE_HEARTBEAT_S"  # seconds; tests shorten the interval of a real ``fluxdrive`` process
MAX_NAMED = 4  # running agents a heartbeat names before "and N more"


class Progress(Protocol):
    """The events of a launch, in the order they happen."""

    def phase(self, text: str) -> None:
        """A phase begins or a decision was made (one line)."""

    def stage(self, stage: int, agents: Sequence[str]) -> None:
        """A stage starts with these agents."""

    def started(self, agent: str) -> None:
        """An agent was handed to its runtime."""

    def retrying(self, agent: str, reason: str) -> None:
        """An agent failed and runs once more."""

    def waiting(self, agent: str, reason: str) -> None:
        """An agent is still running but waiting on something (a provider retry after "connection refused")."""

    def working(self, agent: str, what: str, done: int, total: int) -> None:
        """What a running agent is doing (``done`` of ``total`` files; total 0: no count), as often as that
        changes and from any thread: shown by the heartbeat and the progress bar, never a line of its own."""

    def finished(self, agent: str, outcome: str, seconds: float, summary: str) -> None:
        """An agent's report is registered (whatever the outcome)."""

    def suspend(self) -> None:
        """Someone is about to be asked a question: stop redrawing until the next stage."""

    def close(self) -> None:
        """The launch is over."""


@dataclass
class Recorder:
    """Keeps every event as a tuple (library use, tests)."""

    events: list[tuple[str, ...]] = field(default_factory=list)

    def phase(self, text: str) -> None:
        self.events.append(("phase", text))

    def stage(self, stage: int, agents: Sequence[str]) -> None:
        self.events.append(("stage", str(stage), ",".join(agents)))

    def started(self, agent: str) -> None:
        self.events.append(("started", agent))

    def retrying(self, agent: str, reason: str) -> None:
        self.events.append(("retrying", agent, reason))

    def waiting(self, agent: str, reason: str) -> None:
        self.events.append(("waiting", agent, reason))

    def working(self, agent: str, what: str, done: int, total: int) -> None:
        self.events.append(("working", agent, what, f"{done}/{total}"))

    def finished(self, agent: str, outcome: str, seconds: float, summary: str) -> None:
        self.events.append(("finished", agent, outcome))

    def suspend(self) -> None:
        self.events.append(("suspend",))

    def close(self) -> None:
        self.events.append(("close",))


class PlainProgress:
    """One line per event: ``[3/7 agents complete] fd-safety completed in 2.1 s: 1 P0, 2 P1``.

    While a stage runs, a heartbeat line follows whenever nothing was printed for ``heartbeat_s``
    seconds (a daemon thread, started with the first stage and ended by :meth:`close`).
    """

    def __init__(self, stream: IO[str] | None = None, *, heartbeat_s: float = HEARTBEAT_S) -> None:
        self.stream = guarded(stream or sys.stderr)
        self.total = 0
        self.done = 0
        self.started_at = time.monotonic()
        self.heartbeat_s = heartbeat_s
        self._lock = threading.Lock()  # lines come from the event loop, activity and heartbeats from threads
        self._last_line = time.monotonic()
        self._stage: tuple[int, float] | None = None  # the stage running and when it began (None: between stages)
        self._running: dict[str, None] = {}  # agents started and not finished, in start order
        self._activity: dict[str, tuple[str, int, int]] = {}
        self._stopped = threading.Event()
        self._beat: threading.Thread | None = None

    def _line(self, text: str) -> None:
        with self._lock:
            self.stream.write(scrub(text) + "\n")
            self.stream.flush()
            self._last_line = time.monotonic()

    def phase(self, text: str) -> None:
        self._line(text)

    def stage(self, stage: int, agents: Sequence[str]) -> None:
        self.total += len(agents)
        self._line(f"Stage {stage}: launching {len(agents)} agent(s): {', '.join(agents)}")
        self._stage = (stage, time.monotonic())
        if self._beat is None and self.heartbeat_s > 0:
            self._beat = threading.Thread(target=self._heartbeats, name="fluxdrive-heartbeat", daemon=True)
            self._beat.start()

    def started(self, agent: str) -> None:
        with self._lock:
            self._running[agent] = None  # one line per completion is enough in a log; the heartbeat names it

    def retrying(self, agent: str, reason: str) -> None:
        self._line(f"{agent} failed ({reason}); retrying once")

    def waiting(self, agent: str, reason: str) -> None:
        self._line(f"{agent}: {reason}")

    def working(self, agent: str, what: str, done: int, total: int) -> None:
        with self._lock:
            self._activity[agent] = (what, done, total)

    def finished(self, agent: str, outcome: str, seconds: float, summary: str) -> None:
        with self._lock:
            self.done += 1
            self._running.pop(agent, None)
            self._activity.pop(agent, None)
        elapsed = time.monotonic() - self.started_at
        self._line(
            f"[{self.done}/{self.total} agents complete] {agent} {outcome} in {seconds:.1f} s"
            f" ({elapsed:.1f} s elapsed): {summary}"
        )

    def suspend(self) -> None:
        self._stage = None  # a question is being asked: no heartbeat under it

    def close(self) -> None:
        self._stage = None
        self._stopped.set()
        if self._beat is not None and self._beat is not threading.current_thread():
            self._beat.join(timeout=1.0)

    def _heartbeats(self) -> None:
        """Every so often: a heartbeat line when a stage runs and the log has been quiet for ``heartbeat_s``."""
        while not self._stopped.wait(min(1.0, self.heartbeat_s / 4)):
            with self._lock:
                quiet = time.monotonic() - self._last_line >= self.heartbeat_s
                line = self.heartbeat() if quiet else None
            if line is None:
                continue
            try:
                self._line(line)
            except (OSError, ValueError):  # stderr gone or full: the review goes on; the main thread will say why
                return

    def heartbeat(self) -> str | None:
        """The heartbeat line now (None between stages, or once the stage's agents are all done)."""
        stage = self._stage
        if stage is None or self.done >= self.total:
            return None
        number, began = stage
        parts = [f"Stage {number}: {time.monotonic() - began:.0f} s"]
        activities = dict.fromkeys(activity_text(*self._activity[a]) for a in self._running if a in self._activity)
        parts.extend(activities)
        others = [a for a in self._running if a not in self._activity]
        if others:
            more = f" and {len(others) - MAX_NAMED} more" if len(others) > MAX_NAMED else ""
            parts.append(f"running: {', '.join(others[:MAX_NAMED])}{more}")
        parts.append(f"{self.done}/{self.total} agents complete")
        return ", ".join(parts)


def activity_text(what: str, done: int, total: int) -> str:
    """``analyzers: checks running (1,210/2,034 files)``; without a count when there is none."""
    return f"{what} ({done:,}/{total:,} files)" if total else what


def heartbeat_from(environ: Mapping[str, str]) -> float:
    """The heartbeat interval: :data:`HEARTBEAT_ENV` when it holds a positive number of seconds, else the default."""
    try:
        seconds = float(environ.get(HEARTBEAT_ENV, ""))
    except ValueError:
        return HEARTBEAT_S
    return seconds if 0 < seconds < float("inf") else HEARTBEAT_S


class LiveProgress:
    """A live rich table on a terminal: agent, state, elapsed time, summary; below it, the files analyzed."""

    def __init__(self, stream: IO[str] | None = None) -> None:
        from rich.console import Console
        from rich.live import Live

        self.console = Console(file=guarded(stream or sys.stderr))
        self.rows: dict[str, list[str]] = {}
        self.started_at: dict[str, float] = {}
        self.activity: dict[str, tuple[str, int, int]] = {}  # a running agent's latest activity (any thread)
        self.done = 0
        self.total = 0
        # Started with the first stage: the approval gate must own the terminal until then.
        self.live = Live(
            console=self.console,
            refresh_per_second=4,
            transient=False,
            get_renderable=self._render,
            redirect_stdout=False,
            # Whatever a library prints on stderr while the table is live (a model SDK's banner, a warning)
            # is printed above the table instead of into it.
            redirect_stderr=True,
        )

    def _render(self) -> RenderableType:
        from rich.console import Group
        from rich.table import Table
        from rich.text import Text

        table = Table(title=f"[{self.done}/{self.total} agents complete]", title_justify="left", expand=False)
        for column in ("agent", "state", "time", "summary"):
            table.add_column(column)
        now = time.monotonic()
        for agent, (state, seconds, summary) in self.rows.items():
            shown = seconds if state != "running" else f"{now - self.started_at.get(agent, now):.1f} s"
            table.add_row(*(Text(scrub(cell)) for cell in (agent, state, shown, summary)))
        bars = self._bars()
        return Group(table, bars) if bars is not None else table

    def _bars(self) -> RenderableType | None:
        """One bar per distinct counted activity of a running agent (agents sharing an analysis share its bar)."""
        from rich.progress_bar import ProgressBar
        from rich.table import Table
        from rich.text import Text

        activity = dict(self.activity)  # a snapshot: the analysis's threads update it while this draws
        running = [activity[a] for a, row in list(self.rows.items()) if row[0] == "running" and a in activity]
        shown = dict.fromkeys(item for item in running if item[2])
        if not shown:
            return None
        grid = Table.grid(padding=(0, 1))
        for what, done, total in shown:
            grid.add_row(
                ProgressBar(total=total, completed=done, width=30),
                Text(f"{done:,}/{total:,} files"),
                Text(scrub(what)),
            )
        return grid

    def phase(self, text: str) -> None:
        self.console.print(scrub(text), markup=False, highlight=False)

    def stage(self, stage: int, agents: Sequence[str]) -> None:
        self.total += len(agents)
        for agent in agents:
            self.rows[agent] = ["queued", "", f"stage {stage}"]
        if not self.live.is_started:
            self.live.start()

    def started(self, agent: str) -> None:
        self.started_at[agent] = time.monotonic()
        self.rows[agent] = ["running", "", ""]

    def retrying(self, agent: str, reason: str) -> None:
        self.started_at[agent] = time.monotonic()
        self.rows[agent] = ["retrying", "", reason[:60]]

    def waiting(self, agent: str, reason: str) -> None:
        self.rows[agent] = ["running", "", reason[:70]]

    def working(self, agent: str, what: str, done: int, total: int) -> None:
        self.activity[agent] = (what, done, total)

    def finished(self, agent: str, outcome: str, seconds: float, summary: str) -> None:
        self.done += 1
        self.activity.pop(agent, None)
        self.rows[agent] = [outcome, f"{seconds:.1f} s", summary[:70]]

    def suspend(self) -> None:
        if self.live.is_started:
            self.live.stop()

    def close(self) -> None:
        if self.live.is_started:
            self.live.stop()


def progress_for(
    stream: IO[str] | None = None, *, live: bool | None = None, heartbeat_s: float = HEARTBEAT_S
) -> Progress:
    """A live table on a terminal, plain lines (with a heartbeat every ``heartbeat_s``) otherwise."""
    target = stream or sys.stderr
    interactive = target.isatty() if live is None else live
    return LiveProgress(target) if interactive else PlainProgress(target, heartbeat_s=heartbeat_s)
