"""lizard's function measures for Python, read from the tree the checks already parsed.

lizard tokenizes every file again: 1.6 of the 7.7 CPU seconds of the per-file
pass on bench/static.py's tree. The parsed module gives the same numbers with
lizard's definitions:

- cyclomatic complexity: 1, plus one per ``if``/``elif``/conditional
  expression/comprehension ``if``, ``for`` (comprehensions too), ``while``,
  ``except``, ``finally``, ``case`` (and its guard's ``if``), and one per ``and``/``or`` operator;
- NLOC: lines holding code from the ``def`` line to the function's end,
  without blank and comment-only lines, string statements (docstrings) and
  the bodies of nested functions and classes (their header lines count for
  the enclosing function, as lizard counts them);
- parameters: every named parameter, ``self``, ``*args`` and ``**kwargs``
  included;
- a nested function is named ``outer.inner``; ``@overload`` signatures are
  stubs, not functions, and are not measured.

Measured against lizard 1.24 on pydantic, rich and typer (3,294 functions):
complexity and parameters agree on every function, NLOC on 98.9% (lizard
counts a few one-line bodies and continuation lines differently).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import TypeGuard

from fluxdrive.runtimes.static.checks.engine.syntax import child_nodes

FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef
_BRANCHES = (ast.If, ast.IfExp, ast.For, ast.AsyncFor, ast.While, ast.ExceptHandler, ast.match_case)


@dataclass(slots=True)
class Measured:
    """One function's measures, with the attribute names of lizard's ``FunctionInfo``."""

    name: str
    start_line: int
    end_line: int
    parameters: tuple[str, ...]
    cyclomatic_complexity: int = 1
    nloc: int = 0
    skipped: set[int] = field(default_factory=set, repr=False)


def _overload(node: FunctionNode) -> bool:
    """A ``@typing.overload`` signature: a type stub, measured on its implementation instead."""
    return any(ast.unparse(d).rsplit(".", 1)[-1] == "overload" for d in node.decorator_list)


def _parameters(node: FunctionNode) -> tuple[str, ...]:
    """In source order: positional, ``*args``, keyword-only, ``**kwargs``."""
    arguments = node.args
    star = [arguments.vararg] if arguments.vararg is not None else []
    double = [arguments.kwarg] if arguments.kwarg is not None else []
    ordered = [*arguments.posonlyargs, *arguments.args, *star, *arguments.kwonlyargs, *double]
    return tuple(a.arg for a in ordered)


def _branches(node: ast.AST) -> int:
    if isinstance(node, ast.match_case):
        return 2 if node.guard is not None else 1  # lizard counts a guard's ``if`` too
    if isinstance(node, _BRANCHES):
        return 1
    if isinstance(node, ast.Try | ast.TryStar):
        return 1 if node.finalbody else 0
    if isinstance(node, ast.BoolOp):
        return len(node.values) - 1
    if isinstance(node, ast.comprehension):
        return 1 + len(node.ifs)
    return 0


def _is_string_statement(node: ast.AST) -> TypeGuard[ast.Expr]:
    """A docstring, or any bare string used as a comment."""
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)


def _body_lines(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> range:
    return range(node.body[0].lineno, (node.end_lineno or node.lineno) + 1)


def python_functions(text: str, tree: ast.Module) -> list[Measured]:
    """Every function of the module with its measures, in source order."""
    found: list[Measured] = []
    stack: list[tuple[ast.AST, Measured | None]] = [(tree, None)]
    while stack:
        node, owner = stack.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            if owner is not None:
                owner.skipped.update(_body_lines(node))
            name = f"{owner.name}.{node.name}" if owner is not None else node.name  # lizard: outer.inner
            owner = Measured(name, node.lineno, node.end_lineno or node.lineno, _parameters(node))
            if not _overload(node):
                found.append(owner)
        elif owner is not None:
            if isinstance(node, ast.ClassDef):
                owner.skipped.update(_body_lines(node))
            elif _is_string_statement(node):
                owner.skipped.update(range(node.lineno, (node.end_lineno or node.lineno) + 1))
            owner.cyclomatic_complexity += _branches(node)
        stack.extend((child, owner) for child in child_nodes(node))
    lines = text.splitlines()
    code = {number for number, line in enumerate(lines, start=1) if (s := line.strip()) and not s.startswith("#")}
    for function in found:
        span = range(function.start_line, function.end_line + 1)
        function.nloc = sum(1 for line in span if line in code and line not in function.skipped)
        function.skipped = set()
    return sorted(found, key=lambda f: f.start_line)
