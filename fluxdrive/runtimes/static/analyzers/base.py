"""What analyzers receive and return.

Every analyzer is a function ``run(context) -> AnalyzerOutput`` that reads
the loaded sources once and returns hits for all agents; the agents then
take the hits they claim. An analyzer that cannot run (its tool is missing)
returns ``error`` instead of raising, so the report can name the check that
did not run and the verdict is computed from what did.
"""

from __future__ import annotations

import ast
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from fluxdrive.config.model import StaticConfig
from fluxdrive.runtimes.static.checks.pyparse import parse_python
from fluxdrive.runtimes.static.hits import Hit, SecretMask
from fluxdrive.runtimes.static.source import LoadedSources, Source


@dataclass(frozen=True, slots=True)
class AnalyzerOutput:
    """One analyzer's hits, notes, wall time, and error if it could not run."""

    name: str
    hits: tuple[Hit, ...] = ()
    notes: tuple[str, ...] = ()
    seconds: float = 0.0
    error: str | None = None


@dataclass
class AnalyzerContext:
    """The shared inputs of one analysis (one content, all agents)."""

    root: Path
    loaded: LoadedSources
    settings: StaticConfig
    ruff_select: tuple[str, ...] = ()
    mask: SecretMask = field(default_factory=SecretMask)
    _trees: dict[str, ast.Module | None] = field(default_factory=dict)
    _spans: dict[str, list[tuple[int, int, str]]] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def sources(self) -> tuple[Source, ...]:
        """Every source, documents and code blocks included."""
        return self.loaded.sources

    def python_sources(self) -> list[Source]:
        """Python files and Python code blocks."""
        return [s for s in self.sources if s.language == "python"]

    def python_tree(self, source: Source) -> ast.Module | None:
        """The parsed module (cached; None when it is not valid Python)."""
        with self._lock:
            if source.name in self._trees:
                return self._trees[source.name]
        try:
            tree: ast.Module | None = parse_python(source.text, filename=source.name)
        except (SyntaxError, ValueError, RecursionError):
            tree = None
        with self._lock:
            self._trees[source.name] = tree
        return tree

    def function_at(self, source: Source, line: int) -> str | None:
        """The innermost function (``Class.method``) containing a line, if any."""
        with self._lock:
            spans = self._spans.get(source.name)
        if spans is None:
            tree = self.python_tree(source)
            spans = function_spans(tree) if tree is not None else []
            with self._lock:
                self._spans[source.name] = spans
        inside = [s for s in spans if s[0] <= line <= s[1]]
        return min(inside, key=lambda s: s[1] - s[0])[2] if inside else None


def _statements(node: ast.AST) -> Iterator[ast.stmt]:
    """The statements directly inside a compound statement (handlers' and match cases' bodies included)."""
    for name in ("body", "orelse", "finalbody", "handlers", "cases"):
        children = getattr(node, name, None)
        if not isinstance(children, list):
            continue
        for child in children:
            if isinstance(child, ast.stmt):
                yield child
            elif isinstance(child, ast.ExceptHandler | ast.match_case):
                yield from child.body


def function_spans(tree: ast.Module) -> list[tuple[int, int, str]]:
    """(first line with decorators, last line, ``Class.method`` name) of every function, walking statements only."""
    spans: list[tuple[int, int, str]] = []

    def visit(node: ast.AST, owner: str) -> None:
        for child in _statements(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                name = f"{owner}{child.name}"
                start = min([child.lineno, *(d.lineno for d in child.decorator_list)])
                spans.append((start, child.end_lineno or child.lineno, name))
                visit(child, f"{name}.")
            elif isinstance(child, ast.ClassDef):
                visit(child, f"{owner}{child.name}.")
            else:
                visit(child, owner)

    visit(tree, "")
    return sorted(spans)


def where(context: AnalyzerContext, source: Source, line: int) -> str:
    """``in load_orders()`` or ``at module level`` for Python; empty otherwise."""
    if source.language != "python":
        return ""
    function = context.function_at(source, line)
    return f"in {function}()" if function else "at module level"
