"""fd-safety check: a regular expression that backtracks for ages, applied to text someone else chose (ReDoS).

The pattern itself is judged by :mod:`fluxdrive.runtimes.static.redos` (static, no
regex is run); this module finds where a constant pattern is applied with ``re`` or
``regex`` (directly, or through a pattern compiled into a local, a module constant
or a class attribute) and asks the data flow what reaches it. A slow pattern over
constant text is harmless, so only text that is not a constant is reported, and
its origin sets the severity: request data makes an exponential pattern a P1 (one
request pins a worker), anything else a P2. A polynomial (quadratic) pattern is a P2
only when request data reaches it: about one pattern in fifteen of the standard
library is quadratic somewhere, and on a caller's or a file's text that is noise.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterator

from fluxdrive.runtimes.static.checks._common import (
    clip,
    example,
    qualified_name,
    resolve_value,
    snippet,
)
from fluxdrive.runtimes.static.checks._flows import Origin, judge, origin_note, sink_hit
from fluxdrive.runtimes.static.checks.engine.pymodule import PyModule
from fluxdrive.runtimes.static.checks.engine.registry import CheckHit, python_check
from fluxdrive.runtimes.static.checks.engine.syntax import call_name, is_constant, keyword
from fluxdrive.runtimes.static.redos import Ambiguity, ambiguities

_MODULES = ("re", "regex")
# method -> index of the text among a module function's arguments (after the pattern: minus one for a method)
_TEXT_AT = {"match": 1, "search": 1, "fullmatch": 1, "findall": 1, "finditer": 1, "split": 1, "sub": 2, "subn": 2}
_FLAG_AT = {"compile": 1, "match": 2, "search": 2, "fullmatch": 2, "findall": 2, "finditer": 2, "split": 3}
_FLAG_LETTERS = {
    "I": "i",
    "IGNORECASE": "i",
    "M": "m",
    "MULTILINE": "m",
    "S": "s",
    "DOTALL": "s",
    "X": "x",
    "VERBOSE": "x",
    "A": "a",
    "ASCII": "a",
}


@functools.lru_cache(maxsize=2048)
def _judged(pattern: str, flags: str, full: bool) -> tuple[Ambiguity, ...]:
    """:func:`ambiguities` once per distinct pattern (projects repeat their patterns)."""
    return ambiguities(pattern, "python", flags, full=full)


def _flag_letters(node: ast.expr | None) -> str:
    """``re.I | re.VERBOSE`` -> ``"ix"`` (names not known are ignored)."""
    if node is None:
        return ""
    names = {
        n.attr if isinstance(n, ast.Attribute) else n.id
        for n in ast.walk(node)
        if isinstance(n, ast.Attribute | ast.Name)
    }
    return "".join(sorted({_FLAG_LETTERS[n] for n in names if n in _FLAG_LETTERS}))


def _constant_pattern(node: ast.expr | None) -> str | None:
    """The text of a constant pattern (bytes read as Latin-1), else None."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.Constant) and isinstance(node.value, bytes):
        return node.value.decode("latin-1")
    return None


def _argument(node: ast.Call, index: int, name: str) -> ast.expr | None:
    if len(node.args) > index and not any(isinstance(a, ast.Starred) for a in node.args[: index + 1]):
        return node.args[index]
    return keyword(node, name)


def _regex_call(node: ast.AST, module: PyModule) -> str | None:
    """``compile``/``match``/... when ``node`` calls that function of ``re`` or ``regex``, else None."""
    if not isinstance(node, ast.Call):
        return None
    head, _, tail = qualified_name(node, module.imports).rpartition(".")
    return tail if head in _MODULES and (tail in _TEXT_AT or tail == "compile") else None


def _class_attribute(module: PyModule, node: ast.Attribute) -> ast.expr | None:
    """``self.PATTERN`` / ``cls.PATTERN`` / ``Owner.PATTERN``: the value the enclosing class assigns it."""
    owner = next((p for p in module.ancestors(node) if isinstance(p, ast.ClassDef)), None)
    if owner is None or not isinstance(node.value, ast.Name) or node.value.id not in {"self", "cls", owner.name}:
        return None
    for statement in owner.body:
        value: ast.expr | None
        if isinstance(statement, ast.Assign):
            targets, value = statement.targets, statement.value
        elif isinstance(statement, ast.AnnAssign):
            targets, value = [statement.target], statement.value
        else:
            continue
        if any(isinstance(t, ast.Name) and t.id == node.attr for t in targets):
            return value
    return None


def _compiled(module: PyModule, receiver: ast.expr, function: ast.AST | None) -> ast.Call | None:
    """The ``re.compile(...)`` call a receiver holds: itself, a local, a module constant or a class attribute."""
    value = resolve_value(receiver, function, module.constants)
    if isinstance(value, ast.Attribute):
        value = _class_attribute(module, value) or value
    return value if isinstance(value, ast.Call) and _regex_call(value, module) == "compile" else None


