"""fd-quality checks: undocumented public API and unexplained numbers in logic.

Both checks skip test modules. Numbers inside game loops are left to the
game-design area's ``py-tuning-constant-in-loop`` so that one literal is
reported once.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from fluxdrive.runtimes.static.checks._common import (
    example_lines,
    in_arithmetic,
    literal_exempt,
    numeric_literal,
)
from fluxdrive.runtimes.static.checks.engine.pymodule import PyModule
from fluxdrive.runtimes.static.checks.engine.registry import CheckHit, python_check
from fluxdrive.runtimes.static.checks.engine.syntax import call_name
from fluxdrive.runtimes.static.checks.game import tuning_literals

Definition = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef


# --------------------------------------------------------------------------
# py-missing-docstring

_EXEMPT_DECORATORS = {"overload", "override", "setter", "deleter"}


def _size(node: Definition) -> int:
    """Statements inside a definition, nested blocks included."""
    return sum(isinstance(n, ast.stmt) for n in ast.walk(node)) - 1


def _decorator_names(node: Definition) -> set[str]:
    names: set[str] = set()
    for decorator in node.decorator_list:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        names.add(call_name(target).rsplit(".", 1)[-1])
    return names


def _undocumented(node: Definition) -> bool:
    if node.name.startswith(("_", "test_", "Test")) or ast.get_docstring(node) is not None:
        return False
    return _size(node) > 3 and not _decorator_names(node) & _EXEMPT_DECORATORS


def _public_definitions(module: PyModule) -> Iterator[tuple[Definition, str]]:
    for node in module.tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            yield node, f"function {node.name}()"
        elif isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
            yield node, f"class {node.name}"
            for member in node.body:
                if isinstance(member, ast.FunctionDef | ast.AsyncFunctionDef):
                    yield member, f"method {node.name}.{member.name}()"


@python_check(
    "py-missing-docstring",
    tag="quality",
    severity="P3",
    summary="Public module-level function, class or method (over 3 statements) without a docstring",
    tests=False,
    match=[
        example_lines(
            "def load_config(path):",
            "    with open(path) as fh:",
            "        data = json.load(fh)",
            "    data.setdefault('debug', False)",
            "    return Config(**data)",
        ),
        example_lines(
            "class Cart:",
            "    '''A shopping cart.'''",
            "    def total(self):",
            "        subtotal = sum(i.price for i in self.items)",
            "        tax = subtotal * self.tax_rate",
            "        shipping = self.shipping()",
            "        return subtotal + tax + shipping",
        ),
    ],
    no_match=[
        example_lines(
            "def load_config(path):",
            "    '''Read the JSON config at path, defaulting debug to False.'''",
            "    with open(path) as fh:",
            "        data = json.load(fh)",
            "    data.setdefault('debug', False)",
            "    return Config(**data)",
        ),
        example_lines(
            "def _load(path):",
            "    with open(path) as fh:",
            "        data = json.load(fh)",
            "    data.setdefault('debug', False)",
            "    return data",
        ),
        example_lines(
            "class Cart:",
            "    '''A shopping cart.'''",
            "    def __init__(self, items, tax_rate):",
            "        self.items = list(items)",
            "        self.tax_rate = tax_rate",
            "        self.discount = 0",
            "        self.coupon = None",
            "    def count(self):",
            "        return len(self.items)",
        ),
    ],
)
def missing_docstring(module: PyModule) -> Iterator[CheckHit]:
    if module.path.rsplit("/", 1)[-1].startswith("_"):
        return
    for node, what in _public_definitions(module):
        if not _undocumented(node):
            continue
        yield CheckHit(
            line=node.lineno,
            title=f"Public {what} has no docstring",
            why="Callers have to read the body to learn what it does, what it returns and "
            "which errors it raises; editors and generated API docs show nothing.",
            fix="Add a docstring: one line on what it does or returns, then any non-obvious "
            "arguments, side effects and raised exceptions.",
        )


# --------------------------------------------------------------------------
# py-magic-number

_PLAIN = {0, 1, -1, 2, 10, 100, 1000, 0.5}
_NOT_MAGIC_CALLS = {"round", "int", "range", "zfill", "ljust", "rjust", "center", "exit", "_exit"}
_NOT_MAGIC_CALLS |= {"chr", "ord", "warn", "format"}
_NOT_MAGIC_KEYWORDS = {"indent", "base", "ndigits", "maxsplit", "stacklevel", "protocol", "axis"}
_STATUS_CALLS = {"abort", "HTTPException", "HTTPError", "Response", "JSONResponse"}
_STATUS_CALLS |= {"HttpResponse", "make_response", "jsonify", "status"}


def _call_context(expr: ast.expr, module: PyModule) -> tuple[ast.Call, str] | None:
    """(call, keyword or "") when ``expr`` is an argument of a call."""
    parent = module.parents.get(expr)
    if isinstance(parent, ast.keyword):
        call = module.parents.get(parent)
        return (call, parent.arg or "") if isinstance(call, ast.Call) else None
    if isinstance(parent, ast.Call) and expr in parent.args:
        return parent, ""
    return None


def _http_status(expr: ast.expr, value: float, module: PyModule) -> bool:
    if not (isinstance(value, int) and 100 <= value <= 599):
        return False
    parent = module.parents.get(expr)
    if isinstance(parent, ast.Compare):
        others = [ast.unparse(n) for n in [parent.left, *parent.comparators] if n is not expr]
        return any("status" in text or "code" in text for text in others)
    called = _call_context(expr, module)
    if called is None:
        return False
    call, word = called
    return "status" in word or "code" in word or call_name(call).split(".")[-1] in _STATUS_CALLS


def _named_constant(expr: ast.expr, module: PyModule) -> bool:
    """``SECONDS_PER_DAY = 24 * 60 * 60`` inside a function names its own numbers."""
    statement = next((a for a in module.ancestors(expr) if isinstance(a, ast.stmt)), None)
    if isinstance(statement, ast.Assign):
        names = [t.id for t in statement.targets if isinstance(t, ast.Name)]
        return bool(names) and all(n.isupper() for n in names)
    return False


def _spelled(expr: ast.expr, module: PyModule) -> bool:
    """Hex, octal and binary literals (masks, permissions) describe themselves."""
    number = expr.operand if isinstance(expr, ast.UnaryOp) else expr
    line = module.lines[number.lineno - 1] if 0 < number.lineno <= len(module.lines) else ""
    text = line.encode()[number.col_offset : number.col_offset + 2].decode(errors="ignore")
    return text.lower() in {"0x", "0o", "0b"}


def _magic_context(expr: ast.expr, value: float, module: PyModule) -> str | None:
    context = in_arithmetic(expr, module)
    if context is None:
        called = _call_context(expr, module)
        if called is None:
            return None
        call, word = called
        name = call_name(call)
        if name.split(".")[-1] in _NOT_MAGIC_CALLS or word in _NOT_MAGIC_KEYWORDS:
            return None
        return None if _skip_literal(expr, value, module) else f"passed to {name or 'a call'}()"
    return None if _skip_literal(expr, value, module) else f"in {context}"


def _skip_literal(expr: ast.expr, value: float, module: PyModule) -> bool:
    return (
        literal_exempt(expr, module)
        or _named_constant(expr, module)
        or _spelled(expr, module)
        or _http_status(expr, value, module)
    )


@python_check(
    "py-magic-number",
    tag="quality",
    severity="P3",
    summary="Unexplained numeric literal in a comparison, arithmetic or call inside a function",
    tests=False,
    match=[
        example_lines(
            "def can_rent(driver):",
            "    return driver.age > 25 and driver.points < 7",
        ),
        example_lines(
            "def price_with_fee(amount):",
            "    return amount * 1.175",
        ),
        example_lines(
            "def connect(host):",
            "    return Client(host, 8443, retries=5)",
        ),
    ],
    no_match=[
        example_lines(
            "MIN_RENTAL_AGE = 25",
            "MAX_POINTS = 7",
            "def can_rent(driver):",
            "    return driver.age > MIN_RENTAL_AGE and driver.points < MAX_POINTS",
        ),
        example_lines(
            "def page(items, size=50):",
            "    for i in range(0, len(items), 25):",
            "        yield items[i:i + 25][:size]",
        ),
        example_lines(
            "def handle(response):",
            "    if response.status_code == 404:",
            "        return None",
            "    return response.json()['items'][3] * 100",
        ),
    ],
)
def magic_number(module: PyModule) -> Iterator[CheckHit]:
    owned_by_game = {id(expr) for expr, *_ in tuning_literals(module)}
    reported: set[tuple[int, float]] = set()
    for node in module.of_type(ast.Constant):
        found = numeric_literal(node, module)
        if found is None or found[1] in _PLAIN or id(found[0]) in owned_by_game:
            continue
        expr, value = found
        function = module.enclosing_function(expr)
        if function is None or (id(function), value) in reported:
            continue
        context = _magic_context(expr, value, module)
        if context is None:
            continue
        reported.add((id(function), value))
        yield CheckHit(
            line=expr.lineno,
            title=f"Magic number {ast.unparse(expr)} {context} {module.where(expr)}",
            why="A bare number hides what it means and where else it must change; the next "
            "edit updates one copy and misses another.",
            fix="Give it a name (a module-level constant such as MIN_RENTAL_AGE = 25, an enum "
            "member or a settings field) and use the name here.",
        )
