"""A parsed Python file as a check receives it, with the lookups checks keep needing.

One walk of the tree records every node, its parent and its enclosing
function; the lookups built on it (nodes by type, imports, constants,
assignments) are computed once per file and shared by every check.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Callable, Hashable, Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar, cast

from fluxdrive.runtimes.static.checks.engine.syntax import (
    Function,
    assignments,
    child_nodes,
    import_map,
    module_assignments,
)
from fluxdrive.runtimes.static.checks.engine.taint_spec import TaintSpec, shipped
from fluxdrive.runtimes.static.placement import below

T = TypeVar("T")
# (the calling module's path, a template name as passed to render) -> (the template's path, its text)
TemplateReader = Callable[[str, str], "tuple[str, str] | None"]


class Project(Protocol):
    """What a module knows of its project (:class:`~.summaries.ProjectSummaries` is the one the runtime gives)."""

    spec: TaintSpec
    templates: TemplateReader | None


@dataclass
class PyModule:
    """A parsed Python file with the lookups checks keep needing."""

    path: str
    text: str
    tree: ast.Module
    lines: list[str] = field(default_factory=list)
    project: Project | None = field(default=None, repr=False)
    reviewed: str = ""  # the directory the user named: whether this is a test is judged below it
    _walks: dict[int, list[ast.AST]] = field(default_factory=dict, repr=False)
    _assignments: dict[int, dict[str, ast.expr]] = field(default_factory=dict, repr=False)
    _memo: dict[Hashable, Any] = field(default_factory=dict, repr=False)
    _parents: dict[ast.AST, ast.AST] = field(default_factory=dict, repr=False)
    _functions: dict[ast.AST, Function] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        if not self.lines:
            self.lines = self.text.splitlines()

    @functools.cached_property
    def nodes(self) -> list[ast.AST]:
        """Every node of the module in ``ast.walk`` order, walked once and shared by all checks.

        The same pass records each node's parent and enclosing function, which checks
        otherwise recompute by walking again.
        """
        nodes: list[ast.AST] = [self.tree]
        parents: dict[ast.AST, ast.AST] = {}
        owner: dict[ast.AST, Function] = {}
        append = nodes.append
        for node in nodes:  # breadth first, like ast.walk: the list grows as it is read
            function = node if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) else owner.get(node)
            for child in child_nodes(node):
                append(child)
                parents[child] = node
                if function is not None:
                    owner[child] = function
        self._parents, self._functions = parents, owner
        return nodes

    def memo(self, key: Hashable, make: Callable[[], T]) -> T:
        """``make()`` computed once per module under ``key``: state node checks share across nodes
        (a function's taint flow, a file's route handlers) lives here, not in the checks."""
        if key not in self._memo:
            self._memo[key] = make()
        return cast("T", self._memo[key])

    @property
    def taint_spec(self) -> TaintSpec:
        """Sources, sanitizers and sinks: the project's declarations on top of the shipped ones."""
        return self.project.spec if self.project is not None else shipped()

    @functools.cached_property
    def by_type(self) -> dict[type[ast.AST], list[ast.AST]]:
        """The nodes of each type, in walk order (the dispatch table of node checks)."""
        index: dict[type[ast.AST], list[ast.AST]] = {}
        for node in self.nodes:
            index.setdefault(type(node), []).append(node)
        return index

    def of_type(self, *types: type[ast.AST]) -> list[ast.AST]:
        """The nodes of the given (concrete) types, in walk order."""
        if len(types) == 1:
            return self.by_type.get(types[0], [])
        return self.memo(("of_type", types), lambda: self._merged(types))

    def _merged(self, types: tuple[type[ast.AST], ...]) -> list[ast.AST]:
        """The nodes of several types in walk order: their lists merged, not a new walk."""
        lists = [self.by_type[kind] for kind in types if kind in self.by_type]
        if len(lists) <= 1:
            return list(lists[0]) if lists else []
        order = self.memo("walk order", lambda: {node: i for i, node in enumerate(self.nodes)})
        return sorted((node for nodes in lists for node in nodes), key=order.__getitem__)

    @functools.cached_property
    def function_defs(self) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
        """Every (async) function definition, nested ones included, in walk order."""
        kinds = (ast.FunctionDef, ast.AsyncFunctionDef)
        return [n for n in self.of_type(*kinds) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]

    @functools.cached_property
    def imports(self) -> dict[str, str]:
        """:func:`import_map` of the module, computed once for every check."""
        return import_map(self.of_type(ast.Import, ast.ImportFrom))

    @functools.cached_property
    def constants(self) -> dict[str, ast.expr]:
        """:func:`module_assignments` of the module (its top-level constants), computed once."""
        return module_assignments(self.tree)

    @property
    def parents(self) -> dict[ast.AST, ast.AST]:
        """Child -> parent for every node."""
        if "nodes" not in self.__dict__:
            _ = self.nodes  # the walk fills the map
        return self._parents

    @property
    def functions(self) -> dict[ast.AST, Function]:
        """Node -> nearest enclosing function, for every node inside one."""
        if "nodes" not in self.__dict__:
            _ = self.nodes  # the walk fills the map
        return self._functions

    def walk(self, node: ast.AST) -> list[ast.AST]:
        """``ast.walk(node)`` as a list, cached for functions and classes (walked repeatedly)."""
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            return list(ast.walk(node))
        cached = self._walks.get(id(node))
        if cached is None:
            cached = self._walks[id(node)] = list(ast.walk(node))
        return cached

    def local_assignments(self, function: ast.AST) -> dict[str, ast.expr]:
        """:func:`assignments` of a function, computed once per function."""
        cached = self._assignments.get(id(function))
        if cached is None:
            cached = self._assignments[id(function)] = assignments(function)
        return cached

    def ancestors(self, node: ast.AST) -> Iterator[ast.AST]:
        """Parents of ``node``, nearest first."""
        current = self.parents.get(node)
        while current is not None:
            yield current
            current = self.parents.get(current)

    def enclosing_function(self, node: ast.AST) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
        """The nearest function containing ``node``."""
        return self.functions.get(node)

    def where(self, node: ast.AST) -> str:
        """``in get_user()`` / ``in Cart.total()`` / ``at module level``."""
        function = self.enclosing_function(node)
        if function is None:
            return "at module level"
        owner = next((p for p in self.ancestors(function) if isinstance(p, ast.ClassDef)), None)
        return f"in {owner.name + '.' if owner else ''}{function.name}()"

    def in_loop(self, node: ast.AST) -> ast.AST | None:
        """The nearest loop (or comprehension) repeating ``node``, within its function."""
        child = node
        for parent in self.ancestors(node):
            if isinstance(parent, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
                return None
            if isinstance(parent, ast.For | ast.While | ast.AsyncFor) and child in parent.body:
                return parent
            comprehension = isinstance(parent, ast.ListComp | ast.SetComp | ast.DictComp | ast.GeneratorExp)
            if comprehension and all(child is not g.iter for g in parent.generators):  # type: ignore[attr-defined]
                return parent
            child = parent
        return None

    def is_test_module(self) -> bool:
        """Test files get fewer quality findings, and no request-taint ones (their apps serve no one)."""
        return self._test_module

    @property
    def local_path(self) -> str:
        """The path below the directory the user named: what says whether this is a test, a setting, an example."""
        return below(self.path, self.reviewed)

    @functools.cached_property
    def _test_module(self) -> bool:
        name = self.path.rsplit("/", 1)[-1]
        return (
            name.startswith("test_")
            or name.endswith("_test.py")
            or "/tests/" in f"/{self.local_path}"
            or name == "conftest.py"
        )

    def line_text(self, line: int) -> str:
        """The stripped source text of a 1-based line."""
        return self.lines[line - 1].strip() if 0 < line <= len(self.lines) else ""
