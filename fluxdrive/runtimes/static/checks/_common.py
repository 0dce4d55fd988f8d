"""Helpers shared by several check modules (private: registers no checks).

Everything here used to be copied between the check modules. Each helper
keeps the exact behaviour of the copies it replaces, so two helpers that look
alike but differ in a detail (:func:`snippet` and :func:`snippet_plain`,
:func:`own_nodes` and :func:`body_nodes`) stay separate on purpose.
"""

from __future__ import annotations

import ast
import textwrap
from collections.abc import Iterable, Iterator
from typing import TypeAlias
from weakref import WeakKeyDictionary

from fluxdrive.runtimes.static.checks.engine.pymodule import PyModule
from fluxdrive.runtimes.static.checks.engine.syntax import call_name, child_nodes, keyword, resolve, walk

Function: TypeAlias = ast.FunctionDef | ast.AsyncFunctionDef


# --------------------------------------------------------------------------
# Examples for the check decorators


def example(text: str) -> str:
    """An example snippet written indented inside a decorator, dedented to column 0."""
    return textwrap.dedent(text).lstrip("\n")


def example_lines(*lines: str) -> str:
    """An example snippet given one source line per argument."""
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------
# Labels for titles


def name_tail(name: str) -> str:
    """The last part of a dotted name: ``subprocess.run`` -> ``run``."""
    return name.rsplit(".", 1)[-1]


def clip(text: str, limit: int, marker: str = "…") -> str:
    """``text`` cut to ``limit`` characters (``marker`` included) so titles stay short."""
    return text if len(text) <= limit else text[: limit - len(marker)] + marker


def snippet(node: ast.AST, limit: int = 40) -> str:
    """Source text of an expression, on one line and shortened with "…" (safety, correctness)."""
    try:
        text = " ".join(ast.unparse(node).split())
    except Exception:  # unparse of an odd node: a label is not worth failing over
        return "…"
    return clip(text, limit)


def snippet_plain(node: ast.AST, limit: int = 40) -> str:
    """Source text of an expression as unparsed, shortened with "..." (performance titles)."""
    try:
        text = ast.unparse(node)
    except Exception:  # odd trees must not break a check
        return "..."
    return clip(text, limit, "...")


def is_literal(node: ast.AST | None, value: object) -> bool:
    """``node`` is the literal True / False / None given."""
    return isinstance(node, ast.Constant) and node.value is value


def str_value(node: ast.AST | None) -> str | None:
    """The value of a string literal, None for anything else."""
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


# --------------------------------------------------------------------------
# Imports and calls


def qualified_name(node: ast.Call, imports: dict[str, str]) -> str:
    """``call_name`` with its first part mapped through the file's imports."""
    name = call_name(node)
    head, dot, rest = name.partition(".")
    origin = imports.get(head)
    return f"{origin}{dot}{rest}" if origin else name


def module_calls(module: PyModule) -> Iterator[ast.Call]:
    """Every call in the module, from the shared node list."""
    for node in module.of_type(ast.Call):
        assert isinstance(node, ast.Call)
        yield node


def first_arg(node: ast.Call, *names: str) -> ast.expr | None:
    """The first positional argument, else the first of the keyword ``names`` given."""
    if node.args and not isinstance(node.args[0], ast.Starred):
        return node.args[0]
    return next((value for name in names if (value := keyword(node, name)) is not None), None)


def resolve_value(node: ast.expr, function: ast.AST | None, values: dict[str, ast.expr]) -> ast.expr:
    """Follow one local assignment, else one module-level assignment (``values``)."""
    value = resolve(node, function)
    if value is node and isinstance(node, ast.Name):
        return values.get(node.id, node)
    return value


# --------------------------------------------------------------------------
# Functions, parameters and their nodes


def function_defs(nodes: Iterable[ast.AST]) -> Iterator[Function]:
    """The (async) function definitions among ``nodes`` (``module.nodes``, an ``ast.walk``)."""
    for node in nodes:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            yield node


def where_def(module: PyModule, function: Function) -> str:
    """``in name()`` for a definition itself (``module.where`` of its first statement)."""
    return module.where(function.body[0]) if function.body else f"in {function.name}()"


def positional_args(function: Function) -> list[ast.arg]:
    """Positional-only and ordinary parameters, in order."""
    return [*function.args.posonlyargs, *function.args.args]


