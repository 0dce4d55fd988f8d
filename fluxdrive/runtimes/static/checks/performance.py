"""fd-performance checks: work repeated per item, unbounded reads, blocking and hanging calls.

The checks look at one function at a time and name the call, the loop and
the function involved. Receivers are judged by their names (``cursor``,
``session``, ``User.objects``, ``worker_thread``), so a check stays quiet
when it cannot tell what an object is.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from fluxdrive.runtimes.static.checks.base import (
    CheckHit,
    PyModule,
    assignments,
    call_name,
    is_constant,
    keyword,
    python_check,
    resolve,
    string_parts,
)

Function = ast.FunctionDef | ast.AsyncFunctionDef


def _src(*lines: str) -> str:
    return "\n".join(lines) + "\n"


def _functions(module: PyModule) -> Iterator[Function]:
    for node in module.nodes:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            yield node


def _own_nodes(function: Function) -> Iterator[ast.AST]:
    """Nodes of a function body, without descending into nested functions or classes."""
    stack: list[ast.AST] = list(function.body)
    while stack:
        node = stack.pop()
        yield node
        stack.extend(
            child
            for child in ast.iter_child_nodes(node)
            if not isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
        )


def _short(expr: ast.AST, limit: int = 40) -> str:
    try:
        text = ast.unparse(expr)
    except Exception:  # odd trees must not break a check
        return "..."
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _describe_loop(loop: ast.AST) -> str:
    if isinstance(loop, ast.For | ast.AsyncFor):
        return f"once per item of `{_short(loop.iter)}`"
    if isinstance(loop, ast.ListComp | ast.SetComp | ast.DictComp | ast.GeneratorExp):
        return f"once per item of `{_short(loop.generators[0].iter)}`"
    return "on every pass of the while loop"


def _receiver_parts(expr: ast.AST) -> list[str]:
    """``self.db.session.query(User)`` -> ["self", "db", "session", "query"]."""
    parts: list[str] = []
    while True:
        if isinstance(expr, ast.Call):
            expr = expr.func
        elif isinstance(expr, ast.Attribute):
            parts.append(expr.attr)
            expr = expr.value
        elif isinstance(expr, ast.Subscript):
            expr = expr.value
        else:
            break
    if isinstance(expr, ast.Name):
        parts.append(expr.id)
    return [p.lower() for p in reversed(parts)]


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
_HTTP_VERBS = {"get", "post", "put", "patch", "delete", "head", "options", "request"}
_HTTP_CALLS = {f"{lib}.{verb}" for lib in ("requests", "httpx") for verb in _HTTP_VERBS} | {
    "urlopen",
    "urllib.request.urlopen",
}


def _db_receiver(receiver: ast.AST, function: Function | None) -> bool:
    """``cursor``, ``self.db``, ``session.query(User)``, ``User.objects``; never ``request.*``."""
    parts = _receiver_parts(receiver)
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
    severity="P1",
    summary="A database query or HTTP request inside a loop (N+1 round trips)",
    match=[
        _src(
            "def load_orders(cursor, orders):",
            "    for order in orders:",
            "        cursor.execute('SELECT * FROM items WHERE order_id = %s', (order.id,))",
        ),
        _src(
            "def owners(session, pets):",
            "    return [session.query(Owner).get(p.owner_id) for p in pets]",
        ),
        _src(
            "import requests",
            "def prices(symbols):",
            "    out = {}",
            "    for s in symbols:",
            "        out[s] = requests.get(f'https://api.example.com/{s}', timeout=5).json()",
            "    return out",
        ),
        _src(
            "def authors(books):",
            "    for book in books:",
            "        book.author = Author.objects.get(pk=book.author_id)",
        ),
    ],
    no_match=[
        _src(
            "def load_orders(cursor, orders):",
            "    ids = tuple(o.id for o in orders)",
            "    cursor.execute('SELECT * FROM items WHERE order_id = ANY(%s)', (list(ids),))",
        ),
        _src(
            "def labels(config, keys):",
            "    return [config.get(k) for k in keys]",
        ),
        _src(
            "def drain(cursor):",
            "    while True:",
            "        rows = cursor.fetchmany(500)",
            "        if not rows:",
            "            break",
        ),
        _src(
            "import asyncio",
            "async def fetch_all(client, urls):",
            "    return await asyncio.gather(*[client.get(u) for u in urls])",
        ),
    ],
)
def query_in_loop(module: PyModule) -> Iterator[CheckHit]:
    if module.is_test_module():
        return
    seen: set[tuple[int, str]] = set()
    for node in module.nodes:
        if not isinstance(node, ast.Call):
            continue
        loop = module.in_loop(node)
        function = module.enclosing_function(node)
        if loop is None or not _round_trip(node, function) or _builds_tasks(node, module, function):
            continue
        root = ".".join(_receiver_parts(node.func)[:1])
        if (id(loop), root) in seen:
            continue
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
# py-unbounded-query

_READ_SINKS = {"execute", "fetch", "fetch_all", "read_sql", "read_sql_query", "query"}
_BOUNDED_SQL = re.compile(
    r"\b(limit|top|fetch\s+(first|next)|offset)\b|\bwhere\b.*((?<![<>!])=|\bin\s*\()",
    re.IGNORECASE | re.DOTALL,
)
_AGGREGATE_ONLY = re.compile(r"^\s*select\s+(count|sum|avg|min|max|exists)\s*\(.*?\bfrom\b", re.IGNORECASE | re.DOTALL)
_SELECT_FROM = re.compile(r"^\s*(select|with)\b.+?\bfrom\b", re.IGNORECASE | re.DOTALL)
_PAGING = {"limit", "paginate", "offset", "slice", "first", "one", "one_or_none", "get", "fetch"}
_ORM_MARKERS = {"query", "objects", "scalars", "execute", "filter", "filter_by", "order_by"}


def _unbounded_sql(text: str) -> bool:
    if not _SELECT_FROM.search(text) or _BOUNDED_SQL.search(text):
        return False
    return not (_AGGREGATE_ONLY.search(text) and not re.search(r"\bgroup\s+by\b", text, re.I))


def _sql_hits(module: PyModule) -> Iterator[tuple[ast.Call, str]]:
    for node in module.nodes:
        if not isinstance(node, ast.Call) or not node.args:
            continue
        if not isinstance(node.func, ast.Attribute) or node.func.attr not in _READ_SINKS:
            continue
        function = module.enclosing_function(node)
        query = resolve(node.args[0], function)
        if isinstance(query, ast.Call) and call_name(query).endswith("text") and query.args:
            query = resolve(query.args[0], function)
        if not isinstance(query, ast.Constant | ast.JoinedStr):
            continue
        if function is not None and "fetchone" in _method_names(function):
            continue  # reads a single row
        if _unbounded_sql(string_parts(query)):
            yield node, f"{call_name(node)}()"


def _method_names(function: Function) -> set[str]:
    return {n.func.attr for n in ast.walk(function) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)}


def _is_route(function: Function) -> bool:
    return any(
        isinstance(d, ast.Call) and isinstance(d.func, ast.Attribute) and d.func.attr in {"get", "route", "api_route"}
        for d in function.decorator_list
    )


def _chain_names(expr: ast.AST, function: Function) -> set[str]:
    names: set[str] = set()
    local = assignments(function)
    for node in ast.walk(expr):
        if isinstance(node, ast.Attribute):
            names.add(node.attr)
        elif isinstance(node, ast.Name) and node.id in local and local[node.id] is not expr:
            names.update(a.attr for a in ast.walk(local[node.id]) if isinstance(a, ast.Attribute))
        elif isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Slice):
            names.add("slice")
    return names


def _returned_calls(function: Function) -> Iterator[ast.Call]:
    """Calls in the handler's return values, following local names one assignment back."""
    local = assignments(function)
    for ret in (n for n in _own_nodes(function) if isinstance(n, ast.Return)):
        if ret.value is None:
            continue
        exprs: list[ast.AST] = [ret.value]
        names = [n.id for n in ast.walk(ret.value) if isinstance(n, ast.Name)]
        exprs += [local[name] for name in names if name in local]
        for expr in exprs:
            yield from (n for n in ast.walk(expr) if isinstance(n, ast.Call))


