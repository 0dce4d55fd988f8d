"""The command-line interface and its single error boundary.

:func:`main` runs a command and returns its exit code; it is the only place
where exceptions become messages. A :class:`~fluxdrive.errors.FluxdriveError`
or a usage mistake prints one line on stderr (exit 2, or the error's own
code), and so does an ``OSError`` that reaches it (a full disk, a read-only
mount: the machine, not fluxdrive; exit 2); anything unexpected prints one line too, and its traceback only with
``--debug`` (or ``FLUXDRIVE_DEBUG=1``). stdout and stderr are guarded for the whole command
(:mod:`fluxdrive.core.streams`): a reader that goes away silences that stream, never the review or its exit code.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Sequence
from types import FrameType

import typer

from fluxdrive.core.masking import scrub
from fluxdrive.core.streams import guard_std_streams, reserve_std_fds
from fluxdrive.errors import EXIT_INTERRUPTED, EXIT_NO_VERDICT, EXIT_USAGE, FluxdriveError

PROG = "fluxdrive"


def _usage_line(exc: typer.TyperException) -> str:
    ctx = getattr(exc, "ctx", None)
    where = ctx.command_path if ctx is not None else PROG
    message = " ".join(str(exc.format_message()).split())
    message = (message[:1].lower() + message[1:]).rstrip(".")
    return f"{PROG}: error: {where}: {message} (see '{where} --help')"


def _stop_now(signum: int, frame: FrameType | None) -> None:
    """A second signal after SIGTERM: no more cleanup. Workers and tool processes die with this process
    (fluxdrive.core.lifeline); the run lock is an flock the kernel releases."""
    os.write(2, f"\n{PROG}: interrupted\n".encode())
    os._exit(EXIT_INTERRUPTED)


def _terminate_like_interrupt(signum: int, frame: FrameType | None) -> None:
    """SIGTERM (a CI job cancelled, ``kill``, a supervisor stopping us) ends a run exactly like Ctrl-C:
    agents get their stubs, what finished is synthesized, the lock is released. Whoever handles SIGINT
    now - asyncio's runner mid-review, Python's default otherwise - handles this one too. A review running
    in another thread (the MCP server's tool) is interrupted as well (fluxdrive.core.interrupt), and worker
    pools held by other threads are ended, so that nothing waits for their chunks (fluxdrive.core.pool).
    From then on a second SIGTERM or Ctrl-C stops at once."""
    from fluxdrive.core.interrupt import interrupt_others
    from fluxdrive.core.pool import end_all

    handler = signal.getsignal(signal.SIGINT)
    signal.signal(signal.SIGTERM, _stop_now)
    signal.signal(signal.SIGINT, _stop_now)  # asyncio's runner leaves a handler it did not install in place
    interrupt_others()
    end_all()
    if callable(handler):
        handler(signal.SIGINT, frame)
    else:
        raise KeyboardInterrupt


def main(argv: Sequence[str] | None = None, *, exiting: bool = False) -> int:
    """Run the CLI with ``argv`` (default: ``sys.argv[1:]``); return the exit code.

    ``exiting``: the caller (the console script) exits with the code next. Then no handler is put back
    afterwards: a signal that arrives once the command is done ends the process with its code at once,
    where a restored default handler would have killed it with a bare SIGTERM status.
    """
    reserve_std_fds()
    with guard_std_streams():
        return _main(argv, exiting)


def _main(argv: Sequence[str] | None, exiting: bool) -> int:
    handlers = {}
    main_thread = threading.current_thread() is threading.main_thread()
    if main_thread:
        handlers = {sig: signal.getsignal(sig) for sig in (signal.SIGTERM, signal.SIGINT)}
        signal.signal(signal.SIGTERM, _terminate_like_interrupt)
    code = EXIT_INTERRUPTED
    try:
        code = _command(argv)
        return code
    finally:
        if exiting and main_thread:
            _exit_on_signal(code)
        else:
            for sig, handler in handlers.items():  # an in-process caller (a test, a host program) gets its own back
                signal.signal(sig, handler)


def _exit_on_signal(code: int) -> None:
    """From now on SIGTERM or Ctrl-C ends the process with ``code``: the work is done, no traceback from exiting."""

    def exit_now(signum: int, frame: FrameType | None) -> None:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        os._exit(code)

    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, exit_now)


def _command(argv: Sequence[str] | None) -> int:
    from fluxdrive.cli.app import app

    args = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in args or os.environ.get("FLUXDRIVE_DEBUG") == "1"
    command = typer.main.get_command(app)
    try:
        # Not command.main(): it would turn Ctrl-C into a silent exit 130 before this boundary sees it.
        with command.make_context(PROG, args) as ctx:
            result = command.invoke(ctx)
    except FluxdriveError as exc:
        if debug:
            raise
        sys.stderr.write(f"{PROG}: {exc.label}: {scrub(exc.one_line())}\n")
        return exc.exit_code
    except typer.Exit as exc:
        return int(exc.exit_code or 0)
    except typer.Abort:
        sys.stderr.write(f"{PROG}: aborted\n")
        return EXIT_INTERRUPTED
    except KeyboardInterrupt:
        sys.stderr.write(f"\n{PROG}: interrupted\n")
        return EXIT_INTERRUPTED
    except typer.TyperException as exc:
        if type(exc).__name__ == "NoArgsIsHelpError":
            sys.stdout.write(str(exc.format_message()) + "\n")
            return 0
        sys.stderr.write(scrub(_usage_line(exc)) + "\n")
        return int(getattr(exc, "exit_code", EXIT_USAGE) or EXIT_USAGE)
    except OSError as exc:  # the machine, not fluxdrive: a full disk, a read-only mount, a vanished directory
        if debug:
            raise
        where = f": {exc.filename}" if exc.filename else ""
        reason = exc.strerror or " ".join(str(exc).split()) or type(exc).__name__
        sys.stderr.write(
            scrub(f"{PROG}: error: {reason}{where} (hint: free space or fix permissions, then rerun)") + "\n"
        )
        return EXIT_USAGE
    except Exception as exc:
        if debug:
            raise
        sys.stderr.write(
            scrub(
                f"{PROG}: internal error: {type(exc).__name__}: {' '.join(str(exc).split())} "
                "(rerun with --debug for the traceback, and please report it)"
            )
            + "\n"
        )
        return EXIT_NO_VERDICT
    return result if isinstance(result, int) else 0


def run() -> None:
    """Console-script entry point."""
    try:
        code = main(exiting=True)
    except KeyboardInterrupt:  # a signal in the instant between the command's end and the exit handlers
        with contextlib.suppress(OSError):
            os.write(2, f"\n{PROG}: interrupted\n".encode())
        code = EXIT_INTERRUPTED
    # The code is decided: a late signal must not turn it into a bare SIGTERM status. Python resets its own
    # handlers to the default while it finalizes, but leaves an ignored signal ignored.
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, signal.SIG_IGN)
    sys.exit(code)
