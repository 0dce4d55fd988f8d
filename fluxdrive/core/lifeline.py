"""Processes fluxdrive starts die with it, however it dies - and leave nothing behind.

Why: a review starts worker processes (the static analyzers' pool) and tool
processes (coding-assistant CLIs and whatever they spawn). ``kill -9`` of
the review gives it no chance to clean up, and a tool may ``setsid`` a
grandchild out of its process group. Two mechanisms cover that:

- :func:`die_with_parent` - called in a child at start-up: the kernel sends
  it SIGKILL when its parent goes (``PR_SET_PDEATHSIG``, Linux), and a
  watcher thread exits it when it is re-parented (any POSIX system).
- :func:`tag_environment` / :func:`kill_tagged` - every tool process carries
  a unique ``FLUXDRIVE_RUN_TAG`` in its environment, which its descendants
  inherit even after ``setsid``; when the tool's run ends, every process of
  this user still carrying the tag is killed (the technique Jenkins uses for
  build processes). ``/proc`` is read only on Linux; elsewhere it is a no-op.

A leaf module: imports nothing from the package.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import threading
import time
import uuid
from pathlib import Path

TAG_VARIABLE = "FLUXDRIVE_RUN_TAG"
SUPERVISOR_CANNOT_START = 127  # with "cannot start ARGV0: reason" as the last line of stderr
PR_SET_PDEATHSIG = 1
_WATCH_INTERVAL_S = 0.5


def _prctl_pdeathsig(sig: int) -> bool:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(PR_SET_PDEATHSIG, sig, 0, 0, 0)) == 0
    except (OSError, AttributeError):  # not Linux
        return False


def die_with_parent(sig: int = signal.SIGKILL) -> None:
    """Make this process end when its parent does (call it first thing in a child)."""
    parent = os.getppid()
    _prctl_pdeathsig(sig)
    if os.getppid() != parent or parent == 1:  # the parent died before prctl took effect
        os._exit(1)

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(_WATCH_INTERVAL_S)
        os._exit(1)

    threading.Thread(target=watch, name="fluxdrive-lifeline", daemon=True).start()


def new_tag() -> str:
    """A fresh tag for one tool run."""
    return uuid.uuid4().hex


def tag_environment(env: dict[str, str] | None, tag: str) -> dict[str, str]:
    """``env`` (default: this process's environment) with the run tag added."""
    return {**(dict(os.environ) if env is None else env), TAG_VARIABLE: tag}


def tagged_pids(tag: str) -> list[int]:
    """Live processes of this user whose environment carries ``tag`` (Linux; elsewhere none)."""
    needle = f"{TAG_VARIABLE}={tag}".encode()
    found = []
    me = os.getpid()
    try:
        entries = os.listdir("/proc")
    except OSError:
        return []
    for entry in entries:
        if not entry.isdigit() or int(entry) == me:
            continue
        try:
            environ = Path(f"/proc/{entry}/environ").read_bytes()
        except OSError:  # gone, or another user's
            continue
        if needle in environ.split(b"\0"):
            found.append(int(entry))
    return found


def kill_tagged(tag: str) -> int:
    """SIGKILL every process still carrying ``tag``; how many were found."""
    pids = tagged_pids(tag)
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
    return len(pids)


# --------------------------------------------------------------------------
# the supervisor: ``python -I _lifeline.py -- ARGV...``


def supervisor_argv(argv: tuple[str, ...]) -> tuple[str, ...]:
    """``argv`` run under the supervisor (stdlib only, isolated interpreter: starts in tens of milliseconds)."""
    import sys

    return (sys.executable, "-I", str(Path(__file__).resolve()), "--", *argv)


def _supervise(argv: list[str]) -> int:
    """Run ``argv`` as a child in this process group; relay its exit; if our parent dies, end the whole tree.

    The supervisor is the group leader the runtime starts. SIGTERM and SIGINT
    reach every member of the group from the runtime itself, so here they are
    ignored: the supervisor stays to relay the tool's exit status. When the
    parent (fluxdrive) vanishes - even by SIGKILL - the watcher kills every
    process carrying this run's tag (``setsid`` escapees included) and the group.
    """
    import subprocess

    tag = os.environ.get(TAG_VARIABLE, "")
    parent = os.getppid()
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _prctl_pdeathsig(signal.SIGUSR1)
    lost = threading.Event()
    signal.signal(signal.SIGUSR1, lambda *_: lost.set())

    def end_everything() -> None:
        if tag:
            kill_tagged(tag)
        with contextlib.suppress(OSError):
            os.killpg(0, signal.SIGKILL)
        os._exit(137)

    def watch() -> None:
        while os.getppid() == parent and not lost.is_set():
            time.sleep(_WATCH_INTERVAL_S / 5)
        end_everything()

    def default_signals() -> None:  # ignored signals survive exec: the tool must get SIGTERM as usual
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.SIG_DFL)

    try:
        # preexec_fn is safe here: no other thread exists yet in the supervisor.
        child = subprocess.Popen(argv, preexec_fn=default_signals)  # noqa: PLW1509 - the runtime's own argv
    except OSError as exc:
        os.write(2, f"cannot start {argv[0]}: {exc.strerror or exc}\n".encode())
        return SUPERVISOR_CANNOT_START
    threading.Thread(target=watch, name="fluxdrive-supervisor", daemon=True).start()
    code = child.wait()
    if code < 0:
        signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
        time.sleep(1)
    return code


if __name__ == "__main__":
    import sys

    arguments = sys.argv[1:]
    if arguments[:1] == ["--"]:
        arguments = arguments[1:]
    if not arguments:
        sys.stderr.write("usage: _lifeline.py -- ARGV...\n")
        sys.exit(2)
    sys.exit(_supervise(arguments))
