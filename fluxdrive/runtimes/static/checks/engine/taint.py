"""Where a value inside one function comes from: intra-procedural taint with constant folding.

A check asks :class:`Flow` whether an expression, just before a statement,
carries data from outside (the request, user input, the network) and which
source. The flow walks the function's statements in order:

- **sources**: request fields (``request.args``, ``.form``, ``.cookies``,
  ...), the ``request`` object itself (also as ``self.request``) and anything
  built from it (a wrapper object, its methods' results), ``input()``,
  ``sys.stdin``, the environment, socket reads;
- **propagation**: assignments, augmented assignments, f-strings, ``%``,
  ``+``, ``.format``, method calls on tainted values, containers, dict
  entries under constant keys (``m["keyB"] = param`` taints only ``keyB``),
  comprehensions, loop targets;
- **sanitizers**: ``int``/``float``/``bool``/``len`` and comparisons (a
  number or a truth value carries no attacker-chosen text), and per sink kind
  the cleaners a check names (``escape`` for HTML);
- **constant folding**: ``num = 106`` then ``"safe" if 7 * 18 + num > 200
  else param`` is ``"safe"``; ``if 7 * 42 - 86 > 200:`` with a constant
  test runs only the branch taken; both branches of an unknown test merge.

Sources and sanitizers are data (:mod:`.taint_spec`, ``data/taint/python.yaml``).
Nested functions are flows of their own. A call into one of the project's own
functions is judged by that function's summary when a :class:`Resolver` knows
it (:mod:`.summaries`: it returns a constant, passes its arguments on, or reads
the request itself); any other call's result is tainted when an argument or
its receiver is.
"""

from __future__ import annotations

import ast
import builtins
import operator
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from fluxdrive.runtimes.static.checks.engine.syntax import call_name
from fluxdrive.runtimes.static.checks.engine.taint_spec import TaintSpec, shipped

Function = ast.FunctionDef | ast.AsyncFunctionDef
_UNKNOWN = object()
_CONFIG_PARSERS = frozenset({"ConfigParser", "RawConfigParser", "SafeConfigParser"})
_STR_METHODS = frozenset({"split", "rsplit", "strip", "lstrip", "rstrip", "lower", "upper", "replace"})
_ROUTE_METHODS = frozenset({"route", "get", "post", "put", "patch", "delete"})
_MUTATORS = frozenset({"append", "extend", "insert", "add", "update", "setdefault", "appendleft", "extendleft", "put"})
_BINARY: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod, ast.Pow: operator.pow,
}  # fmt: skip
_COMPARE: dict[type[ast.cmpop], Callable[[Any, Any], Any]] = {
    ast.Gt: operator.gt, ast.GtE: operator.ge, ast.Lt: operator.lt, ast.LtE: operator.le,
    ast.Eq: operator.eq, ast.NotEq: operator.ne,
}  # fmt: skip


_BUILTINS = frozenset(dir(builtins))


class Opaque(str):
    """A source label for a value whose origin the flow cannot see (a global, ``self.x``, an
    unknown call's result): neither outside data nor a constant. Sink checks report such a
    value as "check where this comes from" instead of dropping it or calling it an attack."""

    __slots__ = ()


@dataclass(frozen=True, slots=True)
class Scope:
    """What a function's surroundings tell its flow.

    - ``entry``: the function is called by a framework with the client's data (a route, a
      GraphQL resolver, a WSGI app, a request handler's method), so its parameters are
      outside data even where parameters otherwise count for nothing;
    - ``fields``: ``self.<field>`` is the request in a request-handler class
      (``BaseHTTPRequestHandler.path``/``rfile``, a class-based view's ``kwargs``);
    - ``attributes``: ``self.<name>`` set elsewhere in the class, with what it was set from;
    - ``known``: module-level names with a fixed meaning (imports, definitions, constants).
    """

    entry: str = ""
    numbers: frozenset[str] = frozenset()  # entry parameters the framework converts (<int:id>, ``id: int``)
    fields: frozenset[str] = frozenset()
    attributes: Mapping[str, str] = field(default_factory=dict)
    known: frozenset[str] = frozenset()
    imported: frozenset[str] = frozenset()  # ``from settings import COMMAND``: a value of unknown origin


@dataclass(frozen=True, slots=True)
class Summary:
    """What a function's result carries: ``clean`` (constants, numbers), ``pass`` (what its
    arguments carry) or ``source`` (outside data it reads itself, named by ``label``)."""

    kind: Literal["clean", "pass", "source"]
    label: str = ""


