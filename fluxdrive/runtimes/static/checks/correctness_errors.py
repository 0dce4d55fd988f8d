"""fd-correctness checks on failure paths: swallowed exceptions and resources never closed.

Each check reasons inside one function and stays quiet when the code shows
the case is handled: a logged or explained exception, a with block, a close
or a hand-over of the resource.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from fluxdrive.runtimes.static.checks._common import (
    Function,
    caught_names,
    example,
    mentions_name,
    name_tail,
    own_nodes,
    qualified_name,
    snippet,
    walk_function,
)
from fluxdrive.runtimes.static.checks.engine.pymodule import PyModule
from fluxdrive.runtimes.static.checks.engine.registry import CheckHit, CheckSeverity, python_check
from fluxdrive.runtimes.static.checks.engine.syntax import call_name

# --------------------------------------------------------------------------
# Swallowed exceptions


BROAD = {"Exception", "BaseException"}
OPTIONAL_IMPORT = {"ImportError", "ModuleNotFoundError"}
EXPECTED_EXCEPTIONS = {
    "FileNotFoundError",
    "FileExistsError",
    "ProcessLookupError",
    "ChildProcessError",
    "StopIteration",
    "StopAsyncIteration",
    "CancelledError",
    "KeyboardInterrupt",
    "GeneratorExit",
    "Empty",
    "Full",
    "KeyError",
    "BrokenPipeError",
    "TimeoutError",
    "timeout",
    "NoSuchProcess",
}
FINALIZERS = {"__del__", "__exit__", "__aexit__"}
CLEANUP_FUNCTIONS = {
    "close",
    "cleanup",
    "shutdown",
    "teardown",
    "stop",
    "dispose",
    "release",
    "terminate",
    "tearDown",
}
WRITE_CALLS = {
    "write",
    "writelines",
    "save",
    "send",
    "sendall",
    "commit",
    "execute",
    "executemany",
    "put",
    "post",
    "patch",
    "delete",
    "update",
    "insert",
    "insert_one",
    "push",
    "publish",
    "flush",
    "dump",
    "upload",
    "rename",
    "replace",
    "copy",
    "move",
    "send_message",
    "add",
    "create",
}
CLEANUP_CALLS = {
    "close",
    "unlink",
    "remove",
    "rmtree",
    "kill",
    "terminate",
    "shutdown",
    "cancel",
    "release",
    "disconnect",
    "rollback",
    "quit",
    "stop",
    "join",
}


def _silent(body: list[ast.stmt]) -> str | None:
    """``pass`` / ``continue`` / ``return None`` / ``...`` when that is the whole handler."""
    kinds: list[str] = []
    for stmt in body:
        if isinstance(stmt, ast.Pass | ast.Continue):
            kinds.append("pass" if isinstance(stmt, ast.Pass) else "continue")
        elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
            kinds.append("...")
        elif isinstance(stmt, ast.Return) and (
            stmt.value is None or (isinstance(stmt.value, ast.Constant) and stmt.value.value is None)
        ):
            kinds.append("return None" if stmt.value is not None else "return")
        else:
            return None
    return next((k for k in kinds if k != "..."), "...") if kinds else None


def _best_effort(module: PyModule, handler: ast.ExceptHandler, attempt: list[ast.stmt]) -> bool:
    """Cleanup code, where ignoring a failure is usually deliberate."""
    function = module.enclosing_function(handler)
    if function is not None and function.name in CLEANUP_FUNCTIONS:
        return True
    calls = [n for n in attempt if isinstance(n, ast.Expr) and isinstance(n.value, ast.Call)]
    return len(attempt) == 1 and bool(calls) and name_tail(call_name(calls[0].value)) in CLEANUP_CALLS


def _writes_something(body: list[ast.stmt]) -> bool:
    """The try block saves, sends or changes something whose failure would lose data."""
    calls = (n for s in body for n in ast.walk(s) if isinstance(n, ast.Call))
    return any(name_tail(call_name(c)) in WRITE_CALLS for c in calls)


def _attempted(body: list[ast.stmt]) -> str:
    call = next((n for s in body for n in ast.walk(s) if isinstance(n, ast.Call)), None)
    return f"{snippet(call.func)}()" if call is not None else "the try block"


def _explained(module: PyModule, handler: ast.ExceptHandler) -> bool:
    """A comment on the except clause or in its body says why the error is ignored."""
    last = getattr(handler, "end_lineno", None) or handler.lineno
    for line in module.lines[handler.lineno - 1 : last]:
        code, _, comment = line.partition("#")
        comment = comment.strip().lower()
        tool = comment.startswith(("pragma", "noqa", "type:", "nosec", "pylint", "fmt:"))
        if comment and "'" not in code and '"' not in code and not tool and len(comment.split()) >= 2:
            return True
    return False


def _swallow_severity(
    module: PyModule, handler: ast.ExceptHandler, try_body: list[ast.stmt], action: str
) -> CheckSeverity | None:
    """P2 for a broad clause (P3 when the work is best effort), P2 for a narrow type that drops a write,
    None for expected cases. A swallowed error hides a failure; it is not by itself exploitable or data-losing."""
    caught = caught_names(handler)
    imports_only = all(isinstance(s, ast.Import | ast.ImportFrom) for s in try_body)
    function = module.enclosing_function(handler)
    finalizer = function is not None and function.name in FINALIZERS  # must not raise anyway
    if caught & OPTIONAL_IMPORT or imports_only or finalizer or _explained(module, handler):
        return None
    if caught & BROAD:
        return "P3" if _best_effort(module, handler, try_body) else "P2"
    if action != "pass" or caught <= EXPECTED_EXCEPTIONS or _best_effort(module, handler, try_body):
        return None
    return "P2" if _writes_something(try_body) else None  # probing/parsing fallbacks are fine


@python_check(
    "py-swallowed-exception",
    tag="correctness",
    severity="P2",
    summary="except: / except Exception: whose body only passes, continues or returns None",
    match=[
        example("""
            def sync_orders(client, orders):
                for order in orders:
                    try:
                        client.push(order)
                    except Exception:
                        pass
        """),
        example("""
            def load_profile(path):
                try:
                    return parse_profile(path)
                except:
                    return None
        """),
        example("""
            def save_draft(store, draft):
                try:
                    store.put(draft.id, draft.to_json())
                except ConnectionError:
                    pass
        """),
    ],
    no_match=[
        example("""
            try:
                import ujson as json
            except ImportError:
                pass
        """),
        example("""
            import logging

            def sync_orders(client, orders):
                for order in orders:
                    try:
                        client.push(order)
                    except Exception:
                        logging.exception("push failed for %s", order.id)
        """),
        example("""
            import os

            def remove_stale(path):
                try:
                    os.remove(path)
                except FileNotFoundError:
                    pass
        """),
        example("""
            def port(value):
                try:
                    return int(value)
                except ValueError:
                    pass
                return 8080
        """),
    ],
    nodes=(ast.Try, ast.TryStar),
)
def swallowed_exception(module: PyModule, node: ast.Try | ast.TryStar) -> Iterator[CheckHit]:
    for handler in node.handlers:
        action = _silent(handler.body)
        severity = _swallow_severity(module, handler, node.body, action) if action else None
        if severity is None:
            continue
        caught = snippet(handler.type) if handler.type is not None else ""
        clause = f"except{' ' + caught if caught else ''}: {action}"
        yield CheckHit(
            handler.lineno,
            f"`{clause}` silently drops errors from {_attempted(node.body)} {module.where(handler)}",
            "Every failure here disappears without a trace (for a broad clause that includes "
            "bugs such as TypeError), so the code carries on with missing data and nobody "
            "learns why.",
            "Catch only the exceptions you expect and log the rest (logger.exception) or "
            "re-raise; if ignoring is intended, use contextlib.suppress(TheError) with a "
            "comment.",
            severity=severity,
        )


# --------------------------------------------------------------------------
# Resource leaks


OPENERS = {
    "open": "file",
    "io.open": "file",
    "codecs.open": "file",
    "socket.socket": "socket",
    "socket.create_connection": "socket",
    "sqlite3.connect": "connection",
    "psycopg2.connect": "connection",
    "pymysql.connect": "connection",
    "mysql.connector.connect": "connection",
    "urllib.request.urlopen": "response",
    "urlopen": "response",
    "tempfile.NamedTemporaryFile": "temporary file",
    "tempfile.TemporaryFile": "temporary file",
    "subprocess.Popen": "process",
    "Popen": "process",
}
RELEASES = {"close", "communicate", "wait", "__exit__", "detach", "release", "kill", "terminate"}
HANDOVERS = {
    "enter_context",
    "closing",
    "callback",
    "push",
    "append",
    "add",
    "put",
    "register",
    "setdefault",
    "extend",
}
CHAINED_OPENERS = {"open", "io.open", "urllib.request.urlopen", "urlopen"}


def _owner_call(call: ast.Call) -> bool:
    """closing(fh), stack.enter_context(fh), TextIOWrapper(fh): something that takes ownership."""
    tail = name_tail(call_name(call))
    return tail in HANDOVERS or tail.lstrip("_")[:1].isupper()


def _handed_over(module: PyModule, ref: ast.Name, with_closes: bool = True) -> bool:
    """The reference releases the resource or gives it to something that owns it."""
    node: ast.AST = ref
    parent = module.parents.get(node)
    while isinstance(parent, ast.Tuple | ast.List | ast.Set | ast.Dict | ast.Starred | ast.keyword):
        node, parent = parent, module.parents.get(parent)
    if isinstance(parent, ast.Attribute):  # fh.close(), atexit.register(fh.close), set(fh.write)
        kept = isinstance(module.parents.get(parent), ast.Call | ast.keyword)
        kept = kept and getattr(module.parents.get(parent), "func", None) is not parent
        return node is ref and (parent.attr in RELEASES or kept)
    if isinstance(parent, ast.Call) and parent.func is not node:
        return _owner_call(parent)
    if isinstance(parent, ast.withitem):
        return with_closes
    owners = (ast.Return, ast.Yield, ast.YieldFrom, ast.Assign, ast.AnnAssign)
    return isinstance(parent, owners)  # return fh / self.fh = fh / alias = fh


def _leaked(module: PyModule, function: Function, name: str, with_closes: bool) -> bool:
    refs = [n for n in own_nodes(function) if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)]
    nested = any(
        isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) and mentions_name(n, name)
        for n in walk_function(function)
        if n is not function
    )
    return not nested and not any(_handed_over(module, r, with_closes) for r in refs)


def _chained_open(module: PyModule, call: ast.Call, qualified: str) -> bool:
    """``open(p).read()``, ``json.load(open(p))``, ``for line in open(p)``."""
    if qualified not in CHAINED_OPENERS:
        return False
    parent = module.parents.get(call)
    if isinstance(parent, ast.Attribute):
        return parent.attr not in RELEASES | {"__enter__"}
    if isinstance(parent, ast.For | ast.comprehension):
        return parent.iter is call
    if isinstance(parent, ast.Call) and call in parent.args:
        return not _owner_call(parent)
    return False


TRANSACTION_CONTEXTS = {"sqlite3.connect", "psycopg2.connect"}  # `with conn:` commits, never closes


def _assigned_leak(module: PyModule, function: Function, node: ast.Call, qualified: str) -> CheckHit | None:
    """``fh = open(...)`` with no close/with/return/hand-over of ``fh`` in the function."""
    kind = OPENERS.get(qualified)
    parent = module.parents.get(node)
    target = parent.targets[0] if isinstance(parent, ast.Assign) and len(parent.targets) == 1 else None
    if not kind or not isinstance(target, ast.Name):
        return None
    transaction = qualified in TRANSACTION_CONTEXTS
    if not _leaked(module, function, target.id, with_closes=not transaction):
        return None
    note = " (`with conn:` on this connection only commits or rolls back; it does not close it)"
    return CheckHit(
        node.lineno,
        f"{kind.capitalize()} from {call_name(node)}() in `{target.id}` is never "
        f"{'waited for' if kind == 'process' else 'closed'} {module.where(node)}",
        f"Nothing closes `{target.id}` on any path{note if transaction else ''}, so each call leaks a "
        "file descriptor (and buffered writes may never reach disk); under load the process hits "
        "'Too many open files'.",
        f"Use `with {call_name(node)}(...) as {target.id}:` (contextlib.closing for objects whose "
        "context manager does not close), or close it in a finally block.",
        # a leaked connection or process exhausts a pool or the process table under load; a file
        # handle is closed when the function's frame goes (CPython) and costs one descriptor meanwhile
        severity="P2" if kind == "file" else None,
    )


def _leak_hits(module: PyModule, function: Function, imports: dict[str, str]) -> Iterator[CheckHit]:
    for node in own_nodes(function):
        if not isinstance(node, ast.Call):
            continue
        qualified = qualified_name(node, imports)
        hit = _assigned_leak(module, function, node, qualified)
        if hit:
            yield hit
        elif _chained_open(module, node, qualified):
            yield CheckHit(
                node.lineno,
                f"{call_name(node)}() result is never closed: `{module.line_text(node.lineno)}` {module.where(node)}",
                "The handle is only closed when the garbage collector gets to it: prompt on "
                "CPython, late on PyPy and under reference cycles, with a ResourceWarning.",
                "Read inside `with open(path) as fh:` or use Path(path).read_text().",
                severity="P2",
            )


@python_check(
    "py-resource-leak",
    tag="correctness",
    severity="P1",
    summary="A file/socket/connection/process is opened into a local and never closed or handed on",
    tests=False,
    match=[
        example("""
            def append_line(path, line):
                fh = open(path, "a")
                fh.write(line + "\\n")
        """),
        example("""
            import sqlite3

            def count_users(db_path):
                conn = sqlite3.connect(db_path)
                return conn.execute("SELECT count(*) FROM users").fetchone()[0]
        """),
        example("""
            import socket

            def send_ping(host):
                sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                sock.connect((host, 7))
                sock.sendall(b"ping")
        """),
        example("""
            def read_version(path):
                return open(path).read().strip()
        """),
    ],
    no_match=[
        example("""
            def append_line(path, line):
                with open(path, "a") as fh:
                    fh.write(line + "\\n")
        """),
        example("""
            import sqlite3

            def count_users(db_path):
                conn = sqlite3.connect(db_path)
                try:
                    return conn.execute("SELECT count(*) FROM users").fetchone()[0]
                finally:
                    conn.close()
        """),
        example("""
            import socket

            class Client:
                def connect(self, host):
                    sock = socket.create_connection((host, 7))
                    self.sock = sock
        """),
        example("""
            def open_log(path):
                fh = open(path, "a")
                return fh
        """),
    ],
)
def resource_leak(module: PyModule) -> Iterator[CheckHit]:
    imports = module.imports
    for function in module.function_defs:
        yield from _leak_hits(module, function, imports)
