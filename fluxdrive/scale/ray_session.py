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

import ipaddress
import os
import socket
import threading
from collections.abc import Callable
from types import ModuleType
from typing import Any

from fluxdrive.errors import UsageError

PROBE_TIMEOUT_S = 5.0
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


def _probe(address: str) -> None:
    """Fail in seconds, not minutes: Ray retries an unreachable GCS for a long time before giving up."""
    target = _host_port(address)
    if target is None:
        return
    host, port = target
    if _is_loopback(host):
        # A loopback address means this machine: stop Ray from rewriting it to the outward address
        # (``resolve_ip_for_localhost``), which a head bound to loopback does not listen on.
        os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
    try:
        with socket.create_connection((host, port), timeout=PROBE_TIMEOUT_S):
            pass
    except OSError as exc:
        raise UsageError(
            f"cannot connect to the Ray cluster at {address}: {exc.strerror or exc}",
            hint="start it with 'ray start --head', or pass the head's GCS address (HOST:PORT)",
        ) from None


def connect(address: str) -> ModuleType:
    """Connect this process to the cluster at ``address`` (once; later calls reuse the connection)."""
    ray = require_ray()
    with _lock:
        if _connected and ray.is_initialized():
            return ray
        _probe(address)
        _errors_to_stderr()
        try:
            ray.init(
                address=address,
                namespace=NAMESPACE,
                log_to_driver=False,
                logging_level="ERROR",
            )
        except Exception as exc:  # ConnectionError, RuntimeError, grpc errors: all the same to a user
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise UsageError(
                f"cannot connect to the Ray cluster at {address}: {first[:300]}",
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
