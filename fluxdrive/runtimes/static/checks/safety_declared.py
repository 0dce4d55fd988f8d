"""Outside data reaching a sink declared as data (``sinks.calls`` in the taint spec).

The shipped declarations cover server-side request forgery (``requests.get``
of a URL from the request, CWE-918), attribute injection (``setattr`` with a
client-chosen name, CWE-915) and client-chosen imports (CWE-470); a project
adds its own framework's dangerous calls in ``.fluxdrive/taint.yaml`` and they
are reported here with the CWE and prose written there.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from fluxdrive.runtimes.static.checks._common import example
from fluxdrive.runtimes.static.checks._flows import tainted_at
from fluxdrive.runtimes.static.checks._scope import entry_label, handler_fields, owning_class
from fluxdrive.runtimes.static.checks.engine.pymodule import PyModule
from fluxdrive.runtimes.static.checks.engine.registry import CheckHit, python_check
from fluxdrive.runtimes.static.checks.engine.summaries import resolver_of
from fluxdrive.runtimes.static.checks.engine.syntax import call_name
from fluxdrive.runtimes.static.checks.engine.taint_spec import Sink


@python_check(
    "py-tainted-call",
    tag="security",
    severity="P1",
    summary="request data reaches a call the taint spec declares dangerous (SSRF, setattr, import_module, ...)",
    match=[
        example("""
            import requests
            from flask import request
            def preview():
                return requests.get(request.args["url"], timeout=5).text
        """),
        example("""
            from flask import request
            def update(user):
                setattr(user, request.form["field"], request.form["value"])
        """),
    ],
    no_match=[
        example("""
            import requests
            from flask import request
            def weather():
                city = request.args["city"]
                return requests.get("https://api.example.com/weather", params={"q": city}, timeout=5).text
        """),
        example("""
            def update(user, value):
                setattr(user, "nickname", value)
        """),
    ],
    nodes=(ast.Call,),
)
def tainted_call(module: PyModule, node: ast.Call) -> Iterator[CheckHit]:
    name = call_name(node)
    spec = module.taint_spec
    tails = module.memo("declared sink tails", lambda: {c.rsplit(".", 1)[-1] for s in spec.custom for c in s.calls})
    if name.rsplit(".", 1)[-1] not in tails:
        yield from _through_helper(module, node)
        return
    for sink in spec.custom:
        if not any(name == call or name.endswith("." + call) for call in sink.calls):
            continue
        value = sink.value(node.args, {k.arg: k.value for k in node.keywords if k.arg})
        source = tainted_at(module, node, value) if isinstance(value, ast.expr) else None
        if source is None:
            continue
        yield _hit(module, node, sink, f"Data from {source} reaches {name}()")
        return


def _hit(module: PyModule, node: ast.Call, sink: Sink, reaches: str) -> CheckHit:
    """The finding for outside data reaching a declared sink, in the words its declaration gives."""
    what = f"{sink.what} ({sink.cwe})" if sink.what and sink.cwe else sink.what or sink.cwe or "a declared sink"
    return CheckHit(
        line=node.lineno,
        title=f"{reaches}: {what} {module.where(node)}",
        why=sink.why or "The taint spec declares this call dangerous with outside data.",
        fix=sink.fix or "Validate the value against an allow-list before the call.",
        evidence="high",
    )


def _through_helper(module: PyModule, node: ast.Call) -> Iterator[CheckHit]:
    """``fetch(request.args["url"])`` where the project's ``fetch(url)`` calls ``requests.get(url)``."""
    resolver = resolver_of(module)
    if resolver is None or module.is_test_module() or (not node.args and not node.keywords):
        return
    function = module.enclosing_function(node)
    if function is None or not module.memo(("reads outside data", function), lambda: _reads_outside(module, function)):
        return  # no request, input or entry parameter here: nothing to hand on (and no helper to look up)
    for position, parameter, sink, inner in resolver.sink_parameters(node):
        given = {k.arg: k.value for k in node.keywords if k.arg}
        value = node.args[position] if position < len(node.args) else given.get(parameter)
        source = tainted_at(module, node, value) if value is not None else None
        if source is None:
            continue
        yield _hit(module, node, sink, f"Data from {source} reaches {inner}() through {call_name(node)}()")
        return


def _reads_outside(module: PyModule, function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """A cheap test before following calls into helpers: the function is a framework's entry point
    (a route, a view, a handler method, a resolver), where request data is handed on to helpers."""
    return bool(entry_label(module, function) or handler_fields(owning_class(module, function)))
