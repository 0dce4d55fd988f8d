"""Taint questions checks ask about one node, with each function's flow built once per module.

Two questions, two flows per function (memoized on the module, shared by every check):

- :func:`tainted_at`: which outside source (the request, user input, the network)
  does a value carry here? Parameters do not count: a sink fed by a parameter is
  the caller's business, and counting them would flag every helper.
- :func:`proven_clean`: does taint tracking prove a value holds nothing from
  outside, parameters included? Checks that match syntax first (an f-string
  reaching ``execute``) use it to drop what dead branches and constant dict
  entries make harmless.

:func:`sink_hit` is how a check reports what it judged: at the sink, with the
origin's proof as the hit's evidence level.
"""

from __future__ import annotations

import ast

from fluxdrive.runtimes.static.checks._common import resolve_value
from fluxdrive.runtimes.static.checks._scope import scope_of
from fluxdrive.runtimes.static.checks.engine.pymodule import PyModule
from fluxdrive.runtimes.static.checks.engine.registry import CheckHit
from fluxdrive.runtimes.static.checks.engine.summaries import resolver_of
from fluxdrive.runtimes.static.checks.engine.syntax import is_constant
from fluxdrive.runtimes.static.checks.engine.taint import Flow, Opaque
from fluxdrive.runtimes.static.provenance import Origin

__all__ = ["Origin", "judge", "judge_text", "origin_note", "proven_clean", "sink_hit", "statement_of", "tainted_at"]


def statement_of(module: PyModule, node: ast.AST) -> ast.AST:
    """The statement holding ``node`` (itself when it is one)."""
    if isinstance(node, ast.stmt):
        return node
    return next((p for p in module.ancestors(node) if isinstance(p, ast.stmt)), node)


def _flow(
    module: PyModule,
    node: ast.AST,
    parameters: bool,
    cleaners: tuple[str, ...],
    quotes: bool = False,
    *,
    opaque: bool = False,
) -> tuple[Flow, ast.AST] | None:
    """The flow of the function holding ``node`` and the statement holding ``node`` (None outside functions)."""
    function = module.enclosing_function(node)
    if function is None:
        return None
    flow = module.memo(
        ("flow", function, parameters, cleaners, quotes, opaque),
        lambda: Flow(
            function,
            parameters=parameters,
            spec=module.taint_spec,
            cleaners=cleaners,
            resolver=resolver_of(module),
            quote_escapes=quotes,
            scope=scope_of(module, function),
            opaque=opaque,
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
    label = found[0].taint_at(value, found[1]) if found is not None else None
    if label is None or isinstance(label, Opaque) or label.startswith("parameter "):
        return None  # unknown, or a parameter the class was built with: not outside data as such
    return label


def proven_clean(module: PyModule, node: ast.AST, value: ast.AST, cleaners: tuple[str, ...] = ()) -> bool:
    """Taint tracking shows ``value`` (at ``node``) holds nothing from outside: no parameter, request or input.

    Dead branches and constant dict entries are what it proves away (``bar = m["keyA"]`` after
    ``m["keyB"] = param``); outside a function nothing is proven.
    """
    found = _flow(module, node, True, cleaners)
    return found is not None and found[0].taint_at(value, found[1]) is None


def judge(module: PyModule, node: ast.AST, value: ast.AST, cleaners: tuple[str, ...] = ()) -> Origin:
    """Where ``value`` (at ``node``) comes from: a dangerous sink is always judged, never skipped.

    Outside data decides P0; a public function's parameter the same by default (its callers
    pass what they receive); what the flow cannot see
    (globals, attributes, unknown calls, private helpers' parameters) P2; only a value the
    flow proves constant or cleaned is no finding. Outside a function, a constant is clean
    and anything else unknown.
    """
    function = module.enclosing_function(node)
    if function is None:
        return Origin("clean") if is_constant(value) else Origin("unknown", "")
    outside = tainted_at(module, node, value, cleaners)
    if outside:
        return Origin.source(outside)
    given = _flow(module, node, True, cleaners)
    label = given[0].taint_at(value, given[1]) if given is not None else None
    if label and label.startswith("parameter "):
        if label in scope_of(module, function).attributes.values():  # a public class's constructor took it
            return Origin("parameter", label)
        private = function.name.startswith("_") and not function.name.endswith("__")
        nested = any(isinstance(p, ast.FunctionDef | ast.AsyncFunctionDef) for p in module.ancestors(function))
        return Origin("unknown" if private or nested else "parameter", label)
    if label and not isinstance(label, Opaque):
        return Origin("unknown", label)  # self.x set from a parameter of the class
    unseen = _flow(module, node, True, cleaners, opaque=True)
    hidden = unseen[0].taint_at(value, unseen[1]) if unseen is not None else None
    return Origin("unknown", hidden) if hidden else Origin("clean")


def judge_text(module: PyModule, node: ast.Call, text: ast.expr) -> Origin | None:
    """:func:`judge` for the text a call runs (a template, an expression); None when it is a constant,
    also through one local assignment or a module constant."""
    if is_constant(resolve_value(text, module.enclosing_function(node), module.constants)):
        return None
    return judge(module, node, text)


def sink_hit(
    module: PyModule, node: ast.Call, origin: Origin, severity: str, *, title: str, why: str, fix: str
) -> CheckHit:
    """A value of a judged ``origin`` reaches the sink ``node``: one hit, said the same way by every such check.

    ``title`` gets where the sink is (``in get_user()``) appended; the evidence
    level is the origin's proof (outside, a parameter, unknown).
    """
    return CheckHit(
        line=node.lineno,
        title=f"{title} {module.where(node)}",
        why=why,
        fix=fix,
        severity=severity,  # type: ignore[arg-type]
        evidence=origin.proof,
    )


def origin_note(origin: Origin, unseen: str) -> str:
    """The sentence after a finding's why that says what to check: every caller when a parameter
    carries the value, ``unseen`` (the check's own words) when where it comes from is not visible."""
    if origin.kind == "unknown":
        return unseen
    if origin.kind == "parameter":
        return " Any caller that passes user-controlled text gets that."
    return ""
