"""fd-performance checks: unbounded reads, blocking calls in async code, waits that can hang.

The checks look at one function at a time and name the call and the function
involved. Receivers are judged by their names (``cursor``, ``session``,
``worker_thread``), so a check stays quiet when it cannot tell what an object
is.
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
    route_decorators,
    snippet_plain,
    walk_function,
)
from fluxdrive.runtimes.static.checks.engine.pymodule import PyModule
from fluxdrive.runtimes.static.checks.engine.registry import CheckHit, python_check
from fluxdrive.runtimes.static.checks.engine.syntax import assignments, call_name, keyword, resolve, string_parts

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
    for node in module.of_type(ast.Call):
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
    return {
        n.func.attr for n in walk_function(function) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
    }


def _is_route(function: Function) -> bool:
    return any(route_decorators(function, {"get", "route", "api_route"}))


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
    for ret in (n for n in body_nodes(function) if isinstance(n, ast.Return)):
        if ret.value is None:
            continue
        exprs: list[ast.AST] = [ret.value]
        names = [n.id for n in ast.walk(ret.value) if isinstance(n, ast.Name)]
        exprs += [local[name] for name in names if name in local]
        for expr in exprs:
            yield from (n for n in ast.walk(expr) if isinstance(n, ast.Call))


def _route_hits(module: PyModule) -> Iterator[tuple[ast.Call, str]]:
    for function in module.function_defs:
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
            yield node, f"{snippet_plain(node, 50)} returned by route {function.name}()"


@python_check(
    "py-unbounded-query",
    tag="performance",
    severity="P2",
    summary="A SELECT without LIMIT or key lookup, or a list endpoint returning unpaginated .all()",
    tests=False,
    match=[
        example_lines(
            "def all_events(cursor):",
            "    cursor.execute('SELECT id, kind, payload FROM events ORDER BY created_at')",
            "    return cursor.fetchall()",
        ),
        example_lines(
            "@app.get('/items')",
            "def list_items(db):",
            "    return db.query(Item).all()",
        ),
        example_lines(
            "@bp.route('/users')",
            "def users():",
            "    rows = User.query.order_by(User.name).all()",
            "    return jsonify([u.to_dict() for u in rows])",
        ),
    ],
    no_match=[
        example_lines(
            "def page(cursor, after):",
            "    q = 'SELECT id FROM events WHERE id > %s ORDER BY id LIMIT 100'",
            "    cursor.execute(q, (after,))",
            "    return cursor.fetchall()",
        ),
        example_lines(
            "def get_user(cursor, user_id):",
            "    cursor.execute('SELECT * FROM users WHERE id = %s', (user_id,))",
            "    return cursor.fetchall()",
        ),
        example_lines(
            "@app.get('/items')",
            "def list_items(db, offset: int = 0, limit: int = 50):",
            "    return db.query(Item).offset(offset).limit(limit).all()",
        ),
        example_lines(
            "def count(cursor):",
            "    cursor.execute('SELECT count(*) FROM users')",
            "    return cursor.fetchall()",
        ),
    ],
)
def unbounded_query(module: PyModule) -> Iterator[CheckHit]:
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
    if len(parts) == 2 and parts[0] == "requests" and parts[1] in HTTP_VERBS:
        return name, "use an async HTTP client (httpx.AsyncClient, aiohttp)"
    func = node.func
    if not isinstance(func, ast.Attribute):
        return None
    if func.attr in {"read", "readlines", "write"} and call_name(func.value) == "open":
        return f"open().{func.attr}", "use aiofiles or await asyncio.to_thread(...)"
    if func.attr in _SOCKET_METHODS and any("sock" in p for p in receiver_parts(func.value)):
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
    severity="P2",
    summary="A blocking call (sleep, requests, subprocess, file/socket I/O) inside async def",
    match=[
        example_lines(
            "import time",
            "async def poll(client):",
            "    while not await client.ready():",
            "        time.sleep(1)",
        ),
        example_lines(
            "import requests",
            "async def fetch_profile(user_id):",
            "    return requests.get(f'https://api.example.com/u/{user_id}', timeout=5).json()",
        ),
        example_lines(
            "import subprocess",
            "async def build(path):",
            "    subprocess.run(['make', '-C', path], check=True)",
        ),
        example_lines(
            "async def load(path):",
            "    return open(path).read()",
        ),
    ],
    no_match=[
        example_lines(
            "import asyncio",
            "async def poll(client):",
            "    while not await client.ready():",
            "        await asyncio.sleep(1)",
        ),
        example_lines(
            "import asyncio, requests",
            "async def fetch_profile(url):",
            "    return await asyncio.to_thread(requests.get, url, timeout=5)",
        ),
        example_lines(
            "import time",
            "def poll(client):",
            "    while not client.ready():",
            "        time.sleep(1)",
        ),
        example_lines(
            "import asyncio, subprocess",
            "async def build(loop, path):",
            "    await loop.run_in_executor(None, lambda: subprocess.run(['make', path]))",
        ),
    ],
    nodes=(ast.Call,),
)
def blocking_in_async(module: PyModule, node: ast.Call) -> Iterator[CheckHit]:
    found = _blocking(node)
    if found is None or not isinstance(module.enclosing_function(node), ast.AsyncFunctionDef):
        return
    if found[1].startswith("use asyncio streams") and _nonblocking_sockets(module):
        return
    if _offloaded(node, module):
        return
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
    if lib not in {"requests", "httpx"} or verb not in HTTP_VERBS:
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
    if not any(pattern.search(p) for p in receiver_parts(node.func.value)[-1:]):
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
    tests=False,
    match=[
        example_lines(
            "import requests",
            "def fetch_prices(symbol):",
            "    return requests.get(f'https://api.example.com/{symbol}').json()",
        ),
        example_lines(
            "def shutdown(worker_thread):",
            "    worker_thread.join()",
        ),
        example_lines(
            "def answer(pool, job):",
            "    future = pool.submit(job)",
            "    return future.result()",
        ),
        example_lines(
            "def wait_ready(ready_event, reply_queue):",
            "    ready_event.wait()",
            "    return reply_queue.get()",
        ),
    ],
    no_match=[
        example_lines(
            "import requests",
            "def fetch_prices(symbol):",
            "    return requests.get(f'https://api.example.com/{symbol}', timeout=10).json()",
        ),
        example_lines(
            "def shutdown(worker_thread):",
            "    worker_thread.join(timeout=30)",
        ),
        example_lines(
            "import httpx",
            "def fetch_prices(symbol):",
            "    return httpx.get(f'https://api.example.com/{symbol}').json()",
        ),
        example_lines(
            "def consume(queue, handle):",
            "    while True:",
            "        handle(queue.get())",
            "def answer(future):",
            "    return future.result(timeout=5)",
        ),
    ],
    nodes=(ast.Call,),
)
def wait_without_timeout(module: PyModule, node: ast.Call) -> Iterator[CheckHit]:
    http = _http_without_timeout(node)
    if http is not None:
        yield CheckHit(
            line=node.lineno,
            title=f"{http} {module.where(node)}",
            why="If the server accepts the connection but never answers, the call blocks "
            "forever and holds the worker that made it.",
            fix="Pass timeout=(connect, read) seconds, e.g. timeout=(3, 10), and handle the timeout exception.",
        )
        return
    found = _wait_without_timeout(node, module)
    if found is not None:
        yield CheckHit(
            line=node.lineno,
            title=f"{found[0]} without a timeout {module.where(node)}",
            why=f"It blocks forever if {found[1]}, and the caller hangs with no error to show why.",
            fix="Pass a timeout (e.g. timeout=30) and handle the expiry: log, retry or fail loudly.",
        )