def _route_hits(module: PyModule) -> Iterator[tuple[ast.Call, str]]:
    for function in _functions(module):
        if not _is_route(function):
            continue
        for node in _returned_calls(function):
            if not isinstance(node.func, ast.Attribute) or node.func.attr != "all":
                continue
            if node.args or node.keywords or isinstance(module.parents.get(node), ast.Subscript):
                continue
            names = _chain_names(node.func.value, function)
            if names & _PAGING or not names & _ORM_MARKERS:
                continue
            yield node, f"{_short(node, 50)} returned by route {function.name}()"


@python_check(
    "py-unbounded-query",
    tag="performance",
    severity="P2",
    summary="A SELECT without LIMIT or key lookup, or a list endpoint returning unpaginated .all()",
    match=[
        _src(
            "def all_events(cursor):",
            "    cursor.execute('SELECT id, kind, payload FROM events ORDER BY created_at')",
            "    return cursor.fetchall()",
        ),
        _src(
            "@app.get('/items')",
            "def list_items(db):",
            "    return db.query(Item).all()",
        ),
        _src(
            "@bp.route('/users')",
            "def users():",
            "    rows = User.query.order_by(User.name).all()",
            "    return jsonify([u.to_dict() for u in rows])",
        ),
    ],
    no_match=[
        _src(
            "def page(cursor, after):",
            "    q = 'SELECT id FROM events WHERE id > %s ORDER BY id LIMIT 100'",
            "    cursor.execute(q, (after,))",
            "    return cursor.fetchall()",
        ),
        _src(
            "def get_user(cursor, user_id):",
            "    cursor.execute('SELECT * FROM users WHERE id = %s', (user_id,))",
            "    return cursor.fetchall()",
        ),
        _src(
            "@app.get('/items')",
            "def list_items(db, offset: int = 0, limit: int = 50):",
            "    return db.query(Item).offset(offset).limit(limit).all()",
        ),
        _src(
            "def count(cursor):",
            "    cursor.execute('SELECT count(*) FROM users')",
            "    return cursor.fetchall()",
        ),
    ],
)
def unbounded_query(module: PyModule) -> Iterator[CheckHit]:
    if module.is_test_module():
        return
    lines: set[int] = set()
    for node, what in _sql_hits(module):
        lines.add(node.lineno)
        yield CheckHit(
            line=node.lineno,
            title=f"SELECT without LIMIT or key filter passed to {what} {module.where(node)}",
            why="The query reads every matching row, so memory and latency grow with the table.",
            fix="Add LIMIT/keyset pagination (WHERE id > %s ORDER BY id LIMIT %s) or stream with a "
            "server-side cursor and process rows in batches.",
        )
    for node, what in _route_hits(module):
        if node.lineno in lines:
            continue
        yield CheckHit(
            line=node.lineno,
            title=f"List endpoint without pagination: {what}",
            why="The handler loads and serialises the whole table on every request; it gets slower "
            "and heavier as rows accumulate.",
            fix="Take limit/offset (or a cursor) parameters with a maximum and apply "
            ".limit()/.offset() or .paginate() before .all().",
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
        _src(
            "import re",
            "def emails(lines):",
            "    for line in lines:",
            "        pattern = re.compile(r'[\\w.]+@[\\w.]+')",
            "        yield from pattern.findall(line)",
        ),
        _src(
            "def record(events):",
            "    for event in events:",
            "        with open('audit.log', 'a') as fh:",
            "            fh.write(event + '\\n')",
        ),
        _src(
            "import re",
            "def valid(words, WORD):",
            "    return [w for w in words if re.compile(WORD).fullmatch(w)]",
        ),
    ],
    no_match=[
        _src(
            "import re",
            "EMAIL = re.compile(r'[\\w.]+@[\\w.]+')",
            "def emails(lines):",
            "    for line in lines:",
            "        yield from EMAIL.findall(line)",
        ),
        _src(
            "def record(events):",
            "    with open('audit.log', 'a') as fh:",
            "        for event in events:",
            "            fh.write(event + '\\n')",
        ),
        _src(
            "def read_all(paths):",
            "    for path in paths:",
            "        with open(path) as fh:",
            "            yield fh.read()",
        ),
    ],
)
def regex_in_loop(module: PyModule) -> Iterator[CheckHit]:
    for node in module.nodes:
        if not isinstance(node, ast.Call) or not node.args:
            continue
        name = call_name(node)
        if name not in {"re.compile", "regex.compile", "open"}:
            continue
        loop = module.in_loop(node)
        if loop is None or not _invariant(node.args[0], loop):
            continue
        if name == "open":
            if _polls(loop):
                continue
            yield CheckHit(
                line=node.lineno,
                title=f"open({_short(node.args[0])}) reopens the same file {_describe_loop(loop)} {module.where(node)}",
                why="Every pass pays for opening, flushing and closing the file again.",
                fix="Open the file once before the loop (with open(...) as fh: for ...: fh.write(...)).",
            )
            continue
        yield CheckHit(
            line=node.lineno,
            title=f"{name}({_short(node.args[0])}) recompiled {_describe_loop(loop)} {module.where(node)}",
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
    for node in _own_nodes(function):
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
                return right.id, _short(node)
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and isinstance(node.func.value, ast.Name)
        and node.func.attr in {"index", "remove", "count"}
    ):
        return node.func.value.id, _short(node)
    return None