class Resolver(Protocol):
    """Summaries of the functions a flow calls (the project's own helpers)."""

    def summary(self, call: ast.Call, instances: Mapping[str, str]) -> Summary | None:
        """The summary of the function ``call`` runs, when it is known."""

    def class_of(self, call: ast.Call) -> str | None:
        """A key for the class ``call`` instantiates, when it is one of the project's."""


@dataclass
class State:
    """What is known at one point: each name's taint (its source) and constant value, dict entries."""

    taint: dict[str, str | None] = field(default_factory=dict)
    consts: dict[str, Any] = field(default_factory=dict)
    entries: dict[str, dict[Any, str | None]] = field(default_factory=dict)
    items: dict[str, list[str | None]] = field(default_factory=dict)  # lists whose every position is known

    def copy(self) -> State:
        entries = {k: dict(v) for k, v in self.entries.items()}
        return State(dict(self.taint), dict(self.consts), entries, {k: list(v) for k, v in self.items.items()})

    def merge(self, other: State) -> State:
        """Either path may have run: a name is tainted if it is on one; a constant only if equal on both."""
        taint = {n: self.taint.get(n) or other.taint.get(n) for n in {*self.taint, *other.taint}}
        consts = {n: v for n, v in self.consts.items() if n in other.consts and other.consts[n] == v}
        entries: dict[str, dict[Any, str | None]] = {}
        for name in {*self.entries, *other.entries}:
            mine, theirs = self.entries.get(name, {}), other.entries.get(name, {})
            entries[name] = {k: mine.get(k) or theirs.get(k) for k in {*mine, *theirs}}
        items = {
            name: [a or b for a, b in zip(mine_items, other.items[name], strict=True)]
            for name, mine_items in self.items.items()
            if name in other.items and len(other.items[name]) == len(mine_items)
        }
        return State(taint, consts, entries, items)


