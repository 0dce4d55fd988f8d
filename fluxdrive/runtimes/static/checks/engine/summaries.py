"""Summaries of the project's own functions, so taint follows calls into helpers.

A flow that meets ``wrapper.get_safe_value("x")`` or ``helpers.utils.clean(bar)``
asks a :class:`ProjectSummaries` what that function returns. The summary comes
from running a :class:`~.taint.Flow` over the function itself, with its
parameters marked as outside data, and reading its ``return`` statements:

- every return carries nothing from outside -> ``clean`` (``return "bar"``);
- one carries a source the function reads itself -> ``source``
  (``return self.request.form.get(name)``);
- otherwise -> ``pass``: the result carries what the arguments carry.

Functions are found in the calling file (``helper(x)``, ``Class(...).method``)
and in the project modules it imports (``from helpers import separate_request``),
loaded through a callback the runtime provides, confined to the project root.
Calls nest: a summary may use others' summaries, ``depth`` levels deep, which
also ends cycles.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Mapping

from fluxdrive.runtimes.static.checks.engine.pymodule import PyModule, TemplateReader
from fluxdrive.runtimes.static.checks.engine.syntax import call_name
from fluxdrive.runtimes.static.checks.engine.taint import Flow, Function, Summary
from fluxdrive.runtimes.static.checks.engine.taint_spec import Sink, TaintSpec, shipped

# A helper's parameter that reaches a declared sink inside it: (position, name, the sink, the call's name).
SinkParameter = tuple[int, str, Sink, str]

Loader = Callable[[str], PyModule | None]
DEPTH = 3


def _definitions(module: PyModule) -> dict[str, Function | ast.ClassDef]:
    """Top-level functions and classes of a module by name (the last definition wins, as at run time)."""
    found: dict[str, Function | ast.ClassDef] = {}
    for node in module.tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            found[node.name] = node
    return found


def _method(cls: ast.ClassDef, name: str) -> Function | None:
    return next((n for n in cls.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and n.name == name), None)


def _returns(function: Function) -> list[ast.Return]:
    """The function's own return statements (nested definitions have theirs)."""
    found: list[ast.Return] = []
    stack: list[ast.AST] = list(function.body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Return):
            found.append(node)
        elif not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda):
            stack.extend(ast.iter_child_nodes(node))
    return found


class ProjectSummaries:
    """Summaries of one project's functions, computed on demand and kept for the run."""

    def __init__(self, load: Loader, spec: TaintSpec | None = None) -> None:
        self._load = load
        self.spec = spec or shipped()
        self._modules: dict[str, PyModule | None] = {}
        self._summaries: dict[tuple[str, str, int], Summary] = {}
        self._sinks: dict[tuple[str, str], tuple[SinkParameter, ...]] = {}
        self.templates: TemplateReader | None = None  # the project's template files, when the runtime has them

    def module(self, dotted: str) -> PyModule | None:
        """The project module ``dotted`` names (None when it is not the project's)."""
        if dotted not in self._modules:
            self._modules[dotted] = self._load(dotted)
        return self._modules[dotted]

    def loaded(self, path: str) -> PyModule | None:
        """A module already loaded, by its path in the project."""
        return next((m for m in self._modules.values() if m is not None and m.path == path), None)

    def for_module(self, module: PyModule, depth: int = DEPTH) -> ModuleResolver | None:
        """What flows in ``module`` use to look calls up (None at the end of the depth)."""
        return ModuleResolver(self, module, depth) if depth > 0 else None

    def summarize(self, module: PyModule, function: Function, depth: int) -> Summary:
        """The summary of ``function`` (defined in ``module``)."""
        key = (module.path, f"{function.name}@{function.lineno}", depth)
        cached = self._summaries.get(key)
        if cached is not None:
            return cached
        self._summaries[key] = Summary("pass")  # a recursive call sees "pass" while this one is computed
        flow = Flow(function, spec=self.spec, resolver=self.for_module(module, depth - 1))
        labels = [flow.taint_at(r.value, r) if r.value is not None else None for r in _returns(function)]
        outside = next((label for label in labels if label and not label.startswith("parameter ")), None)
        if outside is not None:
            summary = Summary("source", outside)
        elif any(labels):
            summary = Summary("pass")
        else:
            summary = Summary("clean")
        self._summaries[key] = summary
        return summary

    def sink_parameters(self, module: PyModule, function: Function) -> tuple[SinkParameter, ...]:
        """The parameters of ``function`` that reach a declared sink (``requests.get(url)``) inside it.

        A call into such a helper with request data is the same server-side request forgery as the
        call inside it: ``fetch(request.args["url"])`` in one module, ``requests.get(url)`` in another.
        """
        key = (module.path, f"{function.name}@{function.lineno}")
        if key not in self._sinks:
            self._sinks[key] = _sink_parameters(self.spec, function)
        return self._sinks[key]


