"""The framework for fluxdrive's own checks (what no off-the-shelf tool covers well).

A check is a function registered with :func:`python_check` (it receives a
parsed :class:`PyModule`) or :func:`document_check` (a :class:`DocModule`),
and yields :class:`CheckHit` values. A Python check that looks at one kind of
node declares it (``nodes=(ast.Call,)``) and receives ``(module, node)``: the
runner walks each file once and hands every node to the checks that asked for
its type (bandit's ``@checks("Call")``), so twenty checks cost one walk. The check's name is what agent
definitions list in ``static.checks``; its hits are reported as rule
``fluxdrive:<name>``. Each check has a default severity and the
tag of the agent area that owns it, following
``fluxdrive/data/rules/README.md``.

Checks see one file at a time, must never raise (a failing check is reported
as a note, and the others still run), and should prefer silence to noise:
each exists to catch a specific, explainable problem.
"""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Callable, Hashable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, TypeAlias, TypeVar, cast

from fluxdrive.runtimes.static.checks.taint_spec import TaintSpec, shipped

if TYPE_CHECKING:
    from fluxdrive.runtimes.static.checks.summaries import ModuleResolver, ProjectSummaries

T = TypeVar("T")
Function: TypeAlias = ast.FunctionDef | ast.AsyncFunctionDef

CheckSeverity = Literal["P0", "P1", "P2", "P3"]


@dataclass(frozen=True, slots=True)
class CheckHit:
    """One problem a check found.

    ``title`` names what and where ("SQL built with an f-string reaches
    cursor.execute() in get_user()"); ``why`` and ``fix`` are one or two
    sentences each. ``severity`` overrides the check's default when set.
    ``place`` reports the problem in another project file instead (path, line,
    that line's text): a view passing request data to a template is fixed in the
    template line that prints it unescaped.
    """

    line: int
    title: str
    why: str
    fix: str
    severity: CheckSeverity | None = None
    end_line: int | None = None
    place: tuple[str, int, str] | None = None
    evidence: str = ""  # "high" when the title shows data flow from outside, "medium" a parameter, "low" unknown


@dataclass(frozen=True, slots=True)
class CheckSpec:
    """A registered check."""

    name: str
    kind: Literal["python", "document"]
    tag: str
    severity: CheckSeverity
    summary: str
    function: Callable[..., Iterable[CheckHit]]
    match: tuple[str, ...]
    no_match: tuple[str, ...]
    nodes: tuple[type[ast.AST], ...] = ()

    def run(self, subject: object) -> Iterator[CheckHit]:
        """Every hit on one module or document (a node check visits the nodes it declared)."""
        if not self.nodes:
            yield from self.function(subject)
            return
        assert isinstance(subject, PyModule)
        for node in subject.of_type(*self.nodes):
            yield from self.function(subject, node)

    @property
    def rule_id(self) -> str:
        """``fluxdrive:<name>``: the id findings report and ignore comments name."""
        return f"fluxdrive:{self.name}"


_REGISTRY: dict[str, CheckSpec] = {}


Decorator = Callable[[Callable[..., Iterable[CheckHit]]], Callable[..., Iterable[CheckHit]]]


def _register(
    kind: Literal["python", "document"],
    name: str,
    tag: str,
    severity: CheckSeverity,
    summary: str,
    match: Iterable[str],
    no_match: Iterable[str],
    nodes: tuple[type[ast.AST], ...] = (),
) -> Decorator:
    examples = (tuple(match), tuple(no_match))
    if not examples[0] or not examples[1]:
        raise ValueError(f"check {name!r} needs match and no_match examples")

    def decorate(function: Callable[..., Iterable[CheckHit]]) -> Callable[..., Iterable[CheckHit]]:
        if name in _REGISTRY:
            raise ValueError(f"check {name!r} registered twice")
        _REGISTRY[name] = CheckSpec(name, kind, tag, severity, summary, function, *examples, nodes=nodes)
        return function

    return decorate


