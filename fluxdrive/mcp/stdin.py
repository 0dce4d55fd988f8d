"""The MCP server's stdin, read in daemon threads: a stopping server never waits for the client's next line.

Why: the MCP SDK reads stdin through anyio's worker threads, which cannot be
abandoned and which the interpreter joins at exit. A server told to stop
(SIGTERM, Ctrl-C) while the client kept stdin open therefore hung until the
client wrote another line - forever, when the client was waiting for an
answer. Here each line is read in a daemon thread (:func:`in_daemon_thread`):
cancelling the read returns at once, and the thread left blocked in
``read()`` does not hold the process open.

Like the SDK, the wire is moved off fd 0 while the server runs (fd 0 reads
/dev/null), so tools and child processes never read the client's messages;
fd 0 is restored afterwards.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator
from io import TextIOWrapper
from typing import Self

from fluxdrive.core.threads import in_daemon_thread


class DaemonLines:
    """An async iterator over the lines of a binary stream, each read in a daemon thread."""

    def __init__(self, fd: int) -> None:
        self._text = TextIOWrapper(os.fdopen(fd, "rb", closefd=False), encoding="utf-8", errors="replace")

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> str:
        line = await in_daemon_thread(self._text.readline)
        if not line:
            raise StopAsyncIteration
        return line


@contextlib.contextmanager
def claimed_stdin() -> Iterator[DaemonLines]:
    """The client's lines, from a private copy of fd 0; fd 0 reads /dev/null meanwhile and is restored after.

    The private copy is never closed: a daemon thread may still be blocked reading it (and a closed,
    recycled descriptor would hand it someone else's data)."""
    wire = fcntl.fcntl(0, fcntl.F_DUPFD_CLOEXEC, 3)
    null = os.open(os.devnull, os.O_RDONLY)
    try:
        os.dup2(null, 0)
    finally:
        os.close(null)
    try:
        yield DaemonLines(wire)
    finally:
        with contextlib.suppress(OSError):
            os.dup2(wire, 0)