def param_defaults(function: Function) -> list[tuple[str, ast.expr]]:
    """(parameter name, default expression) for every parameter that has a default."""
    arguments = function.args
    positional = positional_args(function)
    named = positional[len(positional) - len(arguments.defaults) :]
    pairs = [(a.arg, d) for a, d in zip(named, arguments.defaults, strict=True)]
    keyword_only = zip(arguments.kwonlyargs, arguments.kw_defaults, strict=True)
    pairs += [(a.arg, d) for a, d in keyword_only if d is not None]
    return pairs


# Several checks walk the same function; each walk is computed once per function node and
# dropped with the tree (AST nodes hash by identity and accept weak references).
_OWN: WeakKeyDictionary[ast.AST, list[ast.AST]] = WeakKeyDictionary()
_BODY: WeakKeyDictionary[ast.AST, list[ast.AST]] = WeakKeyDictionary()
_WALK: WeakKeyDictionary[ast.AST, list[ast.AST]] = WeakKeyDictionary()


def own_nodes(function: Function) -> list[ast.AST]:
    """Nodes of a function in source order; nested defs are listed but not entered."""
    cached = _OWN.get(function)
    if cached is not None:
        return cached
    found: list[ast.AST] = []
    stack = child_nodes(function)[::-1]
    while stack:
        node = stack.pop()
        found.append(node)
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            stack.extend(child_nodes(node)[::-1])
    _OWN[function] = found
    return found


def body_nodes(function: Function) -> list[ast.AST]:
    """Nodes of a function body (unordered), skipping nested functions and classes entirely."""
    cached = _BODY.get(function)
    if cached is not None:
        return cached
    found: list[ast.AST] = []
    stack: list[ast.AST] = list(function.body)
    while stack:
        node = stack.pop()
        found.append(node)
        stack.extend(
            child
            for child in child_nodes(node)
            if not isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
        )
    _BODY[function] = found
    return found


def walk_function(function: ast.AST) -> list[ast.AST]:
    """``ast.walk(function)`` as a list, computed once per function node."""
    cached = _WALK.get(function)
    if cached is None:
        cached = _WALK[function] = walk(function)
    return cached


def _position(node: ast.AST) -> tuple[int, int]:
    """Where a node starts, for ordering references in source order."""
    return getattr(node, "lineno", 0), getattr(node, "col_offset", 0)


def _end(node: ast.AST) -> tuple[int, int]:
    """Where a node ends (0, 0 when unknown), so later references compare after it."""
    return getattr(node, "end_lineno", 0) or 0, getattr(node, "end_col_offset", 0) or 0


def first_use(function: Function, name: str, after: ast.AST) -> ast.Name | None:
    """The first reference to ``name`` after a statement, in source order (None if rebound)."""
    start = _end(after)
    refs = [n for n in own_nodes(function) if isinstance(n, ast.Name) and n.id == name and _position(n) >= start]
    first = min(refs, key=_position, default=None)
    return first if first is not None and isinstance(first.ctx, ast.Load) else None


def dereference(module: PyModule, name: ast.Name) -> ast.expr | None:
    """``x.attr`` / ``x[k]`` / ``x()`` when the name is used that way, else None."""
    parent = module.parents.get(name)
    if isinstance(parent, ast.Attribute) and parent.value is name:
        call = module.parents.get(parent)
        return call if isinstance(call, ast.Call) and call.func is parent else parent
    if isinstance(parent, ast.Subscript) and parent.value is name:
        return parent
    if isinstance(parent, ast.Call) and parent.func is name:
        return parent
    return None


def mentions_name(node: ast.AST | None, name: str) -> bool:
    """The variable ``name`` appears anywhere in ``node``."""
    return node is not None and any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(node))


def caught_names(handler: ast.ExceptHandler) -> set[str]:
    """Exception class names an except clause catches (a bare except catches BaseException)."""
    if handler.type is None:
        return {"BaseException"}
    types = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return {name_tail(snippet(t, 200)) for t in types}


# --------------------------------------------------------------------------
# Web requests and route handlers