class Flow:
    """The taint of one function's values, statement by statement."""

    def __init__(
        self,
        function: Function,
        *,
        parameters: bool = True,
        spec: TaintSpec | None = None,
        cleaners: tuple[str, ...] = (),
        resolver: Resolver | None = None,
        quote_escapes: bool = False,
        scope: Scope | None = None,
        opaque: bool = False,
    ) -> None:
        self.function = function
        self.spec = spec or shipped()
        self.scope = scope or Scope()
        self.opaque = opaque  # unknown origins are Opaque labels instead of nothing
        self.locals = _bound_names(function) if opaque else frozenset()
        self.cleaners = cleaners  # words in a call's name that make its result clean for this sink (``escape``)
        self.resolver = resolver
        self.quote_escapes = quote_escapes  # x.replace("'", "&apos;") is clean inside a quoted literal (XPath, SQL)
        self.before: dict[ast.AST, State] = {}
        self.parsed_from: dict[str, str] = {}  # url -> bar for url = urlparse(bar)
        self.instances: dict[str, str] = {}  # wrapper -> the project class it was built from
        self.configs: set[str] = set()  # names bound to a configparser.ConfigParser()
        self.fixed_path = _fixed_route(
            function
        )  # request.path is not the client's in a handler whose one URL rule has no variables
        start = State()
        if parameters or self.scope.entry:  # a caller, or a route (`/user/<name>`), chooses them
            arguments = function.args
            every = [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs, arguments.vararg, arguments.kwarg]
            for arg in every:
                skipped = {"self", "cls", "info", "start_response", *self.scope.numbers}
                if arg is not None and arg.arg not in skipped:
                    label = f"{self.scope.entry} `{arg.arg}`" if self.scope.entry else f"parameter `{arg.arg}`"
                    start.taint[arg.arg] = label
        self._block(function.body, start)

    # ------------------------------------------------------------ queries

    def taint_at(self, expr: ast.AST, statement: ast.AST) -> str | None:
        """The source of ``expr`` as evaluated just before ``statement`` (None: nothing from outside)."""
        state = self.before.get(statement)
        return self.eval(expr, state) if state is not None else None

    # --------------------------------------------------------- statements

    def _block(self, statements: list[ast.stmt], state: State) -> State:
        for statement in statements:
            state = self._statement(statement, state)
        return state

    def _statement(self, node: ast.stmt, state: State) -> State:  # noqa: C901 - one branch per statement kind
        self.before[node] = state.copy()
        if isinstance(node, ast.Assign):
            for target in node.targets:
                self._assign(target, node.value, state)
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            self._assign(node.target, node.value, state)
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
            self._mutation(node.value, state)
        elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
            name = node.target.id
            state.taint[name] = state.taint.get(name) or self.eval(node.value, state)
            state.consts.pop(name, None)
        elif isinstance(node, ast.If):
            test = self.const(node.test, state)
            if test is not _UNKNOWN:
                return self._block(node.body if test else node.orelse, state)
            body, orelse = self._block(node.body, state.copy()), self._block(node.orelse, state.copy())
            if _terminates(node.body) and not _terminates(node.orelse):  # a guard: only the other path goes on
                for name in _validated(node.test):
                    orelse.taint[name] = None
                    if name in self.parsed_from:  # url = urlparse(bar): checking url checks bar
                        orelse.taint[self.parsed_from[name]] = None
                return orelse
            if _terminates(node.orelse) and not _terminates(node.body):
                return body
            return body.merge(orelse)
        elif isinstance(node, ast.For | ast.AsyncFor):
            if isinstance(node.target, ast.Name):
                state.taint[node.target.id] = self.eval(node.iter, state)
                state.consts.pop(node.target.id, None)
            body = self._block(node.body, state.copy())
            return state.merge(body).merge(self._block(node.orelse, state.copy()))
        elif isinstance(node, ast.While):
            return state.merge(self._block(node.body, state.copy())).merge(self._block(node.orelse, state.copy()))
        elif isinstance(node, ast.With | ast.AsyncWith):
            for item in node.items:
                if isinstance(item.optional_vars, ast.Name):
                    state.taint[item.optional_vars.id] = self.eval(item.context_expr, state)
            return self._block(node.body, state)
        elif isinstance(node, ast.Try):
            after = self._block(node.body, state.copy())
            for handler in node.handlers:
                if not _terminates(handler.body):  # a handler that returns leaves nothing behind
                    after = after.merge(self._block(handler.body, state.copy()))
            after = after.merge(self._block(node.orelse, after.copy()))
            return self._block(node.finalbody, after)
        elif isinstance(node, ast.Match):
            chosen = _chosen_case(node, self.const(node.subject, state))
            if chosen is not None:  # a constant subject: only the case it matches runs
                return self._block(chosen.body, state)
            merged: State | None = None
            for case in node.cases:
                branch = self._block(case.body, state.copy())
                merged = branch if merged is None else merged.merge(branch)
            return merged or state
        return state

    def _mutation(self, call: ast.Call, state: State) -> None:
        """``items.append(param)``: a container that takes in a tainted value is tainted."""
        func = call.func
        if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)):
            return
        name = func.value.id
        if name in state.items and self._list_update(name, call, state):
            return
        if func.attr == "set" and name in self.configs and len(call.args) == 3 and name in state.entries:
            key = _entry_key(self, call.args[:2], state, configparser=True)
            if key is not _UNKNOWN:  # conf.set("section", "key", value)
                state.entries[name][key] = self.eval(call.args[2], state)
                return
        if func.attr not in _MUTATORS:
            return
        found = next((t for a in [*call.args, *(k.value for k in call.keywords)] if (t := self.eval(a, state))), None)
        if found:
            state.taint[name] = state.taint.get(name) or found
            state.entries.pop(name, None)
            state.consts.pop(name, None)

    def _list_update(self, name: str, call: ast.Call, state: State) -> bool:
        """Follow ``append`` / ``insert`` / ``pop`` on a list whose positions are known.

        False when the list is not followed (and is no longer tracked): the caller falls
        back to whole-list taint.
        """
        items = state.items[name]
        method = call.func.attr if isinstance(call.func, ast.Attribute) else ""
        args = call.args
        index = self.const(args[0], state) if args and method in {"insert", "pop"} else None
        added: ast.expr | None = None
        if call.keywords:
            pass
        elif method == "append" and len(args) == 1:
            added = args[0]
            items.append(self.eval(added, state))
        elif method == "insert" and len(args) == 2 and isinstance(index, int):
            added = args[1]
            items.insert(index, self.eval(added, state))
        elif method == "pop" and items and (not args or (isinstance(index, int) and -len(items) <= index < len(items))):
            items.pop(index if isinstance(index, int) else -1)
            return True
        if added is None:
            del state.items[name]
            return False
        state.taint[name] = state.taint.get(name) or self.eval(added, state)
        state.consts.pop(name, None)
        return True

    def _assign(self, target: ast.expr, value: ast.expr, state: State) -> None:
        taint = self.eval(value, state)
        if isinstance(target, ast.Name) and isinstance(value, ast.Call) and self.resolver is not None:
            kind = self.resolver.class_of(value)
            if kind is not None:
                self.instances[target.id] = kind
        if (
            isinstance(target, ast.Name)
            and isinstance(value, ast.Call)
            and call_name(value).rsplit(".", 1)[-1] in {"urlparse", "urlsplit"}
            and value.args
            and isinstance(value.args[0], ast.Name)
        ):
            self.parsed_from[target.id] = value.args[0].id
        if isinstance(target, ast.Name):
            constant = self.const(value, state)
            state.taint[target.id] = taint if constant is _UNKNOWN else None  # a known constant carries nothing
            state.items.pop(target.id, None)
            if isinstance(value, ast.List) and not any(isinstance(e, ast.Starred) for e in value.elts):
                state.items[target.id] = [self.eval(e, state) for e in value.elts]
            if constant is _UNKNOWN:
                state.consts.pop(target.id, None)
            else:
                state.consts[target.id] = constant
            if isinstance(value, ast.Dict):
                state.entries[target.id] = {
                    self.const(k, state): self.eval(v, state)
                    for k, v in zip(value.keys, value.values, strict=True)
                    if k
                }
            elif isinstance(value, ast.Call) and call_name(value).rsplit(".", 1)[-1] in _CONFIG_PARSERS:
                self.configs.add(target.id)
                state.entries[target.id] = {}
            else:
                state.entries.pop(target.id, None)
        elif isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name):
            key = self.const(target.slice, state)
            name = target.value.id
            if key is not _UNKNOWN and (name in state.entries or not state.taint.get(name)):
                state.entries.setdefault(name, {})[key] = taint
            else:
                state.taint[name] = state.taint.get(name) or taint
        elif isinstance(target, ast.Tuple | ast.List):
            for element in target.elts:
                self._assign(element, value, state)

    # -------------------------------------------------------- expressions

    def eval(self, node: ast.AST | None, state: State) -> str | None:  # noqa: C901 - one branch per node kind
        """The source ``node``'s value carries, or None."""
        if node is None or isinstance(node, ast.Constant):
            return None
        if isinstance(node, ast.Name):
            if node.id in self.spec.objects:
                return node.id
            if node.id in state.taint or not self.opaque:
                return state.taint.get(node.id)
            return self._global(node.id)
        if isinstance(node, ast.Attribute):
            own = self._own_attribute(node)
            if own is not _UNKNOWN:
                return own if isinstance(own, str) else None
            if node.attr == "argv" and isinstance(node.value, ast.Name) and node.value.id == "sys":
                return "command-line argument"
            request = _request_object(node.value, self.spec.objects)
            if request and node.attr == "path" and self.fixed_path:  # the one rule the handler serves
                return None
            if request and node.attr in self.spec.safe_fields:
                return None
            if node.attr in self.spec.fields and request:
                return f"{request}.{node.attr}"
            if node.attr in self.spec.objects and isinstance(node.value, ast.Name):  # self.request
                return node.attr
            return self.eval(node.value, state)
        if isinstance(node, ast.Subscript):
            if isinstance(node.value, ast.Name) and node.value.id in state.items:
                items, index = state.items[node.value.id], self.const(node.slice, state)
                if isinstance(index, int) and -len(items) <= index < len(items):
                    return items[index]
            if isinstance(node.value, ast.Name) and node.value.id in state.entries:
                key = self.const(node.slice, state)
                entries = state.entries[node.value.id]
                if key is not _UNKNOWN:
                    return entries.get(key)
                return next((t for t in entries.values() if t), None) or state.taint.get(node.value.id)
            return self.eval(node.value, state)
        if isinstance(node, ast.IfExp):
            test = self.const(node.test, state)
            if test is not _UNKNOWN:
                return self.eval(node.body if test else node.orelse, state)
            return self.eval(node.body, state) or self.eval(node.orelse, state)
        if isinstance(node, ast.Compare):
            return None  # a truth value
        if isinstance(node, ast.Call):
            return self._call(node, state)
        if isinstance(node, ast.Lambda):
            return None
        for child in ast.iter_child_nodes(node):
            found = self.eval(child, state)
            if found:
                return found
        return None

    def _global(self, name: str, *, called: bool = False) -> str | None:
        """A name the function never binds: fixed when the module defines it or imports a module
        (or a function it calls), else unknown."""
        if name in self.locals or name in self.scope.known or name in _BUILTINS:
            return None
        if name in self.scope.imported and called:
            return None
        return Opaque(f"`{name}`")

    def _own_attribute(self, node: ast.Attribute) -> object:
        """``self.x``: the request in a handler class, what the class set it from, or unknown (opaque).
        ``_UNKNOWN`` when ``node`` is not an attribute of ``self``/``cls``."""
        if not (isinstance(node.value, ast.Name) and node.value.id in {"self", "cls"}):
            return _UNKNOWN
        if node.attr in self.scope.fields:
            return f"self.{node.attr}"
        if node.attr in self.scope.attributes:
            return self.scope.attributes[node.attr]
        if node.attr in self.spec.objects:
            return node.attr  # self.request
        return Opaque(f"`self.{node.attr}`") if self.opaque else None

    def _call(self, node: ast.Call, state: State) -> str | None:
        found = self._call_taint(node, state)
        if found or not self.opaque:
            return found
        return self._opaque_call(node)

    def _opaque_call(self, node: ast.Call) -> str | None:
        """An unknown function's result (``self.table()``, ``helper()``): opaque, unless it is a
        builtin, an import or one of the module's functions (whose summaries are followed)."""
        func = node.func
        if isinstance(func, ast.Name):
            return self._global(func.id, called=True)
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id in {"self", "cls"}:
            if func.attr in self.scope.fields:
                return f"self.{func.attr}"
            return Opaque(f"`self.{func.attr}()`")
        return None

    def _call_taint(self, node: ast.Call, state: State) -> str | None:
        name = call_name(node)
        tail = name.rsplit(".", 1)[-1]
        spec = self.spec
        if name in spec.clean or (self.cleaners and any(w in tail for w in self.cleaners)):
            return None
        if tail in spec.results and isinstance(node.func, ast.Attribute):
            return None  # a row or a count from the database
        if name in spec.lookups and "." in name:  # a lookup function: what it finds is its document's
            return self.eval(node.args[0], state) if node.args else None
        if tail in spec.lookups and isinstance(node.func, ast.Attribute):
            return self.eval(node.func.value, state)  # what is found is the receiver's, not the query's
        converted = next((k.value for k in node.keywords if k.arg == "type"), None)
        if tail == "get" and isinstance(converted, ast.Name) and converted.id in spec.clean:
            return None  # request.args.get("n", type=int): werkzeug converts (or gives the default)
        escaped = tail == "replace" and len(node.args) == 2 and self.quote_escapes
        if escaped and _escapes_quote(self.const(node.args[0], state), self.const(node.args[1], state)):
            return None
        if name in spec.calls:
            return spec.calls[name]
        if tail in spec.methods:
            return spec.methods[tail]
        entry = self._entry_call(node, state)
        if entry is not _UNKNOWN:
            return entry if isinstance(entry, str) else None
        summary = self.resolver.summary(node, self.instances) if self.resolver is not None else None
        if summary is not None and summary.kind != "pass":
            return summary.label or None
        receiver = self._receiver(node, state)
        if receiver:
            return receiver
        for argument in [*node.args, *(k.value for k in node.keywords)]:
            found = self.eval(argument, state)
            if found:
                return found
        return None

    def _receiver(self, node: ast.Call, state: State) -> str | None:
        """What the object a method is called on carries (``from os import path``: nothing)."""
        if not isinstance(node.func, ast.Attribute):
            return None
        receiver = self.eval(node.func.value, state)
        if isinstance(receiver, Opaque) and _imported_receiver(node.func, self.scope.imported):
            return None  # path.join(...) is a function of its arguments
        return receiver

    def _entry_call(self, node: ast.Call, state: State) -> Any:
        """``m.get("k")`` on a dict, ``conf.get("s", "k")`` on a ConfigParser whose entries are known."""
        func = node.func
        if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.attr == "get"):
            return _UNKNOWN
        entries = state.entries.get(func.value.id)
        if entries is None or not node.args:
            return _UNKNOWN
        key = _entry_key(self, node.args, state, configparser=func.value.id in self.configs)
        if key is _UNKNOWN:
            return next((t for t in entries.values() if t), None) or state.taint.get(func.value.id)
        return entries.get(key)

    def const(self, node: ast.AST | None, state: State) -> Any:  # noqa: C901 - one branch per node kind
        """The constant value of ``node`` when it is known, else ``_UNKNOWN``."""
        if node is None:
            return _UNKNOWN
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Name):
            return state.consts.get(node.id, _UNKNOWN)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "chr" and node.args:
            code = self.const(node.args[0], state)
            return chr(code) if isinstance(code, int) and 0 <= code < 0x110000 else _UNKNOWN
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _STR_METHODS:
            receiver = self.const(node.func.value, state)
            args = [self.const(a, state) for a in node.args]
            if not isinstance(receiver, str) or node.keywords or not all(isinstance(a, str | int) for a in args):
                return _UNKNOWN
            return getattr(receiver, node.func.attr)(*args)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.Not):
            value = self.const(node.operand, state)
            if value is _UNKNOWN:
                return _UNKNOWN
            return -value if isinstance(node.op, ast.USub) else not value
        if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
            left, right = self.const(node.left, state), self.const(node.right, state)
            if left is _UNKNOWN or right is _UNKNOWN:
                return _UNKNOWN
            try:
                if isinstance(node.op, ast.Pow) and isinstance(right, int) and right > 64:
                    return _UNKNOWN
                return _BINARY[type(node.op)](left, right)
            except Exception:  # a fold that would raise is simply not known
                return _UNKNOWN
        if isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in _COMPARE:
            left, right = self.const(node.left, state), self.const(node.comparators[0], state)
            if left is _UNKNOWN or right is _UNKNOWN:
                return _UNKNOWN
            try:
                return _COMPARE[type(node.ops[0])](left, right)
            except TypeError:
                return _UNKNOWN
        if isinstance(node, ast.Subscript) and not isinstance(node.slice, ast.Slice):
            value, index = self.const(node.value, state), self.const(node.slice, state)
            if isinstance(value, str | tuple | list) and isinstance(index, int) and -len(value) <= index < len(value):
                return value[index]
            return _UNKNOWN
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Slice):
            value = self.const(node.value, state)
            lower = self.const(node.slice.lower, state) if node.slice.lower else None
            upper = self.const(node.slice.upper, state) if node.slice.upper else None
            if isinstance(value, str) and lower is not _UNKNOWN and upper is not _UNKNOWN:
                return value[lower:upper]
        return _UNKNOWN