@python_check(
    "py-quadratic-membership",
    tag="performance",
    severity="P2",
    summary="Membership/index/remove/count on a growing list inside a loop (quadratic time)",
    match=[
        _src(
            "def dedupe(items):",
            "    seen = []",
            "    for item in items:",
            "        if item not in seen:",
            "            seen.append(item)",
            "    return seen",
        ),
        _src(
            "def missing(orders, customers):",
            "    known = [c.id for c in customers]",
            "    return [o for o in orders if o.customer_id not in known]",
        ),
        _src(
            "def duplicates(names):",
            "    names = list(names)",
            "    return {n for n in names if names.count(n) > 1}",
        ),
    ],
    no_match=[
        _src(
            "def dedupe(items):",
            "    seen = set()",
            "    out = []",
            "    for item in items:",
            "        if item not in seen:",
            "            seen.add(item)",
            "            out.append(item)",
            "    return out",
        ),
        _src(
            "def kinds(events):",
            "    allowed = ['click', 'view', 'buy']",
            "    return [e for e in events if e.kind in allowed]",
        ),
        _src(
            "def missing(orders, customers):",
            "    known = {c.id for c in customers}",
            "    return [o for o in orders if o.customer_id not in known]",
        ),
    ],
)
def quadratic_membership(module: PyModule) -> Iterator[CheckHit]:
    for function in _functions(module):
        lists = _growing_lists(function)
        if not lists:
            continue
        for node in _own_nodes(function):
            scan = _scans(node)
            if scan is None or scan[0] not in lists:
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
    for node in _own_nodes(function):
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
        _src(
            "def render(rows):",
            "    html = ''",
            "    for row in rows:",
            "        html += f'<tr><td>{row.name}</td></tr>'",
            "    return html",
        ),
        _src(
            "def csv_line(values):",
            "    line = ''",
            "    for v in values:",
            "        line = line + str(v) + ','",
            "    return line",
        ),
    ],
    no_match=[
        _src(
            "def render(rows):",
            "    return ''.join(f'<tr><td>{row.name}</td></tr>' for row in rows)",
        ),
        _src(
            "def total(rows):",
            "    count = 0",
            "    for row in rows:",
            "        count += row.size",
            "    return count",
        ),
        _src(
            "def render(rows):",
            "    parts = []",
            "    for row in rows:",
            "        parts += [f'<li>{row}</li>']",
            "    return ''.join(parts)",
        ),
    ],
)
def string_concat_in_loop(module: PyModule) -> Iterator[CheckHit]:
    for function in _functions(module):
        inits = _string_inits(function)
        if not inits:
            continue
        for node in _own_nodes(function):
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


