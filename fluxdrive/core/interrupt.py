"""Interrupt a review from any thread, as Ctrl-C interrupts one in the main thread.

Why: a signal reaches only the main thread. The MCP server runs each review
in a worker thread with its own event loop, so SIGTERM, Ctrl-C or a client's
cancel reached the server but never the review: it ran to its end (over 40 s)
and the server waited for it. An :class:`Interrupt` is bound to the review's
running task while its agents run; :meth:`Interrupt.interrupt` cancels that
task from any thread, and the review then ends exactly as on Ctrl-C (each
agent gets its stub, what finished is synthesized). :func:`interrupt_others`
does it for every review running in another thread (the SIGTERM handler).

A leaf module: imports nothing from the package.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Iterator

_running: set[Interrupt] = set()
_running_lock = threading.Lock()


class Interrupt:
    """A request to interrupt one review, settable before or while it runs, from any thread."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._task: tuple[asyncio.AbstractEventLoop, asyncio.Task[object]] | None = None
        self._thread: int | None = None  # the thread whose loop runs the review
        self.requested = False

    def interrupt(self) -> None:
        """Cancel the review's running task (or the task it starts next); idempotent."""
        with self._lock:
            first, self.requested = not self.requested, True
            bound = self._task
        if first and bound is not None:
            loop, task = bound
            with contextlib.suppress(RuntimeError):  # the loop closed meanwhile: the review has ended
                loop.call_soon_threadsafe(task.cancel)

    @contextlib.contextmanager
    def bound(self) -> Iterator[None]:
        """Within the review's running task: an :meth:`interrupt` cancels it; already requested, it is cancelled."""
        task = asyncio.current_task()
        if task is None:
            raise RuntimeError("Interrupt.bound() outside a running task")
        loop = asyncio.get_running_loop()
        with self._lock:
            self._task, self._thread = (loop, task), threading.get_ident()
            requested = self.requested
        with _running_lock:
            _running.add(self)
        if requested:
            task.cancel()
        try:
            yield
        finally:
            with _running_lock:
                _running.discard(self)
            with self._lock:
                self._task = self._thread = None


def interrupt_others() -> int:
    """Interrupt every review running in this process in another thread; how many there were.

    The calling thread's own review is left to the caller: a signal handler in the main thread hands it
    to asyncio's runner, which cancels it once (a second cancel would cut its agents' stubs short)."""
    me = threading.get_ident()
    with _running_lock:
        running = [i for i in _running if i._thread != me]
    for interrupt in running:
        interrupt.interrupt()
    return len(running)
