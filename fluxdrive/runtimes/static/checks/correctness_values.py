"""fd-correctness checks on values: results that can be None used unchecked, shared mutable defaults.

Each check reasons inside one function and stays quiet when the code shows
the case is handled: a None check, a guarding ``if``/``and``, a try that
catches the error, a rebound parameter.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from fluxdrive.runtimes.static.checks._common import (
    Function,
    caught_names,
    dereference,
    example,
    first_use,
    mentions_name,
    name_tail,
    own_nodes,
    param_defaults,
    snippet,
    walk_function,
    where_def,
)
from fluxdrive.runtimes.static.checks.engine.pymodule import PyModule
from fluxdrive.runtimes.static.checks.engine.registry import CheckHit, python_check
from fluxdrive.runtimes.static.checks.engine.syntax import call_name, resolve

# --------------------------------------------------------------------------
# Unchecked None


NONE_FUNCTIONS = {
    "re.match": "the text does not match",
    "re.search": "the text does not match",
    "re.fullmatch": "the text does not match",
    "os.environ.get": "the variable is unset",
    "os.getenv": "the variable is unset",
    "shutil.which": "the program is not on PATH",
}
NONE_METHODS = {
    "fetchone": "the query returns no row",
    "first": "no row matches",
    "one_or_none": "no row matches",
    "scalar_one_or_none": "no row matches",
}
NOT_MAPPINGS = re.compile(
    r"requests|httpx|session|client|http|api|app|router|blueprint|\bbp\b|objects|browser|driver|"
    r"\bself\b$|resp|response|queue|\bq\b|\bsess\b|\bs\b",
    re.IGNORECASE,
)
PATTERN_NAMES = re.compile(r"(^|_)(re|rx|regex|pattern|pat)$", re.IGNORECASE)
ALWAYS_A_ROW = re.compile(
    r"^\s*select\s+(count|sum|max|min|avg|total|exists|coalesce)\s*\(|\breturning\b|"
    r"^\s*select\s+(?:(?!\bfrom\b).)*$",
    re.IGNORECASE | re.DOTALL,
)
NONE_GUARDS = {"AttributeError", "TypeError", "KeyError", "Exception", "BaseException"}


def _compiled_pattern(node: ast.expr, function: Function | None) -> bool:
    if isinstance(node, ast.Name) and PATTERN_NAMES.search(node.id):
        return True
    value = resolve(node, function)
    return isinstance(value, ast.Call) and call_name(value) == "re.compile"


def _always_a_row(function: Function | None) -> bool:
    """The function's SQL always yields a row (an aggregate, RETURNING, SELECT without FROM)."""
    if function is None:
        return False
    texts = [n.value for n in walk_function(function) if isinstance(n, ast.Constant) and isinstance(n.value, str)]
    return any(ALWAYS_A_ROW.search(t) and "group by" not in t.lower() for t in texts)


def _none_source(call: ast.Call, function: Function | None) -> tuple[str, str] | None:
    """(label, when it is None) for a call that returns None in a normal case."""
    name = call_name(call)
    tail, func = name_tail(name), call.func
    plain = len(call.args) == 1 and not call.keywords
    if name in NONE_FUNCTIONS and (plain or name.startswith(("re.", "shutil"))):
        return f"{name}()", NONE_FUNCTIONS[name]
    if not isinstance(func, ast.Attribute):
        return None
    if tail in {"match", "search", "fullmatch"} and _compiled_pattern(func.value, function):
        return f"{name}()", "the text does not match"
    if tail in NONE_METHODS and not call.args and not call.keywords:
        if tail == "fetchone" and _always_a_row(function):
            return None
        return f"{name}()", NONE_METHODS[tail]
    receiver = snippet(func.value, 200)
    mapping = isinstance(func.value, ast.Name | ast.Attribute | ast.Subscript) and not NOT_MAPPINGS.search(receiver)
    if tail == "get" and plain and mapping and not _url_like(call.args[0]):
        return f"{name}()", "the key is missing"
    return None


def _url_like(node: ast.expr) -> bool:
    """An HTTP client's get(url) rather than a mapping's get(key)."""
    text = snippet(node, 200).lower()
    literal = isinstance(node, ast.Constant | ast.JoinedStr)
    return bool(re.search(r"url|uri|endpoint|link|href", text)) or (
        literal and re.match(r"f?['\"](https?:|/)", text) is not None
    )