def _sink_parameters(spec: TaintSpec, function: Function) -> tuple[SinkParameter, ...]:
    names = [a.arg for a in [*function.args.posonlyargs, *function.args.args]]
    found: list[SinkParameter] = []
    flow: Flow | None = None
    for node in ast.walk(function):
        if not isinstance(node, ast.Call):
            continue
        name = call_name(node)
        for sink in spec.custom:
            if not any(name == call or name.endswith("." + call) for call in sink.calls):
                continue
            value = sink.value(node.args, {k.arg: k.value for k in node.keywords if k.arg})
            if not isinstance(value, ast.expr):
                continue
            flow = flow or Flow(function, spec=spec)
            holding = [s for s in flow.before if isinstance(s, ast.stmt) and node in ast.walk(s)]
            statement = min(holding, key=lambda s: (s.end_lineno or s.lineno) - s.lineno, default=None)
            label = flow.taint_at(value, statement) if statement is not None else None
            parameter = label.split("`")[1] if label and label.startswith("parameter `") else None
            if parameter in names:
                found.append((names.index(parameter), parameter, sink, name))
    return tuple(found)


class ModuleResolver:
    """Looks up the functions calls in one module run: its own and those of project modules it imports."""

    def __init__(self, project: ProjectSummaries, module: PyModule, depth: int) -> None:
        self.project = project
        self.module = module
        self.depth = depth
        self.local = _definitions(module)

    def _target(self, dotted: str) -> tuple[PyModule, Function | ast.ClassDef] | None:
        """The definition a dotted name (as imported) refers to: ``helpers.utils.clean``."""
        head, _, rest = dotted.partition(".")
        if not rest:
            definition = self.local.get(head)
            return (self.module, definition) if definition is not None else None
        origin = self.module.imports.get(head)
        full = f"{origin}.{rest}" if origin else dotted
        parts = full.split(".")
        for cut in range(len(parts) - 1, 0, -1):  # longest module prefix first
            module = self.project.module(".".join(parts[:cut]))
            if module is None:
                continue
            names = parts[cut:]
            definition = _definitions(module).get(names[0])
            if definition is not None and len(names) == 1:
                return module, definition
            if isinstance(definition, ast.ClassDef) and len(names) == 2:
                method = _method(definition, names[1])
                return (module, method) if method is not None else None
            return None
        return None

    def _imported(self, name: str) -> tuple[PyModule, Function | ast.ClassDef] | None:
        """``from helpers.utils import clean``: the definition a bare imported name refers to."""
        origin = self.module.imports.get(name)
        if origin is None or "." not in origin:
            return None
        module_name, _, attribute = origin.rpartition(".")
        module = self.project.module(module_name)
        definition = _definitions(module).get(attribute) if module is not None else None
        return (module, definition) if module is not None and definition is not None else None

    def _definition(self, call: ast.Call) -> tuple[PyModule, Function | ast.ClassDef] | None:
        name = call_name(call)
        if not name or "()" in name:
            return None
        if "." not in name and name not in self.local:
            return self._imported(name)
        return self._target(name)

    def sink_parameters(self, call: ast.Call) -> tuple[SinkParameter, ...]:
        """What the project function ``call`` runs passes on to a declared sink (nothing if unknown)."""
        found = self._definition(call)
        if found is None or isinstance(found[1], ast.ClassDef):
            return ()
        return self.project.sink_parameters(found[0], found[1])

    def class_of(self, call: ast.Call) -> str | None:
        """``module:Class`` when ``call`` builds an instance of one of the project's classes."""
        found = self._definition(call)
        if found is None or not isinstance(found[1], ast.ClassDef):
            return None
        return f"{found[0].path}:{found[1].name}"

    def summary(self, call: ast.Call, instances: Mapping[str, str]) -> Summary | None:
        """The summary of what ``call`` runs, when it is one of the project's functions or methods."""
        func = call.func
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id in instances:
            path, _, class_name = instances[func.value.id].rpartition(":")
            return self._method_summary(path, class_name, func.attr)
        found = self._definition(call)
        if found is None or isinstance(found[1], ast.ClassDef):
            return None
        return self.project.summarize(found[0], found[1], self.depth)

    def _method_summary(self, path: str, class_name: str, method: str) -> Summary | None:
        module = self.module if path == self.module.path else self.project.loaded(path)
        cls = _definitions(module).get(class_name) if module is not None else None
        function = _method(cls, method) if isinstance(cls, ast.ClassDef) else None
        if module is None or function is None:
            return None
        return self.project.summarize(module, function, self.depth)


def resolver_of(module: PyModule) -> ModuleResolver | None:
    """How taint flows in ``module`` look up the functions they call (its own, imported helpers'), once per module.

    A module parsed without its project (a snippet, a test) still resolves its own functions.
    """
    project = module.project if isinstance(module.project, ProjectSummaries) else None
    return module.memo("resolver", lambda: (project or ProjectSummaries(lambda _dotted: None)).for_module(module))