def python_check(
    name: str,
    *,
    tag: str,
    severity: CheckSeverity,
    summary: str,
    match: Iterable[str],
    no_match: Iterable[str],
    nodes: tuple[type[ast.AST], ...] = (),
) -> Decorator:
    """Register a check over one parsed Python module, with its examples.

    ``match`` snippets must produce at least one hit and ``no_match`` none;
    the test suite runs them all. With ``nodes``, the check is called once
    per node of those types as ``function(module, node)``.
    """
    return _register("python", name, tag, severity, summary, match, no_match, nodes)


def document_check(
    name: str,
    *,
    tag: str,
    severity: CheckSeverity,
    summary: str,
    match: Iterable[str],
    no_match: Iterable[str],
) -> Decorator:
    """Register a check over one markdown document, with its examples."""
    return _register("document", name, tag, severity, summary, match, no_match)


def registered_checks() -> dict[str, CheckSpec]:
    """Every registered check by name (importing the check modules first)."""
    from fluxdrive.runtimes.static.checks import load_all

    load_all()
    return dict(sorted(_REGISTRY.items()))


# --------------------------------------------------------------------------
# Python modules


_CHILD_FIELDS: dict[type, tuple[str, ...]] = {}


def child_nodes(node: ast.AST) -> list[ast.AST]:
    """The node's children, like ``ast.iter_child_nodes`` but without ``ctx`` (Load/Store markers no check reads
    as nodes): about twice as fast, and a third fewer nodes for every walk built on it."""
    cls = node.__class__
    fields = _CHILD_FIELDS.get(cls)
    if fields is None:
        fields = _CHILD_FIELDS[cls] = tuple(name for name in cls._fields if name != "ctx")
    children: list[ast.AST] = []
    for name in fields:
        value = getattr(node, name, None)
        if value.__class__ is list:
            children.extend(item for item in value if isinstance(item, ast.AST))
        elif isinstance(value, ast.AST):
            children.append(value)
    return children


def walk(root: ast.AST) -> list[ast.AST]:
    """``ast.walk(root)`` as a list (same breadth-first order), built on :func:`child_nodes`."""
    nodes = [root]
    for node in nodes:  # the list grows as it is read
        nodes.extend(child_nodes(node))
    return nodes


@dataclass
class PyModule:
    """A parsed Python file with the lookups checks keep needing."""

    path: str
    text: str
    tree: ast.Module
    lines: list[str] = field(default_factory=list)
    project: ProjectSummaries | None = field(default=None, repr=False)
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
    def resolver(self) -> ModuleResolver | None:
        """How taint flows in this module look up the functions they call (this file's, imported helpers')."""
        from fluxdrive.runtimes.static.checks.summaries import ProjectSummaries  # it builds on this module

        project = self.project if self.project is not None else ProjectSummaries(lambda _dotted: None)
        return project.for_module(self)

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

    @functools.cached_property
    def _test_module(self) -> bool:
        name = self.path.rsplit("/", 1)[-1]
        return (
            name.startswith("test_")
            or name.endswith("_test.py")
            or "/tests/" in f"/{self.path}"
            or name == "conftest.py"
        )

    def line_text(self, line: int) -> str:
        """The stripped source text of a 1-based line."""
        return self.lines[line - 1].strip() if 0 < line <= len(self.lines) else ""


def import_map(tree: ast.Module | Iterable[ast.AST]) -> dict[str, str]:
    """Local name -> dotted origin for every absolute import in the file (or among the nodes given)."""
    names: dict[str, str] = {}
    for node in ast.walk(tree) if isinstance(tree, ast.AST) else tree:
        if isinstance(node, ast.Import):
            for alias in node.names:
                head = alias.name.split(".")[0]
                names[alias.asname or head] = alias.name if alias.asname else head
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                names[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return names


def call_name(node: ast.AST) -> str:
    """Dotted name of a call's target: ``cursor.execute``, ``subprocess.run``, ``open``."""
    target = node.func if isinstance(node, ast.Call) else node
    parts: list[str] = []
    while isinstance(target, ast.Attribute):
        parts.append(target.attr)
        target = target.value
    if isinstance(target, ast.Name):
        parts.append(target.id)
    elif isinstance(target, ast.Call):
        parts.append(call_name(target) + "()")
    return ".".join(reversed(parts))


def keyword(node: ast.Call, name: str) -> ast.expr | None:
    """The value of keyword argument ``name`` in a call, if given."""
    return next((k.value for k in node.keywords if k.arg == name), None)


def is_constant(node: ast.AST | None) -> bool:
    """True for literals and compositions of literals (no runtime data)."""
    if node is None:
        return True
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, ast.JoinedStr):
        return all(isinstance(v, ast.Constant) for v in node.values)
    if isinstance(node, ast.BinOp):
        return is_constant(node.left) and is_constant(node.right)
    if isinstance(node, ast.List | ast.Tuple | ast.Set):
        return all(is_constant(e) for e in node.elts)
    return False


