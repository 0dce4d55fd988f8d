"""The project's functions, indexed for calls between files, read until their summaries settle.

A call is followed into the project's own code by what it names: a function
of the same file, ``this.m()``/a Go receiver's method, a relative import
(``require("./lib/run")``, ``import { run } from "./run"``), a function of the
same Go package or of another package of the module, and a method whose
distinctive name is defined once in the project (a DAO's
``getByUserIdAndThreshold``). Each function is read by
:class:`~fluxdrive.runtimes.static.flows.engine.FunctionFlow`; what calls a
function whose summary changed is read again, its hits replacing the old.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable, Iterator

from fluxdrive.runtimes.static.flows.engine import FunctionFlow
from fluxdrive.runtimes.static.flows.ir import Expr, Function, Member, Module, Name
from fluxdrive.runtimes.static.flows.sinks import FlowHit, SinkChecker
from fluxdrive.runtimes.static.flows.spec import FlowSpec
from fluxdrive.runtimes.static.flows.summaries import Summary
from fluxdrive.runtimes.static.flows.values import Value
from fluxdrive.runtimes.static.flows.views import Render

SCRIPT_SUFFIXES = (".js", ".ts", ".mjs", ".cjs", ".tsx", ".jsx", ".mts", ".cts")
MAX_REFINEMENTS = 4
DISTINCTIVE = 8  # a method name this long, defined once in the project, is followed by name alone


class Project:
    """Every parsed file of one language family, its functions indexed for calls between them."""

    def __init__(self, modules: Iterable[Module], spec: FlowSpec) -> None:
        modules = list(modules)
        self.spec = spec
        self.modules = {m.path: m for m in modules}
        self.functions: dict[tuple[str, str], Function] = {}
        self.attributes: dict[tuple[str, str], dict[str, Value]] = {}
        self.summaries: dict[tuple[str, str], Summary] = {}
        self.callees: dict[tuple[str, str], frozenset[tuple[str, str]]] = {}
        self.module_envs: dict[str, dict[str, Value]] = {}
        self.hits: dict[tuple[str, str], list[FlowHit]] = {}
        self.notes: set[str] = set()
        self.renders: dict[tuple[str, int], Render] = {}  # res.render(view, data) with outside data in data
        self.handlers: dict[str, set[str]] = {}
        self.owners = {m.path: frozenset(f.owner for f in m.functions if f.owner) | set(m.classes) for m in modules}
        self.directories: dict[str, list[Module]] = {}
        methods: dict[str, list[tuple[str, str]]] = {}
        for module in self.modules.values():
            for function in module.functions:
                self.functions.setdefault((module.path, function.qualified), function)
                if function.owner:
                    methods.setdefault(function.name, []).append((module.path, function.qualified))
            self.directories.setdefault(posixpath.dirname(module.path), []).append(module)
        common = spec.pure_methods | {m for sink in spec.sinks.values() for m in sink.methods}
        self.methods = {  # a method name defined once in the project, distinctive enough to follow by name
            name: places[0]
            for name, places in methods.items()
            if len(places) == 1 and len(name) >= DISTINCTIVE and name not in common
        }

    # ---------------------------------------------------------------- running
    def analyse(self) -> list[FlowHit]:
        """Every sink hit in the project.

        Every file's top level and functions are read once; then what calls a function whose
        summary changed is read again with the new summary (up to :data:`MAX_REFINEMENTS`
        times: a helper of a helper of a helper is seen), its hits replacing the earlier ones.
        """
        changed = self._pass(None)
        for _ in range(MAX_REFINEMENTS):
            stale = {key for key, called in self.callees.items() if called & changed}
            if not stale:
                break
            changed = self._pass(stale)
        worst: dict[tuple[str, int, str], FlowHit] = {}
        for hits in self.hits.values():  # a sink reached from several files is one finding, at its worst
            for hit in hits:
                key = (hit.path, hit.line, hit.sink.name)
                if key not in worst or hit.severity < worst[key].severity:
                    worst[key] = hit
        return list(worst.values())

    def _pass(self, only: set[tuple[str, str]] | None) -> set[tuple[str, str]]:
        """Read the project's top levels and functions (``only`` these); the functions whose summary changed."""
        changed: set[tuple[str, str]] = set()
        paths = None if only is None else {path for path, _name in only}
        for module in self.modules.values():
            if paths is None or module.path in paths:
                self._module(module, only, changed)
        return changed

    def _module(self, module: Module, only: set[tuple[str, str]] | None, changed: set[tuple[str, str]]) -> None:
        top_key = (module.path, "<module>")
        if only is None or top_key in only or module.path not in self.module_envs:
            top = self._read(module, module.top, top_key, {})
            self.module_envs[module.path] = top.module_env()
        env = self.module_envs[module.path]
        owners = self.owners[module.path]
        ordered = sorted(module.functions, key=lambda f: f.role != "constructor" and f.name not in owners)
        for function in ordered:
            key = (module.path, function.qualified)
            if only is not None and key not in only:
                continue
            flow = self._read(module, function, key, env)
            if self.summaries.get(key) != flow.summary:
                changed.add(key)
            self.summaries[key] = flow.summary

    def _read(self, module: Module, function: Function, key: tuple[str, str], env: dict[str, Value]) -> FunctionFlow:
        """One function (or top level) read with the summaries known now; its hits replace its earlier ones."""
        checker = SinkChecker(self.spec, module.path, report=True)
        flow = FunctionFlow(self, module, function, checker, env=dict(env))
        try:
            flow.run()
        except RecursionError:  # an expression nested thousands deep: that function is listed, the rest goes on
            self.notes.add(f"data flow skipped {function.qualified} in {module.path}: nested too deep")
        self.hits[key] = checker.hits
        self.callees[key] = frozenset(flow.callees)
        return flow

    # -------------------------------------------------------------- resolving
    def resolve(
        self, module: Module, func: Expr, owner: str, env: dict[str, Value], receiver: str = ""
    ) -> tuple[str, str] | None:
        """The project function a call names: same file, ``this.m()``, a relative import, the same Go package."""
        if isinstance(func, Name):
            if func.id in env and not env[func.id].alias:
                return None  # a local variable shadows the function
            key = (module.path, func.id)
            if key in self.functions and not self.functions[key].owner:
                return key
            imported = module.imports.get(func.id)
            if imported is not None:
                return self._imported(module, imported)
            if module.language == "go":
                return self._same_package(module, func.id)
            return None
        if isinstance(func, Member) and isinstance(func.obj, Name):
            base = func.obj.id
            if (base == "this" or (receiver and base == receiver)) and owner:
                key = (module.path, f"{owner}.{func.name}")
                return key if key in self.functions else None
            imported = module.imports.get(base)
            if imported is not None and base not in env and "#" not in imported:
                return self._imported(module, f"{imported}#{func.name}")
        if isinstance(func, Member):  # allocationsDAO.getByUserIdAndThreshold(...): one method of that name
            return self.methods.get(func.name)
        return None

    def _imported(self, module: Module, imported: str) -> tuple[str, str] | None:
        """A function of another project file: ``./utils#run`` (JavaScript), ``example.com/app/util#Run`` (Go)."""
        source, _, name = imported.partition("#")
        if module.language == "go":
            for directory, members in self.directories.items():
                if directory and (source == directory or source.endswith("/" + directory)):
                    found = self._in_modules(members, name)
                    if found:
                        return found
            return None
        if not source.startswith("."):
            return None
        for candidate in self._script_paths(module.path, source):
            if candidate in self.modules:
                return self._exported_function(self.modules[candidate], name or "default")
        return None

    def _script_paths(self, importer: str, spec: str) -> Iterator[str]:
        base = posixpath.normpath(posixpath.join(posixpath.dirname(importer), spec))
        yield base
        for suffix in SCRIPT_SUFFIXES:
            yield base + suffix
            yield f"{base}/index{suffix}"

    def _exported_function(self, module: Module, name: str) -> tuple[str, str] | None:
        key = (module.path, name)
        if key in self.functions:
            return key
        if name == "default":
            exported = [f for f in module.functions if f.exported and not f.owner]
            if len(exported) == 1:
                return (module.path, exported[0].name)
        return None

    def _same_package(self, module: Module, name: str) -> tuple[str, str] | None:
        return self._in_modules(self.directories.get(posixpath.dirname(module.path), []), name)

    def _in_modules(self, modules: list[Module], name: str) -> tuple[str, str] | None:
        for member in modules:
            key = (member.path, name)
            if key in self.functions and not self.functions[key].owner:
                return key
        return None