REQUEST_FIELDS = {
    "args",
    "form",
    "values",
    "files",
    "GET",
    "POST",
    "FILES",
    "query_params",
    "path_params",
    "cookies",
    "COOKIES",
    "json",
    "data",
    "get_json",
    "get_data",
    "match_info",
    "query",
    "body",
}
ROUTE_METHODS = {"get", "post", "put", "patch", "delete", "route", "api_route", "websocket"}
HTTP_VERBS = {"get", "post", "put", "patch", "delete", "head", "options", "request"}


def request_field(node: ast.AST) -> str | None:
    """``request.args`` when ``node`` reads client input from the request object."""
    if (
        isinstance(node, ast.Attribute)
        and node.attr in REQUEST_FIELDS
        and isinstance(node.value, ast.Name)
        and node.value.id in {"request", "req"}
    ):
        return f"{node.value.id}.{node.attr}"
    return None


def from_request(node: ast.AST) -> str | None:
    """The first :func:`request_field` read anywhere inside ``node``."""
    return next((f for sub in ast.walk(node) if (f := request_field(sub))), None)


def route_decorators(function: Function, methods: set[str]) -> Iterator[ast.Call]:
    """``@app.get(...)`` / ``@router.post(...)``-style decorator calls whose method is in ``methods``."""
    for decorator in function.decorator_list:
        if (
            isinstance(decorator, ast.Call)
            and isinstance(decorator.func, ast.Attribute)
            and decorator.func.attr in methods
        ):
            yield decorator


def route_call(function: Function) -> ast.Call | None:
    """The ``@app.route("/x")`` / ``@router.post("/x")`` decorator, if any."""
    routes = route_decorators(function, ROUTE_METHODS)
    return next((d for d in routes if str_value(first_arg(d, "path", "rule")) is not None), None)


def route_path(function: Function) -> str:
    """The URL rule of a handler's route decorator ("" without one)."""
    route = route_call(function)
    return (str_value(first_arg(route, "path", "rule")) or "") if route else ""


def is_django_view(function: Function) -> bool:
    """The first parameter (after self/cls) is ``request``, as in a Django view."""
    names = [a.arg for a in positional_args(function) if a.arg not in {"self", "cls"}]
    return bool(names) and names[0] == "request"


# --------------------------------------------------------------------------
# Receivers and loops (performance)


def receiver_parts(expr: ast.AST) -> list[str]:
    """``self.db.session.query(User)`` -> ["self", "db", "session", "query"]."""
    parts: list[str] = []
    while True:
        if isinstance(expr, ast.Call):
            expr = expr.func
        elif isinstance(expr, ast.Attribute):
            parts.append(expr.attr)
            expr = expr.value
        elif isinstance(expr, ast.Subscript):
            expr = expr.value
        else:
            break
    if isinstance(expr, ast.Name):
        parts.append(expr.id)
    return [p.lower() for p in reversed(parts)]


# --------------------------------------------------------------------------
# Numeric literals (game design and quality)


def numeric_literal(node: ast.AST, module: PyModule) -> tuple[ast.expr, float] | None:
    """(expression, signed value) for a number literal; ``-3`` gives the UnaryOp and -3."""
    if not isinstance(node, ast.Constant) or isinstance(node.value, bool):
        return None
    if not isinstance(node.value, int | float):
        return None
    parent = module.parents.get(node)
    if isinstance(parent, ast.UnaryOp) and isinstance(parent.op, ast.USub):
        return parent, -node.value
    return node, node.value


def literal_exempt(expr: ast.expr, module: PyModule) -> bool:
    """Indexes and slices, ``range()`` bounds and default argument values are not magic."""
    child: ast.AST = expr
    for parent in module.ancestors(expr):
        if isinstance(parent, ast.Subscript) and child is parent.slice:
            return True
        if isinstance(parent, ast.Slice | ast.arguments):
            return True
        if isinstance(parent, ast.Call) and call_name(parent) == "range":
            return child is not parent.func
        if isinstance(parent, ast.stmt):
            return False
        child = parent
    return False


def in_arithmetic(expr: ast.expr, module: PyModule) -> str | None:
    """ "arithmetic" / "a comparison" when ``expr`` is an operand of one, else None."""
    parent = module.parents.get(expr)
    if isinstance(parent, ast.BinOp):
        return "arithmetic"
    if isinstance(parent, ast.AugAssign) and parent.value is expr:
        return "arithmetic"
    if isinstance(parent, ast.Compare):
        return "a comparison"
    return None