def _application(module: PyModule, node: ast.Call) -> tuple[str, str, ast.expr, str] | None:
    """(pattern, flags, text, method) when ``node`` applies a constant pattern to a text."""
    function = module.enclosing_function(node)
    direct = _regex_call(node, module)
    if direct in _TEXT_AT:
        assert direct is not None
        pattern = _argument(node, 0, "pattern")
        text = _argument(node, _TEXT_AT[direct], "string")
        flags = _flag_letters(_argument(node, _FLAG_AT.get(direct, 99), "flags"))
        method = direct
    elif isinstance(node.func, ast.Attribute) and node.func.attr in _TEXT_AT and direct is None:
        compiled = _compiled(module, node.func.value, function)
        if compiled is None:
            return None
        method = node.func.attr
        pattern = _argument(compiled, 0, "pattern")
        text = _argument(node, _TEXT_AT[method] - 1, "string")
        flags = _flag_letters(_argument(compiled, 1, "flags"))
    else:
        return None
    resolved = resolve_value(pattern, function, module.constants) if pattern is not None else None
    constant = _constant_pattern(resolved)
    if constant is None or text is None:
        return None
    binary = isinstance(resolved, ast.Constant) and isinstance(resolved.value, bytes)
    return constant, flags + "a" if binary else flags, text, method


def _reach(origin: Origin, text: ast.expr) -> str:
    """What reaches the pattern, for the title."""
    if origin.kind in {"outside", "parameter", "command line"} and origin.label:
        return origin.label
    return f"`{snippet(text, 30)}`"


def _severity(ambiguity: Ambiguity, origin: Origin) -> str | None:
    if ambiguity.kind == "exponential":
        return origin.severity(outside="P1", parameter="P2", unknown="P2")
    if origin.kind != "outside":  # quadratic on a caller's or a file's text: common, rarely worth a finding
        return None
    return "P2"


@python_check(
    "py-redos",
    tag="security",
    severity="P2",
    summary="A regex with nested or overlapping repeats (catastrophic backtracking) is applied to non-constant text",
    tests=False,  # a test's regex sees the test's own strings
    match=[
        example(r"""
            import re
            from flask import request

            EMAIL = re.compile(r"^([a-zA-Z0-9]+\.?)+@example\.com$")

            def signup():
                return bool(EMAIL.match(request.form["email"]))
        """),
        example(r"""
            import re

            def sentence(text):
                return re.fullmatch(r"(\w+\s?)*", text) is not None
        """),
        example(r"""
            import re
            from flask import request

            def strip_statement():
                trailing = re.compile(r"\s*\w*\s*;")
                return trailing.sub("", request.form["sql"])
        """),
        example(r"""
            import regex

            class Parser:
                TAG = regex.compile(r"<(\w|\d)+>|(a|aa)+$")

                def tags(self, html):
                    return self.TAG.findall(html)
        """),
    ],
    no_match=[
        example(r"""
            import re

            def strip_statement(text):
                return re.sub(r"\s*\w*\s*;", "", text)
        """),
        example(r"""
            import re
            from flask import request

            def slug():
                return re.match(r"^[a-z]+(?:-[a-z]+)*$", request.args["slug"])
        """),
        example(r"""
            import re

            def demo():
                return re.match(r"(a+)+$", "aaaa")
        """),
        example(r"""
            import re

            def sentence(text):
                return re.fullmatch(r"(?:\w++\s?)*", text)
        """),
        example(r"""
            import re

            def first_run(text):
                return re.search(r"(a+)+", text)
        """),
        example(r"""
            import re

            VERSION = re.compile(r"^\d+(\.\d+){0,3}$")

            def parse(text):
                return VERSION.match(text)
        """),
    ],
    nodes=(ast.Call,),
)
def redos(module: PyModule, node: ast.Call) -> Iterator[CheckHit]:
    applied = _application(module, node)
    if applied is None:
        return
    pattern, flags, text, method = applied
    function = module.enclosing_function(node)
    if is_constant(resolve_value(text, function, module.constants)):
        return
    found = _judged(pattern, flags, method == "fullmatch")
    if not found:
        return
    origin = judge(module, node, text)
    ambiguity = next((a for a in found if a.kind == "exponential"), found[0])
    severity = _severity(ambiguity, origin)
    if severity is None:
        return
    how = "exponentially" if ambiguity.kind == "exponential" else "polynomially"
    reach = _reach(origin, text)
    yield sink_hit(
        module,
        node,
        origin,
        severity,
        title=f"Regex `{clip(ambiguity.fragment, 40)}` backtracks {how} on {reach} in {call_name(node)}()",
        why=(
            f"{ambiguity.why[:1].upper()}{ambiguity.why[1:]}. Text from {reach} reaches it, "
            "so one crafted string can keep a worker busy for minutes (ReDoS)." + origin_note(origin, _UNSEEN)
        ),
        fix=(
            "Make each character matchable one way only (a mandatory separator: `\\w+(?:\\s\\w+)*`), "
            "use atomic groups or possessive repeats (`(?>...)`, `\\w++`, Python 3.11+), bound the repeats "
            "and the input's length, or match untrusted text with `re2`."
        ),
    )


# What to check when the text's origin is not visible here (see :func:`origin_note`).
_UNSEEN = " Where the text comes from is not visible here; if a user can supply it, it is exploitable."