def is_dynamic_string(node: ast.AST) -> bool:
    """An f-string with placeholders, ``%`` / ``+`` / ``.format`` string building."""
    if isinstance(node, ast.JoinedStr):
        return any(isinstance(v, ast.FormattedValue) for v in node.values)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Mod):
        return not is_constant(node)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "format":
        return not (is_constant(node.func.value) and all(is_constant(a) for a in node.args) and not node.keywords)
    return False


def string_parts(node: ast.AST) -> str:
    """The literal text inside a (possibly dynamic) string expression."""
    texts = [c.value for c in ast.walk(node) if isinstance(c, ast.Constant) and isinstance(c.value, str)]
    return " ".join(texts)


def _simple_assignments(statements: Iterable[ast.AST]) -> dict[str, ast.expr]:
    """Last ``name = value`` / ``name: T = value`` per name among ``statements``."""
    found: dict[str, ast.expr] = {}
    for node in statements:
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    found[target.id] = node.value
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
            found[node.target.id] = node.value
    return found


@functools.lru_cache(maxsize=512)
def assignments(function: ast.AST) -> dict[str, ast.expr]:
    """Last simple assignment ``name = value`` per name in a function body (kept for the functions
    of the files a worker is on: many checks ask the same function the same question)."""
    return _simple_assignments(ast.walk(function))


def module_assignments(tree: ast.Module) -> dict[str, ast.expr]:
    """Last simple assignment per name among a module's top-level statements (its constants)."""
    return _simple_assignments(tree.body)


def resolve(node: ast.expr, function: ast.AST | None) -> ast.expr:
    """Follow one local assignment: ``q = f"..."; execute(q)`` -> the f-string."""
    if isinstance(node, ast.Name) and function is not None:
        return assignments(function).get(node.id, node)
    return node


SQL_WORDS = re.compile(
    r"\b(select|insert\s+into|update|delete\s+from|where|values|drop\s+table|order\s+by)\b",
    re.IGNORECASE,
)


# --------------------------------------------------------------------------
# Documents


@dataclass(frozen=True, slots=True)
class Heading:
    """A markdown heading: 1-based line, level and text."""

    line: int
    level: int
    text: str


@dataclass
class DocModule:
    """A markdown document with its headings and fenced-code line mask."""

    path: str
    text: str
    exists: Callable[[str], bool] = lambda _path: True
    lines: list[str] = field(default_factory=list)
    headings: list[Heading] = field(default_factory=list)
    in_code: list[bool] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.lines = self.text.splitlines()
        fence: str | None = None
        for number, line in enumerate(self.lines, start=1):
            stripped = line.lstrip()
            marker = re.match(r"(`{3,}|~{3,})", stripped)
            if marker and (fence is None or marker.group(1).startswith(fence)):
                fence = None if fence else marker.group(1)[:3]
                self.in_code.append(True)
                continue
            self.in_code.append(fence is not None)
            heading = re.match(r"^(#{1,6})\s+(.+?)\s*#*\s*$", line)
            if heading and fence is None:
                self.headings.append(Heading(number, len(heading.group(1)), heading.group(2).strip()))

    def prose(self) -> Iterator[tuple[int, str]]:
        """(line number, text) of every line outside code fences."""
        for number, (line, code) in enumerate(zip(self.lines, self.in_code, strict=True), start=1):
            if not code:
                yield number, line

    def section_of(self, line: int) -> str:
        """The heading text a line falls under (or the document's file name)."""
        current = self.path.rsplit("/", 1)[-1]
        for heading in self.headings:
            if heading.line > line:
                break
            current = heading.text
        return current
