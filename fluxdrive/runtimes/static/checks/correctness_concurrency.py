"""fd-correctness checks on concurrency: unlocked shared state on threads, unawaited coroutines.

Each check reasons inside one function plus the module's own definitions for
thread targets and coroutines, and stays quiet when the code shows the case
is handled: a lock, an await, a task.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from typing import TypeAlias

from fluxdrive.runtimes.static.checks._common import (
    HTTP_VERBS,
    Function,
    dereference,
    example,
    first_use,
    function_defs,
    name_tail,
    own_nodes,
    snippet,
    walk_function,
    where_def,
)
from fluxdrive.runtimes.static.checks.engine.pymodule import PyModule
from fluxdrive.runtimes.static.checks.engine.registry import CheckHit, python_check
from fluxdrive.runtimes.static.checks.engine.syntax import call_name, keyword

# --------------------------------------------------------------------------
# Races on shared state


LOCK_WORDS = re.compile(r"lock|mutex|semaphore|\bsem\b|cond", re.IGNORECASE)
PROCESS_POOLS = {"ProcessPoolExecutor", "Pool", "Process"}
MUTABLE_FACTORIES = {"dict", "list", "set", "defaultdict", "Counter", "OrderedDict", "deque"}
MUTATING_METHODS = {"append", "extend", "update", "add", "setdefault", "pop", "remove", "insert"}


def _target_function(module: PyModule, ref: ast.expr, call: ast.Call) -> Function | None:
    """The def a ``target=`` / ``submit(f)`` reference names, if it is in this module."""
    if isinstance(ref, ast.Name):
        return _def_named(module.tree.body, ref.id)
    if isinstance(ref, ast.Attribute) and _is_self(ref.value):
        owner = next((p for p in module.ancestors(call) if isinstance(p, ast.ClassDef)), None)
        return _def_named(owner.body, ref.attr) if owner else None
    return None


def _def_named(body: list[ast.stmt], name: str) -> ast.FunctionDef | None:
    return next((f for f in body if isinstance(f, ast.FunctionDef) and f.name == name), None)


def _is_self(node: ast.AST) -> bool:
    return isinstance(node, ast.Name) and node.id == "self"


def _pool_kind(module: PyModule, receiver: ast.expr, call: ast.Call) -> str:
    """Constructor name of the executor a ``submit``/``map`` receiver was bound to."""
    scope: ast.AST = module.enclosing_function(call) or module.tree
    name = snippet(receiver)
    for node in ast.walk(scope):
        for item in node.items if isinstance(node, ast.With) else []:
            if item.optional_vars is not None and snippet(item.optional_vars) == name:
                return name_tail(call_name(item.context_expr))
        if isinstance(node, ast.Assign) and any(snippet(t) == name for t in node.targets):
            return name_tail(call_name(node.value)) if isinstance(node.value, ast.Call) else ""
    return ""


def _thread_start(module: PyModule, call: ast.Call) -> tuple[ast.expr, bool] | None:
    """(target reference, runs on several threads) for a call that starts threaded work."""
    tail = name_tail(call_name(call))
    func = call.func
    if tail == "Thread":
        ref = keyword(call, "target")
    elif tail == "Timer":
        ref = keyword(call, "function") or (call.args[1] if len(call.args) > 1 else None)
    elif tail in {"submit", "map"} and isinstance(func, ast.Attribute) and call.args:
        if _pool_kind(module, func.value, call) in PROCESS_POOLS:
            return None
        ref = call.args[0]
    elif tail == "run_in_executor" and len(call.args) > 1:
        ref = call.args[1]
    elif call_name(call) == "asyncio.to_thread" and call.args:
        ref = call.args[0]
    else:
        return None
    return (ref, tail == "map" or module.in_loop(call) is not None) if ref is not None else None


def _thread_targets(module: PyModule) -> dict[int, tuple[Function, str, bool]]:
    """id(def) -> (def, how it is started, whether several threads run it)."""
    found: dict[int, tuple[Function, str, bool]] = {}
    for call in module.of_type(ast.Call):
        if not isinstance(call, ast.Call):
            continue
        start = _thread_start(module, call)
        target = _target_function(module, start[0], call) if start else None
        if target is None or start is None:
            continue
        how = snippet(call, 70)
        seen = found.get(id(target))
        found[id(target)] = (target, how, start[1] or seen is not None)
    return found


def _module_mutables(module: PyModule) -> set[str]:
    """Module-level names bound to a dict/list/set (literal or factory call)."""
    names: set[str] = set()
    for stmt in module.tree.body:
        if isinstance(stmt, ast.Assign):
            targets, value = stmt.targets, stmt.value
        elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
            targets, value = [stmt.target], stmt.value
        else:
            continue
        literal = isinstance(value, ast.Dict | ast.List | ast.Set | ast.DictComp | ast.ListComp)
        factory = isinstance(value, ast.Call) and name_tail(call_name(value)) in MUTABLE_FACTORIES
        if literal or factory:
            names |= {t.id for t in targets if isinstance(t, ast.Name)}
    return names


def _shared_root(node: ast.expr, shared: set[str]) -> str | None:
    """``counts`` for ``counts[k]``; ``self.total`` for ``self.total`` / ``self.totals[k]``."""
    while isinstance(node, ast.Subscript):
        node = node.value
    if isinstance(node, ast.Name) and node.id in shared:
        return node.id
    if isinstance(node, ast.Attribute) and _is_self(node.value):
        return f"self.{node.attr}"
    return None


def _shared_names(module: PyModule, function: Function) -> set[str]:
    """Globals the function declares, plus module-level containers it does not rebind."""
    nodes = list(own_nodes(function))
    declared = {n for g in nodes if isinstance(g, ast.Global) for n in g.names}
    assigned = [t for a in nodes if isinstance(a, ast.Assign) for t in a.targets]
    local = {t.id for t in assigned if isinstance(t, ast.Name)}
    return declared | (_module_mutables(module) - local)


def _writes(node: ast.AST, shared: set[str]) -> str | None:
    """The shared root a statement or call writes to, if any."""
    if isinstance(node, ast.AugAssign | ast.Assign | ast.AnnAssign):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        subscripted = any(isinstance(t, ast.Subscript | ast.Attribute) for t in targets)
        roots = [_shared_root(t, shared) for t in targets]
        writes = isinstance(node, ast.AugAssign) or subscripted
        return next((r for r in roots if r), None) if writes else None
    func = node.func if isinstance(node, ast.Call) else None
    if isinstance(func, ast.Attribute) and func.attr in MUTATING_METHODS:
        return _shared_root(func.value, shared)
    return None


def _check_then_act(node: ast.If, shared: set[str]) -> str | None:
    """``if k not in cache: cache[k] = ...`` on a shared container."""
    test_roots: set[str] = set()
    for sub in ast.walk(node.test):
        if isinstance(sub, ast.Compare) and isinstance(sub.ops[0], ast.In | ast.NotIn):
            test_roots.add(_shared_root(sub.comparators[0], shared) or "")
        func = sub.func if isinstance(sub, ast.Call) else None
        if isinstance(func, ast.Attribute) and func.attr == "get":
            test_roots.add(_shared_root(func.value, shared) or "")
    written = {_writes(n, shared) for stmt in node.body for n in ast.walk(stmt)}
    return next((r for r in test_roots & written if r), None)


def _locked(module: PyModule, node: ast.AST) -> bool:
    for parent in module.ancestors(node):
        if isinstance(parent, ast.FunctionDef | ast.AsyncFunctionDef):
            return False
        items = parent.items if isinstance(parent, ast.With | ast.AsyncWith) else []
        if any(LOCK_WORDS.search(snippet(i.context_expr, 200)) for i in items):
            return True
    return False


def _racy_updates(module: PyModule, function: Function) -> Iterator[tuple[ast.AST, str, str]]:
    """(node, shared root, "update" | "check") for unlocked read-modify-writes in a function."""
    shared = _shared_names(module, function)
    calls = {name_tail(call_name(n)) for n in own_nodes(function) if isinstance(n, ast.Call)}
    if "acquire" in calls:
        return  # manual locking: too hard to follow, stay quiet
    for node in own_nodes(function):
        if _locked(module, node):
            continue
        if isinstance(node, ast.If):
            root = _check_then_act(node, shared)
            if root:
                yield node, root, "check"
            continue
        root = _writes(node, shared) if isinstance(node, ast.AugAssign | ast.Assign) else None
        reads = isinstance(node, ast.AugAssign) or (
            isinstance(node, ast.Assign) and root is not None and root in snippet(node.value, 500)
        )
        if root and reads:
            yield node, root, "update"


def _written_elsewhere(module: PyModule, function: Function, root: str) -> bool:
    """Another function (not __init__) of the module (of the class, for self.x) writes ``root``."""
    scope: ast.AST = module.tree
    if root.startswith("self."):
        owner = next((p for p in module.ancestors(function) if isinstance(p, ast.ClassDef)), None)
        scope = owner or function
    for other in function_defs(ast.walk(scope)):
        if other is function or other.name == "__init__":
            continue
        shared = {root} if "." not in root else set()
        if any(_writes(n, shared) == root for n in own_nodes(other)):
            return True
    return False


@python_check(
    "py-shared-state-race",
    tag="correctness",
    severity="P1",
    summary="Shared state read-modified-written without a lock in a function run on threads",
    match=[
        example("""
            import threading

            processed = 0

            def worker(items):
                global processed
                for item in items:
                    handle(item)
                    processed += 1

            threads = [threading.Thread(target=worker, args=(chunk,)) for chunk in chunks]
        """),
        example("""
            from concurrent.futures import ThreadPoolExecutor

            _cache = {}

            def load(key):
                if key not in _cache:
                    _cache[key] = fetch_remote(key)
                return _cache[key]

            with ThreadPoolExecutor(8) as pool:
                results = list(pool.map(load, keys))
        """),
        example("""
            import threading

            class Stats:
                def start(self):
                    for _ in range(4):
                        threading.Thread(target=self.count).start()

                def count(self):
                    self.total += 1
        """),
    ],
    no_match=[
        example("""
            import threading

            processed = 0
            lock = threading.Lock()

            def worker(items):
                global processed
                for item in items:
                    handle(item)
                    with lock:
                        processed += 1

            threads = [threading.Thread(target=worker, args=(chunk,)) for chunk in chunks]
        """),
        example("""
            from concurrent.futures import ProcessPoolExecutor

            totals = {}

            def tally(key):
                totals[key] = totals.get(key, 0) + 1

            with ProcessPoolExecutor() as pool:
                pool.map(tally, keys)
        """),
        example("""
            counts = {}

            def tally(key):
                counts[key] = counts.get(key, 0) + 1

            for key in keys:
                tally(key)
        """),
    ],
)
def shared_state_race(module: PyModule) -> Iterator[CheckHit]:
    for function, how, several in _thread_targets(module).values():
        reported: set[str] = set()
        for node, root, kind in _racy_updates(module, function):
            if root in reported or not (several or _written_elsewhere(module, function, root)):
                continue
            reported.add(root)
            line = getattr(node, "lineno", function.lineno)
            statement = module.line_text(line)
            check = kind == "check"
            yield CheckHit(
                line,
                f"Shared `{root}` is {'checked then set' if check else 'updated'} without a lock "
                f"{where_def(module, function)}, which runs on threads via {how}",
                f"Two threads can both pass `{statement}` before either stores, so both compute "
                f"and write `{root}`: the work runs twice and one result replaces the other."
                if check
                else f"`{statement}` reads `{root}`, computes and writes back in separate steps; "
                "two threads can both read the same old value (say 5) and both store 6, losing "
                "one update.",
                "Hold one threading.Lock around the read and the write (`with self._lock:`), or "
                "hand results back through futures / a queue.Queue instead of sharing the object.",
            )


# --------------------------------------------------------------------------
# Missing await


ASYNCIO_COROUTINES = {
    "asyncio.sleep",
    "asyncio.wait_for",
    "asyncio.wait",
    "asyncio.open_connection",
    "asyncio.create_subprocess_exec",
    "asyncio.create_subprocess_shell",
}
AIOHTTP_METHODS = (HTTP_VERBS - {"options"}) | {"close", "ws_connect"}  # a ClientSession's coroutine methods


def _coroutine_names(module: PyModule) -> tuple[set[str], dict[int, set[str]]]:
    """Top-level async defs (not also defined sync) and async methods per class."""
    top = {f.name for f in module.tree.body if isinstance(f, ast.AsyncFunctionDef)}
    top -= {f.name for f in module.tree.body if isinstance(f, ast.FunctionDef)}
    methods: dict[int, set[str]] = {}
    for cls in module.of_type(ast.ClassDef):
        if isinstance(cls, ast.ClassDef):
            methods[id(cls)] = {f.name for f in cls.body if isinstance(f, ast.AsyncFunctionDef)}
    return top, methods


def _aiohttp_sessions(function: Function) -> set[str]:
    names: set[str] = set()
    for node in walk_function(function):
        items = node.items if isinstance(node, ast.AsyncWith | ast.With) else []
        for item in items:
            if name_tail(call_name(item.context_expr)) == "ClientSession" and item.optional_vars:
                names.add(snippet(item.optional_vars))
        value = node.value if isinstance(node, ast.Assign) else None
        if isinstance(value, ast.Call) and name_tail(call_name(value)) == "ClientSession":
            names |= {snippet(t) for t in getattr(node, "targets", [])}
    return names


Coroutines: TypeAlias = tuple[set[str], dict[int, set[str]], set[str]]


def _coroutine_call(module: PyModule, call: ast.Call, known: Coroutines) -> bool:
    """The call makes a coroutine: a module async def, an async method, asyncio.sleep..."""
    top, methods, sessions = known
    name = call_name(call)
    func = call.func
    if isinstance(func, ast.Name):
        return func.id in top
    if name in ASYNCIO_COROUTINES:
        return True
    if not isinstance(func, ast.Attribute):
        return False
    if isinstance(func.value, ast.Name) and func.value.id in {"self", "cls"}:
        owner = next((p for p in module.ancestors(call) if isinstance(p, ast.ClassDef)), None)
        return owner is not None and func.attr in methods.get(id(owner), set())
    return func.attr in AIOHTTP_METHODS and snippet(func.value) in sessions


def _unawaited(
    module: PyModule, function: Function, coroutines: tuple[set[str], dict[int, set[str]]]
) -> Iterator[ast.Call]:
    top, methods = coroutines
    nested = own_nodes(function)
    local = {n.name for n in nested if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)}
    params = {a.arg for a in function.args.args}
    known = (top - local - params, methods, _aiohttp_sessions(function))
    for node in own_nodes(function):
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
            if _coroutine_call(module, node.value, known):
                yield node.value
        elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
            target = node.targets[0] if len(node.targets) == 1 else None
            if not isinstance(target, ast.Name):
                continue
            if not _coroutine_call(module, node.value, known):
                continue
            use = first_use(function, target.id, node)
            if use is not None and dereference(module, use) is not None:
                yield node.value


@python_check(
    "py-missing-await",
    tag="correctness",
    severity="P1",
    summary="A coroutine (async def in this module, asyncio.sleep...) is called without await",
    match=[
        example("""
            async def save_order(db, order):
                await db.insert(order)

            async def checkout(db, cart):
                order = build_order(cart)
                save_order(db, order)
                return order
        """),
        example("""
            import asyncio

            async def poll(client):
                while True:
                    await client.refresh()
                    asyncio.sleep(5)
        """),
        example("""
            class Notifier:
                async def send(self, user, text):
                    await self.transport.post(user, text)

                async def notify_all(self, users):
                    for user in users:
                        self.send(user, "hello")
        """),
    ],
    no_match=[
        example("""
            async def save_order(db, order):
                await db.insert(order)

            async def checkout(db, cart):
                order = build_order(cart)
                await save_order(db, order)
                return order
        """),
        example("""
            import asyncio

            async def save_order(db, order):
                await db.insert(order)

            async def checkout(db, orders):
                tasks = [asyncio.create_task(save_order(db, o)) for o in orders]
                await asyncio.gather(*tasks)
        """),
        example("""
            async def fetch(url):
                return url

            def start(loop, url):
                return loop.run_until_complete(fetch(url))
        """),
    ],
)
def missing_await(module: PyModule) -> Iterator[CheckHit]:
    coroutines = _coroutine_names(module)
    known = coroutines[0] or any(coroutines[1].values())
    if not known and "asyncio" not in module.text and "ClientSession" not in module.text:
        return
    for function in module.function_defs:
        for call in _unawaited(module, function, coroutines):
            callee = call_name(call)
            yield CheckHit(
                call.lineno,
                f"{callee}() is a coroutine but is called without await {module.where(call)}",
                f"Calling an async function only creates a coroutine object; without await "
                f"{callee}() never runs (Python warns 'coroutine was never awaited' later), so its "
                "work silently does not happen.",
                f"Write `await {callee}(...)`, or start it with asyncio.create_task(...) and keep "
                "a reference to the task.",
            )
