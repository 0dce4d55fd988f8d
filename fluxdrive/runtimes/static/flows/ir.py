"""A small language-neutral picture of code, made from tree-sitter syntax trees, that data flow runs on.

JavaScript, TypeScript and Go differ in syntax, not in the questions a reviewer
asks: which value reaches this call, and where did it come from. Each
language's adapter (:mod:`.javascript`, :mod:`.golang`) turns its syntax tree
into these values once; the flow engine (:mod:`.engine`) and the checks never
look at a language's node kinds. What does not matter to data flow (types,
loops' conditions, most operators) is kept only as "a value made of these
parts" (:class:`Other`), so an unknown construct still carries its taint.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Literal, TypeAlias

ConstKind = Literal["string", "number", "bool", "null", "regex"]


@dataclass(frozen=True, slots=True)
class Name:
    """A variable, parameter, import or global read by name."""

    id: str
    line: int


@dataclass(frozen=True, slots=True)
class Member:
    """``obj.name`` (also ``obj["name"]`` with a constant key, Go's ``x.Field``)."""

    obj: Expr
    name: str
    line: int


@dataclass(frozen=True, slots=True)
class Index:
    """``obj[key]`` with a computed key."""

    obj: Expr
    key: Expr
    line: int


@dataclass(frozen=True, slots=True)
class Call:
    """A call or ``new``; ``spread`` marks a last argument passed as ``...args``."""

    func: Expr
    args: tuple[Expr, ...]
    line: int
    new: bool = False
    spread: bool = False


@dataclass(frozen=True, slots=True)
class Const:
    """A literal: its text for strings and patterns, as written for the rest."""

    kind: ConstKind
    value: str
    line: int


@dataclass(frozen=True, slots=True)
class Concat:
    """Text joined from parts: a template literal, ``a + b`` on text, ``fmt.Sprintf``."""

    parts: tuple[Expr, ...]
    line: int


@dataclass(frozen=True, slots=True)
class Obj:
    """An object or struct literal; a ``None`` key is a computed key or a spread."""

    entries: tuple[tuple[str | None, Expr], ...]
    line: int


@dataclass(frozen=True, slots=True)
class Arr:
    """An array, slice or tuple literal."""

    items: tuple[Expr, ...]
    line: int


@dataclass(frozen=True, slots=True)
class Lambda:
    """A function written where a value is expected (a callback)."""

    function: Function
    line: int


@dataclass(frozen=True, slots=True)
class Other:
    """Any other expression: its value is made of its parts (``a ? b : c``, ``await x``, ``!x``)."""

    parts: tuple[Expr, ...]
    line: int
    number: bool = False  # the result is a number or a truth value whatever the parts (a comparison, ``typeof``)


Expr: TypeAlias = Name | Member | Index | Call | Const | Concat | Obj | Arr | Lambda | Other


@dataclass(frozen=True, slots=True)
class Assign:
    """``target = value`` (``+=`` when ``add``); ``nested``: inside a branch or loop (the old value may survive)."""

    target: Expr
    value: Expr
    line: int
    nested: bool = False
    add: bool = False


@dataclass(frozen=True, slots=True)
class Unpack:
    """``const {a, b: c} = value`` / ``x, err := f()``: each name takes a part of the value.

    ``fields`` pairs a name with the field it takes (``None``: an element, or the whole value
    for a Go multi-value call's first result).
    """

    names: tuple[tuple[str, str | None], ...]
    value: Expr
    line: int
    nested: bool = False


@dataclass(frozen=True, slots=True)
class Loop:
    """``for (k in obj)``, ``for (v of list)``, Go's ``for k, v := range x``: names bound from ``source``."""

    key: str | None
    item: str | None
    source: Expr
    line: int
    keys_of: bool  # JavaScript ``for..in``: the key walks the source's property names


@dataclass(frozen=True, slots=True)
class Evaluate:
    """An expression evaluated for its effect (a call statement)."""

    expr: Expr
    line: int


@dataclass(frozen=True, slots=True)
class Return:
    value: Expr | None
    line: int


@dataclass(frozen=True, slots=True)
class Guard:
    """The condition of an ``if``: checks made on a value before a sink trust it for that sink."""

    condition: Expr
    line: int
    exits: bool  # the branch taken when the check fails returns, throws or continues
    until: int = 0  # the last line of the branch: a check that does not exit vouches only inside it


Statement: TypeAlias = Assign | Unpack | Loop | Evaluate | Return | Guard


@dataclass(frozen=True, slots=True)
class Param:
    """A parameter: its name, the names destructured from it, its declared type and decorators."""

    name: str
    position: int
    fields: tuple[tuple[str, str], ...] = ()  # (name bound, field read) for ``{query, body}`` parameters
    type: str = ""
    decorators: tuple[str, ...] = ()


@dataclass(frozen=True)
class Function:
    """One function, method or the top level of a file, its statements in source order."""

    name: str
    params: tuple[Param, ...]
    body: tuple[Statement, ...]
    line: int
    end: int
    exported: bool = False
    owner: str = ""  # the class (or Go receiver type) a method belongs to
    role: Literal["function", "method", "constructor", "module"] = "function"
    variadic: bool = False
    decorators: tuple[str, ...] = ()
    receiver: str = ""  # a Go method's receiver name: ``r.helper()`` calls a method of the same type

    @property
    def qualified(self) -> str:
        """``Class.method`` or ``name``."""
        return f"{self.owner}.{self.name}" if self.owner else self.name


@dataclass(frozen=True)
class Module:
    """One parsed file: its imports (local name -> module path), functions and top level."""

    path: str
    language: str
    imports: dict[str, str]
    functions: tuple[Function, ...]
    top: Function
    exports: frozenset[str] = frozenset()
    classes: dict[str, str] = field(default_factory=dict)  # class name -> its base, for exported-ness


# Reading expressions: shared by the flow engine, its sink checks and the pollution check.


def dotted(expr: Expr) -> str | None:
    """``req.query.id`` for a chain of names and fields, else None."""
    if isinstance(expr, Name):
        return expr.id
    if isinstance(expr, Member):
        base = dotted(expr.obj)
        return f"{base}.{expr.name}" if base else None
    if isinstance(expr, Call) and not expr.args:
        base = dotted(expr.func)
        return f"{base}()" if base else None
    return None


def root_name(expr: Expr) -> str:
    """The first name of a chain (``res`` in ``res.status(302).redirect``)."""
    while True:
        if isinstance(expr, Name):
            return expr.id
        if isinstance(expr, Member | Index):
            expr = expr.obj
        elif isinstance(expr, Call):
            expr = expr.func
        else:
            return ""


def names_in(expr: Expr) -> Iterator[str]:
    """Every dotted chain read in an expression (for guards: which values a check looks at)."""
    path = dotted(expr)
    if path and not path.endswith("()"):
        yield path
    if isinstance(expr, Member):
        yield from names_in(expr.obj)
    elif isinstance(expr, Index):
        yield from names_in(expr.obj)
        yield from names_in(expr.key)
    elif isinstance(expr, Call):
        yield from names_in(expr.func)
        for arg in expr.args:
            yield from names_in(arg)
    elif isinstance(expr, Concat | Other):
        for part in expr.parts:
            yield from names_in(part)
