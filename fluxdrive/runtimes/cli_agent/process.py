"""Running a process tree we did not write: own process group, bounded output, nothing left behind.

However the run ends - exit, crash, timeout or cancellation - the whole group
is terminated (SIGTERM, then SIGKILL after a grace period) and the leader is
reaped; then every process still carrying the run's tag (a grandchild that
``setsid``-ed out of the group) is killed too. The tool runs under a small
supervisor (:mod:`fluxdrive.core.lifeline`) that ends the whole tree if
fluxdrive itself dies, even by ``kill -9``. stdout and stderr are read
concurrently and bounded, so neither a chatty nor a silent tool can block or
exhaust the run.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from fluxdrive.core.lifeline import SUPERVISOR_CANNOT_START, kill_tagged, new_tag, supervisor_argv, tag_environment

MAX_OUTPUT_BYTES = 10 * 1024 * 1024
KILL_GRACE_S = 3.0
_POLL_S = 0.05
_CHUNK = 1 << 16


class CliAgentError(RuntimeError):
    """The CLI ended without a usable report (the guard turns this into an error stub)."""


@dataclass(frozen=True, slots=True)
class Finished:
    """What a CLI process left behind: exit status and (bounded) output."""

    returncode: int
    stdout: str
    stderr: str
    stdout_cut: int = 0
    stderr_cut: int = 0


class _Capture:
    """A bounded reader: keeps the head (or the tail) of a stream, drains the rest."""

    def __init__(self, limit: int, *, keep_tail: bool) -> None:
        self.limit = limit
        self.keep_tail = keep_tail
        self.data = bytearray()
        self.dropped = 0

    async def drain(self, stream: asyncio.StreamReader) -> None:
        while chunk := await stream.read(_CHUNK):
            self.data += chunk
            excess = len(self.data) - self.limit
            if excess > 0:
                self.dropped += excess
                if self.keep_tail:
                    del self.data[:excess]
                else:
                    del self.data[self.limit :]

    def text(self) -> str:
        return bytes(self.data).decode("utf-8", errors="replace")


async def _feed(pipe: asyncio.StreamWriter, data: bytes) -> None:
    # A tool may exit without reading its stdin; that is its business, not an error.
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        pipe.write(data)
        await pipe.drain()
    pipe.close()


def _signal_group(group: int, sig: int) -> bool:
    """Send ``sig`` to the process group; False when no member is left to receive it."""
    try:
        os.killpg(group, sig)
    except (ProcessLookupError, PermissionError):
        return False
    return True


async def _until(condition: Callable[[], bool], timeout: float) -> bool:
    """Poll ``condition()`` until it holds or ``timeout`` passes; its final value."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() >= deadline:
            return False
        await asyncio.sleep(_POLL_S)
    return True


async def end_group(process: asyncio.subprocess.Process, grace_s: float) -> None:
    """Terminate the process's whole group (TERM, then KILL after ``grace_s``) and reap the leader."""
    group = process.pid  # start_new_session=True: the leader's pid is the group id

    def gone() -> bool:
        return process.returncode is not None and not _signal_group(group, 0)

    try:
        if _signal_group(group, signal.SIGTERM) and not await _until(gone, grace_s):
            _signal_group(group, signal.SIGKILL)
        # asyncio's child watcher reaps the leader; the rest of the group belongs to init now.
        await _until(lambda: process.returncode is not None, grace_s)
    except asyncio.CancelledError:  # cancelled again while waiting: leave nothing running
        _signal_group(group, signal.SIGKILL)
        raise


def _not_runnable(program: str, cwd: Path) -> str | None:
    """Why ``program`` cannot be started (the supervisor would only say so after it started), or None."""
    path = Path(program) if os.sep in program else None
    if path is None:
        return None if shutil.which(program) else "No such file or directory"
    full = path if path.is_absolute() else cwd / path
    if not full.exists():
        return "No such file or directory"
    if full.is_dir() or not os.access(full, os.X_OK):
        return "Permission denied"
    return None


async def run_in_own_group(
    argv: tuple[str, ...],
    *,
    cwd: Path,
    stdin: bytes | None,
    env: Mapping[str, str] | None = None,
    max_bytes: int = MAX_OUTPUT_BYTES,
    grace_s: float = KILL_GRACE_S,
) -> Finished:
    """Run ``argv`` in a new session; whatever happens, its process group is gone afterwards."""
    missing = _not_runnable(argv[0], cwd)
    if missing:
        raise CliAgentError(f"cannot start {argv[0]} in {cwd}: {missing}")
    tag = new_tag()
    try:
        process = await asyncio.create_subprocess_exec(
            *supervisor_argv(argv),
            cwd=cwd,
            env=tag_environment(dict(env) if env is not None else None, tag),
            stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,
        )
    except OSError as exc:
        raise CliAgentError(f"cannot start {argv[0]} in {cwd}: {exc.strerror or exc}") from exc
    assert process.stdout is not None and process.stderr is not None
    out = _Capture(max_bytes, keep_tail=False)  # the report is at the head
    err = _Capture(max_bytes, keep_tail=True)  # the reason for a failure is at the tail
    helpers = [asyncio.create_task(out.drain(process.stdout)), asyncio.create_task(err.drain(process.stderr))]
    if stdin is not None:
        assert process.stdin is not None
        helpers.append(asyncio.create_task(_feed(process.stdin, stdin)))
    ended = False
    try:
        # Not process.wait(): it also waits for the pipes, which a leftover grandchild can hold open forever.
        await _until(lambda: process.returncode is not None, float("inf"))
        await end_group(process, grace_s)
        ended = True
        await asyncio.wait(helpers, timeout=grace_s)  # the pipes close with the group
    finally:
        if not ended:
            await end_group(process, grace_s)
        for helper in helpers:
            helper.cancel()
        await asyncio.gather(*helpers, return_exceptions=True)
        if process.stdin is not None:
            process.stdin.close()
        kill_tagged(tag)  # escapees that left the group (setsid): nothing of the run outlives it
    assert process.returncode is not None
    failed_start = err.text().strip().rpartition("\n")[2]
    if process.returncode == SUPERVISOR_CANNOT_START and failed_start.startswith("cannot start "):
        raise CliAgentError(f"{failed_start.split(': ', 1)[0]} in {cwd}: {failed_start.partition(': ')[2]}")
    return Finished(process.returncode, out.text(), err.text(), out.dropped, err.dropped)
