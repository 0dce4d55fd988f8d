"""A command's flags as one frozen dataclass: declared once, parsed by Typer, handed over as a value.

A command with two dozen options would otherwise take two dozen parameters
and thread each one by hand into the object the engine wants. Here the
fields of a dataclass carry the ``Annotated[..., typer.Option(...)]`` that
Typer reads, :func:`takes` gives Typer a function with exactly that
signature, and the command itself receives one instance.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
from collections.abc import Callable
from typing import Any, TypeVar, get_type_hints

Flags = TypeVar("Flags")


def takes(flags: type[Flags]) -> Callable[[Callable[[Flags], None]], Callable[..., None]]:
    """Decorate ``command(flags: Flags)`` so that Typer sees one parameter per field of ``flags``."""
    hints = get_type_hints(flags, include_extras=True)
    parameters = [
        inspect.Parameter(
            field.name,
            inspect.Parameter.POSITIONAL_OR_KEYWORD,
            default=field.default if field.default is not dataclasses.MISSING else inspect.Parameter.empty,
            annotation=hints[field.name],
        )
        for field in dataclasses.fields(flags)  # type: ignore[arg-type]
    ]

    def decorate(command: Callable[[Flags], None]) -> Callable[..., None]:
        @functools.wraps(command)
        def parsed(**values: Any) -> None:
            command(flags(**values))

        parsed.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]
        parsed.__annotations__ = {p.name: p.annotation for p in parameters}
        del parsed.__wrapped__  # Typer must read this signature, not the command's
        return parsed

    return decorate