# --------------------------------------------------------------------------
# py-blocking-in-async

_BLOCKING: dict[str, str] = {
    "time.sleep": "use await asyncio.sleep(...)",
    "urlopen": "use an async HTTP client (httpx.AsyncClient, aiohttp)",
    "urllib.request.urlopen": "use an async HTTP client (httpx.AsyncClient, aiohttp)",
    "subprocess.run": "use await asyncio.create_subprocess_exec(...)",
    "subprocess.call": "use await asyncio.create_subprocess_exec(...)",
    "subprocess.check_call": "use await asyncio.create_subprocess_exec(...)",
    "subprocess.check_output": "use await asyncio.create_subprocess_exec(...)",
    "psycopg2.connect": "use an async driver (asyncpg, psycopg's AsyncConnection)",
    "pymysql.connect": "use an async driver (aiomysql, asyncmy)",
}
_SOCKET_METHODS = {"recv", "recvfrom", "recv_into", "accept", "sendall"}
_OFFLOAD = {"to_thread", "run_in_executor", "run_sync", "submit"}


def _blocking(node: ast.Call) -> tuple[str, str] | None:
    name = call_name(node)
    if name in _BLOCKING:
        return name, _BLOCKING[name]
    parts = name.split(".")
    if len(parts) == 2 and parts[0] == "requests" and parts[1] in _HTTP_VERBS:
        return name, "use an async HTTP client (httpx.AsyncClient, aiohttp)"
    func = node.func
    if not isinstance(func, ast.Attribute):
        return None
    if func.attr in {"read", "readlines", "write"} and call_name(func.value) == "open":
        return f"open().{func.attr}", "use aiofiles or await asyncio.to_thread(...)"
    if func.attr in _SOCKET_METHODS and any("sock" in p for p in _receiver_parts(func.value)):
        return name, "use asyncio streams (asyncio.open_connection) or await loop.sock_recv()"
    return None


