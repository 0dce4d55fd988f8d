"""The one way fluxdrive starts a pool of worker processes: they die with it, and stop when it is interrupted.

Why: the static analyzers' chunks and ``fleet run``'s reviews run in spawn
workers. Left to :class:`~concurrent.futures.ProcessPoolExecutor` alone, a
``kill -9`` of fluxdrive leaves every worker (and each one's own pool)
running for minutes, and Ctrl-C or SIGTERM waits in ``shutdown(wait=True)``
for every review in flight to finish - a fleet run ignored SIGTERM for over
a minute. So:

- every worker runs :func:`_worker_start` first: Ctrl-C is left to the
  parent (one "interrupted" line, not a traceback per worker), and
  :func:`fluxdrive.core.lifeline.die_with_parent` ends the worker when fluxdrive
  goes, however it goes (``PR_SET_PDEATHSIG`` plus a re-parenting watcher);
- leaving the ``with`` block by an exception (KeyboardInterrupt from Ctrl-C
  or SIGTERM included) ends the workers at once - SIGTERM, then SIGKILL after
  a short grace - cancels what had not started, and does not wait for the rest;
- a :class:`Stop` ends, from any thread, the pools one job started and
  refuses it new ones: a review interrupted while a daemon thread still runs
  (or is about to start) its analysis pass must not keep - or spawn - workers
  that the interpreter's exit then waits for (``concurrent.futures`` joins
  every pool's manager thread at exit: that wait was 8-14 s after SIGTERM);
- multiprocessing's resource tracker (a process the parent starts for the
  pool's semaphores) reads a pipe whose writers are the parent and the
  workers: once they are gone it sees end-of-file and exits by itself
  (silently: :func:`_quiet_tracker`).

``PR_SET_PDEATHSIG`` fires when the *thread* that started a worker ends, so a
pool is used only inside the ``with`` block of the thread that made it
(workers are started by ``submit``, in the caller's thread).
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor

from fluxdrive.core.lifeline import die_with_parent

STOP_GRACE_S = 2.0
_live: set[ProcessPoolExecutor] = set()  # the pools in use in this process, for end_all()
_live_lock = threading.Lock()
_in_worker = threading.Event()  # set: this process is itself a worker of a fluxdrive pool


def in_worker() -> bool:
    """True in a worker of a fluxdrive pool, which starts no pool of its own.

    Why: a ``fleet run`` worker reviews a whole repository; a pool of analyzer workers inside it would
    oversubscribe the cores the fleet already fills, and a SIGTERM that lands while such a grandchild is
    still being spawned leaves it reading a closed pipe, which prints a traceback after fluxdrive's last line.
    """
    return _in_worker.is_set()


def _worker_start() -> None:
    """First thing in every worker: leave Ctrl-C to the parent, die with it, and end its own pools on SIGTERM."""
    _in_worker.set()
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _end_and_exit)
    die_with_parent()


def _end_and_exit(signum: int, frame: object) -> None:
    """SIGTERM in a worker (its pool is being ended): end the pools it holds (a fleet worker's analyzers), then
    exit as SIGTERM would. Why: a worker of its own still starting up would otherwise read a closed pipe and
    print a traceback after fluxdrive's last line."""
    end_all()
    os._exit(128 + signum)


def _quiet_tracker() -> None:
    """Start multiprocessing's resource tracker (once per process tree) with its stderr on /dev/null.

    When the parent ends a fleet worker, the pool that worker held cannot release its semaphores; the
    tracker releases them - and would print a multi-line "leaked semaphore objects" warning after
    fluxdrive's own last line. The release is the tracker's job and is silent now; nothing else of
    ours goes through it."""
    from multiprocessing import resource_tracker

    tracker = getattr(resource_tracker, "_resource_tracker", None)
    if tracker is None or getattr(tracker, "_fd", None) is not None:
        return  # already running here, or inherited from our parent: nothing to start
    try:
        saved = os.dup(2)
    except OSError:  # no stderr at all: nothing to keep quiet
        resource_tracker.ensure_running()
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 2)  # only the tracker's start-up sees this: it inherits fd 2 as it is now
        resource_tracker.ensure_running()
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(devnull)


def _end_workers(pool: ProcessPoolExecutor) -> None:
    """Stop every worker of ``pool`` now (SIGTERM, SIGKILL after the grace) and drop the queued work."""
    processes = list((getattr(pool, "_processes", None) or {}).values())
    for process in processes:
        with contextlib.suppress(OSError, ValueError):
            process.terminate()
    pool.shutdown(wait=False, cancel_futures=True)
    deadline = time.monotonic() + STOP_GRACE_S
    for process in processes:
        with contextlib.suppress(OSError, ValueError, AssertionError):
            process.join(max(0.0, deadline - time.monotonic()))
            if process.is_alive():
                process.kill()
                process.join(STOP_GRACE_S)


class PoolStoppedError(Exception):
    """The job's :class:`Stop` was set: its pool was ended, or was never started."""


class Stop:
    """One job's stop switch, settable from any thread: ends the pools the job holds and refuses it new ones."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pools: set[ProcessPoolExecutor] = set()
        self._set = False

    @property
    def is_set(self) -> bool:
        """Whether :meth:`set` was called."""
        return self._set

    def set(self) -> None:
        """End the job's pools now (their waiting ``result()`` calls fail) and refuse it any other."""
        with self._lock:
            self._set = True
            pools = list(self._pools)
        for pool in pools:
            _end_workers(pool)

    def _hold(self, pool: ProcessPoolExecutor) -> None:
        with self._lock:
            if self._set:
                raise PoolStoppedError("stopped before its workers started")
            self._pools.add(pool)

    def _release(self, pool: ProcessPoolExecutor) -> None:
        with self._lock:
            self._pools.discard(pool)


@contextlib.contextmanager
def worker_pool(max_workers: int, stop: Stop | None = None) -> Iterator[ProcessPoolExecutor]:
    """A spawn pool of at most ``max_workers`` workers that die with this process; ended at once on an error,
    or when ``stop`` is set (then the ``with`` body's waits fail, and :class:`PoolStoppedError` is raised)."""
    if stop is not None and stop.is_set:
        raise PoolStoppedError("stopped before its workers started")
    context = multiprocessing.get_context("spawn")  # the caller may hold threads; never fork
    _quiet_tracker()
    pool = ProcessPoolExecutor(max_workers=max(1, max_workers), mp_context=context, initializer=_worker_start)
    with _live_lock:
        _live.add(pool)
    try:
        if stop is not None:
            stop._hold(pool)
        yield pool
    except BaseException:
        _end_workers(pool)
        if stop is not None and stop.is_set:
            raise PoolStoppedError("stopped: its workers were ended") from None
        raise
    finally:
        if stop is not None:
            stop._release(pool)
        with _live_lock:
            _live.discard(pool)
    pool.shutdown(wait=True)


def end_all() -> int:
    """End the workers of every pool in use in this process, from any thread; how many pools there were.

    Why: SIGTERM is heard in the main thread, but a review's pool is often held by another thread
    (asyncio's executor, the MCP server's tool thread) that would wait for every chunk to finish;
    ending the workers makes that thread's ``result()`` fail at once and unwind through its ``with``."""
    with _live_lock:
        pools = list(_live)
    for pool in pools:
        _end_workers(pool)
    return len(pools)
