"""Taint questions checks ask about one node, with each function's flow built once per module.

Two questions, two flows per function (memoized on the module, shared by every check):

- :func:`tainted_at`: which outside source (the request, user input, the network)
  does a value carry here? Parameters do not count: a sink fed by a parameter is
  the caller's business, and counting them would flag every helper.
- :func:`proven_clean`: does taint tracking prove a value holds nothing from
  outside, parameters included? Checks that match syntax first (an f-string
  reaching ``execute``) use it to drop what dead branches and constant dict
  entries make harmless.
"""

from __future__ import annotations

import ast

from fluxdrive.runtimes.static.checks.base import PyModule
from fluxdrive.runtimes.static.checks.taint import Flow


def statement_of(module: PyModule, node: ast.AST) -> ast.AST:
    """The statement holding ``node`` (itself when it is one)."""
    if isinstance(node, ast.stmt):
        return node
    return next((p for p in module.ancestors(node) if isinstance(p, ast.stmt)), node)


def _flow(
    module: PyModule, node: ast.AST, parameters: bool, cleaners: tuple[str, ...], quotes: bool = False
) -> tuple[Flow, ast.AST] | None:
    """The flow of the function holding ``node`` and the statement holding ``node`` (None outside functions)."""
    function = module.enclosing_function(node)
    if function is None:
        return None
    flow = module.memo(
        ("flow", function, parameters, cleaners, quotes),
        lambda: Flow(
            function,
            parameters=parameters,
            spec=module.taint_spec,
            cleaners=cleaners,
            resolver=module.resolver,
            quote_escapes=quotes,
        ),
    )
    statement = statement_of(module, node)
    return (flow, statement) if statement in flow.before else None


def tainted_at(
    module: PyModule, node: ast.AST, value: ast.AST | None, cleaners: tuple[str, ...] = (), *, quotes: bool = False
) -> str | None:
    """The outside source ``value`` carries where ``node`` runs (the request, input; not parameters), or None.

    ``quotes``: the value lands inside a quoted literal, so escaping the quote character cleans it.
    In test modules nothing is outside data: the apps tests build serve no one.
    """
    if value is None or module.is_test_module():  # a test's app serves no one: no request reaches it
        return None
    found = _flow(module, node, False, cleaners, quotes)
    return found[0].taint_at(value, found[1]) if found is not None else None


def proven_clean(module: PyModule, node: ast.AST, value: ast.AST, cleaners: tuple[str, ...] = ()) -> bool:
    """Taint tracking shows ``value`` (at ``node``) holds nothing from outside: no parameter, request or input.

    Dead branches and constant dict entries are what it proves away (``bar = m["keyA"]`` after
    ``m["keyB"] = param``); outside a function nothing is proven.
    """
    found = _flow(module, node, True, cleaners)
    return found is not None and found[0].taint_at(value, found[1]) is None
