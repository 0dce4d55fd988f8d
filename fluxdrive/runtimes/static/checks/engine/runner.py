"""Run registered checks over one file, isolating each check's failures."""

from __future__ import annotations

import ast
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from fluxdrive.runtimes.static.bounds import TimeBoundError
from fluxdrive.runtimes.static.checks.engine.document import DocModule
from fluxdrive.runtimes.static.checks.engine.pymodule import PyModule
from fluxdrive.runtimes.static.checks.engine.pyparse import parse_python
from fluxdrive.runtimes.static.checks.engine.registry import CheckHit, CheckSpec, registered_checks
from fluxdrive.runtimes.static.checks.engine.summaries import ProjectSummaries


@dataclass(frozen=True, slots=True)
class RanCheck:
    """A hit together with the check that produced it."""

    spec: CheckSpec
    hit: CheckHit


def _failed(spec: CheckSpec, path: str, exc: Exception) -> str:
    return f"check {spec.name} failed on {path}: {type(exc).__name__}: {exc}"


def _in_time(deadline: float | None) -> None:
    """Raise :class:`TimeBoundError` once ``deadline`` (monotonic) has passed."""
    if deadline is not None and time.monotonic() > deadline:
        raise TimeBoundError


def _run(
    specs: Iterable[CheckSpec], subject: object, notes: list[str], path: str, deadline: float | None = None
) -> list[RanCheck]:
    out: list[RanCheck] = []
    for spec in specs:
        _in_time(deadline)
        try:
            out.extend(RanCheck(spec, hit) for hit in spec.run(subject))
        except Exception as exc:  # one broken check must not hide the others
            notes.append(_failed(spec, path, exc))
    return out


def _dispatch(
    specs: Iterable[CheckSpec], module: PyModule, notes: list[str], deadline: float | None = None
) -> list[RanCheck]:
    """One walk over the module: each node goes to the checks that declared its type.

    A check that raises is noted once and sits out the rest of the file; past
    ``deadline`` the walk stops with :class:`TimeBoundError` (checked every 256 nodes).
    """
    table: dict[type[ast.AST], list[CheckSpec]] = {}
    for spec in specs:
        for kind in spec.nodes:
            table.setdefault(kind, []).append(spec)
    out: list[RanCheck] = []
    broken: set[str] = set()
    for count, node in enumerate(module.nodes):
        if not count & 255:
            _in_time(deadline)
        for spec in table.get(type(node), ()):
            if spec.name in broken:
                continue
            try:
                out.extend(RanCheck(spec, hit) for hit in spec.function(module, node))
            except Exception as exc:  # one broken check must not hide the others
                broken.add(spec.name)
                notes.append(_failed(spec, module.path, exc))
    return out


def run_python_checks(
    path: str,
    text: str,
    names: Iterable[str] | None,
    notes: list[str],
    tree: ast.Module | None = None,
    project: ProjectSummaries | None = None,
    deadline: float | None = None,
    options: Mapping[str, Mapping[str, object]] | None = None,
    reviewed: str = "",
) -> list[RanCheck]:
    """Run the named Python checks (all when ``names`` is None) on one file.

    ``project`` gives taint tracking the project's declarations and its helpers' summaries; past
    ``deadline`` (monotonic) the run raises :class:`TimeBoundError` and the caller skips the file.
    ``options``: per check, the configured options of the checks that take some; ``reviewed``: the
    directory the user named (a file's role - test, settings - is judged below it).
    """
    specs = _select("python", names, options)
    if not specs:
        return []
    if tree is None:
        try:
            tree = parse_python(text, filename=path)
        except (SyntaxError, ValueError, RecursionError) as exc:
            notes.append(
                f"{path}: not valid Python ({exc.msg if isinstance(exc, SyntaxError) else exc}); Python checks skipped"
            )
            return []
    module = PyModule(path, text, tree, project=project, reviewed=reviewed)
    if module.is_test_module():
        specs = [spec for spec in specs if spec.tests]
    whole = [spec for spec in specs if not spec.nodes]
    whole_hits = _run(whole, module, notes, path, deadline)
    return whole_hits + _dispatch([s for s in specs if s.nodes], module, notes, deadline)


def run_document_checks(
    path: str,
    text: str,
    names: Iterable[str] | None,
    notes: list[str],
    exists: Callable[[str], bool],
    options: Mapping[str, Mapping[str, object]] | None = None,
) -> list[RanCheck]:
    """Run the named document checks (all when ``names`` is None) on one markdown file."""
    specs = _select("document", names, options)
    return _run(specs, DocModule(path, text, exists), notes, path) if specs else []


def _select(
    kind: str, names: Iterable[str] | None, options: Mapping[str, Mapping[str, object]] | None
) -> list[CheckSpec]:
    checks = [c for c in registered_checks().values() if c.kind == kind]
    if names is not None:
        wanted = set(names)
        checks = [c for c in checks if c.name in wanted]
    given = options or {}
    return [c.configured(given.get(c.name, {})) if c.options else c for c in checks]
