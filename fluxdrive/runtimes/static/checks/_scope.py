"""What a function's surroundings say about its values: is it an entry point, what is ``self.x``.

Taint tracking sees one function at a time; whether its parameters are the
client's and what ``self.path`` holds are facts about where it sits:

- **entry points** are called by a framework with the client's data, so their
  parameters are outside data: route handlers (``@app.get("/x")``), Django
  and aiohttp views (first parameter ``request``), WSGI apps
  (``environ, start_response``), GraphQL resolvers (graphene's
  ``resolve_x(self, info, ...)``, strawberry's ``@strawberry.field``,
  ariadne's ``@query.field("x")``), and the methods of request-handler
  classes (``do_GET``, tornado's ``get(self, slug)``). Command-line entry
  points (click/typer commands) are entries too, with a label that keeps their
  findings lower: whoever types the command already runs the program.
- **handler fields**: in a ``BaseHTTPRequestHandler`` the request is
  ``self.path``, ``self.rfile``, ``self.headers``; in a socketserver handler
  ``self.request``; in a class-based view the URL's captures are
  ``self.kwargs``/``self.args``.
- **attributes**: ``self.x = request.args["x"]`` in one method makes
  ``self.x`` outside data in every method of the class; ``self.x = x`` in a
  public class's ``__init__`` makes it the caller's parameter (joblib-style
  ``eval(self.pre_dispatch)``).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping

from fluxdrive.runtimes.static.checks._common import Function, is_django_view, positional_args, route_call
from fluxdrive.runtimes.static.checks.engine.pymodule import PyModule
from fluxdrive.runtimes.static.checks.engine.summaries import resolver_of
from fluxdrive.runtimes.static.checks.engine.syntax import call_name
from fluxdrive.runtimes.static.checks.engine.taint import Flow, Opaque, Scope

_HTTP_HANDLERS = frozenset({"BaseHTTPRequestHandler", "SimpleHTTPRequestHandler", "CGIHTTPRequestHandler"})
_SOCKET_HANDLERS = frozenset({"BaseRequestHandler", "StreamRequestHandler", "DatagramRequestHandler"})
_TORNADO = frozenset({"RequestHandler", "WebSocketHandler"})
_VIEW_SUFFIXES = ("View", "ViewSet", "APIView", "Resource", "Handler")
_RESOLVER_DECORATORS = frozenset({"field", "mutation", "subscription", "query"})
_CLI_DECORATORS = frozenset({"command", "group", "callback"})
_FIXED_NODES = (
    ast.Constant, ast.Name, ast.Load, ast.Tuple, ast.List, ast.Set, ast.Dict,
    ast.BinOp, ast.operator, ast.UnaryOp, ast.unaryop, ast.Attribute,
)  # fmt: skip
_HTTP_FIELDS = frozenset({"path", "rfile", "headers", "requestline", "raw_requestline"})


def _base_names(cls: ast.ClassDef) -> set[str]:
    return {call_name(base).rsplit(".", 1)[-1] for base in cls.bases if call_name(base)}


def owning_class(module: PyModule, function: Function) -> ast.ClassDef | None:
    """The class ``function`` is a method of (None for a plain or nested function)."""
    parent = module.parents.get(function)
    return parent if isinstance(parent, ast.ClassDef) else None


def handler_fields(cls: ast.ClassDef | None) -> frozenset[str]:
    """The ``self.<field>`` names holding the request in a request-handler class."""
    if cls is None:
        return frozenset()
    bases = _base_names(cls)
    if bases & _HTTP_HANDLERS:
        return _HTTP_FIELDS
    if bases & _SOCKET_HANDLERS:
        return frozenset({"request", "rfile"})
    if bases & _TORNADO:
        return frozenset({"path_args", "path_kwargs"})
    if any(b.endswith(_VIEW_SUFFIXES) for b in bases):
        return frozenset({"kwargs", "args"})
    return frozenset()


def entry_label(module: PyModule, function: Function) -> str:
    """How the framework calls ``function``: "request parameter", "command-line argument", or ""."""
    names = [a.arg for a in positional_args(function) if a.arg not in {"self", "cls"}]
    if route_call(function) is not None or is_django_view(function):
        return "request parameter"
    if names[:2] == ["environ", "start_response"]:
        return "request parameter"
    cls = owning_class(module, function)
    if cls is not None and handler_fields(cls) and not function.name.startswith("_"):
        return "request parameter"
    if function.name.startswith("resolve_") and "info" in names[:2]:
        return "request parameter"  # graphene
    for decorator in function.decorator_list:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        dotted = call_name(decorator) if isinstance(decorator, ast.Call) else _dotted(target)
        tail = dotted.rsplit(".", 1)[-1]
        if tail in _RESOLVER_DECORATORS and ("strawberry" in dotted or names[:2] in (["obj", "info"], ["_", "info"])):
            return "request parameter"  # strawberry / ariadne
        if tail in _CLI_DECORATORS and dotted.split(".")[0] in {"click", "app", "cli", "typer"}:
            return "command-line argument"
    return ""


_CONVERTED = re.compile(r"<(?:int|float|uuid):(\w+)>|\{(\w+):(?:int|float|uuid)\}")
_NUMBER_TYPES = frozenset({"int", "float", "bool", "UUID", "uuid.UUID", "datetime", "date", "Decimal"})


def converted_parameters(function: Function) -> frozenset[str]:
    """Entry parameters the framework hands over as numbers: ``<int:id>`` rules, ``id: int`` annotations."""
    route = route_call(function)
    rule = route.args[0] if route is not None and route.args else None
    names = set()
    if isinstance(rule, ast.Constant) and isinstance(rule.value, str):
        names |= {a or b for a, b in _CONVERTED.findall(rule.value)}
    for arg in [*function.args.args, *function.args.kwonlyargs]:
        if arg.annotation is not None and _dotted(arg.annotation) in _NUMBER_TYPES:
            names.add(arg.arg)
    return frozenset(names)


def _dotted(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    return ""


def known_names(module: PyModule) -> frozenset[str]:
    """Module-level names with a fixed meaning: imported modules, definitions, constant assignments."""

    def make() -> frozenset[str]:
        names = {(a.asname or a.name).split(".")[0] for n in module.of_type(ast.Import) for a in n.names}  # type: ignore[attr-defined]
        for node in module.tree.body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                names.add(node.name)
        names.update(name for name, value in module.constants.items() if _fixed(value))
        return frozenset(names - imported_names(module))

    return module.memo("known names", make)


def imported_names(module: PyModule) -> frozenset[str]:
    """Names bound by ``from x import name``: a function when called, a value of unknown origin otherwise."""
    nodes = module.of_type(ast.ImportFrom)
    return frozenset(a.asname or a.name for n in nodes for a in n.names if a.name != "*")  # type: ignore[attr-defined]


def _fixed(value: ast.expr) -> bool:
    """A literal, or a container/expression of literals (and of other names, trusted as constants)."""
    return all(isinstance(n, _FIXED_NODES) for n in ast.walk(value))


def class_attributes(module: PyModule, cls: ast.ClassDef) -> Mapping[str, str]:
    """``self.x`` -> what the class sets it from: outside data, or (public ``__init__``) a parameter."""
    return module.memo(("class attributes", cls), lambda: _attributes(module, cls))


def _attributes(module: PyModule, cls: ast.ClassDef) -> dict[str, str]:
    found: dict[str, str] = {}
    fields = handler_fields(cls)
    known = known_names(module)
    for method in (n for n in cls.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)):
        entry = entry_label(module, method)
        scope = Scope(
            entry=entry,
            numbers=converted_parameters(method),
            fields=fields,
            known=known,
            imported=imported_names(module),
        )
        outside = Flow(method, parameters=False, spec=module.taint_spec, resolver=resolver_of(module), scope=scope)
        constructor = method.name == "__init__" and not cls.name.startswith("_")
        given = Flow(method, spec=module.taint_spec, resolver=resolver_of(module), scope=scope) if constructor else None
        for statement, name, value in _self_assignments(method):
            label = outside.taint_at(value, statement)
            if label and not isinstance(label, Opaque):
                found.setdefault(name, f"`self.{name}` (set from {label})")
            elif given is not None:
                passed = given.taint_at(value, statement)
                if passed and passed.startswith("parameter "):
                    found.setdefault(name, f"{passed} of {cls.name}()")
    return found


def _self_assignments(method: Function) -> list[tuple[ast.stmt, str, ast.expr]]:
    """``self.x = value`` statements of a method (not of its nested functions)."""
    found: list[tuple[ast.stmt, str, ast.expr]] = []
    stack: list[ast.AST] = list(method.body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda):
            continue
        if isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            found.extend((node, t.attr, node.value) for t in targets if _is_self_attribute(t))  # type: ignore[attr-defined]
        stack.extend(ast.iter_child_nodes(node))
    return sorted(found, key=lambda item: (item[0].lineno, item[1]))


def _is_self_attribute(target: ast.expr) -> bool:
    return isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self"


def scope_of(module: PyModule, function: Function) -> Scope:
    """The :class:`Scope` of one function of ``module`` (computed once)."""

    def make() -> Scope:
        cls = owning_class(module, function)
        attributes = class_attributes(module, cls) if cls is not None else {}
        return Scope(
            entry=entry_label(module, function),
            numbers=converted_parameters(function),
            fields=handler_fields(cls),
            attributes=attributes,
            known=known_names(module),
            imported=imported_names(module),
        )

    return module.memo(("scope", function), make)
