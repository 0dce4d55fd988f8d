"""Runtimes by name, registered through one hook for built-ins and plugins.

Built-in runtimes are declared as ``fluxdrive.runtimes`` entry points in
our own ``pyproject.toml``, exactly as a third-party package would declare
its runtime, so there is one registration path. Capabilities are checked on
registration: a runtime that needs a key must name its environment variable.
"""

from __future__ import annotations

import difflib
import re
from importlib.metadata import entry_points

from fluxdrive.errors import UsageError
from fluxdrive.runtimes.base import Runtime

ENTRY_POINT_GROUP = "fluxdrive.runtimes"
_NAME = re.compile(r"^[a-z][a-z0-9-]*$")

_registry: dict[str, type[Runtime]] = {}
_broken: dict[str, str] = {}  # runtime name -> why its entry point could not be loaded
_state = {"entry_points_loaded": False}
EXTRAS = {"llm": "pip install 'fluxdrive[llm]'"}


def require_llm_extra() -> None:
    """One readable line when a model is asked for and the llm extra is not installed.

    Without it every model call (each agent, each research question, each
    retry) would fail on its own with ``No module named 'pydantic_ai'``.
    """
    try:
        import pydantic_ai  # noqa: F401 - only whether it imports
    except ImportError:
        raise UsageError("a model was asked for, but the llm extra is not installed", hint=EXTRAS["llm"]) from None


def register(cls: type[Runtime]) -> type[Runtime]:
    """Add a runtime class; usable as a decorator. Checks its capabilities."""
    name = getattr(cls, "name", None)
    if not isinstance(name, str) or not _NAME.match(name):
        raise TypeError(f"{cls.__qualname__}.name must be a lowercase identifier, got {name!r}")
    if not isinstance(cls.offline, bool) or not isinstance(cls.remote, bool):
        raise TypeError(f"{cls.__qualname__}: offline and remote must be booleans")
    if cls.needs_key and not cls.key_env_var:
        raise TypeError(f"{cls.__qualname__} needs a key but names no key_env_var")
    _load_entry_points()  # the built-ins first: a plugin registered early must not take "static"
    existing = _registry.get(name)
    if existing is not None and existing is not cls:
        raise TypeError(f"runtime name {name!r} is taken by {existing.__qualname__}")
    _registry[name] = cls
    return cls


def _load_entry_points() -> None:
    if _state["entry_points_loaded"]:
        return
    _state["entry_points_loaded"] = True
    for point in sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda p: p.name):
        try:
            register(point.load())
        except ImportError as exc:  # an optional extra is not installed: the others still work
            _broken[point.name] = f"{type(exc).__name__}: {exc}"


def runtime_class(name: str) -> type[Runtime]:
    """The runtime registered as ``name``; a UsageError with a suggestion otherwise."""
    _load_entry_points()
    if name in _registry:
        return _registry[name]
    if name in _broken:
        raise UsageError(
            f"the {name} runtime cannot be loaded ({_broken[name]})",
            hint=EXTRAS.get(name, "reinstall fluxdrive"),
        )
    close = difflib.get_close_matches(name, list(_registry), n=1)
    hint = f"did you mean '{close[0]}'?" if close else f"available: {', '.join(sorted(_registry))}"
    raise UsageError(f"unknown runtime {name!r}", hint=hint)


def available() -> dict[str, type[Runtime]]:
    """Every registered runtime by name."""
    _load_entry_points()
    return dict(sorted(_registry.items()))