def _nonblocking_sockets(module: PyModule) -> bool:
    return "setblocking(False)" in module.text or "setblocking(0)" in module.text


def _offloaded(node: ast.AST, module: PyModule) -> bool:
    for parent in module.ancestors(node):
        if isinstance(parent, ast.Lambda):
            return True
        if isinstance(parent, ast.Call) and call_name(parent).rsplit(".", 1)[-1] in _OFFLOAD:
            return True
        if isinstance(parent, ast.FunctionDef | ast.AsyncFunctionDef):
            return False
    return False


@python_check(
    "py-blocking-in-async",
    tag="performance",
    severity="P1",
    summary="A blocking call (sleep, requests, subprocess, file/socket I/O) inside async def",
    match=[
        _src(
            "import time",
            "async def poll(client):",
            "    while not await client.ready():",
            "        time.sleep(1)",
        ),
        _src(
            "import requests",
            "async def fetch_profile(user_id):",
            "    return requests.get(f'https://api.example.com/u/{user_id}', timeout=5).json()",
        ),
        _src(
            "import subprocess",
            "async def build(path):",
            "    subprocess.run(['make', '-C', path], check=True)",
        ),
        _src(
            "async def load(path):",
            "    return open(path).read()",
        ),
    ],
    no_match=[
        _src(
            "import asyncio",
            "async def poll(client):",
            "    while not await client.ready():",
            "        await asyncio.sleep(1)",
        ),
        _src(
            "import asyncio, requests",
            "async def fetch_profile(url):",
            "    return await asyncio.to_thread(requests.get, url, timeout=5)",
        ),
        _src(
            "import time",
            "def poll(client):",
            "    while not client.ready():",
            "        time.sleep(1)",
        ),
        _src(
            "import asyncio, subprocess",
            "async def build(loop, path):",
            "    await loop.run_in_executor(None, lambda: subprocess.run(['make', path]))",
        ),
    ],
)
def blocking_in_async(module: PyModule) -> Iterator[CheckHit]:
    for node in module.nodes:
        if not isinstance(node, ast.Call):
            continue
        found = _blocking(node)
        if found is None or not isinstance(module.enclosing_function(node), ast.AsyncFunctionDef):
            continue
        if found[1].startswith("use asyncio streams") and _nonblocking_sockets(module):
            continue
        if _offloaded(node, module):
            continue
        yield CheckHit(
            line=node.lineno,
            title=f"Blocking {found[0]}() inside async {module.where(node).removeprefix('in ')}",
            why="The call blocks the event loop thread, so every other request and task on the "
            "loop waits until it returns.",
            fix=f"{found[1][0].upper()}{found[1][1:]}, or move it off the loop with await asyncio.to_thread(...).",
        )


# --------------------------------------------------------------------------
# py-wait-without-timeout

_WAITS: dict[str, tuple[re.Pattern[str], str]] = {
    "join": (re.compile(r"thread|worker|proc"), "the thread/process never finishes"),
    "get": (re.compile(r"queue|(?:^|_)q$"), "nothing is ever put on the queue"),
    "result": (re.compile(r"fut"), "the task never completes"),
    "wait": (re.compile(r"event|evt|proc|popen"), "the event is never set or the process hangs"),
    "acquire": (re.compile(r"lock"), "the holder never releases the lock"),
    "communicate": (re.compile(r"proc|popen"), "the child process never exits"),
}


