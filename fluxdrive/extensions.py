"""Every extension point of fluxdrive, in one place.

A plugin is a Python package that declares entry points in these groups.
fluxdrive's own built-ins are declared the same way, in its own
``pyproject.toml``, so there is one registration path and a plugin is
loaded exactly like a built-in (simonw/llm's ``hookspecs.py`` plays this
part there; bandit loads its checks the same way).

- ``fluxdrive.runtimes``: a :class:`~fluxdrive.runtimes.Runtime` subclass, how an agent is executed
  (``static = "fluxdrive.runtimes.static:StaticRuntime"``);
- ``fluxdrive.checks``: a module of syntax-tree checks for the static runtime
  (``safety_web = "fluxdrive.runtimes.static.checks.safety_web"``);
- ``fluxdrive.analyzers``: an analyzer of the static runtime, a real tool run once per review
  (``ruff = "fluxdrive.runtimes.static.analyzers.ruff:run"``);
- ``fluxdrive.publishers``: a publisher class, where a review is posted
  (``github = "fluxdrive.publish.github:GitHubPublisher"``).

:func:`load` reads one group: every entry point, sorted by name so the
order never depends on install order; one that fails to import is kept
with the reason, so a broken plugin is one line in ``fluxdrive doctor``-like
output and never takes a review down.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib.metadata import entry_points
from typing import Any

RUNTIMES = "fluxdrive.runtimes"
CHECKS = "fluxdrive.checks"
ANALYZERS = "fluxdrive.analyzers"
PUBLISHERS = "fluxdrive.publishers"
GROUPS = (RUNTIMES, CHECKS, ANALYZERS, PUBLISHERS)


@dataclass(frozen=True, slots=True)
class Loaded:
    """What one group declares: the objects that loaded, and why the others did not."""

    objects: dict[str, Any]
    broken: dict[str, str]


def load(group: str) -> Loaded:
    """Every entry point of ``group``, loaded, by name (a failing one is recorded in ``broken``, not raised)."""
    if group not in GROUPS:
        raise ValueError(f"{group!r} is not an extension point of fluxdrive: {', '.join(GROUPS)}")
    objects: dict[str, Any] = {}
    broken: dict[str, str] = {}
    for point in sorted(entry_points(group=group), key=lambda p: p.name):
        if point.name in objects:
            continue  # the first distribution wins, as importlib.metadata lists them
        try:
            objects[point.name] = point.load()
        except Exception as exc:
            broken[point.name] = f"{type(exc).__name__}: {exc}"
    return Loaded(objects, broken)
