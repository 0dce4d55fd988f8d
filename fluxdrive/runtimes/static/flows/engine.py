"""Data flow inside one function: where each value comes from, checked at every call.

Each function is read once, statement by statement in source order: a name
takes the value assigned to it (replacing the old one at the function's top
level, joining it inside a branch or loop, where the old value may survive),
and every call is checked against the sinks as it is met. Parameters start
as ``parameter`` (a public function: its caller chooses them) or ``unknown``
(a private helper), a request handler's request object as ``outside``.

What the function does with its parameters becomes its
:class:`~fluxdrive.runtimes.static.flows.summaries.Summary` (which parameters
its result carries, which reach which sink); calls into the project's own
functions use theirs (:mod:`.project` finds them and refines them until they
settle), so ``run(req.query.cmd)`` in one file is reported at the
``child_process.exec`` it reaches in another.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from fluxdrive.runtimes.static.flows import ir
from fluxdrive.runtimes.static.flows.ir import dotted, names_in, root_name
from fluxdrive.runtimes.static.flows.roles import ProjectIndex
from fluxdrive.runtimes.static.flows.sinks import SinkChecker
from fluxdrive.runtimes.static.flows.summaries import Summary
from fluxdrive.runtimes.static.flows.values import CLEAN, HOLE, Taint, Value, join, text_of, unknown
from fluxdrive.runtimes.static.flows.views import Render
from fluxdrive.runtimes.static.provenance import Origin

CALLBACK_METHODS = {
    "forEach": 0, "map": 0, "filter": 0, "some": 0, "every": 0, "find": 0, "findIndex": 0,
    "flatMap": 0, "reduce": 1, "then": 0, "sort": 0, "on": 0, "once": 0,
}  # fmt: skip
DECORATOR_NAME = re.compile(r"@\s*([A-Za-z_$][\w$]*)")
RENDER_METHODS = frozenset({"render", "view"})  # res.render (Express), ctx.render (Koa), reply.view (Fastify)
RENDER_RECEIVERS = frozenset({"res", "response", "ctx", "reply", "h"})
ALLOW_LIST_METHODS = frozenset({"includes", "has", "indexOf", "contains", "hasOwnProperty"})


def normalize_module(name: str) -> str:
    """One spelling per module: ``node:fs``, ``fs/promises`` and ``fs.promises`` are all ``fs``."""
    name = name.removeprefix("node:")
    for alias in ("fs/promises", "fs.promises"):
        if name == alias or name.startswith(alias + "."):
            name = "fs" + name[len(alias) :]
    return name


class FunctionFlow:
    """The values of one function's names, statement by statement, checking each call on the way."""

    def __init__(
        self,
        project: ProjectIndex,
        module: ir.Module,
        function: ir.Function,
        checker: SinkChecker,
        *,
        env: dict[str, Value] | None = None,
        params: dict[int, Value] | None = None,
        closure: bool = False,
    ) -> None:
        self.project = project
        self.spec = project.spec
        self.module = module
        self.function = function
        self.checker = checker
        self.env: dict[str, Value] = dict(env or {})
        self.cleaned_paths: dict[str, tuple[frozenset[str], int]] = {}  # value -> (classes, last line; 0: on)
        self.line = function.line
        self.arrays: dict[str, list[ir.Expr]] = {}
        self.summary = Summary()
        self.closure = closure
        self.callees: set[tuple[str, str]] = set()
        owners = project.owners.get(module.path, frozenset())
        self.owner = function.owner or (function.name if function.name in owners else "")
        self._bind_params(params or {})

    # ------------------------------------------------------------ parameters
    def _bind_params(self, given: dict[int, Value]) -> None:
        function = self.function
        handler = function.name in self.project.handlers.get(self.module.path, set())
        public = function.exported and not self.closure and not function.name.startswith(("_", "#"))
        for param in function.params:
            value = given.get(param.position)
            if value is None:
                value = self._param_value(param.name, param.type, param.decorators, param.position, public, handler)
            if param.fields:
                for bound, read in param.fields:
                    self.env[bound] = self.field(value, read, f"{param.name}.{read}") if read else value
            else:
                self.env[param.name] = value

    def _param_value(
        self, name: str, type_text: str, decorators: tuple[str, ...], position: int, public: bool, handler: bool
    ) -> Value:
        spec = self.spec
        for decorator in decorators:
            match = DECORATOR_NAME.search(decorator)
            if match and match.group(1) in spec.decorators:
                label = spec.decorators[match.group(1)]
                if match.group(1) in ("Req", "Request"):
                    return self.request_value(name)
                return Value(frozenset({Taint("outside", f"{name} ({label})")}))
        bare = re.sub(r"<.*>|\[\]|^\*|\s", "", type_text)
        if bare and bare in spec.request_types:
            return self.request_value(name)
        if (handler and position == 0) or (name in spec.request_names and not bare):
            return self.request_value(name)
        if name in spec.request_names and bare.split(".")[-1] in {t.split(".")[-1] for t in spec.request_types}:
            return self.request_value(name)
        if self.module.language == "go" and bare in spec.archive.get("types", frozenset()):
            return Value(frozenset({Taint("outside", f"{name} (an archive entry)")}), frozenset({"archive"}))
        kind = "parameter" if public else "unknown"
        index = -1 if self.closure else position  # a callback's parameters are not its outer function's
        return Value(frozenset({Taint(kind, f"parameter {name}", index)}))

    def request_value(self, name: str) -> Value:
        """The incoming request object: its fields are outside data, passing it whole passes them all."""
        return Value(frozenset({Taint("outside", name, whole=True)}), frozenset({"request"}))

    def module_env(self) -> dict[str, Value]:
        """The names a file's top level leaves for its functions (constants, imports, module objects)."""
        return {k: v for k, v in self.env.items() if not any(t.kind == "outside" for t in v.taints)}

    # ------------------------------------------------------------ statements
    def run(self) -> None:
        """Read every statement in order."""
        for statement in self.function.body:
            self.statement(statement)

    def statement(self, statement: ir.Statement) -> None:
        """One statement: names take values, calls are checked, returns feed the summary, ifs vouch."""
        self.line = statement.line
        match statement:
            case ir.Assign(target=target, value=value, nested=nested, add=add):
                self.assign(target, self.eval(value), nested=nested, add=add, line=statement.line)
                if isinstance(target, ir.Name) and isinstance(value, ir.Arr) and not add:
                    self.arrays[target.id] = list(value.items)  # an argument vector built before the call
                elif isinstance(target, ir.Name) and isinstance(value, ir.Call) and _appends_to(value, target.id):
                    self.arrays.setdefault(target.id, []).extend(value.args[1:])  # Go: args = append(args, d)
            case ir.Unpack(names=names, value=value, nested=nested):
                whole = self.eval(value)
                for bound, read in names:
                    part = (
                        self.field(whole, read, f"{dotted(value) or 'value'}.{read}") if read else self.element(whole)
                    )
                    self.bind(bound, part, nested)
            case ir.Loop(key=key, item=item, source=source):
                whole = self.eval(source)
                if key:
                    keys = Value(whole.taints, frozenset(), None, None)
                    self.bind(key, keys, True)
                if item:
                    self.bind(item, self.element(whole), True)
            case ir.Evaluate(expr=expr):
                self.eval(expr)
            case ir.Return(value=value):
                if value is not None:
                    self._returned(self.eval(value))
            case ir.Guard(condition=condition, exits=exits, until=until):
                self.eval(condition)
                self.guard(condition, 0 if exits else until)

    def _returned(self, value: Value) -> None:
        summary = self.summary
        summary.returns |= value.params
        for taint in value.taints:
            if taint.kind == "outside" and summary.outside is None:
                summary.outside = taint.label
            elif taint.kind == "unknown" and taint.param < 0:
                summary.unknown = True

    def bind(self, name: str, value: Value, nested: bool) -> None:
        """``name`` now holds ``value`` (joined with what it held when inside a branch)."""
        if nested and name in self.env:
            value = join([self.env[name], value])
        self.env[name] = value
        self.cleaned_paths = {k: v for k, v in self.cleaned_paths.items() if k != name and not k.startswith(name + ".")}

    def assign(self, target: ir.Expr, value: Value, *, nested: bool, add: bool, line: int) -> None:
        """An assignment to a name, a field (``this.x``, ``el.innerHTML``) or an element."""
        if isinstance(target, ir.Name):
            if add and target.id in self.env:
                old = self.env[target.id]
                value = join([old, value], text=text_of(old) + text_of(value))
            self.bind(target.id, value, nested and not add)
            return
        if isinstance(target, ir.Member):
            self.checker.property(target, value, self, line)
            if isinstance(target.obj, ir.Name) and target.obj.id == "this" and self.owner:
                attributes = self.project.attributes.setdefault((self.module.path, self.owner), {})
                old_attribute = attributes.get(target.name)
                attributes[target.name] = value if old_attribute is None else join([old_attribute, value])
                return
        base = root_name(target)
        if base and base in self.env and base != "this":  # a field of a local object: the object holds it now
            self.env[base] = join([self.env[base], Value(value.taints)])

    # ------------------------------------------------------------ guards
    def guard(self, condition: ir.Expr, until: int = 0) -> None:
        """Checks in an ``if`` make the values they look at trusted for the matching sinks.

        After an ``if`` whose branch exits (``if (!ok) return;``) for the rest of the function;
        otherwise only inside the branch (``if (ok) { sink(x) }``), up to line ``until``.
        """
        for call in _calls_in(condition):
            classes, looked_at = self._checked(call)
            for path in looked_at if classes else ():
                self.vouch(path, classes, until)
        for compared in _compared_to_constant(condition):
            self.vouch(compared, {"all"}, until)

    def vouch(self, path: str, classes: set[str] | frozenset[str], until: int) -> None:
        """``path`` is trusted for ``classes`` up to line ``until`` (0: to the end of the function)."""
        old, old_until = self.cleaned_paths.get(path, (frozenset(), until))
        self.cleaned_paths[path] = (old | frozenset(classes), 0 if 0 in (old_until, until) else max(old_until, until))

    def _checked(self, call: ir.Call) -> tuple[set[str], list[str]]:
        """The sink classes a check call vouches for, and the values it looks at."""
        func = call.func
        callee = self.callee(func)
        last = callee.rsplit(".", 1)[-1] if callee else ""
        first_arg = [p for arg in call.args[:1] for p in names_in(arg)]
        if any(word in last.lower() for word in self.spec.guard_words):  # containsDotDot(x), isSafePath(x)
            return {"all"}, [p for arg in call.args for p in names_in(arg)]
        if not isinstance(func, ir.Member):
            classes = {kind for kind, names in self.spec.guards.items() if last in names or callee in names}
            return classes, first_arg  # strings.HasPrefix(p, base), filepath.IsLocal(p)
        receiver = self.eval_quiet(func.obj)
        if last == "test" and _anchored(receiver):
            return {"all"}, first_arg  # /^[a-z_]+$/.test(x): the whole value has a fixed shape
        if last in ALLOW_LIST_METHODS and call.args and not _from_outside(receiver):
            return {"all"}, first_arg  # ALLOWED.includes(x): one of a known set
        classes = {kind for kind, names in self.spec.guards.items() if last in names or callee in names}
        if "module" in receiver.tags:
            return classes, first_arg
        return classes, list(names_in(func.obj))  # x.startsWith("/"), path.resolve(x).startsWith(base)

    def eval_quiet(self, expr: ir.Expr) -> Value:
        """A value without reporting (a guard's receiver, evaluated again)."""
        saved = self.checker.report
        self.checker.report = False
        try:
            return self.eval(expr)
        finally:
            self.checker.report = saved

    # ------------------------------------------------------------ expressions
    def eval(self, expr: ir.Expr) -> Value:
        """The value of an expression; calls in it are checked against the sinks."""
        match expr:
            case ir.Const(kind="string", value=text):
                return Value(text=text)
            case ir.Const(kind="regex", value=text):  # remembered where it is written: a ReDoS fix goes there
                return Value(tags=frozenset({"regex"}), alias=f"regex:{expr.line}", text=text)
            case ir.Const():
                return CLEAN
            case ir.Name():
                return self._cleaned(expr.id, self.name(expr))
            case ir.Member():
                return self._cleaned(dotted(expr), self.member(expr))
            case ir.Index(obj=obj, key=key):
                self.eval(key)
                return self.element(self.eval(obj))
            case ir.Call():
                return self.call(expr)
            case ir.Concat(parts=parts):
                values = [self.eval(p) for p in parts]
                return join(values, text="".join(text_of(v) for v in values))
            case ir.Obj(entries=entries):
                return join([self._entry(k, v) for k, v in entries]) if entries else CLEAN
            case ir.Arr(items=items):
                return join([self.eval(i) for i in items]) if items else CLEAN
            case ir.Lambda(function=function):
                self.closure_flow(function, {})
                return Value(tags=frozenset({"function"}))
            case ir.Other(parts=parts, number=number):
                values = [self.eval(p) for p in parts]
                return CLEAN if number else join(values)
        return CLEAN

    def _entry(self, key: str | None, value: ir.Expr) -> Value:
        if key == "$where" and not isinstance(value, ir.Lambda | ir.Const):  # MongoDB runs this text as JavaScript
            return self.checker.where_code(value, self)
        if key in ("Query", "Mutation", "Subscription") and isinstance(value, ir.Obj):  # GraphQL resolvers
            for _name, resolver in value.entries:
                if isinstance(resolver, ir.Lambda):
                    label = Value(frozenset({Taint("outside", "a GraphQL argument")}))
                    self.closure_flow(resolver.function, {1: label})
            return CLEAN
        return self.eval(value)

    def _cleaned(self, path: str | None, value: Value) -> Value:
        if path and path in self.cleaned_paths:
            classes, until = self.cleaned_paths[path]
            if not until or self.line <= until:
                return value.cleaned(classes)
        return value

    def closure_flow(self, function: ir.Function, params: dict[int, Value]) -> FunctionFlow:
        """A function written inside this one: it sees this one's names as they are now."""
        flow = FunctionFlow(
            self.project, self.module, function, self.checker, env=self.env, params=params, closure=True
        )
        flow.cleaned_paths = dict(self.cleaned_paths)
        flow.run()
        for key, sink in flow.summary.sinks.items():  # a closure's use of our parameter is ours
            self.summary.sinks.setdefault(key, sink)
        self.callees |= flow.callees
        return flow

    def name(self, expr: ir.Name) -> Value:
        """A name: local, imported, a project function, a known global, or unknown."""
        name = expr.id
        if name in self.env:
            return self.env[name]
        spec = self.spec
        imported = self.module.imports.get(name)
        if imported is not None:
            return Value(tags=frozenset({"module"}), alias=normalize_module(imported))
        if name in spec.globals:
            return self._source(name, spec.globals[name])
        if name in spec.clean:
            return CLEAN
        if name == "this":
            return Value(tags=frozenset({"this"}))
        if (self.module.path, name) in self.project.functions:
            return Value(tags=frozenset({"function"}), alias=name)
        return Value(frozenset({Taint("unknown", name)}), alias=name)

    def _source(self, label_path: str, label: str) -> Value:
        kind = "command line" if label.startswith("command-line") else "outside"
        return Value(frozenset({Taint(kind, f"{label_path} ({label})" if kind == "outside" else label_path)}))

    def member(self, expr: ir.Member) -> Value:
        """``obj.name``: a request's field, a module's member, ``this.x``, or a part of the object's data."""
        spec = self.spec
        if isinstance(expr.obj, ir.Name) and expr.obj.id == "this" and "this" not in self.env:
            attributes = self.project.attributes.get((self.module.path, self.owner), {})
            if expr.name in attributes:
                return attributes[expr.name]
            return Value(frozenset({Taint("unknown", f"this.{expr.name}")}))
        base = self.eval(expr.obj)
        path = dotted(expr) or expr.name
        if "request" in base.tags:
            if expr.name in spec.not_fields.get(dotted(expr.obj) or "", ()):
                return Value(frozenset({Taint("unknown", path)}))
            if expr.name in spec.request_fields:
                return Value(frozenset({Taint("outside", path)}))
            if expr.name in spec.request_nested:
                return self.request_value(path)
            if expr.name in spec.request_methods:
                return Value(tags=frozenset({"request-method"}), alias=path)
            return Value(frozenset({Taint("unknown", path)}))
        if base.alias and ("module" in base.tags or any(t.kind == "unknown" for t in base.taints)):
            alias = f"{base.alias}.{expr.name}"
            if alias in spec.globals:
                return self._source(alias, spec.globals[alias])
            if alias in spec.clean:
                return CLEAN
            return Value(base.taints, base.tags & {"module"}, alias)
        if expr.name == "length":
            return CLEAN
        archive = spec.archive.get("fields", frozenset())
        anywhere = expr.name in spec.archive.get("anywhere", frozenset())
        if (
            "archive" in base.tags and expr.name in archive
        ) or anywhere:  # reported where the name is read: the fix goes there
            return Value(frozenset({Taint("outside", f"{path} (an archive entry's name)", at=expr.line)}))
        return Value(_longer_labels(base.taints, dotted(expr.obj), path), base.tags & {"archive"})

    def field(self, value: Value, read: str, path: str) -> Value:
        """The field ``read`` of a value already computed (destructuring)."""
        spec = self.spec
        if "request" in value.tags:
            if read in spec.not_fields.get(path.rpartition(".")[0], ()):
                return Value(frozenset({Taint("unknown", path)}))
            if read in spec.request_fields:
                return Value(frozenset({Taint("outside", path)}))
            if read in spec.request_nested:
                return self.request_value(path)
            return Value(frozenset({Taint("unknown", path)}))
        if value.alias and "module" in value.tags:
            return Value(tags=frozenset({"module"}), alias=f"{value.alias}.{read}")
        return Value(_longer_labels(value.taints, path.rpartition(".")[0], path), value.tags & {"archive"})

    def element(self, value: Value) -> Value:
        """An element of a list, a key or value of a map: it carries the container's data."""
        return Value(value.taints, value.tags & {"archive", "request"} if "archive" in value.tags else frozenset())

    # ------------------------------------------------------------ calls
    def callee(self, func: ir.Expr) -> str:
        """The canonical name of what is called (``child_process.exec``, ``res.redirect``, ``eval``)."""
        if isinstance(func, ir.Name):
            value = self.env.get(func.id)
            if value is not None and value.alias and not value.alias.startswith(("regex:", ".")):
                return value.alias
            imported = self.module.imports.get(func.id)
            if imported is None or imported.startswith("."):  # a project file: named as the code writes it
                return func.id
            return normalize_module(imported)
        if isinstance(func, ir.Member):
            if isinstance(func.obj, ir.Call) and isinstance(func.obj.func, ir.Name) and func.obj.func.id == "require":
                first = func.obj.args[0] if func.obj.args else None
                if isinstance(first, ir.Const):
                    return normalize_module(f"{first.value}.{func.name}")
            base = self.callee(func.obj) if isinstance(func.obj, ir.Name | ir.Member) else "?"
            return normalize_module(f"{base}.{func.name}")
        return "?"

    def call(self, expr: ir.Call) -> Value:
        """A call's result; its arguments are checked against sinks and summaries."""
        func = expr.func
        if isinstance(func, ir.Lambda):  # (function () { ... })(), Go's go func() { ... }(): the body runs here
            self.closure_flow(func.function, {})
        receiver: Value | None = self.eval(func.obj) if isinstance(func, ir.Member) else None
        method = func.name if isinstance(func, ir.Member) else (func.id if isinstance(func, ir.Name) else "")
        callee = self.callee(func)
        args = self._arguments(expr, method, receiver)
        target = self.project.resolve(self.module, func, self.owner, self.env, self.function.receiver)
        if target is not None:
            self.callees.add(target)
        if target is not None and not self.spec.cleaned_by(callee):  # sanitizeURI() is trusted by its name
            return self._project_call(expr, target, args)
        self.checker.call(expr, callee, args, self, receiver)
        self._bind_outputs(expr, method, callee, receiver, args)
        if method in RENDER_METHODS and isinstance(func, ir.Member) and root_name(func.obj) in RENDER_RECEIVERS:
            self._render(expr, args)
        if (
            method == "push"
            and isinstance(func, ir.Member)
            and isinstance(func.obj, ir.Name)
            and func.obj.id in self.arrays
        ):
            self.arrays[func.obj.id].extend(expr.args)
        return self._sourced(expr, callee, method, receiver, args) or self._result(expr, callee, method, receiver, args)

    def _render(self, expr: ir.Call, args: list[Value]) -> None:
        """``res.render("view", { term: req.query.q })``: remember which fields of the view carry outside data."""
        view = expr.args[0] if expr.args else None
        if not isinstance(view, ir.Const) or view.kind != "string" or len(expr.args) < 2:
            return
        data = expr.args[1]
        fields: list[tuple[str, Origin]] = []
        if isinstance(data, ir.Obj):
            for path, value in _fields(data):
                origin, _taint = self.eval_quiet(value).origin("html")
                if origin.kind == "outside":
                    fields.append((path, origin))
        else:
            origin, _taint = args[1].origin("html")
            if origin.kind == "outside":
                fields.append(("*", origin))
        if fields:
            key = (self.module.path, expr.line)
            self.project.renders[key] = Render(self.module.path, expr.line, view.value, tuple(fields))

    def _sourced(
        self, expr: ir.Call, callee: str, method: str, receiver: Value | None, args: list[Value]
    ) -> Value | None:
        """The result of a call that reads outside data (or a module, or a type assertion), else None."""
        spec = self.spec
        func = expr.func
        if callee in spec.calls:
            return self._source(callee, spec.calls[callee])
        if callee.startswith("<as:"):  # a Go type assertion: the same value, seen as an archive entry when it is one
            seen = join(args)
            if callee[4:-1].lstrip("*") in spec.archive.get("types", frozenset()):
                return Value(seen.taints, seen.tags | {"archive"})
            return seen
        if receiver is not None and "request" in receiver.tags and method in spec.request_methods:
            obj = func.obj if isinstance(func, ir.Member) else func
            return Value(frozenset({Taint("outside", f"{dotted(obj) or 'request'}.{method}()")}))
        if receiver is not None and "request-method" in receiver.tags:
            return Value(frozenset({Taint("outside", f"{receiver.alias}()")}))
        if callee == "RegExp" and args and args[0].text is not None and HOLE not in args[0].text:
            flags = args[1].text if len(args) > 1 and args[1].text and HOLE not in args[1].text else ""
            return Value(tags=frozenset({"regex"}), alias=f"regex:{expr.line}", text=f"/{args[0].text}/{flags}")
        if callee == "require" and args and args[0].text and HOLE not in args[0].text:
            return Value(tags=frozenset({"module"}), alias=normalize_module(args[0].text))
        return None

    def _result(self, expr: ir.Call, callee: str, method: str, receiver: Value | None, args: list[Value]) -> Value:
        """What an ordinary call returns: archives, cleaned values, data passed through, or something unknown."""
        spec = self.spec
        archive = spec.archive.get("calls", frozenset())
        if callee in archive or (method in spec.archive.get("methods", frozenset()) and receiver is not None
                                 and "archive" in receiver.tags):  # fmt: skip
            return Value(tags=frozenset({"archive"}))
        cleaned = spec.cleaned_by(callee)
        tag_classes = {kind for kind, names in spec.tags.items() if callee in names}
        if "all" in cleaned:
            return CLEAN
        if cleaned or tag_classes:
            return join([*args, receiver or CLEAN]).cleaned(cleaned | tag_classes)
        carried = [*args]
        if receiver is not None and _from_request(receiver) and "module" not in receiver.tags:
            return join([receiver, *carried])  # req.query.x.split(","): outside data transformed
        if receiver is not None and receiver.taints and "module" not in receiver.tags:
            return join([receiver, *(carried if method in spec.pure_methods else [])])  # config.build(x): its data
        if callee in spec.pure or method in spec.pure_methods:
            data_receiver = [receiver] if receiver is not None and "module" not in receiver.tags else []
            return join([*(carried or [CLEAN]), *data_receiver])
        if receiver is not None and "module" not in receiver.tags and not receiver.alias:
            return unknown(f"{dotted(expr.func) or method}()")  # a method of an object: its data, not the arguments
        return join([unknown(f"{callee}()"), *carried])

    def _arguments(self, expr: ir.Call, method: str, receiver: Value | None) -> list[Value]:
        spec = self.spec
        handler = (
            method in spec.handler_methods
            and isinstance(expr.func, ir.Member)
            and (
                (expr.args and isinstance(expr.args[0], ir.Const) and expr.args[0].value.startswith("/"))
                or root_name(expr.func.obj) in spec.handler_receivers
            )
        )
        values: list[Value] = []
        for arg in expr.args:
            if isinstance(arg, ir.Lambda):
                params: dict[int, Value] = {}
                if handler:
                    params[0] = self.request_value(arg.function.params[0].name if arg.function.params else "req")
                elif method in CALLBACK_METHODS and receiver is not None:
                    params[CALLBACK_METHODS[method]] = self.element(receiver)
                self.closure_flow(arg.function, params)
                values.append(Value(tags=frozenset({"function"})))
            elif isinstance(arg, ir.Obj) and handler:
                for key, entry in arg.entries:
                    if key == "handler" and isinstance(entry, ir.Lambda):
                        self.closure_flow(entry.function, {0: self.request_value("request")})
                values.append(self.eval(arg))
            elif isinstance(arg, ir.Name) and handler and arg.id not in self.env:
                self.project.handlers.setdefault(self.module.path, set()).add(arg.id)
                values.append(self.eval(arg))
            else:
                values.append(self.eval(arg))
        return values

    def _bind_outputs(self, expr: ir.Call, method: str, callee: str, receiver: Value | None, args: list[Value]) -> None:
        """``c.ShouldBindJSON(&input)``, ``json.NewDecoder(r.Body).Decode(&v)``: the argument is filled from outside."""
        if method not in self.spec.binders and callee not in self.spec.binders:
            return
        given = [receiver, *args] if receiver is not None else args
        found = next((t for v in given for t in v.taints if t.kind == "outside"), None)
        if found is None:
            return
        for arg, value in zip(expr.args, args, strict=False):
            if isinstance(arg, ir.Name) and not any(t.kind == "outside" for t in value.taints):
                self.env[arg.id] = Value(frozenset({Taint("outside", f"{arg.id} (filled from {found.label})")}))

    def _project_call(self, expr: ir.Call, target: tuple[str, str], args: list[Value]) -> Value:
        summary = self.project.summaries.get(target)
        name = target[1]
        if summary is None:
            return join([unknown(f"{name}()"), *args])
        for sink in summary.sinks.values():
            if sink.param < len(args):
                self.checker.through(expr, name, sink, args[sink.param], self)
            elif self.project.functions[target].variadic and args:
                self.checker.through(expr, name, sink, join(args[sink.param :] or args[-1:]), self)
        values = [args[i] for i in sorted(summary.returns) if i < len(args)]
        if summary.outside:
            values.append(Value(frozenset({Taint("outside", summary.outside)})))
        if summary.unknown:
            values.append(unknown(f"{name}()"))
        return join(values) if values else CLEAN


