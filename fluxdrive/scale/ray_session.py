"""One connection to a Ray cluster per process, and the address it goes to.

The address comes from ``--cluster`` (any form ``ray.init`` accepts: ``auto``,
``HOST:PORT`` of the GCS, ``ray://HOST:10001`` for Ray Client), else config
``dispatch.cluster``, else ``RAY_ADDRESS``. fluxdrive never starts a Ray
instance of its own: ``ray.init()`` without an address would silently start
one bound to the machine's outward address, which is not what "run on my
cluster" means. Authentication (``RAY_AUTH_MODE=token``, ``RAY_AUTH_TOKEN``)
is Ray's, read from the environment by Ray itself.
"""

from __future__ import annotations

import contextlib
import ipaddress
import os
import signal
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterator
from types import ModuleType
from typing import Any

from fluxdrive.errors import UsageError

PROBE_TIMEOUT_S = 5.0
CONNECT_TIMEOUT_S = 60.0
EXTRA_HINT = "install the cluster extra: pip install 'fluxdrive[cluster]'"
NAMESPACE = "fluxdrive"

_lock = threading.Lock()
_connected: dict[str, str] = {}  # "address": where this process is connected
_remotes: dict[tuple[Callable[..., Any], str], Any] = {}


def require_ray() -> ModuleType:
    """The ``ray`` module, or one UsageError line when the extra is missing."""
    try:
        import ray
    except ImportError:
        raise UsageError("running on a Ray cluster needs the ray package", hint=EXTRA_HINT) from None
    return ray


def cluster_address(flag: str | None = None, configured: str | None = None) -> str | None:
    """The Ray address a review goes to: the flag, the config, ``RAY_ADDRESS``, or None (run locally)."""
    for value in (flag, configured, os.environ.get("RAY_ADDRESS")):
        if value and value.strip():
            return value.strip()
    return None


def _errors_to_stderr() -> None:
    """Ray prints cluster events ("node ... marked dead") to the driver's *stdout*, where they would corrupt
    ``--format json``; send them to stderr with the progress lines (a private hook of Ray 2.60, checked)."""
    try:
        from ray._private import worker
    except ImportError:
        return
    original = getattr(worker, "print_to_stdstream", None)
    if original is None or getattr(original, "fluxdrive", False):
        return

    def to_stderr(data: dict[str, Any], ignore_prefix: bool) -> None:
        original({**data, "is_err": True}, ignore_prefix)

    to_stderr.fluxdrive = True  # type: ignore[attr-defined]
    worker.print_to_stdstream = to_stderr


def _host_port(address: str) -> tuple[str, int] | None:
    """(host, port) of a ``HOST:PORT`` GCS address; None for ``auto`` and ``ray://`` (Ray resolves those)."""
    if "://" in address or ":" not in address:
        return None
    host, _, port = address.rpartition(":")
    host = host.strip("[]")
    return (host, int(port)) if port.isdigit() and host else None


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _resolve_auto(address: str) -> tuple[str, str]:
    """(the address to connect to, how to name it in a message): ``auto`` resolved here, as Ray resolves it.

    Why: given ``auto``, Ray reads ``RAY_ADDRESS``, then the address file an earlier ``ray start`` left in
    its temp directory (``/tmp/ray/ray_current_cluster``, under ``RAY_TMPDIR`` if set), then looks for a
    GCS process on this machine - and retries a stale address for more than ten minutes. Resolving it
    first lets ``auto`` be probed and bounded exactly like an explicit ``HOST:PORT``.

    One difference, on purpose: the address file of the last ``ray start`` is the cluster ``auto``
    means, even when some other Ray process runs on the machine. Ray lets any running GCS win over
    the file, so a stale file next to another user's (or another test's) cluster connected to that
    cluster - with the wrong token, waiting until the caller gave up - instead of saying the file is stale.
    """
    if address != "auto":
        return address, address
    try:
        from ray._private.services import (  # Ray 2.60's own lookup, checked
            find_bootstrap_address,
            get_ray_address_from_environment,
        )
    except ImportError:
        return address, address
    named = os.environ.get("RAY_ADDRESS") or find_bootstrap_address(None)
    if named:
        return named, f"auto ({named})"
    try:
        resolved = get_ray_address_from_environment("auto", None)
    except ConnectionError:
        raise UsageError(
            "cannot connect to the Ray cluster at auto: no running Ray instance was found",
            hint="start it with 'ray start --head', or pass the head's GCS address (HOST:PORT)",
        ) from None
    if not resolved or resolved == "auto":
        return address, address
    return resolved, f"auto ({resolved})"