def _guarded(module: PyModule, use: ast.AST, name: str) -> bool:
    """The use sits in ``x.y if x else ...``, ``x and x.y`` or a try that catches the error."""
    child = use
    for parent in module.ancestors(use):
        if isinstance(parent, ast.FunctionDef | ast.AsyncFunctionDef):
            return False
        branch = isinstance(parent, ast.IfExp | ast.If | ast.While) and child is not parent.test
        if branch and mentions_name(getattr(parent, "test", None), name):
            return True
        if isinstance(parent, ast.BoolOp) and child in parent.values:
            earlier = parent.values[: parent.values.index(child)]
            if any(mentions_name(v, name) for v in earlier):
                return True
        tried = isinstance(parent, ast.Try) and child in parent.body
        if tried and any(caught_names(h) & NONE_GUARDS for h in getattr(parent, "handlers", [])):
            return True
        child = parent
    return False


def _unchecked_uses(module: PyModule, function: Function) -> Iterator[tuple[ast.expr, str, str]]:
    """(dereference, source label, when None) inside one function."""
    for node in own_nodes(function):
        if isinstance(node, ast.Attribute | ast.Subscript) and isinstance(node.value, ast.Call):
            source = _none_source(node.value, function)
            call = module.parents.get(node)
            chained = call if isinstance(call, ast.Call) and call.func is node else node
            if source and not _guarded(module, node, "\0"):
                yield chained, *source
        if not isinstance(node, ast.Assign) or not isinstance(node.value, ast.Call):
            continue
        target = node.targets[0] if len(node.targets) == 1 else None
        source = _none_source(node.value, function) if isinstance(target, ast.Name) else None
        if source is None or not isinstance(target, ast.Name):
            continue
        first = first_use(function, target.id, node)
        deref = dereference(module, first) if first is not None else None
        if deref is not None and not _guarded(module, deref, target.id):
            yield deref, *source


@python_check(
    "py-unchecked-none",
    tag="correctness",
    severity="P2",
    summary="A value that can be None (fetchone, dict.get, re.match, .first()) is used unchecked; P1 for a missing row",
    tests=False,
    match=[
        example("""
            def get_balance(cursor, account_id):
                cursor.execute("SELECT balance FROM accounts WHERE id = %s", (account_id,))
                row = cursor.fetchone()
                return row[0]
        """),
        example("""
            import re

            def version(text):
                return re.match(r"v(\\d+)", text).group(1)
        """),
        example("""
            def owner_email(session, project_id):
                project = session.query(Project).filter_by(id=project_id).first()
                return project.owner.email
        """),
        example("""
            def region(config):
                name = config.get("region")
                return name.lower()
        """),
    ],
    no_match=[
        example("""
            def get_balance(cursor, account_id):
                cursor.execute("SELECT balance FROM accounts WHERE id = %s", (account_id,))
                row = cursor.fetchone()
                if row is None:
                    raise KeyError(account_id)
                return row[0]
        """),
        example("""
            import re

            def version(text):
                m = re.match(r"v(\\d+)", text)
                return m.group(1) if m else None
        """),
        example("""
            def count(cursor):
                cursor.execute("SELECT COUNT(*) FROM accounts")
                return cursor.fetchone()[0]
        """),
        example("""
            import requests

            def fetch(url):
                resp = requests.get(url)
                return resp.json()
        """),
    ],
)
def unchecked_none(module: PyModule) -> Iterator[CheckHit]:
    for function in module.function_defs:
        for use, label, when in _unchecked_uses(module, function):
            yield CheckHit(
                use.lineno,
                f"{label} can return None and `{snippet(use)}` uses it unchecked {module.where(use)}",
                f"{label} returns None when {when}; then `{snippet(use)}` raises "
                "AttributeError/TypeError instead of the missing case being handled.",
                "Check first (`if row is None: ...`, `if (m := re.match(...)):`) or use a form "
                "that cannot be None (d[key], .one(), a default value).",
                # a missing row is routine (an unknown id is one request away) and the handler crashes on it;
                # a regex or a mapping usually holds what the code expects, so it is P2
                severity="P1" if name_tail(label.removesuffix("()")) in NONE_METHODS else None,
            )


