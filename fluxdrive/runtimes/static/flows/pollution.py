"""Prototype pollution: a deep merge, set or clone that writes through keys taken from its input.

``merge(target, JSON.parse('{"__proto__": {"isAdmin": true}}'))`` sets
``isAdmin`` on every object of the process when the merge walks into
``target["__proto__"]``. The shape is the same in every utility that has had
this CVE (lodash, minimist, set-value, dot-prop, deep-extend...):

1. keys come from the input: ``for (k in src)``, ``Object.keys(src)``,
   ``path.split(".")``;
2. a write goes through such a key: ``target[k] = ...``;
3. the function goes deeper with the key: it calls itself on what the key
   selects (``merge(target[k], source[k])``), or walks ``obj = obj[k]``;
4. nothing refuses both ``__proto__`` and ``constructor``/``prototype`` (the
   literals, or an ``isSafeKey``-style helper): refusing ``__proto__`` alone
   leaves ``constructor.prototype``.

A shallow copy (no 3) only replaces one object's prototype and is left out.
Severity: a public function P1 (its callers pass parsed JSON, query strings,
configuration), a private one P2.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from fluxdrive.runtimes.static.flows import ir
from fluxdrive.runtimes.static.flows.ir import root_name

FORBIDDEN = frozenset({"__proto__", "constructor", "prototype"})
REFUSING_HELPER = re.compile(r"(?i)proto|safe_?key|forbidden|polluti|dangerous_?key|isvalidkey|unsafe_?key")
KEY_LISTS = frozenset({"keys", "entries", "getOwnPropertyNames", "split", "ownKeys"})
KEY_LIST_WORDS = ("split", "segments", "topath", "parsepath", "pathparts", "keypath")
KEY_LIST_PARAMS = frozenset({"keys", "path", "paths", "props", "segments", "parts", "keyPath", "pathArray"})
CALLBACKS = {"forEach": 0, "map": 0, "reduce": 1, "some": 0, "every": 0, "filter": 0}


@dataclass(frozen=True, slots=True)
class PollutionHit:
    path: str
    line: int
    function: str
    target: str
    severity: str

    rule = "prototype-pollution"
    fix = (
        "Skip the keys __proto__, constructor and prototype (or only copy own keys into an object made with "
        "Object.create(null)), or use a Map."
    )
    evidence_level = "medium"

    @property
    def why(self) -> str:
        return (
            "A key '__proto__' (JSON.parse keeps it; query strings and YAML produce it) makes the write land on "
            "Object.prototype, so every object of the process gets the attacker's property: logins are bypassed "
            "(isAdmin), templates run code, the process crashes."
        )

    @property
    def title(self) -> str:
        return (
            f"Prototype pollution: {self.function}() writes {self.target}[key] for keys taken from its input "
            "without refusing __proto__, constructor or prototype"
        )


def statements(body: tuple[ir.Statement, ...]) -> Iterator[ir.Statement]:
    """Every statement of a function, callbacks written inside it included."""
    for statement in body:
        yield statement
        for expr in _expressions(statement):
            for function in _lambdas(expr):
                yield from statements(function.body)


def _expressions(statement: ir.Statement) -> Iterator[ir.Expr]:
    match statement:
        case ir.Assign(target=target, value=value):
            yield target
            yield value
        case ir.Unpack(value=value) | ir.Evaluate(expr=value) | ir.Loop(source=value) | ir.Guard(condition=value):
            yield value
        case ir.Return(value=value) if value is not None:
            yield value


def _children(expr: ir.Expr) -> tuple[ir.Expr, ...]:
    match expr:
        case ir.Member(obj=obj):
            return (obj,)
        case ir.Index(obj=obj, key=key):
            return (obj, key)
        case ir.Call(func=func, args=args):
            return (func, *args)
        case ir.Concat(parts=parts) | ir.Other(parts=parts):
            return parts
        case ir.Obj(entries=entries):
            return tuple(v for _, v in entries)
        case ir.Arr(items=items):
            return items
    return ()


def _walk(expr: ir.Expr) -> Iterator[ir.Expr]:
    yield expr
    if not isinstance(expr, ir.Lambda):
        for child in _children(expr):
            yield from _walk(child)


def _lambdas(expr: ir.Expr) -> Iterator[ir.Function]:
    for node in _walk(expr):
        if isinstance(node, ir.Lambda):
            yield node.function


def _strings(function: ir.Function) -> set[str]:
    found: set[str] = set()
    for statement in statements(function.body):
        for expr in _expressions(statement):
            found.update(n.value for n in _walk(expr) if isinstance(n, ir.Const) and n.kind == "string")
    return found


def _refuses(function: ir.Function) -> bool:
    """The function refuses ``__proto__`` and the ``constructor``/``prototype`` route, or calls a key checker.

    Refusing ``__proto__`` alone is the classic incomplete fix (minimist, CVE-2021-44906):
    ``constructor.prototype`` reaches the same object.
    """
    named = _strings(function) & FORBIDDEN
    if "__proto__" in named and named & {"constructor", "prototype"}:
        return True
    for statement in statements(function.body):
        for expr in _expressions(statement):
            for node in _walk(expr):
                if isinstance(node, ir.Call):
                    name = node.func.name if isinstance(node.func, ir.Member) else getattr(node.func, "id", "")
                    if REFUSING_HELPER.search(name):
                        return True
    return False


def _is_key_list(expr: ir.Expr) -> bool:
    """``Object.keys(src)``, ``path.split(".")``, ``Object.entries(src)``, a project's ``splitPath(p)``."""
    if not isinstance(expr, ir.Call):
        return False
    func = expr.func
    name = func.name if isinstance(func, ir.Member) else (func.id if isinstance(func, ir.Name) else "")
    return name in KEY_LISTS or any(word in name.lower() for word in KEY_LIST_WORDS)


