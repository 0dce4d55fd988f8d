"""What analyzers receive and return.

Every analyzer is a function ``run(context) -> AnalyzerOutput`` that reads
the loaded sources once and returns hits for all agents; the agents then
take the hits they claim. An analyzer that cannot run (its tool is missing)
returns ``error`` instead of raising, so the report can name the check that
did not run and the verdict is computed from what did.

Each analyzer module exports ``ANALYZER``, an :class:`Analyzer` that the
``fluxdrive.analyzers`` entry-point group names (:mod:`.registry` loads them).
"""

from __future__ import annotations

import ast
import bisect
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from fluxdrive.config.model import StaticConfig
from fluxdrive.runtimes.static.checks.engine.pyparse import parse_python
from fluxdrive.runtimes.static.hits import Claim, Hit, SecretMask, evidence_for
from fluxdrive.runtimes.static.source import LoadedSources, Source


@dataclass(frozen=True, slots=True)
class AnalyzerOutput:
    """One analyzer's hits, notes, wall time, and error if it could not run."""

    name: str
    hits: tuple[Hit, ...] = ()
    notes: tuple[str, ...] = ()
    seconds: float = 0.0
    error: str | None = None


@dataclass(frozen=True, slots=True)
class Analyzer:
    """An analyzer as its entry point declares it.

    ``per_file``: it looks at one file at a time, so it joins the shared
    per-file pass (one parse per file, worker processes, a cluster's shards);
    otherwise it runs once over the whole content.
    """

    name: str
    run: Callable[[AnalyzerContext], AnalyzerOutput]
    per_file: bool = False


@dataclass
class AnalyzerContext:
    """The shared inputs of one analysis (one content, all agents)."""

    root: Path
    loaded: LoadedSources
    settings: StaticConfig
    ruff_select: tuple[str, ...] = ()
    # the project's taint.yaml as read where the review runs (or its base's): bytes or None, and a problem
    declarations: tuple[bytes | None, str | None] = (None, None)
    # the same for the JavaScript/TypeScript and Go data flow, per language family (.fluxdrive/taint-go.yaml)
    flow_declarations: dict[str, tuple[bytes | None, str | None]] = field(default_factory=dict)
    mask: SecretMask = field(default_factory=SecretMask)
    _trees: dict[str, ast.Module | None] = field(default_factory=dict)
    _outlines: dict[str, Outline | None] = field(default_factory=dict)
    _functions: dict[str, FunctionIndex] = field(default_factory=dict)
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

    def outline(self, source: Source) -> Outline | None:
        """The file's imports and function spans (cached, or shipped from the worker that parsed it)."""
        with self._lock:
            if source.name in self._outlines:
                return self._outlines[source.name]
        tree = self.python_tree(source)
        found = outline_of(tree) if tree is not None else None
        with self._lock:
            self._outlines[source.name] = found
        return found

    def parsed_outlines(self) -> dict[str, Outline | None]:
        """The outline of every file this context parsed, to hand to another context."""
        with self._lock:
            parsed = list(self._trees.items())
        return {name: (self._outline_cached(name, tree) if tree is not None else None) for name, tree in parsed}

    def _outline_cached(self, name: str, tree: ast.Module) -> Outline:
        with self._lock:
            known = self._outlines.get(name)
        if known is None:
            known = outline_of(tree)
            with self._lock:
                self._outlines[name] = known
        return known

    def adopt_outlines(self, outlines: dict[str, Outline | None]) -> None:
        """Take outlines computed elsewhere (the per-file workers): no second parse in this process."""
        with self._lock:
            for name, found in outlines.items():
                self._outlines.setdefault(name, found)

    def function_at(self, source: Source, line: int) -> str | None:
        """The innermost function (``Class.method``) containing a line, if any."""
        with self._lock:
            index = self._functions.get(source.name)
        if index is None:
            found = self.outline(source)
            index = FunctionIndex(found.functions if found is not None else ())
            with self._lock:
                self._functions[source.name] = index
        return index.at(line)


class FunctionIndex:
    """Function spans ordered for a lookup in O(log n + depth): a 2 MB file of 24,548 functions with a
    finding in each took 53 s to group when every lookup scanned every span.

    Spans nest (a def inside a def or a class), so the innermost span holding a line is found by
    starting from the last span that begins at or before it and climbing to the enclosing ones.
    """

    def __init__(self, spans: tuple[tuple[int, int, str], ...]) -> None:
        ordered = sorted(spans, key=lambda s: (s[0], -s[1]))
        self.starts = [s[0] for s in ordered]
        self.spans = ordered
        self.parents: list[int] = []
        open_: list[int] = []  # indexes of the spans enclosing the current one
        for index, (start, _end, _name) in enumerate(ordered):
            while open_ and ordered[open_[-1]][1] < start:
                open_.pop()
            self.parents.append(open_[-1] if open_ else -1)
            open_.append(index)

    def at(self, line: int) -> str | None:
        index = bisect.bisect_right(self.starts, line) - 1
        while index >= 0:
            if self.spans[index][1] >= line:
                return self.spans[index][2]
            index = self.parents[index]
        return None


ImportRef = tuple[str, int, str, int]  # (module as written, relative level, imported name or "", line)


@dataclass(frozen=True, slots=True)
class Outline:
    """What project-wide passes need of a parsed Python file, small enough to send between processes.

    The per-file workers parse every file anyway; the import graph and the
    grouping of findings by function read these instead of parsing it again.
    """

    imports: tuple[ImportRef, ...]
    functions: tuple[tuple[int, int, str], ...]  # (first line with decorators, last line, Class.method)


def outline_of(tree: ast.Module) -> Outline:
    """The imports (anywhere in the file) and the function spans of a module."""
    imports: list[ImportRef] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imports.extend((alias.name, 0, "", node.lineno) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            imports.extend((node.module or "", node.level, alias.name, node.lineno) for alias in node.names)
    imports.sort(key=lambda ref: ref[3])
    return Outline(tuple(imports), tuple(function_spans(tree)))


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


def hit_at(
    source: Source,
    line: int,
    lines: list[str],
    *,
    rule: str,
    claim: Claim,
    severity: str,
    title: str,
    why: str,
    fix: str,
    category: str,
    evidence_level: str = "",
) -> Hit:
    """A hit at an analyzer's ``line`` of ``source``, with that line of ``lines`` as evidence.

    Every analyzer reports the same way: where the source says the line is (a
    code block's line in its document, and the file its heading named as
    ``also``), so the mapping lives here once.
    """
    path, reported, also = source.location(line)
    return Hit(
        rule=rule,
        claim=claim,
        severity=severity,
        path=path,
        line=reported,
        title=title,
        why=why,
        fix=fix,
        evidence=evidence_for(lines, line),
        also=also,
        category=category,
        evidence_level=evidence_level,
    )
