"""Await blocking work without letting it hold the process open after a cancel."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


async def in_daemon_thread(function: Callable[..., T], *args: object) -> T:
    """Run ``function`` in a daemon thread and await it.

    Unlike ``asyncio.to_thread``, a cancelled run (Ctrl-C) does not keep the
    process alive until the analyzers finish: the interpreter does not wait
    for daemon threads at exit.
    """
    loop = asyncio.get_running_loop()
    future: asyncio.Future[T] = loop.create_future()

    def settle(result: T | None, error: BaseException | None) -> None:
        if future.done():
            return
        if isinstance(error, StopIteration):  # a future refuses StopIteration; keep the failure visible
            error = RuntimeError(f"StopIteration raised in {getattr(function, '__name__', 'a worker thread')}")
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(result)  # type: ignore[arg-type]

    def work() -> None:
        try:
            result = function(*args)
        except BaseException as exc:  # handed to the awaiting coroutine
            with contextlib.suppress(RuntimeError):  # the loop may be closed after a cancel
                loop.call_soon_threadsafe(settle, None, exc)
            return
        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(settle, result, None)

    threading.Thread(target=work, name="fluxdrive-static", daemon=True).start()
    return await future
