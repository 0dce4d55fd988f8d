"""fd-performance checks: work repeated on every pass of a loop.

N+1 queries and requests, patterns recompiled or files reopened per item,
membership scans of growing lists and strings grown by concatenation. The
checks look at one function at a time and name the call, the loop and the
function involved. Receivers are judged by their names (``cursor``,
``session``, ``User.objects``), so a check stays quiet when it cannot tell
what an object is.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from fluxdrive.runtimes.static.checks._common import (
    HTTP_VERBS,
    Function,
    body_nodes,
    example_lines,
    receiver_parts,
    snippet_plain,
)
from fluxdrive.runtimes.static.checks.engine.pymodule import PyModule
from fluxdrive.runtimes.static.checks.engine.registry import CheckHit, python_check
from fluxdrive.runtimes.static.checks.engine.syntax import call_name, is_constant, resolve


def _describe_loop(loop: ast.AST) -> str:
    if isinstance(loop, ast.For | ast.AsyncFor):
        return f"once per item of `{snippet_plain(loop.iter)}`"
    if isinstance(loop, ast.ListComp | ast.SetComp | ast.DictComp | ast.GeneratorExp):
        return f"once per item of `{snippet_plain(loop.generators[0].iter)}`"
    return "on every pass of the while loop"


# --------------------------------------------------------------------------
# py-query-in-loop

_DB_PART = re.compile(
    r"(?:\w+_)?(?:db|database|session|sess|cursor|cur|conn|connection|client|engine|redis)"
    r"|\w+_set"  # Django reverse-relation managers: author.book_set.all()
)
_DB_FACTORIES = re.compile(r"(?:^|\.)(cursor|connect|Session|session|sessionmaker|Client|AsyncClient)$")
_SQL_METHODS = {"execute", "executemany", "fetch", "fetchrow", "fetchval", "fetch_all", "fetch_one"}
_ORM_METHODS = {"get", "filter", "filter_by", "first", "all", "query", "one", "one_or_none"}
_ORM_CHAIN = _ORM_METHODS | {"objects", "order_by", "where", "options", "join", "exclude"}
_HTTP_CALLS = {f"{lib}.{verb}" for lib in ("requests", "httpx") for verb in HTTP_VERBS} | {
    "urlopen",
    "urllib.request.urlopen",
}


def _db_receiver(receiver: ast.AST, function: Function | None) -> bool:
    """``cursor``, ``self.db``, ``session.query(User)``, ``User.objects``; never ``request.*``."""
    parts = receiver_parts(receiver)
    if not parts or "request" in parts or "req" in parts:
        return False
    for part in reversed(parts):
        if part in {"query", "objects"}:
            return True
        if part not in _ORM_CHAIN:
            if _DB_PART.fullmatch(part):
                return True
            break
    root = receiver
    while isinstance(root, ast.Attribute | ast.Call | ast.Subscript):
        root = root.func if isinstance(root, ast.Call) else root.value
    if not isinstance(root, ast.Name) or len(parts) > 1:
        return False
    source = resolve(root, function)
    return isinstance(source, ast.Call) and bool(_DB_FACTORIES.search(call_name(source)))


def _round_trip(node: ast.Call, function: Function | None) -> bool:
    if call_name(node) in _HTTP_CALLS:
        return True
    if not isinstance(node.func, ast.Attribute):
        return False
    method = node.func.attr
    if method not in _SQL_METHODS and method not in _ORM_METHODS:
        return False
    return _db_receiver(node.func.value, function)


def _chain_root(node: ast.Call, module: PyModule) -> ast.Call:
    """The outermost call of a chain like ``db.execute(q).fetchall()`` containing ``node``."""
    top = node
    while True:
        parent = module.parents.get(top)
        grand = module.parents.get(parent) if parent is not None else None
        chained = isinstance(parent, ast.Attribute) and isinstance(grand, ast.Call)
        if chained and isinstance(grand, ast.Call) and grand.func is parent:
            top = grand
        else:
            return top


def _builds_tasks(node: ast.Call, module: PyModule, function: Function | None) -> bool:
    """An un-awaited call in async code that is collected for gather()/create_task()."""
    if not isinstance(function, ast.AsyncFunctionDef):
        return False
    top = _chain_root(node, module)
    parent = module.parents.get(top)
    if isinstance(parent, ast.Await):
        return False
    return isinstance(parent, ast.Call | ast.ListComp | ast.GeneratorExp | ast.SetComp)


@python_check(
    "py-query-in-loop",
    tag="performance",
    severity="P2",
    summary="A database query or HTTP request inside a loop (N+1 round trips)",
    tests=False,
    match=[
        example_lines(
            "def load_orders(cursor, orders):",
            "    for order in orders:",
            "        cursor.execute('SELECT * FROM items WHERE order_id = %s', (order.id,))",
        ),
        example_lines(
            "def owners(session, pets):",
            "    return [session.query(Owner).get(p.owner_id) for p in pets]",
        ),
        example_lines(
            "import requests",
            "def prices(symbols):",
            "    out = {}",
            "    for s in symbols:",
            "        out[s] = requests.get(f'https://api.example.com/{s}', timeout=5).json()",
            "    return out",
        ),
        example_lines(
            "def authors(books):",
            "    for book in books:",
            "        book.author = Author.objects.get(pk=book.author_id)",
        ),
    ],
    no_match=[
        example_lines(
            "def load_orders(cursor, orders):",
            "    ids = tuple(o.id for o in orders)",
            "    cursor.execute('SELECT * FROM items WHERE order_id = ANY(%s)', (list(ids),))",
        ),
        example_lines(
            "def labels(config, keys):",
            "    return [config.get(k) for k in keys]",
        ),
        example_lines(
            "def drain(cursor):",
            "    while True:",
            "        rows = cursor.fetchmany(500)",
            "        if not rows:",
            "            break",
        ),
        example_lines(
            "import asyncio",
            "async def fetch_all(client, urls):",
            "    return await asyncio.gather(*[client.get(u) for u in urls])",
        ),
    ],
    nodes=(ast.Call,),
)
def query_in_loop(module: PyModule, node: ast.Call) -> Iterator[CheckHit]:
    seen: set[tuple[int, str]] = module.memo("query-in-loop seen", set)
    loop = module.in_loop(node)
    function = module.enclosing_function(node)
    if loop is None or not _round_trip(node, function) or _builds_tasks(node, module, function):
        return
    root = ".".join(receiver_parts(node.func)[:1])
    if (id(loop), root) in seen:
        return
    seen.add((id(loop), root))
    name = call_name(node)
    http = name in _HTTP_CALLS
    yield CheckHit(
        line=node.lineno,
        title=f"N+1: {name}() runs {_describe_loop(loop)} {module.where(node)}",
        why=(
            f"Each pass makes one {'HTTP request' if http else 'database round trip'}, "
            "so the time grows with the number of items and one slow call stalls the batch."
        ),
        fix=(
            "Fetch everything in one call before the loop (a batch endpoint, concurrent "
            "requests with a pooled client) and look results up in a dict."
            if http
            else "Load all rows in one query before the loop (WHERE id IN (...), a join, "
            "select_related/prefetch_related or selectinload) and look them up in a dict."
        ),
    )


# --------------------------------------------------------------------------
# py-regex-in-loop


def _loop_variant_names(loop: ast.AST) -> set[str]:
    names: set[str] = set()
    targets: list[ast.AST] = []
    if isinstance(loop, ast.For | ast.AsyncFor):
        targets.append(loop.target)
    elif isinstance(loop, ast.ListComp | ast.SetComp | ast.DictComp | ast.GeneratorExp):
        targets.extend(g.target for g in loop.generators)
    for node in ast.walk(loop):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
    for target in targets:
        names.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
    return names


def _invariant(expr: ast.AST, loop: ast.AST) -> bool:
    variant = _loop_variant_names(loop)
    for node in ast.walk(expr):
        if isinstance(node, ast.Name) and node.id in variant:
            return False
        if isinstance(node, ast.Call | ast.Await | ast.NamedExpr):
            return False
    return True


def _polls(loop: ast.AST) -> bool:
    return isinstance(loop, ast.While) and any(
        isinstance(n, ast.Call) and call_name(n).endswith("sleep") for n in ast.walk(loop)
    )


@python_check(
    "py-regex-in-loop",
    tag="performance",
    severity="P2",
    summary="re.compile() of a loop-invariant pattern, or open() of the same path, inside a loop",
    match=[
        example_lines(
            "import re",
            "def emails(lines):",
            "    for line in lines:",
            "        pattern = re.compile(r'[\\w.]+@[\\w.]+')",
            "        yield from pattern.findall(line)",
        ),
        example_lines(
            "def record(events):",
            "    for event in events:",
            "        with open('audit.log', 'a') as fh:",
            "            fh.write(event + '\\n')",
        ),
        example_lines(
            "import re",
            "def valid(words, WORD):",
            "    return [w for w in words if re.compile(WORD).fullmatch(w)]",
        ),
    ],
    no_match=[
        example_lines(
            "import re",
            "EMAIL = re.compile(r'[\\w.]+@[\\w.]+')",
            "def emails(lines):",
            "    for line in lines:",
            "        yield from EMAIL.findall(line)",
        ),
        example_lines(
            "def record(events):",
            "    with open('audit.log', 'a') as fh:",
            "        for event in events:",
            "            fh.write(event + '\\n')",
        ),
        example_lines(
            "def read_all(paths):",
            "    for path in paths:",
            "        with open(path) as fh:",
            "            yield fh.read()",
        ),
    ],
    nodes=(ast.Call,),
)
def regex_in_loop(module: PyModule, node: ast.Call) -> Iterator[CheckHit]:
    if not node.args:
        return
    name = call_name(node)
    if name not in {"re.compile", "regex.compile", "open"}:
        return
    loop = module.in_loop(node)
    if loop is None or not _invariant(node.args[0], loop):
        return
    if name == "open":
        if _polls(loop):
            return
        yield CheckHit(
            line=node.lineno,
            title=f"open({snippet_plain(node.args[0])}) reopens the same file {_describe_loop(loop)} {module.where(node)}",
            why="Every pass pays for opening, flushing and closing the file again.",
            fix="Open the file once before the loop (with open(...) as fh: for ...: fh.write(...)).",
        )
        return
    yield CheckHit(
        line=node.lineno,
        title=f"{name}({snippet_plain(node.args[0])}) recompiled {_describe_loop(loop)} {module.where(node)}",
        why="The pattern does not change between passes, yet it is looked up or compiled again on each one.",
        fix="Compile it once at module level (EMAIL_RE = re.compile(...)) and reuse it in the loop.",
    )


# --------------------------------------------------------------------------
# py-quadratic-membership


def _is_list_value(value: ast.AST) -> bool:
    if isinstance(value, ast.ListComp):
        return True
    if isinstance(value, ast.List):
        return True
    return isinstance(value, ast.Call) and call_name(value) in {"list", "sorted"}


def _growing_lists(function: Function) -> dict[str, list[ast.AST]]:
    """Names bound only to lists that grow with the input, with their assignment statements."""
    bound: dict[str, list[ast.AST]] = {}
    other: set[str] = set()
    grows: set[str] = set()
    for node in body_nodes(function):
        if isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in (t for t in targets if isinstance(t, ast.Name)):
                if _is_list_value(node.value):
                    bound.setdefault(target.id, []).append(node)
                    if not isinstance(node.value, ast.List) or not is_constant(node.value):
                        grows.add(target.id)
                else:
                    other.add(target.id)
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name)
            and node.func.attr in {"append", "extend", "insert"}
        ):
            grows.add(node.func.value.id)
        elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
            grows.add(node.target.id)
    return {k: v for k, v in bound.items() if k in grows and k not in other}


def _scans(node: ast.AST) -> tuple[str, str] | None:
    """(list name, operation text) for ``x in name`` / ``name.index(x)`` and friends."""
    if isinstance(node, ast.Compare):
        for op, right in zip(node.ops, node.comparators, strict=False):
            if isinstance(op, ast.In | ast.NotIn) and isinstance(right, ast.Name):
                return right.id, snippet_plain(node)
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and isinstance(node.func.value, ast.Name)
        and node.func.attr in {"index", "remove", "count"}
    ):
        return node.func.value.id, snippet_plain(node)
    return None


@python_check(
    "py-quadratic-membership",
    tag="performance",
    severity="P2",
    summary="Membership/index/remove/count on a growing list inside a loop (quadratic time)",
    match=[
        example_lines(
            "def dedupe(items):",
            "    seen = []",
            "    for item in items:",
            "        if item not in seen:",
            "            seen.append(item)",
            "    return seen",
        ),
        example_lines(
            "def missing(orders, customers):",
            "    known = [c.id for c in customers]",
            "    return [o for o in orders if o.customer_id not in known]",
        ),
        example_lines(
            "def duplicates(names):",
            "    names = list(names)",
            "    return {n for n in names if names.count(n) > 1}",
        ),
    ],
    no_match=[
        example_lines(
            "def dedupe(items):",
            "    seen = set()",
            "    out = []",
            "    for item in items:",
            "        if item not in seen:",
            "            seen.add(item)",
            "            out.append(item)",
            "    return out",
        ),
        example_lines(
            "def kinds(events):",
            "    allowed = ['click', 'view', 'buy']",
            "    return [e for e in events if e.kind in allowed]",
        ),
        example_lines(
            "def missing(orders, customers):",
            "    known = {c.id for c in customers}",
            "    return [o for o in orders if o.customer_id not in known]",
        ),
    ],
)
def quadratic_membership(module: PyModule) -> Iterator[CheckHit]:
    for function in module.function_defs:
        scans = [(node, scan) for node in body_nodes(function) if (scan := _scans(node)) is not None]
        lists = _growing_lists(function) if scans else {}  # most functions scan nothing: skip the second pass
        for node, scan in scans:
            if scan[0] not in lists:
                continue
            loop = module.in_loop(node)
            if loop is None or any(loop in module.ancestors(a) for a in lists[scan[0]]):
                continue
            yield CheckHit(
                line=getattr(node, "lineno", function.lineno),
                title=f"`{scan[1]}` scans the list `{scan[0]}` {_describe_loop(loop)} {module.where(node)}",
                why="Each check walks the whole list, so the loop costs O(n*m) and slows down sharply as both grow.",
                fix=f"Keep `{scan[0]}` as a set (or a dict for positions, collections.Counter for "
                "counts) so each lookup is O(1).",
            )


# --------------------------------------------------------------------------
# py-string-concat-in-loop


def _stringish(value: ast.AST) -> bool:
    if isinstance(value, ast.JoinedStr):
        return True
    if isinstance(value, ast.Constant):
        return isinstance(value.value, str)
    if isinstance(value, ast.Call):
        name = call_name(value)
        return name in {"str", "repr"} or name.endswith((".format", ".join"))
    if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add | ast.Mod):
        return _stringish(value.left) or _stringish(value.right)
    return False


def _string_inits(function: Function) -> dict[str, list[ast.AST]]:
    inits: dict[str, list[ast.AST]] = {}
    for node in body_nodes(function):
        if isinstance(node, ast.Assign) and _is_str_literal(node.value):
            for target in (t for t in node.targets if isinstance(t, ast.Name)):
                inits.setdefault(target.id, []).append(node)
    return inits


def _is_str_literal(value: ast.AST) -> bool:
    return isinstance(value, ast.JoinedStr) or (isinstance(value, ast.Constant) and isinstance(value.value, str))


def _concat(node: ast.AST) -> str | None:
    """The name in ``s += ...`` or ``s = s + ...``."""
    if isinstance(node, ast.AugAssign) and isinstance(node.op, ast.Add):
        return node.target.id if isinstance(node.target, ast.Name) else None
    if not isinstance(node, ast.Assign) or len(node.targets) != 1:
        return None
    target, value = node.targets[0], node.value
    while isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add):
        value = value.left
    if isinstance(target, ast.Name) and isinstance(value, ast.Name) and value.id == target.id:
        return target.id
    return None


@python_check(
    "py-string-concat-in-loop",
    tag="performance",
    severity="P3",
    summary="A string built with += inside a loop instead of ''.join()",
    match=[
        example_lines(
            "def render(rows):",
            "    html = ''",
            "    for row in rows:",
            "        html += f'<tr><td>{row.name}</td></tr>'",
            "    return html",
        ),
        example_lines(
            "def csv_line(values):",
            "    line = ''",
            "    for v in values:",
            "        line = line + str(v) + ','",
            "    return line",
        ),
    ],
    no_match=[
        example_lines(
            "def render(rows):",
            "    return ''.join(f'<tr><td>{row.name}</td></tr>' for row in rows)",
        ),
        example_lines(
            "def total(rows):",
            "    count = 0",
            "    for row in rows:",
            "        count += row.size",
            "    return count",
        ),
        example_lines(
            "def render(rows):",
            "    parts = []",
            "    for row in rows:",
            "        parts += [f'<li>{row}</li>']",
            "    return ''.join(parts)",
        ),
    ],
)
def string_concat_in_loop(module: PyModule) -> Iterator[CheckHit]:
    for function in module.function_defs:
        inits = _string_inits(function)
        if not inits:
            continue
        for node in body_nodes(function):
            name = _concat(node)
            if name is None or name not in inits:
                continue
            loop = module.in_loop(node)
            if loop is None or all(loop in module.ancestors(i) for i in inits[name]):
                continue
            yield CheckHit(
                line=getattr(node, "lineno", function.lineno),
                title=f"String `{name}` grows by concatenation {_describe_loop(loop)} {module.where(node)}",
                why="Each concatenation may copy the whole string built so far, which turns "
                "quadratic for long outputs.",
                fix=f"Collect the pieces in a list and build `{name}` once with ''.join(parts) "
                "(or write to io.StringIO).",
            )
