"""Which publishers exist: the ``fluxdrive.publishers`` entry points, built-ins and plugins alike.

Why through entry points: GitHub and GitLab are declared in fluxdrive's own ``pyproject.toml`` exactly
as a plugin declares a third forge, so the CLI (``fluxdrive review --publish NAME``) reaches a plugin
the way it reaches a built-in. An entry point is checked when it is looked up: it must be a
:class:`~fluxdrive.publish.base.Publisher` subclass whose ``name`` is the entry point's name and
that declares its token variable and a ``review`` mode; one that fails is reported, never raised from
deep inside a review.
"""

from __future__ import annotations

from fluxdrive import extensions
from fluxdrive.errors import UsageError
from fluxdrive.publish.base import Publisher

# ``--publish checks``: GitHub's check run, the one host mode that has a name of its own on the CLI
ALIASES = {"checks": ("github", "checks")}


def _problem(name: str, found: object) -> str | None:
    """Why ``found`` cannot be the publisher ``name`` (None: it can)."""
    if not (isinstance(found, type) and issubclass(found, Publisher)):
        return "not a fluxdrive.publish.Publisher subclass"
    if getattr(found, "name", None) != name:
        return f"its name is {getattr(found, 'name', None)!r}, the entry point's is {name!r}"
    if not getattr(found, "token_env_var", None) or "review" not in found.modes:
        return "it declares no token_env_var or no 'review' mode"
    return None


def publishers() -> dict[str, type[Publisher]]:
    """Every usable publisher, by name (sorted)."""
    loaded = extensions.load(extensions.PUBLISHERS)
    return {name: found for name, found in loaded.objects.items() if _problem(name, found) is None}


def publisher(name: str) -> type[Publisher]:
    """The publisher called ``name``; a :class:`UsageError` naming the known ones for any other."""
    loaded = extensions.load(extensions.PUBLISHERS)
    if name in loaded.objects:
        problem = _problem(name, loaded.objects[name])
        if problem is None:
            found: type[Publisher] = loaded.objects[name]
            return found
        raise UsageError(f"the publisher {name!r} cannot be used: {problem}")
    if name in loaded.broken:
        raise UsageError(f"the publisher {name!r} does not load: {loaded.broken[name]}")
    known = ", ".join(publishers()) or "none"
    raise UsageError(f"unknown publisher {name!r}", hint=f"known publishers: {known}")


def resolve(where: str) -> tuple[type[Publisher], str]:
    """``--publish WHERE``: the publisher and its mode (a publisher's name, or an alias such as ``checks``)."""
    host, mode = ALIASES.get(where, (where, "review"))
    loaded = extensions.load(extensions.PUBLISHERS)
    if host not in loaded.objects and host not in loaded.broken:
        names = sorted([*publishers(), *ALIASES])
        raise UsageError(f"unknown --publish {where!r}", hint="use " + ", ".join(names))
    return publisher(host), mode