def _longer_labels(taints: frozenset[Taint], base: str | None, path: str) -> frozenset[Taint]:
    """``req.query`` read further as ``req.query.dir`` names the field in findings."""
    if not base:
        return taints
    return frozenset(
        Taint(t.kind, path, t.param, t.cleaned, t.at) if t.kind == "outside" and t.label == base else t for t in taints
    )


def _fields(data: ir.Obj, prefix: str = "") -> Iterator[tuple[str, ir.Expr]]:
    """The dotted fields of an object literal and their values (``output.term``)."""
    for key, value in data.entries:
        if key is None:
            continue
        path = f"{prefix}{key}"
        if isinstance(value, ir.Obj):
            yield from _fields(value, path + ".")
        else:
            yield path, value


def _appends_to(value: ir.Call, name: str) -> bool:
    return (
        isinstance(value.func, ir.Name)
        and value.func.id == "append"
        and bool(value.args)
        and isinstance(value.args[0], ir.Name)
        and value.args[0].id == name
    )


def _from_request(value: Value) -> bool:
    return any(t.kind == "outside" for t in value.taints)


def _from_outside(value: Value) -> bool:
    return any(t.kind in ("outside", "parameter") for t in value.taints)


def _anchored(value: Value) -> bool:
    """A regular expression that must match the whole text (``/^...$/``)."""
    text = value.text or ""
    return "regex" in value.tags and text.startswith("/^") and text.rpartition("/")[0].endswith("$")


def _calls_in(expr: ir.Expr) -> Iterator[ir.Call]:
    """The calls a condition makes (``!x.startsWith("/")``, ``a && isSafe(b)``)."""
    if isinstance(expr, ir.Call):
        yield expr
        for arg in expr.args:
            yield from _calls_in(arg)
        if isinstance(expr.func, ir.Member):
            yield from _calls_in(expr.func.obj)
    elif isinstance(expr, ir.Other):
        for part in expr.parts:
            yield from _calls_in(part)
    elif isinstance(expr, ir.Member):
        yield from _calls_in(expr.obj)


def _compared_to_constant(expr: ir.Expr) -> Iterator[str]:
    """Names compared with a constant (``x === 'a'``): a value equal to a constant is that constant."""
    if isinstance(expr, ir.Other):
        if expr.number and len(expr.parts) == 2:
            left, right = expr.parts
            for one, other in ((left, right), (right, left)):
                path = dotted(one)
                if path and isinstance(other, ir.Const) and other.kind in ("string", "number"):
                    yield path
        for part in expr.parts:
            yield from _compared_to_constant(part)