def _escapes_quote(quote: Any, replacement: Any) -> bool:
    """``x.replace("'", "&apos;")`` / ``.replace("'", "''")``: no lone quote survives to end a literal."""
    if not isinstance(quote, str) or not isinstance(replacement, str):
        return False
    return quote in {"'", '"'} and (quote not in replacement or replacement == quote * 2)


def _fixed_route(function: Function) -> str | None:
    """The URL rule of a handler whose route decorators all name one rule without variables (``/a/b``)."""
    rules = set()
    calls = [d for d in function.decorator_list if isinstance(d, ast.Call) and isinstance(d.func, ast.Attribute)]
    for decorator in calls:
        if decorator.func.attr in _ROUTE_METHODS and decorator.args:  # type: ignore[attr-defined]
            first = decorator.args[0]
            rules.add(first.value if isinstance(first, ast.Constant) and isinstance(first.value, str) else None)
    rule = rules.pop() if len(rules) == 1 else None
    return rule if rule is not None and rule.startswith("/") and "<" not in rule and "{" not in rule else None


def _entry_key(flow: Flow, args: list[ast.expr], state: State, *, configparser: bool) -> Any:
    """The constant key of an entry: ``"k"`` for a dict, ``("section", "k")`` for a ConfigParser."""
    if configparser:
        if len(args) < 2:
            return _UNKNOWN
        section, key = flow.const(args[0], state), flow.const(args[1], state)
        return _UNKNOWN if _UNKNOWN in (section, key) else (section, key)
    return flow.const(args[0], state)