class KeyWalk:
    """The names that hold keys taken from the input, and the lists they come from."""

    def __init__(self, function: ir.Function) -> None:
        self.keys: set[str] = set()
        self.lists: set[str] = {p.name for p in function.params if p.name in KEY_LIST_PARAMS}  # setKey(obj, keys, v)
        for statement in statements(function.body):
            self._learn(statement)

    def _learn(self, statement: ir.Statement) -> None:
        match statement:
            case ir.Loop(key=key, item=item, source=source, keys_of=keys_of):
                if keys_of and key:
                    self.keys.add(key)
                if item and (_is_key_list(source) or (isinstance(source, ir.Name) and source.id in self.lists)):
                    self.keys.add(item)
            case ir.Unpack(names=names, value=ir.Call(func=ir.Name(id="<element>"), args=(source,))):
                if names and (_is_key_list(source) or (isinstance(source, ir.Name) and source.id in self.lists)):
                    self.keys.add(names[0][0])
            case ir.Assign(target=ir.Name(id=name), value=value):
                if self.is_list(value):
                    self.lists.add(name)
                elif self.is_key(value):
                    self.keys.add(name)
        for expr in _expressions(statement):
            for node in _walk(expr):
                self._callback(node)

    def _callback(self, node: ir.Expr) -> None:
        """``Object.keys(src).forEach((key) => ...)``: the callback's parameter is a key."""
        if not (isinstance(node, ir.Call) and isinstance(node.func, ir.Member) and node.func.name in CALLBACKS):
            return
        receiver = node.func.obj
        if not (_is_key_list(receiver) or (isinstance(receiver, ir.Name) and receiver.id in self.lists)):
            return
        position = CALLBACKS[node.func.name]
        for arg in node.args:
            if isinstance(arg, ir.Lambda) and len(arg.function.params) > position:
                self.keys.add(arg.function.params[position].name)

    def is_list(self, expr: ir.Expr) -> bool:
        """A list of keys: ``split(path)``, a list seen before, or either side of ``a ? path : split(path)``."""
        if _is_key_list(expr) or (isinstance(expr, ir.Name) and expr.id in self.lists):
            return True
        return isinstance(expr, ir.Other) and not expr.number and any(self.is_list(part) for part in expr.parts)

    def is_key(self, expr: ir.Expr) -> bool:
        if isinstance(expr, ir.Name):
            return expr.id in self.keys
        return isinstance(expr, ir.Index) and isinstance(expr.obj, ir.Name) and expr.obj.id in self.lists


def _fresh_objects(function: ir.Function) -> set[str]:
    """Names that only ever hold an object made here (``{...a, ...b}``, ``{}``, ``Object.create(null)``).

    Writing ``fresh["__proto__"]`` changes that new object's prototype, never a shared one (zod's
    mergeValues builds its result this way).
    """
    made: dict[str, bool] = {}
    for statement in statements(function.body):
        if isinstance(statement, ir.Assign) and isinstance(statement.target, ir.Name):
            value = statement.value
            new = isinstance(value, ir.Obj | ir.Arr) or (
                isinstance(value, ir.Call) and isinstance(value.func, ir.Member) and value.func.name == "create"
            )
            made[statement.target.id] = made.get(statement.target.id, True) and new
    return {name for name, only_new in made.items() if only_new}


def _target_name(expr: ir.Expr) -> str:
    if isinstance(expr, ir.Name):
        return expr.id
    if isinstance(expr, ir.Member):
        return f"{_target_name(expr.obj)}.{expr.name}"
    return "obj"


def _recurses_with_key(node: ir.Expr, name: str, walk: KeyWalk) -> bool:
    """``merge(target[key], source[key])``: the function calls itself on what a key selects."""
    if not isinstance(node, ir.Call):
        return False
    func = node.func
    called = func.id if isinstance(func, ir.Name) else (func.name if isinstance(func, ir.Member) else "")
    if called != name:
        return False
    return any(isinstance(arg, ir.Index) and walk.is_key(arg.key) for arg in node.args)


def check_function(module: ir.Module, function: ir.Function) -> PollutionHit | None:
    """A hit when ``function`` writes through input keys, goes deeper with them, and refuses none."""
    walk = KeyWalk(function)
    if not walk.keys and not walk.lists:
        return None
    writes: list[ir.Assign] = []
    deeper = False
    fresh = _fresh_objects(function)
    for statement in statements(function.body):
        for expr in _expressions(statement):
            deeper = deeper or any(_recurses_with_key(node, function.name, walk) for node in _walk(expr))
        if not isinstance(statement, ir.Assign):
            continue
        target, value = statement.target, statement.value
        if isinstance(target, ir.Index) and walk.is_key(target.key) and root_name(target.obj) not in fresh:
            writes.append(statement)
        if isinstance(target, ir.Name) and isinstance(value, ir.Index) and walk.is_key(value.key):
            deeper = deeper or (isinstance(value.obj, ir.Name) and value.obj.id == target.id)  # obj = obj[key]
    if not writes or not deeper or _refuses(function):
        return None
    first = writes[0]
    target_expr = first.target.obj if isinstance(first.target, ir.Index) else first.target
    severity = "P1" if function.exported else "P2"
    return PollutionHit(module.path, first.line, function.qualified, _target_name(target_expr), severity)


def find(module: ir.Module) -> list[PollutionHit]:
    """Every polluting function of a JavaScript/TypeScript file."""
    if module.language == "go":
        return []
    hits = [check_function(module, f) for f in module.functions]
    return [h for h in hits if h is not None]
