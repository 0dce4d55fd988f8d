"""How a check is declared and found: ``@python_check``, ``@document_check`` and the registry.

A check is a function registered with :func:`python_check` (it receives a
parsed :class:`~.pymodule.PyModule`) or :func:`document_check` (a
:class:`~.document.DocModule`), and yields :class:`CheckHit` values. A Python
check that looks at one kind of node declares it (``nodes=(ast.Call,)``) and
receives ``(module, node)``: the runner walks each file once and hands every
node to the checks that asked for its type (bandit's ``@checks("Call")``), so
twenty checks cost one walk. The check's name is what agent definitions list
in ``static.checks``; its hits are reported as rule ``fluxdrive:<name>``. Each
check has a default severity and the tag of the agent area that owns it,
following ``fluxdrive/data/rules/README.md``.

Check modules are found through the ``fluxdrive.checks`` entry-point group
(:mod:`fluxdrive.extensions`): fluxdrive's own are declared in its
``pyproject.toml`` exactly as a plugin declares its own, and a module that
fails to import is one note in the run (:func:`load_notes`). A check may
declare ``options`` (bandit's ``@takes_config``); ``[static.checks.<name>]``
in the config sets them or turns the check off (:func:`config_errors` says
what in that table does not fit). A check that has nothing to say about test
files declares ``tests=False`` and the runner does not call it on them.

Checks see one file at a time, must never raise (a failing check is reported
as a note, and the others still run), and should prefer silence to noise:
each exists to catch a specific, explainable problem.
"""

from __future__ import annotations

import ast
import difflib
import functools
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Literal, TypeAlias, TypedDict, Unpack

from fluxdrive import extensions
from fluxdrive.runtimes.static.checks.engine.pymodule import PyModule

Option: TypeAlias = str | int | float | bool | list[str]  # a check option's value, as TOML gives it

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
    options: Mapping[str, Option] = field(default_factory=dict, hash=False)  # declared: the check takes config
    tests: bool = True  # declared False: the check does not run on test modules (their own fixtures, their own data)

    def run(self, subject: object) -> Iterator[CheckHit]:
        """Every hit on one module or document (a node check visits the nodes it declared)."""
        if not self.nodes:
            yield from self.function(subject)
            return
        assert isinstance(subject, PyModule)
        for node in subject.of_type(*self.nodes):
            yield from self.function(subject, node)

    def configured(self, given: Mapping[str, object]) -> CheckSpec:
        """This check with ``given`` options over its declared defaults, passed to it as ``options=``.

        A check that declares no options is returned as it is: it is called exactly as before.
        Option names are checked before a run (:func:`config_errors`), not here.
        """
        if not self.options:
            return self
        merged = {**self.options, **given}
        return replace(self, function=functools.partial(self.function, options=merged))

    @property
    def rule_id(self) -> str:
        """``fluxdrive:<name>``: the id findings report and ignore comments name."""
        return f"fluxdrive:{self.name}"


_REGISTRY: dict[str, CheckSpec] = {}


Decorator = Callable[[Callable[..., Iterable[CheckHit]]], Callable[..., Iterable[CheckHit]]]


class _Required(TypedDict):
    tag: str
    severity: CheckSeverity
    summary: str
    match: Iterable[str]
    no_match: Iterable[str]


class Declaration(_Required, total=False):
    """What every check declares besides its name: the keyword arguments both decorators take.

    (``NotRequired`` is not seen under postponed annotations on Python 3.11, hence the base class.)
    """

    options: Mapping[str, Option] | None
    tests: bool


def _register(
    kind: Literal["python", "document"], name: str, nodes: tuple[type[ast.AST], ...], declared: Declaration
) -> Decorator:
    unknown = sorted(set(declared) - Declaration.__required_keys__ - Declaration.__optional_keys__)
    missing = sorted(Declaration.__required_keys__ - set(declared))
    if unknown or missing:  # a plugin's typo is refused as a call with a wrong keyword would be
        raise TypeError(f"check {name!r}: unknown arguments {unknown}, missing arguments {missing}")
    examples = (tuple(declared["match"]), tuple(declared["no_match"]))
    if not examples[0] or not examples[1]:
        raise ValueError(f"check {name!r} needs match and no_match examples")
    tag, severity, summary = declared["tag"], declared["severity"], declared["summary"]

    def decorate(function: Callable[..., Iterable[CheckHit]]) -> Callable[..., Iterable[CheckHit]]:
        if name in _REGISTRY:
            raise ValueError(f"check {name!r} registered twice")
        options = dict(declared.get("options") or {})
        tests = declared.get("tests", True)
        _REGISTRY[name] = CheckSpec(name, kind, tag, severity, summary, function, *examples, nodes, options, tests)
        return function

    return decorate


def python_check(name: str, *, nodes: tuple[type[ast.AST], ...] = (), **declared: Unpack[Declaration]) -> Decorator:
    """Register a check over one parsed Python module, with its examples.

    ``match`` snippets must produce at least one hit and ``no_match`` none;
    the test suite runs them all. With ``nodes``, the check is called once
    per node of those types as ``function(module, node)``. With ``options``
    (name -> default), the check takes configuration (bandit's ``@takes_config``):
    it is called with ``options=`` the defaults overlaid by ``[static.checks.<name>]``.
    With ``tests=False`` it is not called on test modules (:meth:`~.pymodule.PyModule.is_test_module`).
    """
    return _register("python", name, nodes, declared)


def document_check(name: str, **declared: Unpack[Declaration]) -> Decorator:
    """Register a check over one markdown document, with its examples (``options``: as for :func:`python_check`)."""
    return _register("document", name, (), declared)


def registered_checks() -> dict[str, CheckSpec]:
    """Every registered check by name (loading the ``fluxdrive.checks`` entry points first, once per process)."""
    _load()
    return dict(sorted(_REGISTRY.items()))


def load_notes() -> tuple[str, ...]:
    """One line per check module that failed to load (a broken plugin is a note in the run, not a crash)."""
    return _load()


@functools.cache
def _load() -> tuple[str, ...]:
    """Import every check module the entry-point group declares: importing one registers its checks."""
    loaded = extensions.load(extensions.CHECKS)
    return tuple(
        f"check module {name} did not load ({why}); its checks did not run" for name, why in loaded.broken.items()
    )


def config_errors(configured: Mapping[str, Mapping[str, object]]) -> list[str]:
    """What is wrong with ``[static.checks.<name>]`` options: an unknown check, an option it does not take,
    a value of another type than the declared default. Empty when all is well."""
    checks = registered_checks()
    errors: list[str] = []
    for name, given in sorted(configured.items()):
        spec = checks.get(name)
        if spec is None:
            close = difflib.get_close_matches(name, checks, n=1)
            errors.append(f"static.checks.{name}: no such check" + (f" (did you mean {close[0]}?)" if close else ""))
            continue
        for option, value in sorted(given.items()):
            if option not in spec.options:
                takes = ", ".join(sorted(spec.options)) or "none"
                errors.append(f"static.checks.{name}.{option}: the check takes no such option (it takes: {takes})")
            elif not _same_type(spec.options[option], value):
                wanted = type(spec.options[option]).__name__
                errors.append(f"static.checks.{name}.{option}: expected a {wanted}, got {value!r}")
    return errors


def _same_type(default: Option, value: object) -> bool:
    if isinstance(default, bool) or isinstance(value, bool):
        return isinstance(default, bool) and isinstance(value, bool)
    if isinstance(default, float):
        return isinstance(value, int | float)
    return type(default) is type(value) or (isinstance(default, list) and isinstance(value, list))