def _chosen_case(node: ast.Match, subject: Any) -> ast.match_case | None:
    """The case a constant subject takes, when every pattern before it is a literal (or ``_``)."""
    if subject is _UNKNOWN:
        return None
    for case in node.cases:
        if case.guard is not None:
            return None
        pattern = case.pattern
        options = pattern.patterns if isinstance(pattern, ast.MatchOr) else [pattern]
        if isinstance(pattern, ast.MatchAs) and pattern.pattern is None:
            return case  # the wildcard
        if not all(isinstance(p, ast.MatchValue) and isinstance(p.value, ast.Constant) for p in options):
            return None
        if any(
            p.value.value == subject
            for p in options
            if isinstance(p, ast.MatchValue) and isinstance(p.value, ast.Constant)
        ):
            return case
    return None


def _request_object(node: ast.AST, objects: frozenset[str]) -> str | None:
    """``request`` for ``request`` / ``self.request`` (the incoming request), else None."""
    if isinstance(node, ast.Name) and node.id in objects:
        return node.id
    if isinstance(node, ast.Attribute) and node.attr in objects and isinstance(node.value, ast.Name):
        return node.attr
    return None


def _terminates(block: list[ast.stmt]) -> bool:
    """The block leaves the function: it ends in return or raise (after ``break`` the state still flows on)."""
    return bool(block) and isinstance(block[-1], ast.Return | ast.Raise)


