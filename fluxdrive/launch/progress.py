"""What a person (or a log) sees while agents run.

Progress goes to stderr, so stdout stays the caller's short report. On a
terminal a live table shows every agent's state and elapsed time under a
``[N/M agents complete]`` header; anywhere else (CI logs, a calling
assistant, a pipe) each event is one plain line, because a redrawn table
turns into noise in a log. :class:`Recorder` keeps the events for the
library and tests. Both writers guard their stream (:mod:`fluxdrive.core.streams`):
a reader that goes away silences the progress, never the review.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import IO, TYPE_CHECKING, Protocol

from fluxdrive.core.masking import scrub
from fluxdrive.core.streams import guarded

if TYPE_CHECKING:
    from rich.table import Table


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

    def finished(self, agent: str, outcome: str, seconds: float, summary: str) -> None:
        self.events.append(("finished", agent, outcome))

    def suspend(self) -> None:
        self.events.append(("suspend",))

    def close(self) -> None:
        self.events.append(("close",))


class PlainProgress:
    """One line per event: ``[3/7 agents complete] fd-safety completed in 2.1 s: 1 P0, 2 P1``."""

    def __init__(self, stream: IO[str] | None = None) -> None:
        self.stream = guarded(stream or sys.stderr)
        self.total = 0
        self.done = 0
        self.started_at = time.monotonic()

    def _line(self, text: str) -> None:
        self.stream.write(scrub(text) + "\n")
        self.stream.flush()

    def phase(self, text: str) -> None:
        self._line(text)

    def stage(self, stage: int, agents: Sequence[str]) -> None:
        self.total += len(agents)
        self._line(f"Stage {stage}: launching {len(agents)} agent(s): {', '.join(agents)}")

    def started(self, agent: str) -> None:
        return None  # one line per completion is enough in a log

    def retrying(self, agent: str, reason: str) -> None:
        self._line(f"{agent} failed ({reason}); retrying once")

    def waiting(self, agent: str, reason: str) -> None:
        self._line(f"{agent}: {reason}")

    def finished(self, agent: str, outcome: str, seconds: float, summary: str) -> None:
        self.done += 1
        elapsed = time.monotonic() - self.started_at
        self._line(
            f"[{self.done}/{self.total} agents complete] {agent} {outcome} in {seconds:.1f} s"
            f" ({elapsed:.1f} s elapsed): {summary}"
        )

    def suspend(self) -> None:
        return None

    def close(self) -> None:
        return None


class LiveProgress:
    """A live rich table on a terminal: agent, state, elapsed time, summary."""

    def __init__(self, stream: IO[str] | None = None) -> None:
        from rich.console import Console
        from rich.live import Live

        self.console = Console(file=guarded(stream or sys.stderr))
        self.rows: dict[str, list[str]] = {}
        self.started_at: dict[str, float] = {}
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

    def _render(self) -> Table:
        from rich.table import Table
        from rich.text import Text

        table = Table(title=f"[{self.done}/{self.total} agents complete]", title_justify="left", expand=False)
        for column in ("agent", "state", "time", "summary"):
            table.add_column(column)
        now = time.monotonic()
        for agent, (state, seconds, summary) in self.rows.items():
            shown = seconds if state != "running" else f"{now - self.started_at.get(agent, now):.1f} s"
            table.add_row(*(Text(scrub(cell)) for cell in (agent, state, shown, summary)))
        return table

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

    def finished(self, agent: str, outcome: str, seconds: float, summary: str) -> None:
        self.done += 1
        self.rows[agent] = [outcome, f"{seconds:.1f} s", summary[:70]]

    def suspend(self) -> None:
        if self.live.is_started:
            self.live.stop()

    def close(self) -> None:
        if self.live.is_started:
            self.live.stop()


def progress_for(stream: IO[str] | None = None, *, live: bool | None = None) -> Progress:
    """A live table on a terminal, plain lines otherwise."""
    target = stream or sys.stderr
    interactive = target.isatty() if live is None else live
    return LiveProgress(target) if interactive else PlainProgress(target)
