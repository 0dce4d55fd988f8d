"""Console streams whose reader may vanish: a closed pipe never takes a review down.

What a command prints (progress on stderr, the report on stdout) is a
courtesy to whoever watches; findings.json and the exit code are the
contract. A reader that goes away - ``| head -2``, a CI log collector that
dies, ``2>&-``, an ssh session that hangs up - used to end the review at
its next progress line: no findings.json, exit 0. So for the duration of a
command :func:`guard_std_streams` wraps ``sys.stdout`` and ``sys.stderr``:

- the first write or flush that fails because the reader is gone (EPIPE,
  a closed or invalid descriptor, EIO from a hung-up terminal, a closed
  file object) disables that stream for the rest of the run: later writes
  are dropped, and its descriptor is pointed at ``/dev/null`` so that
  neither the interpreter's flush at exit ("Exception ignored ...
  BrokenPipeError", exit 120) nor a child process inheriting it meets the
  broken pipe again;
- any other failure (a full disk under ``> report.txt``) still raises and
  reaches the CLI's error boundary.

SIGPIPE on stdout is therefore not an exit status: ``fluxdrive review . |
head -2`` writes its findings files and exits with the verdict's code (1
for a verdict at or above ``--fail-on``), not 141 and not 0 - a pipeline
under ``set -o pipefail`` fails for the verdict, never for the reader
closing early.

:func:`reserve_std_fds` points a standard descriptor that was closed when
the process started (``2>&-``) at ``/dev/null`` before anything else is
opened: otherwise the next file opened (findings.json, a lock) would get
descriptor 2, and everything written to "stderr" - ours or an analyzer's
that inherits it - would land in that file.
"""

from __future__ import annotations

import contextlib
import errno
import os
import sys
from collections.abc import Iterable, Iterator
from typing import IO, Any, TextIO, cast

# The reader went away (or was never there): nothing to do but stop writing.
READER_GONE = frozenset({errno.EPIPE, errno.EBADF, errno.EIO, errno.ECONNRESET})


def _reader_gone(error: BaseException, stream: IO[str] | None) -> bool:
    if isinstance(error, OSError):
        return error.errno in READER_GONE
    # "I/O operation on closed file"; an encoding error (a UnicodeError is a ValueError) is not the reader's
    return isinstance(error, ValueError) and not isinstance(error, UnicodeError) and bool(getattr(stream, "closed", 0))


class GuardedStream:
    """A text stream that turns "the reader is gone" into silence, once and for all.

    Everything but writing (``encoding``, ``buffer``, ``name``, ...) is the
    wrapped stream's; ``broken`` says whether writes are being dropped.
    """

    def __init__(self, inner: IO[str] | None) -> None:
        self._inner = inner
        self.broken = inner is None

    @property
    def inner(self) -> IO[str] | None:
        return self._inner

    def write(self, text: str) -> int:
        inner = self._inner
        if inner is not None and not self.broken:
            try:
                inner.write(text)
            except (OSError, ValueError) as error:
                if not _reader_gone(error, inner):
                    raise
                self._give_up()
        return len(text)

    def writelines(self, lines: Iterable[str]) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        inner = self._inner
        if inner is not None and not self.broken:
            try:
                inner.flush()
            except (OSError, ValueError) as error:
                if not _reader_gone(error, inner):
                    raise
                self._give_up()

    def isatty(self) -> bool:
        if self.broken or self._inner is None:
            return False
        try:
            return self._inner.isatty()
        except (OSError, ValueError):
            return False

    def writable(self) -> bool:
        return True

    def __getattr__(self, name: str) -> Any:
        if self._inner is None:
            raise AttributeError(name)
        return getattr(self._inner, name)

    def _give_up(self) -> None:
        self.broken = True
        _silence_descriptor(self._inner)


def guarded(stream: IO[str] | None) -> IO[str]:
    """``stream`` behind a guard (itself when it already is one): for writers given a stream, not sys.stderr."""
    return cast(IO[str], stream if isinstance(stream, GuardedStream) else GuardedStream(stream))


def _silence_descriptor(stream: IO[str] | None) -> None:
    """Point the stream's descriptor at /dev/null, so data still buffered (and children) write nowhere."""
    try:
        fd = stream.fileno() if stream is not None else -1
    except (OSError, ValueError, AttributeError):
        return  # an in-memory stream (a test's capture): dropping later writes is enough
    if fd < 0:
        return
    with contextlib.suppress(OSError):
        null = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(null, fd)
        finally:
            os.close(null)


def reserve_std_fds() -> None:
    """Open /dev/null on each of descriptors 0, 1, 2 that is closed (see the module docstring)."""
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
        except OSError:
            with contextlib.suppress(OSError):
                opened = os.open(os.devnull, os.O_RDWR)
                if opened != fd:
                    os.dup2(opened, fd)
                    os.close(opened)


@contextlib.contextmanager
def guard_std_streams() -> Iterator[tuple[IO[str], IO[str]]]:
    """``sys.stdout`` and ``sys.stderr`` guarded for the block, flushed (through the guard) and restored after."""
    saved_out, saved_err = sys.stdout, sys.stderr
    out, err = guarded(saved_out), guarded(saved_err)
    sys.stdout, sys.stderr = cast(TextIO, out), cast(TextIO, err)
    try:
        yield out, err
    finally:
        try:
            out.flush()
            err.flush()
        finally:
            sys.stdout, sys.stderr = saved_out, saved_err
