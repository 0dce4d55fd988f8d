"""fd-safety check: libraries that evaluate their string argument as code (CWE-95).

``eval`` is reported by py-eval-exec; these are the same thing under another
name. js2py and PyExecJS run JavaScript (js2py's ``pyimport`` reaches Python's
``os``), py_mini_racer runs it in V8, ``numexpr.evaluate`` passes the text to
``eval`` (CVE-2023-39631), ``pandas.eval`` / ``DataFrame.query`` /
``DataFrame.eval`` fall back to Python evaluation, ``sympy.sympify`` calls
``eval`` on strings.

The functions whose only job is evaluating (js2py, execjs, mini_racer,
numexpr, ``pandas.eval``) are reported whenever their text is not constant:
P0 from the request, P2 ("check where this comes from") otherwise. Methods
whose receiver cannot be told apart from ordinary objects (``df.query(x)``
looks like ``session.query(Model)``) and ``sympify`` (mostly fed numbers and
formulas the program builds) are reported only when the text comes from the
request. Tests evaluate their own snippets: no finding there.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from typing import cast

from fluxdrive.runtimes.static.checks._common import (
    Function,
    example,
    first_arg,
    name_tail,
    qualified_name,
    resolve_value,
    snippet,
)
from fluxdrive.runtimes.static.checks._flows import judge_text
from fluxdrive.runtimes.static.checks.engine.pymodule import PyModule
from fluxdrive.runtimes.static.checks.engine.registry import CheckHit, CheckSeverity, python_check
from fluxdrive.runtimes.static.checks.engine.syntax import call_name

# Functions (dotted, after imports) that evaluate their first argument: name -> what runs it.
EVALUATORS = {
    "js2py.eval_js": "JavaScript (js2py)",
    "js2py.eval_js6": "JavaScript (js2py)",
    "execjs.eval": "JavaScript (PyExecJS)",
    "execjs.exec_": "JavaScript (PyExecJS)",
    "execjs.compile": "JavaScript (PyExecJS)",
    "numexpr.evaluate": "Python's eval (numexpr)",
    "pandas.eval": "Python's eval (pandas)",
    "PIL.ImageMath.eval": "Python's eval (Pillow ImageMath, before 9.0 with builtins)",
    "PIL.ImageMath.unsafe_eval": "Python's eval (Pillow ImageMath)",
}
# Only when the text comes from the request (these are also fed formulas the program builds).
TAINT_ONLY = {
    "sympy.sympify": "Python's eval (sympy)",
    "sympy.parse_expr": "Python's eval (sympy)",
    "sympy.parsing.sympy_parser.parse_expr": "Python's eval (sympy)",
}
# Classes whose instances evaluate: constructor -> (methods that run their argument, engine).
CONTEXTS = {
    "js2py.EvalJs": ({"execute", "eval"}, "JavaScript (js2py)"),
    "py_mini_racer.MiniRacer": ({"eval", "execute"}, "JavaScript (V8, py_mini_racer)"),
    "py_mini_racer.py_mini_racer.MiniRacer": ({"eval", "execute"}, "JavaScript (V8, py_mini_racer)"),
}
_CONTEXT_METHODS = frozenset(m for methods, _ in CONTEXTS.values() for m in methods)
FRAME_METHODS = {"query", "eval"}  # pandas.DataFrame: tainted text only, and only where pandas is imported


def _context(module: PyModule, receiver: ast.expr, function: Function | None) -> tuple[set[str], str] | None:
    """The evaluating class ``receiver`` is an instance of (``EvalJs()`` inline or bound to a name)."""
    bound = resolve_value(receiver, function, module.constants)
    if isinstance(bound, ast.Call):
        return CONTEXTS.get(qualified_name(bound, module.imports))
    return None


def _evaluator(module: PyModule, node: ast.Call) -> tuple[str, bool] | None:
    """(what runs the text, whether text of unknown origin is reported too) for an evaluating call."""
    name = qualified_name(node, module.imports)
    if name in EVALUATORS:
        return EVALUATORS[name], True
    if name in TAINT_ONLY:
        return TAINT_ONLY[name], False
    if not isinstance(node.func, ast.Attribute):
        return None
    if node.func.attr not in _CONTEXT_METHODS and node.func.attr not in FRAME_METHODS:
        return None  # most method calls: no need to find what their receiver is
    context = _context(module, node.func.value, module.enclosing_function(node))
    if context is not None and node.func.attr in context[0]:
        return context[1], True
    if node.func.attr in FRAME_METHODS and any(v.split(".", 1)[0] == "pandas" for v in module.imports.values()):
        return "Python's eval (pandas)", False
    return None


@python_check(
    "py-eval-wrapper",
    tag="security",
    severity="P0",
    summary="js2py, execjs, py_mini_racer, numexpr, pandas.eval/query or sympify evaluate text that is not "
    "constant (P0 from the request, P2 of unknown origin)",
    match=[
        example("""
            import js2py
            from flask import request

            def calc():
                return str(js2py.eval_js(request.args["expr"]))
        """),
        example("""
            import js2py

            def run(script):
                context = js2py.EvalJs()
                return context.execute(script)
        """),
        example("""
            import numexpr
            from flask import request

            def compute(a, b):
                return numexpr.evaluate(request.form["formula"])
        """),
        example("""
            import pandas as pd
            from flask import request

            def search(frame: pd.DataFrame):
                return frame.query(request.args.get("filter")).to_json()
        """),
        example("""
            from py_mini_racer import MiniRacer

            def render(code):
                return MiniRacer().eval(code)
        """),
    ],
    no_match=[
        example("""
            import js2py

            def add():
                return js2py.eval_js("function add(a, b) { return a + b }")
        """),
        example("""
            import pandas as pd

            def adults(frame: pd.DataFrame, column):
                return frame.query(f"{column} >= 18")
        """),
        example("""
            import numexpr

            def scale(a, b):
                return numexpr.evaluate("2 * a + b")
        """),
        example("""
            def users(session, model):
                return session.query(model).all()
        """),
    ],
    nodes=(ast.Call,),
)
def eval_wrapper(module: PyModule, node: ast.Call) -> Iterator[CheckHit]:
    found = _evaluator(module, node)
    if found is None or module.is_test_module():
        return
    engine, unknown_too = found
    text = first_arg(node, "expr", "ex", "source", "code", "s", "a")
    if text is None or isinstance(text, ast.Starred):
        return
    origin = judge_text(module, node, text)
    if origin is None:
        return
    severity = origin.severity(outside="P0", parameter="P2", unknown="P2") if unknown_too else None
    if origin.kind == "outside":
        severity = "P0"  # the request's text runs, whichever evaluator it is
    if severity is None:
        return
    source = origin.label if origin.kind == "outside" else None
    called = call_name(node)
    title = (
        f"{engine} evaluates text from {source}: {called}(…) {module.where(node)}"
        if source
        else f"{name_tail(called)}() evaluates `{snippet(text, 30)}` with {engine}: "
        f"check where this text comes from {module.where(node)}"
    )
    yield CheckHit(
        line=node.lineno,
        title=title,
        why=(
            "These calls run their argument as code, not as data: whoever writes the text "
            "runs code in this process (js2py reaches Python through pyimport, numexpr and "
            "pandas fall back to eval)."
        ),
        fix=(
            "Do not evaluate user text: parse it into a fixed set of operations (a small grammar, "
            "a dict of allowed functions), or validate it against a strict allow-list first."
        ),
        severity=cast("CheckSeverity", severity),
        evidence=origin.proof,
    )
