"""Completion as events: notice an agent's report the moment it is renamed into place.

The reference polls every 30 seconds; a review that waits half a minute for
each finished agent is slow for no reason. The monitor watches OUTPUT_DIR
with the operating system's file events (``watchfiles``: inotify, FSEvents,
ReadDirectoryChangesW) and wakes whoever waits for ``<agent>.md`` as soon as
the completion contract's rename lands. Runtimes that run in-process also
complete their own future; the dispatcher takes whichever comes first.

If events cannot be used (no ``watchfiles``, an exhausted inotify limit, a
file system without notifications) the monitor falls back to polling every
``dispatch.poll_interval_s`` - slower, never wrong - and says so once.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Iterable
from pathlib import Path

REPORT_SUFFIX = ".md"
STEP_MS = 5  # how long watchfiles waits for more changes before yielding a batch


class Monitor:
    """Watches one output directory for agents' ``.md`` reports."""

    def __init__(self, output_dir: Path, *, poll_interval_s: float = 0.5, force_polling: bool = False) -> None:
        self.output_dir = Path(output_dir)
        self.poll_interval_s = poll_interval_s
        self.force_polling = force_polling
        self.mode = "starting"
        self.note: str | None = None
        self.seen_at: dict[str, float] = {}  # agent -> time.time() when its report was noticed
        self._events: dict[str, asyncio.Event] = {}
        self._stop = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._ready = asyncio.Event()

    async def __aenter__(self) -> Monitor:
        self._task = asyncio.create_task(self._run(), name="fluxdrive-monitor")
        await self._ready.wait()
        return self

    async def __aexit__(self, *exc: object) -> None:
        self._stop.set()
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._task

    def expect(self, agents: Iterable[str]) -> None:
        """Start (or restart, for a retry) waiting for these agents' reports."""
        for agent in agents:
            self._events[agent] = asyncio.Event()
            self.seen_at.pop(agent, None)

    async def wait(self, agent: str) -> float:
        """Wait until ``agent``'s report appears; return when it was noticed (time.time())."""
        event = self._events.setdefault(agent, asyncio.Event())
        await event.wait()
        return self.seen_at[agent]

    def _notice(self, path: str) -> None:
        name = Path(path).name
        if not name.endswith(REPORT_SUFFIX):
            return
        agent = name[: -len(REPORT_SUFFIX)]
        event = self._events.get(agent)
        if event is not None and not event.is_set() and (self.output_dir / name).is_file():
            self.seen_at[agent] = time.time()
            event.set()

    def _scan(self) -> None:
        for agent, event in self._events.items():
            if not event.is_set() and (self.output_dir / f"{agent}{REPORT_SUFFIX}").is_file():
                self.seen_at[agent] = time.time()
                event.set()

    async def _run(self) -> None:
        if not self.force_polling:
            try:
                await self._watch()
                return
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # events unavailable: poll instead, and say so
                self.note = (
                    f"file events unavailable ({type(exc).__name__}: {exc}); polling every {self.poll_interval_s:g} s"
                )
        self.mode = "polling"
        self._ready.set()
        while not self._stop.is_set():
            self._scan()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stop.wait(), timeout=self.poll_interval_s)

    async def _watch(self) -> None:
        from watchfiles import awatch

        self.output_dir.mkdir(parents=True, exist_ok=True)
        watcher = awatch(
            self.output_dir,
            watch_filter=lambda _change, path: path.endswith(REPORT_SUFFIX),
            debounce=1_000,
            step=STEP_MS,
            stop_event=self._stop,
            recursive=False,
            rust_timeout=50,  # also bounds start-up: the first (empty) batch proves the watch is live
            yield_on_timeout=True,
        )
        self.mode = "events"
        first = True
        async for changes in watcher:
            if first:
                first = False
                self._ready.set()
                self._scan()  # reports that landed before the watch started
            for _change, path in changes:
                self._notice(path)
