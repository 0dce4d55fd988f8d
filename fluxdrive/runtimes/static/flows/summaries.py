"""What a project function does with its parameters, as its callers need to know."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class SummarySink:
    """A parameter of a function that reaches a sink inside it (or inside what it calls)."""

    param: int
    sink: str
    callee: str
    path: str
    line: int
    program: str = ""  # the program an argument vector is for


@dataclass
class Summary:
    """What a function does with its parameters, as its callers need to know."""

    returns: set[int] = field(default_factory=set)
    sinks: dict[tuple[int, str, str, int], SummarySink] = field(default_factory=dict)  # (param, class, path, line)
    outside: str | None = None
    unknown: bool = False
