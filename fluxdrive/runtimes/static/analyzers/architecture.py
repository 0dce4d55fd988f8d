"""fd-architecture's view of a tree: the import graph and what it says.

Python imports are read from the AST (absolute and relative), JavaScript and
TypeScript relative imports (``import ... from './x'``, ``require('../y')``)
from the text. Only imports between files of the reviewed tree count. From
the graph: import cycles (strongly connected components), hub modules with
extreme fan-out or fan-in, oversized modules, and imports that break the
layering rules configured in ``[static] layers``. None of these is
exploitable or loses data: threshold findings are P3 just over the threshold
and P2 from twice it, a layering violation is P2.
"""

from __future__ import annotations

import posixpath
import re
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from fluxdrive.config.model import LayerRule
from fluxdrive.core.graphs import strongly_connected
from fluxdrive.runtimes.static.analyzers.base import Analyzer, AnalyzerContext, AnalyzerOutput, ImportRef, hit_at
from fluxdrive.runtimes.static.analyzers.complexity import over
from fluxdrive.runtimes.static.hits import Claim, Hit
from fluxdrive.runtimes.static.source import Source

JS_LANGUAGES = {"javascript", "typescript", "tsx"}
JS_IMPORT = re.compile(r"""(?:\bfrom\s+|\brequire\(\s*|\bimport\s*\(\s*|^\s*import\s+)["'](\.{1,2}/[^"']+)["']""", re.M)
JS_EXTENSIONS = ("", ".js", ".ts", ".tsx", ".jsx", ".mjs", "/index.js", "/index.ts", "/index.tsx")


@dataclass
class Graph:
    """Modules (by path), their dotted names, and import edges with line numbers."""

    names: dict[str, str] = field(default_factory=dict)
    edges: dict[str, dict[str, int]] = field(default_factory=dict)
    sources: dict[str, Source] = field(default_factory=dict)

    def add(self, source: str, target: str, line: int) -> None:
        if source != target:
            self.edges.setdefault(source, {}).setdefault(target, line)

    def importers(self) -> dict[str, set[str]]:
        incoming: dict[str, set[str]] = {}
        for source, targets in self.edges.items():
            for target in targets:
                incoming.setdefault(target, set()).add(source)
        return incoming