_VALIDATORS = frozenset({"isdigit", "isdecimal", "isnumeric", "isalnum", "isalpha", "isidentifier"})


def _validated(test: ast.expr) -> set[str]:
    """Names that pass validation when ``if test: return`` falls through (the test is false).

    ``not x.isdigit()``, ``x not in ALLOWED``, ``not re.fullmatch(p, x)``, and
    the quoted-literal guard ``not x.startswith("'") or not x.endswith("'")``.
    """
    parts = test.values if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.Or) else [test]
    names: set[str] = set()
    quoted: dict[str, set[str]] = {}
    for part in parts:
        if isinstance(part, ast.Compare) and len(part.ops) == 1:
            names |= _compared(part)
            continue
        if not (isinstance(part, ast.UnaryOp) and isinstance(part.op, ast.Not) and isinstance(part.operand, ast.Call)):
            continue
        call = part.operand
        if isinstance(call.func, ast.Attribute) and isinstance(call.func.value, ast.Name):
            subject, method = call.func.value.id, call.func.attr
            if method in _VALIDATORS:
                names.add(subject)
            elif method in {"startswith", "endswith"}:
                quoted.setdefault(subject, set()).add(method)
        elif call_name(call) in {"re.fullmatch", "re.match", "fullmatch"} and _second_name(call):
            names.add(_second_name(call))
    names |= {name for name, methods in quoted.items() if methods == {"startswith", "endswith"}}
    return names