def _probe(address: str, shown: str | None = None) -> None:
    """Fail in seconds, not minutes: Ray retries an unreachable GCS for a long time before giving up."""
    target = _host_port(address)
    if target is None:
        return
    host, port = target
    if _is_loopback(host):
        # A loopback address means this machine: stop Ray from rewriting it to the outward address
        # (``resolve_ip_for_localhost``), which a head bound to loopback does not listen on.
        os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
        constants = sys.modules.get("ray._private.ray_constants")  # read at Ray's import: already too late
        if constants is not None and os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] == "0":
            constants.ENABLE_RAY_CLUSTER = False  # type: ignore[attr-defined]
    try:
        with socket.create_connection((host, port), timeout=PROBE_TIMEOUT_S):
            pass
    except OSError as exc:
        stale = " (a stale address left by an earlier Ray?)" if shown and shown != address else ""
        raise UsageError(
            f"cannot connect to the Ray cluster at {shown or address}: {exc.strerror or exc}{stale}",
            hint="start it with 'ray start --head', or pass the head's GCS address (HOST:PORT)",
        ) from None


@contextlib.contextmanager
def _keep_sigterm() -> Iterator[None]:
    """``ray.init`` replaces the SIGTERM handler with ``sys.exit(15)``: a SIGTERM while it connects (or at
    any time later in the run) ended fluxdrive with status 15 and no line. During the call that exit is
    turned into the interrupt it is (one line, 130), and fluxdrive's own handler is put back after it."""
    main = threading.current_thread() is threading.main_thread()
    previous = signal.getsignal(signal.SIGTERM) if main else None
    try:
        yield
    except SystemExit as exc:
        if exc.code == signal.SIGTERM:
            raise KeyboardInterrupt from None
        raise
    finally:
        if main and previous is not None:
            signal.signal(signal.SIGTERM, previous)


def _init_within(ray: ModuleType, address: str, shown: str) -> None:
    """``ray.init`` under a deadline, in a helper thread, so that Ctrl-C and SIGTERM are heard while it connects.

    Why: an address that accepts TCP but never answers as a GCS keeps ``ray.init`` blocked in Ray's
    C++ client, where Python runs no signal handler, for minutes. The main thread only waits here."""
    done = threading.Event()
    failure: list[BaseException] = []

    def attempt() -> None:
        try:
            ray.init(address=address, namespace=NAMESPACE, log_to_driver=False, logging_level="ERROR")
        except BaseException as exc:  # handed to the waiting thread as it is
            failure.append(exc)
        finally:
            done.set()

    threading.Thread(target=attempt, name="fluxdrive-ray-connect", daemon=True).start()
    if not done.wait(CONNECT_TIMEOUT_S):
        raise UsageError(
            f"cannot connect to the Ray cluster at {shown}: no answer within {CONNECT_TIMEOUT_S:.0f} s",
            hint="check that the address is a Ray head's GCS port ('ray status --address HOST:PORT')",
        )
    if failure:
        raise failure[0]


# Ray Client's proxy starts one server process per connecting driver; on a loaded machine that start can
# miss the proxy's deadline, and the client is told "Initialization failure from server" although the
# cluster is healthy. The next attempt usually finds it ready: a transient, not an address to reject.
CLIENT_TRANSIENT = "Initialization failure from server"
CLIENT_ATTEMPTS = 3


def _init_client_retrying(ray: ModuleType, address: str, shown: str) -> None:
    """:func:`_init_within`, tried again (twice, a second apart, then two) on Ray Client's transient start failure."""
    for attempt in range(1, CLIENT_ATTEMPTS + 1):
        try:
            _init_within(ray, address, shown)
            return
        except Exception as exc:
            if not address.startswith("ray://") or CLIENT_TRANSIENT not in str(exc) or attempt == CLIENT_ATTEMPTS:
                raise
            with contextlib.suppress(Exception):
                ray.shutdown()
            time.sleep(attempt)


def connect(address: str) -> ModuleType:
    """Connect this process to the cluster at ``address`` (once; later calls reuse the connection)."""
    ray = require_ray()
    with _lock:
        if _connected and ray.is_initialized():
            return ray
        target, shown = _resolve_auto(address)
        _probe(target, shown)
        _errors_to_stderr()
        try:
            with _keep_sigterm():
                _init_client_retrying(ray, target, shown)
        except UsageError:
            raise
        except Exception as exc:  # ConnectionError, RuntimeError, grpc errors: all the same to a user
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise UsageError(
                f"cannot connect to the Ray cluster at {shown}: {first[:300]}",
                hint="check the address (auto, HOST:PORT or ray://HOST:10001) and RAY_AUTH_TOKEN",
            ) from None
        _connected["address"] = address
    return ray


def remote(function: Callable[..., Any], **options: Any) -> Any:
    """``ray.remote(function).options(**options)``, made once per process for each function and options."""
    ray = require_ray()
    key = (function, repr(sorted(options.items())))
    with _lock:
        if key not in _remotes:
            _remotes[key] = ray.remote(function).options(**options)
        return _remotes[key]


def cluster_cpus() -> int:
    """CPUs the connected cluster has (at least 1)."""
    ray = require_ray()
    return max(1, int(ray.cluster_resources().get("CPU", 1)))


def node_id() -> str:
    """The Ray node this code runs on (in a task), or "" outside Ray."""
    try:
        import ray

        return str(ray.get_runtime_context().get_node_id()) if ray.is_initialized() else ""
    except Exception:  # not in a Ray worker, or no runtime context
        return ""