def _python_key(path: str, packages: set[str]) -> str:
    """The dotted name a module is imported by.

    Inside packages: from the outermost package directory (``src/pkg/a.py``
    -> ``pkg.a``). Outside any package, the whole relative path is used, so a
    stray ``utils/json.py`` is never mistaken for the standard ``json``.
    """
    parts = list(PurePosixPath(path).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    start = len(parts) - 1
    while start > 0 and "/".join(parts[:start]) in packages:
        start -= 1
    in_package = start < len(parts) - 1 or path.endswith("__init__.py")
    return ".".join(parts[start:] if in_package else parts)


def _python_graph(context: AnalyzerContext, graph: Graph) -> None:
    files = [s for s in context.python_sources() if s.block_of is None]
    packages = {posixpath.dirname(s.path) for s in files if s.path.endswith("__init__.py")}
    index: dict[str, str] = {}
    for source in files:
        key = _python_key(source.path, packages)
        graph.names[source.path] = key
        graph.sources[source.path] = source
        index.setdefault(key, source.path)
    for source in files:
        outline = context.outline(source)
        if outline is None:
            continue
        own = graph.names[source.path]
        package = own if source.path.endswith("__init__.py") else own.rpartition(".")[0]
        for target, line in _python_imports(outline.imports, package):
            resolved = _resolve(target, index)
            if resolved is not None:
                graph.add(source.path, resolved, line)


def _python_imports(imports: Iterable[ImportRef], package: str) -> Iterator[tuple[str, int]]:
    """Absolute dotted targets of a file's imports (relative ones resolved against its package)."""
    for module, level, name, line in imports:
        if not name:  # import a.b
            yield module, line
            continue
        base = module
        if level:
            parts = package.split(".") if package else []
            parts = parts[: len(parts) - (level - 1)] if level > 1 else parts
            base = ".".join([*parts, *([module] if module else [])])
        yield (f"{base}.{name}" if base else name), line


def _resolve(target: str, index: dict[str, str]) -> str | None:
    parts = target.split(".")
    for end in range(len(parts), 0, -1):
        path = index.get(".".join(parts[:end]))
        if path is not None:
            return path
    return None


def _js_graph(context: AnalyzerContext, graph: Graph) -> None:
    files = {s.path: s for s in context.sources if s.language in JS_LANGUAGES and s.block_of is None}
    for path, source in files.items():
        graph.names[path] = path
        graph.sources[path] = source
    for path, source in files.items():
        for match in JS_IMPORT.finditer(source.text):
            base = posixpath.normpath(posixpath.join(posixpath.dirname(path), match.group(1)))
            resolved = next((base + ext for ext in JS_EXTENSIONS if base + ext in files), None)
            if resolved is not None:
                graph.add(path, resolved, source.text.count("\n", 0, match.start()) + 1)


def _components(graph: Graph) -> list[list[str]]:
    """Strongly connected components with more than one module, sorted."""
    components = strongly_connected(sorted(graph.names), lambda name: sorted(graph.edges.get(name, {})))
    return sorted(sorted(component) for component in components if len(component) > 1)


def _cycle_path(graph: Graph, component: list[str]) -> list[str]:
    """A shortest cycle through the component's first module."""
    members = set(component)
    start = component[0]
    previous: dict[str, str] = {}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for target in sorted(graph.edges.get(node, {})):
                if target == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(previous[path[-1]])
                    return [start, *reversed(path[:-1]), start] if len(path) > 1 else [start, node, start]
                if target in members and target not in previous and target != start:
                    previous[target] = node
                    following.append(target)
        frontier = following
    return [*component, component[0]]


ADVICE = {
    "import-cycles": (
        "Modules in a cycle cannot be understood, tested or reused apart, and import-order bugs appear at start-up.",
        "Move the shared piece into a lower module both can import, or invert one dependency through an interface.",
    ),
    "fan-out": (
        "A module that depends on most of the tree changes whenever anything changes and is hard to test alone.",
        "Split it by responsibility, or let callers pass in what it needs.",
    ),
    "fan-in": (
        "Every change to a module this central ripples through the tree; its interface must stay small and stable.",
        "Keep its public surface minimal and documented; split unrelated helpers out of it.",
    ),
    "oversized-module": (
        "A module this large holds several ideas; readers cannot find the one they need and changes collide.",
        "Split it into modules with one idea each, keeping a small public entry point.",
    ),
    "layering-rules": (
        "The configured layering keeps lower layers independent of higher ones; this import couples them.",
        "Depend on an abstraction owned by the lower layer, or move the shared code down.",
    ),
}


def _hit(graph: Graph, path: str, line: int, check: str, severity: str, title: str, advice: str = "") -> Hit:
    why, fix = ADVICE[advice or check]
    source = graph.sources[path]  # a whole file (never a code block): reported at its own path and line
    return hit_at(
        source,
        line,
        source.text.splitlines(),
        rule=f"fluxdrive:{check}",
        claim=Claim("fluxdrive", check),
        severity=severity,
        title=title,
        why=why,
        fix=fix,
        category=check,
    )


def _code_lines(source: Source) -> int:
    return sum(1 for line in source.text.splitlines() if line.strip() and not line.strip().startswith(("#", "//")))


def _layer_hits(graph: Graph, path: str, layers: list[LayerRule]) -> Iterator[Hit]:
    own = graph.names[path]
    for rule in layers:
        if not _under(own, path, rule.source):
            continue
        for target, line in sorted(graph.edges.get(path, {}).items()):
            forbidden = next((f for f in rule.forbidden if _under(graph.names[target], target, f)), None)
            if forbidden:
                title = f"{own} imports {graph.names[target]} (layer rule: {rule.source} must not import {forbidden})"
                yield _hit(graph, path, line, "layering-rules", "P2", title)


def _findings(context: AnalyzerContext, graph: Graph) -> Iterator[Hit]:
    settings = context.settings
    for component in _components(graph):
        cycle = _cycle_path(graph, component)
        names = " -> ".join(graph.names[p] for p in cycle)
        line = graph.edges[cycle[0]][cycle[1]]
        yield _hit(
            graph, cycle[0], line, "import-cycles", "P2", f"Import cycle between {len(component)} modules: {names}"
        )
    incoming = graph.importers()
    for path in sorted(graph.names):
        name = graph.names[path]
        fan_out = len(graph.edges.get(path, {}))
        if fan_out > settings.max_fan_out:
            title = f"{name} imports {fan_out} modules of this tree (threshold {settings.max_fan_out})"
            severity = over(fan_out, settings.max_fan_out)
            yield _hit(graph, path, min(graph.edges[path].values()), "module-fan-in-out", severity, title, "fan-out")
        fan_in = len(incoming.get(path, ()))
        if fan_in > settings.max_fan_in:
            title = f"{name} is imported by {fan_in} modules (threshold {settings.max_fan_in})"
            yield _hit(graph, path, 1, "module-fan-in-out", "P3", title, "fan-in")
        code_lines = _code_lines(graph.sources[path])
        if code_lines > settings.module_lines:
            title = f"{name} has {code_lines} lines of code (threshold {settings.module_lines})"
            yield _hit(graph, path, 1, "oversized-module", over(code_lines, settings.module_lines), title)
        yield from _layer_hits(graph, path, settings.layers)


def _under(name: str, path: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".") or path.startswith(prefix.rstrip("/") + "/")


def run(context: AnalyzerContext) -> AnalyzerOutput:
    """Build the import graph of the reviewed files and report what it shows."""
    started = time.monotonic()
    graph = Graph()
    _python_graph(context, graph)
    _js_graph(context, graph)
    hits = tuple(_findings(context, graph))
    edges = sum(len(t) for t in graph.edges.values())
    note = f"import graph: {len(graph.names)} modules, {edges} internal imports"
    return AnalyzerOutput("architecture", hits, (note,), time.monotonic() - started)


ANALYZER = Analyzer("architecture", run)