def _http_without_timeout(node: ast.Call) -> str | None:
    name = call_name(node)
    timeout = keyword(node, "timeout")
    if name in {"urlopen", "urllib.request.urlopen"}:
        return f"{name}() without a timeout" if timeout is None and len(node.args) < 3 else None
    lib, _, verb = name.partition(".")
    if lib not in {"requests", "httpx"} or verb not in _HTTP_VERBS:
        return None
    if any(k.arg is None for k in node.keywords):
        return None
    if isinstance(timeout, ast.Constant) and timeout.value is None:
        return f"{name}(timeout=None) disables the timeout"
    # httpx applies a 5 s default; only an explicit timeout=None disables it
    return f"{name}() without a timeout" if lib == "requests" and timeout is None else None


def _as_completed(node: ast.AST, module: PyModule) -> bool:
    return any(
        isinstance(p, ast.For | ast.AsyncFor) and "as_completed" in call_name(p.iter) for p in module.ancestors(node)
    )


def _wait_without_timeout(node: ast.Call, module: PyModule) -> tuple[str, str] | None:
    if not isinstance(node.func, ast.Attribute) or node.func.attr not in _WAITS:
        return None
    method = node.func.attr
    pattern, hang = _WAITS[method]
    if method == "communicate":
        if keyword(node, "timeout") is not None or len(node.args) > 1:
            return None
    elif node.args or node.keywords:
        return None
    if not any(pattern.search(p) for p in _receiver_parts(node.func.value)[-1:]):
        return None
    if isinstance(module.parents.get(node), ast.Await):
        return None
    if method == "get" and module.in_loop(node) is not None:
        return None  # a consumer loop waiting for work is the point of the queue
    in_async = isinstance(module.enclosing_function(node), ast.AsyncFunctionDef)
    if method == "result" and (in_async or _as_completed(node, module)):
        return None
    return f"{call_name(node)}()", hang


@python_check(
    "py-wait-without-timeout",
    tag="performance",
    severity="P2",
    summary="HTTP call, join, queue get, future result, event wait or lock acquire with no timeout",
    match=[
        _src(
            "import requests",
            "def fetch_prices(symbol):",
            "    return requests.get(f'https://api.example.com/{symbol}').json()",
        ),
        _src(
            "def shutdown(worker_thread):",
            "    worker_thread.join()",
        ),
        _src(
            "def answer(pool, job):",
            "    future = pool.submit(job)",
            "    return future.result()",
        ),
        _src(
            "def wait_ready(ready_event, reply_queue):",
            "    ready_event.wait()",
            "    return reply_queue.get()",
        ),
    ],
    no_match=[
        _src(
            "import requests",
            "def fetch_prices(symbol):",
            "    return requests.get(f'https://api.example.com/{symbol}', timeout=10).json()",
        ),
        _src(
            "def shutdown(worker_thread):",
            "    worker_thread.join(timeout=30)",
        ),
        _src(
            "import httpx",
            "def fetch_prices(symbol):",
            "    return httpx.get(f'https://api.example.com/{symbol}').json()",
        ),
        _src(
            "def consume(queue, handle):",
            "    while True:",
            "        handle(queue.get())",
            "def answer(future):",
            "    return future.result(timeout=5)",
        ),
    ],
)
def wait_without_timeout(module: PyModule) -> Iterator[CheckHit]:
    if module.is_test_module():
        return
    for node in module.nodes:
        if not isinstance(node, ast.Call):
            continue
        http = _http_without_timeout(node)
        if http is not None:
            yield CheckHit(
                line=node.lineno,
                title=f"{http} {module.where(node)}",
                why="If the server accepts the connection but never answers, the call blocks "
                "forever and holds the worker that made it.",
                fix="Pass timeout=(connect, read) seconds, e.g. timeout=(3, 10), and handle the timeout exception.",
            )
            continue
        found = _wait_without_timeout(node, module)
        if found is not None:
            yield CheckHit(
                line=node.lineno,
                title=f"{found[0]} without a timeout {module.where(node)}",
                why=f"It blocks forever if {found[1]}, and the caller hangs with no error to show why.",
                fix="Pass a timeout (e.g. timeout=30) and handle the expiry: log, retry or fail loudly.",
            )