def _compared(test: ast.Compare) -> set[str]:
    """``x not in ALLOWED`` / ``url.netloc != "host"`` (x, url checked) / ``"'" in x`` (x holds no quote)."""
    op, left, right = test.ops[0], test.left, test.comparators[0]
    if isinstance(op, ast.NotIn | ast.NotEq):
        base = left.value if isinstance(left, ast.Attribute) else left
        return {base.id} if isinstance(base, ast.Name) else set()
    if isinstance(op, ast.In) and isinstance(left, ast.Constant) and isinstance(left.value, str):
        return {right.id} if isinstance(right, ast.Name) else set()
    return set()


def _second_name(call: ast.Call) -> str:
    """The name passed as a call's second argument ("" when it is not a plain name)."""
    return call.args[1].id if len(call.args) > 1 and isinstance(call.args[1], ast.Name) else ""


def _imported_receiver(func: ast.expr, imported: frozenset[str]) -> bool:
    return isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id in imported


def _bound_names(function: Function) -> frozenset[str]:
    """Every name the function binds anywhere (parameters, assignments, loop and comprehension
    targets, imports, nested definitions): the rest are globals."""
    names: set[str] = set()
    arguments = function.args
    for arg in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs, arguments.vararg, arguments.kwarg]:
        if arg is not None:
            names.add(arg.arg)
    for node in ast.walk(function):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store | ast.Del):
            names.add(node.id)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and node is not function:
            names.add(node.name)
        elif isinstance(node, ast.alias):
            names.add((node.asname or node.name).split(".")[0])
        elif isinstance(node, ast.ExceptHandler | ast.MatchAs | ast.MatchStar) and node.name:
            names.add(node.name)
        elif isinstance(node, ast.Global | ast.Nonlocal):
            names.difference_update(node.names)
    for node in ast.walk(function):
        if isinstance(node, ast.Global):
            names.difference_update(node.names)
    return frozenset(names)