# --------------------------------------------------------------------------
# Mutable defaults


MUTABLE_DEFAULT_CALLS = {
    "list",
    "dict",
    "set",
    "defaultdict",
    "OrderedDict",
    "Counter",
    "deque",
    "bytearray",
}
MUTATORS = {
    "append",
    "extend",
    "insert",
    "update",
    "add",
    "setdefault",
    "pop",
    "popitem",
    "remove",
    "discard",
    "clear",
    "sort",
    "reverse",
    "appendleft",
    "extendleft",
}


def _mutable_default(node: ast.expr | None) -> bool:
    if isinstance(node, ast.List | ast.Dict | ast.Set):
        return True
    return isinstance(node, ast.Call) and name_tail(call_name(node)) in MUTABLE_DEFAULT_CALLS


def _use_of_param(module: PyModule, name: ast.Name) -> str | None:
    """How one reference changes (also via items: d[k].append), returns or stores a parameter."""
    node: ast.AST = name
    parent = module.parents.get(node)
    while isinstance(parent, ast.Subscript) and parent.value is node:
        if not isinstance(parent.ctx, ast.Load):
            break
        node, parent = parent, module.parents.get(parent)
    if isinstance(parent, ast.Attribute) and parent.attr in MUTATORS:
        return f"mutated by {snippet(parent)}()"
    if isinstance(parent, ast.Subscript) and isinstance(parent.ctx, ast.Store | ast.Del):
        return f"mutated by `{snippet(module.parents.get(parent) or parent)}`"
    if node is not name:
        return None
    if isinstance(parent, ast.Return | ast.Yield):
        return "returned to the caller"
    if isinstance(parent, ast.Assign) and any(isinstance(t, ast.Attribute) for t in parent.targets):
        return f"stored as `{snippet(parent.targets[0])}`"
    return None


def _mutation(module: PyModule, function: Function, name: str) -> str | None:
    """How a function changes, returns or stores its parameter ``name`` (None if it does not)."""
    found: str | None = None
    for node in walk_function(function):
        if not isinstance(node, ast.Name) or node.id != name:
            continue
        parent = module.parents.get(node)
        if isinstance(parent, ast.AugAssign) and parent.target is node:
            found = found or f"mutated in place by `{snippet(parent)}`"
        elif isinstance(node.ctx, ast.Store | ast.Del):
            return None  # rebound (items = list(items), items = items or []): not the default
        else:
            found = found or _use_of_param(module, node)
    return found


@python_check(
    "py-mutable-default",
    tag="correctness",
    severity="P2",
    summary="A parameter defaults to a mutable object that the function mutates, stores or returns",
    match=[
        example("""
            def add_tag(tag, tags=[]):
                tags.append(tag)
                return tags
        """),
        example("""
            def register(name, handler, registry={}):
                registry[name] = handler
        """),
        example("""
            class Basket:
                def __init__(self, items=list()):
                    self.items = items
        """),
    ],
    no_match=[
        example("""
            def add_tag(tag, tags=None):
                tags = [] if tags is None else tags
                tags.append(tag)
                return tags
        """),
        example("""
            def total(prices=[]):
                return sum(prices)
        """),
        example("""
            def render(options={}):
                merged = {**DEFAULTS, **options}
                return merged
        """),
    ],
)
def mutable_default(module: PyModule) -> Iterator[CheckHit]:
    for function in module.function_defs:
        for name, default in param_defaults(function):
            memo = "cache" in name.lower() or "memo" in name.lower()  # deliberate memoization
            how = _mutation(module, function, name) if _mutable_default(default) else None
            if how is None or memo:
                continue
            yield CheckHit(
                default.lineno,
                f"Default `{name}={snippet(default)}` is shared across calls and {how} {where_def(module, function)}",
                "The default object is built once, when the def runs, so every call that omits "
                f"`{name}` gets the same one: what one call adds shows up in the next.",
                f"Default to None and make a fresh one inside: `{name} = [] if {name} is None "
                f"else {name}` (or {{}} / set()).",
            )
