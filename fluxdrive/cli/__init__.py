"""The command-line interface and its single error boundary.

:func:`main` runs a command and returns its exit code; it is the only place
where exceptions become messages. A :class:`~fluxdrive.errors.FluxdriveError`
or a usage mistake prints one line on stderr (exit 2, or the error's own
code), and so does an ``OSError`` that reaches it (a full disk, a read-only
mount: the machine, not fluxdrive; exit 2); anything unexpected prints one line too, and its traceback only with
``--debug`` (or ``FLUXDRIVE_DEBUG=1``).
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Sequence
from types import FrameType

import typer

from fluxdrive._masking import scrub
from fluxdrive.errors import EXIT_INTERRUPTED, EXIT_NO_VERDICT, EXIT_USAGE, FluxdriveError

PROG = "fluxdrive"


def _usage_line(exc: typer.TyperException) -> str:
    ctx = getattr(exc, "ctx", None)
    where = ctx.command_path if ctx is not None else PROG
    message = " ".join(str(exc.format_message()).split())
    message = (message[:1].lower() + message[1:]).rstrip(".")
    return f"{PROG}: error: {where}: {message} (see '{where} --help')"


def _terminate_like_interrupt(signum: int, frame: FrameType | None) -> None:
    """SIGTERM (a CI job cancelled, ``kill``, a supervisor stopping us) ends a run exactly like Ctrl-C:
    agents get their stubs, what finished is synthesized, the lock is released. Whoever handles SIGINT
    now - asyncio's runner mid-review, Python's default otherwise - handles this one too."""
    handler = signal.getsignal(signal.SIGINT)
    if callable(handler):
        handler(signal.SIGINT, frame)
    else:
        raise KeyboardInterrupt


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI with ``argv`` (default: ``sys.argv[1:]``); return the exit code."""
    from fluxdrive.cli.app import app

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _terminate_like_interrupt)

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
    except BrokenPipeError:
        return 0
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
    sys.exit(main())
