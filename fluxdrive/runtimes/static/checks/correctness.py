"""fd-correctness checks: bugs that pass the tests and fail in production.

Each check reasons inside one function (plus the module's own definitions for
thread targets and coroutines) and stays quiet when the code shows the case
is handled: a None check, a lock, a with block, an await.
"""

from __future__ import annotations

import ast
import re
import textwrap
from collections.abc import Iterator
from typing import TypeAlias

from fluxdrive.runtimes.static.checks.base import (
    CheckHit,
    CheckSeverity,
    PyModule,
    call_name,
    keyword,
    python_check,
    resolve,
)

Function: TypeAlias = ast.FunctionDef | ast.AsyncFunctionDef


# --------------------------------------------------------------------------
# Small shared helpers


def _code(text: str) -> str:
    """An example snippet written indented inside a decorator."""
    return textwrap.dedent(text).lstrip("\n")


def _tail(name: str) -> str:
    return name.rsplit(".", 1)[-1]


def _short(node: ast.AST, limit: int = 40) -> str:
    """Source text of an expression, on one line and shortened."""
    try:
        text = " ".join(ast.unparse(node).split())
    except Exception:  # unparse of an odd node: a label is not worth failing over
        return "…"
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _imports(tree: ast.Module) -> dict[str, str]:
    """Local name -> dotted origin for every absolute import in the file."""
    names: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                head = alias.name.split(".")[0]
                names[alias.asname or head] = alias.name if alias.asname else head
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                names[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return names


def _qualified(node: ast.Call, imports: dict[str, str]) -> str:
    """``call_name`` with its first part mapped through the file's imports."""
    name = call_name(node)
    head, dot, rest = name.partition(".")
    origin = imports.get(head)
    return f"{origin}{dot}{rest}" if origin else name


def _functions(tree: ast.AST) -> Iterator[Function]:
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            yield node


def _own_nodes(module: PyModule, function: Function) -> Iterator[ast.AST]:
    """Nodes of a function (source order), not descending into functions nested in it."""
    stack = list(reversed(list(ast.iter_child_nodes(function))))
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            stack.extend(reversed(list(ast.iter_child_nodes(node))))


def _where_def(module: PyModule, function: Function) -> str:
    return module.where(function.body[0]) if function.body else f"in {function.name}()"


def _position(node: ast.AST) -> tuple[int, int]:
    return getattr(node, "lineno", 0), getattr(node, "col_offset", 0)


def _end(node: ast.AST) -> tuple[int, int]:
    return getattr(node, "end_lineno", 0) or 0, getattr(node, "end_col_offset", 0) or 0


def _first_use(module: PyModule, function: Function, name: str, after: ast.AST) -> ast.Name | None:
    """The first reference to ``name`` after a statement, in source order (None if rebound)."""
    start = _end(after)
    refs = [
        n for n in _own_nodes(module, function) if isinstance(n, ast.Name) and n.id == name and _position(n) >= start
    ]
    first = min(refs, key=_position, default=None)
    return first if first is not None and isinstance(first.ctx, ast.Load) else None


def _dereference(module: PyModule, name: ast.Name) -> ast.expr | None:
    """``x.attr`` / ``x[k]`` / ``x()`` when the name is used that way, else None."""
    parent = module.parents.get(name)
    if isinstance(parent, ast.Attribute) and parent.value is name:
        call = module.parents.get(parent)
        return call if isinstance(call, ast.Call) and call.func is parent else parent
    if isinstance(parent, ast.Subscript) and parent.value is name:
        return parent
    if isinstance(parent, ast.Call) and parent.func is name:
        return parent
    return None


def _mentions(node: ast.AST | None, name: str) -> bool:
    return node is not None and any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(node))


def _caught_names(handler: ast.ExceptHandler) -> set[str]:
    if handler.type is None:
        return {"BaseException"}
    types = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return {_tail(_short(t, 200)) for t in types}


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
    texts = [n.value for n in ast.walk(function) if isinstance(n, ast.Constant) and isinstance(n.value, str)]
    return any(ALWAYS_A_ROW.search(t) and "group by" not in t.lower() for t in texts)


def _none_source(call: ast.Call, function: Function | None) -> tuple[str, str] | None:
    """(label, when it is None) for a call that returns None in a normal case."""
    name = call_name(call)
    tail, func = _tail(name), call.func
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
    receiver = _short(func.value, 200)
    mapping = isinstance(func.value, ast.Name | ast.Attribute | ast.Subscript) and not NOT_MAPPINGS.search(receiver)
    if tail == "get" and plain and mapping and not _url_like(call.args[0]):
        return f"{name}()", "the key is missing"
    return None


def _url_like(node: ast.expr) -> bool:
    """An HTTP client's get(url) rather than a mapping's get(key)."""
    text = _short(node, 200).lower()
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
        if branch and _mentions(getattr(parent, "test", None), name):
            return True
        if isinstance(parent, ast.BoolOp) and child in parent.values:
            earlier = parent.values[: parent.values.index(child)]
            if any(_mentions(v, name) for v in earlier):
                return True
        tried = isinstance(parent, ast.Try) and child in parent.body
        if tried and any(_caught_names(h) & NONE_GUARDS for h in getattr(parent, "handlers", [])):
            return True
        child = parent
    return False


def _unchecked_uses(module: PyModule, function: Function) -> Iterator[tuple[ast.expr, str, str]]:
    """(dereference, source label, when None) inside one function."""
    for node in _own_nodes(module, function):
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
        first = _first_use(module, function, target.id, node)
        deref = _dereference(module, first) if first is not None else None
        if deref is not None and not _guarded(module, deref, target.id):
            yield deref, *source


@python_check(
    "py-unchecked-none",
    tag="correctness",
    severity="P1",
    summary="A value that can be None (fetchone, dict.get, re.match, .first()) is used unchecked",
    match=[
        _code("""
            def get_balance(cursor, account_id):
                cursor.execute("SELECT balance FROM accounts WHERE id = %s", (account_id,))
                row = cursor.fetchone()
                return row[0]
        """),
        _code("""
            import re

            def version(text):
                return re.match(r"v(\\d+)", text).group(1)
        """),
        _code("""
            def owner_email(session, project_id):
                project = session.query(Project).filter_by(id=project_id).first()
                return project.owner.email
        """),
        _code("""
            def region(config):
                name = config.get("region")
                return name.lower()
        """),
    ],
    no_match=[
        _code("""
            def get_balance(cursor, account_id):
                cursor.execute("SELECT balance FROM accounts WHERE id = %s", (account_id,))
                row = cursor.fetchone()
                if row is None:
                    raise KeyError(account_id)
                return row[0]
        """),
        _code("""
            import re

            def version(text):
                m = re.match(r"v(\\d+)", text)
                return m.group(1) if m else None
        """),
        _code("""
            def count(cursor):
                cursor.execute("SELECT COUNT(*) FROM accounts")
                return cursor.fetchone()[0]
        """),
        _code("""
            import requests

            def fetch(url):
                resp = requests.get(url)
                return resp.json()
        """),
    ],
)
def unchecked_none(module: PyModule) -> Iterator[CheckHit]:
    if module.is_test_module():
        return
    for function in _functions(module.tree):
        for use, label, when in _unchecked_uses(module, function):
            yield CheckHit(
                use.lineno,
                f"{label} can return None and `{_short(use)}` uses it unchecked {module.where(use)}",
                f"{label} returns None when {when}; then `{_short(use)}` raises "
                "AttributeError/TypeError instead of the missing case being handled.",
                "Check first (`if row is None: ...`, `if (m := re.match(...)):`) or use a form "
                "that cannot be None (d[key], .one(), a default value).",
            )


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
    name = _short(receiver)
    for node in ast.walk(scope):
        for item in node.items if isinstance(node, ast.With) else []:
            if item.optional_vars is not None and _short(item.optional_vars) == name:
                return _tail(call_name(item.context_expr))
        if isinstance(node, ast.Assign) and any(_short(t) == name for t in node.targets):
            return _tail(call_name(node.value)) if isinstance(node.value, ast.Call) else ""
    return ""


def _thread_start(module: PyModule, call: ast.Call) -> tuple[ast.expr, bool] | None:
    """(target reference, runs on several threads) for a call that starts threaded work."""
    tail = _tail(call_name(call))
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
    for call in module.nodes:
        if not isinstance(call, ast.Call):
            continue
        start = _thread_start(module, call)
        target = _target_function(module, start[0], call) if start else None
        if target is None or start is None:
            continue
        how = _short(call, 70)
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
        factory = isinstance(value, ast.Call) and _tail(call_name(value)) in MUTABLE_FACTORIES
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
    nodes = list(_own_nodes(module, function))
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
        if any(LOCK_WORDS.search(_short(i.context_expr, 200)) for i in items):
            return True
    return False


def _racy_updates(module: PyModule, function: Function) -> Iterator[tuple[ast.AST, str, str]]:
    """(node, shared root, "update" | "check") for unlocked read-modify-writes in a function."""
    shared = _shared_names(module, function)
    calls = {_tail(call_name(n)) for n in _own_nodes(module, function) if isinstance(n, ast.Call)}
    if "acquire" in calls:
        return  # manual locking: too hard to follow, stay quiet
    for node in _own_nodes(module, function):
        if _locked(module, node):
            continue
        if isinstance(node, ast.If):
            root = _check_then_act(node, shared)
            if root:
                yield node, root, "check"
            continue
        root = _writes(node, shared) if isinstance(node, ast.AugAssign | ast.Assign) else None
        reads = isinstance(node, ast.AugAssign) or (
            isinstance(node, ast.Assign) and root is not None and root in _short(node.value, 500)
        )
        if root and reads:
            yield node, root, "update"


def _written_elsewhere(module: PyModule, function: Function, root: str) -> bool:
    """Another function (not __init__) of the module (of the class, for self.x) writes ``root``."""
    scope: ast.AST = module.tree
    if root.startswith("self."):
        owner = next((p for p in module.ancestors(function) if isinstance(p, ast.ClassDef)), None)
        scope = owner or function
    for other in _functions(scope):
        if other is function or other.name == "__init__":
            continue
        shared = {root} if "." not in root else set()
        if any(_writes(n, shared) == root for n in _own_nodes(module, other)):
            return True
    return False


@python_check(
    "py-shared-state-race",
    tag="correctness",
    severity="P1",
    summary="Shared state read-modified-written without a lock in a function run on threads",
    match=[
        _code("""
            import threading

            processed = 0

            def worker(items):
                global processed
                for item in items:
                    handle(item)
                    processed += 1

            threads = [threading.Thread(target=worker, args=(chunk,)) for chunk in chunks]
        """),
        _code("""
            from concurrent.futures import ThreadPoolExecutor

            _cache = {}

            def load(key):
                if key not in _cache:
                    _cache[key] = fetch_remote(key)
                return _cache[key]

            with ThreadPoolExecutor(8) as pool:
                results = list(pool.map(load, keys))
        """),
        _code("""
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
        _code("""
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
        _code("""
            from concurrent.futures import ProcessPoolExecutor

            totals = {}

            def tally(key):
                totals[key] = totals.get(key, 0) + 1

            with ProcessPoolExecutor() as pool:
                pool.map(tally, keys)
        """),
        _code("""
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
                f"{_where_def(module, function)}, which runs on threads via {how}",
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
    return len(attempt) == 1 and bool(calls) and _tail(call_name(calls[0].value)) in CLEANUP_CALLS


def _writes_something(body: list[ast.stmt]) -> bool:
    """The try block saves, sends or changes something whose failure would lose data."""
    calls = (n for s in body for n in ast.walk(s) if isinstance(n, ast.Call))
    return any(_tail(call_name(c)) in WRITE_CALLS for c in calls)


def _attempted(body: list[ast.stmt]) -> str:
    call = next((n for s in body for n in ast.walk(s) if isinstance(n, ast.Call)), None)
    return f"{_short(call.func)}()" if call is not None else "the try block"


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
    """P1 for a broad clause, P2 for cleanup or a narrow type, None for expected cases."""
    caught = _caught_names(handler)
    imports_only = all(isinstance(s, ast.Import | ast.ImportFrom) for s in try_body)
    function = module.enclosing_function(handler)
    finalizer = function is not None and function.name in FINALIZERS  # must not raise anyway
    if caught & OPTIONAL_IMPORT or imports_only or finalizer or _explained(module, handler):
        return None
    if caught & BROAD:
        return "P2" if _best_effort(module, handler, try_body) else "P1"
    if action != "pass" or caught <= EXPECTED_EXCEPTIONS or _best_effort(module, handler, try_body):
        return None
    return "P2" if _writes_something(try_body) else None  # probing/parsing fallbacks are fine


@python_check(
    "py-swallowed-exception",
    tag="correctness",
    severity="P1",
    summary="except: / except Exception: whose body only passes, continues or returns None",
    match=[
        _code("""
            def sync_orders(client, orders):
                for order in orders:
                    try:
                        client.push(order)
                    except Exception:
                        pass
        """),
        _code("""
            def load_profile(path):
                try:
                    return parse_profile(path)
                except:
                    return None
        """),
        _code("""
            def save_draft(store, draft):
                try:
                    store.put(draft.id, draft.to_json())
                except ConnectionError:
                    pass
        """),
    ],
    no_match=[
        _code("""
            try:
                import ujson as json
            except ImportError:
                pass
        """),
        _code("""
            import logging

            def sync_orders(client, orders):
                for order in orders:
                    try:
                        client.push(order)
                    except Exception:
                        logging.exception("push failed for %s", order.id)
        """),
        _code("""
            import os

            def remove_stale(path):
                try:
                    os.remove(path)
                except FileNotFoundError:
                    pass
        """),
        _code("""
            def port(value):
                try:
                    return int(value)
                except ValueError:
                    pass
                return 8080
        """),
    ],
)
def swallowed_exception(module: PyModule) -> Iterator[CheckHit]:
    for node in module.nodes:
        if not isinstance(node, ast.Try | ast.TryStar):
            continue
        for handler in node.handlers:
            action = _silent(handler.body)
            severity = _swallow_severity(module, handler, node.body, action) if action else None
            if severity is None:
                continue
            caught = _short(handler.type) if handler.type is not None else ""
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
    tail = _tail(call_name(call))
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
    refs = [
        n
        for n in _own_nodes(module, function)
        if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)
    ]
    nested = any(
        isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) and _mentions(n, name)
        for n in ast.walk(function)
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
    )


def _leak_hits(module: PyModule, function: Function, imports: dict[str, str]) -> Iterator[CheckHit]:
    for node in _own_nodes(module, function):
        if not isinstance(node, ast.Call):
            continue
        qualified = _qualified(node, imports)
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
    match=[
        _code("""
            def append_line(path, line):
                fh = open(path, "a")
                fh.write(line + "\\n")
        """),
        _code("""
            import sqlite3

            def count_users(db_path):
                conn = sqlite3.connect(db_path)
                return conn.execute("SELECT count(*) FROM users").fetchone()[0]
        """),
        _code("""
            import socket

            def send_ping(host):
                sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                sock.connect((host, 7))
                sock.sendall(b"ping")
        """),
        _code("""
            def read_version(path):
                return open(path).read().strip()
        """),
    ],
    no_match=[
        _code("""
            def append_line(path, line):
                with open(path, "a") as fh:
                    fh.write(line + "\\n")
        """),
        _code("""
            import sqlite3

            def count_users(db_path):
                conn = sqlite3.connect(db_path)
                try:
                    return conn.execute("SELECT count(*) FROM users").fetchone()[0]
                finally:
                    conn.close()
        """),
        _code("""
            import socket

            class Client:
                def connect(self, host):
                    sock = socket.create_connection((host, 7))
                    self.sock = sock
        """),
        _code("""
            def open_log(path):
                fh = open(path, "a")
                return fh
        """),
    ],
)
def resource_leak(module: PyModule) -> Iterator[CheckHit]:
    if module.is_test_module():
        return
    imports = _imports(module.tree)
    for function in _functions(module.tree):
        yield from _leak_hits(module, function, imports)


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
AIOHTTP_METHODS = {
    "get",
    "post",
    "put",
    "patch",
    "delete",
    "head",
    "request",
    "close",
    "ws_connect",
}


def _coroutine_names(module: PyModule) -> tuple[set[str], dict[int, set[str]]]:
    """Top-level async defs (not also defined sync) and async methods per class."""
    top = {f.name for f in module.tree.body if isinstance(f, ast.AsyncFunctionDef)}
    top -= {f.name for f in module.tree.body if isinstance(f, ast.FunctionDef)}
    methods: dict[int, set[str]] = {}
    for cls in module.nodes:
        if isinstance(cls, ast.ClassDef):
            methods[id(cls)] = {f.name for f in cls.body if isinstance(f, ast.AsyncFunctionDef)}
    return top, methods


def _aiohttp_sessions(function: Function) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(function):
        items = node.items if isinstance(node, ast.AsyncWith | ast.With) else []
        for item in items:
            if _tail(call_name(item.context_expr)) == "ClientSession" and item.optional_vars:
                names.add(_short(item.optional_vars))
        value = node.value if isinstance(node, ast.Assign) else None
        if isinstance(value, ast.Call) and _tail(call_name(value)) == "ClientSession":
            names |= {_short(t) for t in getattr(node, "targets", [])}
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
    return func.attr in AIOHTTP_METHODS and _short(func.value) in sessions


def _unawaited(
    module: PyModule, function: Function, coroutines: tuple[set[str], dict[int, set[str]]]
) -> Iterator[ast.Call]:
    top, methods = coroutines
    nested = _own_nodes(module, function)
    local = {n.name for n in nested if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)}
    params = {a.arg for a in function.args.args}
    known = (top - local - params, methods, _aiohttp_sessions(function))
    for node in _own_nodes(module, function):
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
            if _coroutine_call(module, node.value, known):
                yield node.value
        elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
            target = node.targets[0] if len(node.targets) == 1 else None
            if not isinstance(target, ast.Name):
                continue
            if not _coroutine_call(module, node.value, known):
                continue
            use = _first_use(module, function, target.id, node)
            if use is not None and _dereference(module, use) is not None:
                yield node.value


@python_check(
    "py-missing-await",
    tag="correctness",
    severity="P1",
    summary="A coroutine (async def in this module, asyncio.sleep...) is called without await",
    match=[
        _code("""
            async def save_order(db, order):
                await db.insert(order)

            async def checkout(db, cart):
                order = build_order(cart)
                save_order(db, order)
                return order
        """),
        _code("""
            import asyncio

            async def poll(client):
                while True:
                    await client.refresh()
                    asyncio.sleep(5)
        """),
        _code("""
            class Notifier:
                async def send(self, user, text):
                    await self.transport.post(user, text)

                async def notify_all(self, users):
                    for user in users:
                        self.send(user, "hello")
        """),
    ],
    no_match=[
        _code("""
            async def save_order(db, order):
                await db.insert(order)

            async def checkout(db, cart):
                order = build_order(cart)
                await save_order(db, order)
                return order
        """),
        _code("""
            import asyncio

            async def save_order(db, order):
                await db.insert(order)

            async def checkout(db, orders):
                tasks = [asyncio.create_task(save_order(db, o)) for o in orders]
                await asyncio.gather(*tasks)
        """),
        _code("""
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
    for function in _functions(module.tree):
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
    return isinstance(node, ast.Call) and _tail(call_name(node)) in MUTABLE_DEFAULT_CALLS


def _param_defaults(function: Function) -> list[tuple[str, ast.expr]]:
    arguments = function.args
    positional = [*arguments.posonlyargs, *arguments.args]
    named = positional[len(positional) - len(arguments.defaults) :]
    pairs = [(a.arg, d) for a, d in zip(named, arguments.defaults, strict=True)]
    keyword_only = zip(arguments.kwonlyargs, arguments.kw_defaults, strict=True)
    pairs += [(a.arg, d) for a, d in keyword_only if d is not None]
    return pairs


def _use_of_param(module: PyModule, name: ast.Name) -> str | None:
    """How one reference changes (also via items: d[k].append), returns or stores a parameter."""
    node: ast.AST = name
    parent = module.parents.get(node)
    while isinstance(parent, ast.Subscript) and parent.value is node:
        if not isinstance(parent.ctx, ast.Load):
            break
        node, parent = parent, module.parents.get(parent)
    if isinstance(parent, ast.Attribute) and parent.attr in MUTATORS:
        return f"mutated by {_short(parent)}()"
    if isinstance(parent, ast.Subscript) and isinstance(parent.ctx, ast.Store | ast.Del):
        return f"mutated by `{_short(module.parents.get(parent) or parent)}`"
    if node is not name:
        return None
    if isinstance(parent, ast.Return | ast.Yield):
        return "returned to the caller"
    if isinstance(parent, ast.Assign) and any(isinstance(t, ast.Attribute) for t in parent.targets):
        return f"stored as `{_short(parent.targets[0])}`"
    return None


def _mutation(module: PyModule, function: Function, name: str) -> str | None:
    """How a function changes, returns or stores its parameter ``name`` (None if it does not)."""
    found: str | None = None
    for node in ast.walk(function):
        if not isinstance(node, ast.Name) or node.id != name:
            continue
        parent = module.parents.get(node)
        if isinstance(parent, ast.AugAssign) and parent.target is node:
            found = found or f"mutated in place by `{_short(parent)}`"
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
        _code("""
            def add_tag(tag, tags=[]):
                tags.append(tag)
                return tags
        """),
        _code("""
            def register(name, handler, registry={}):
                registry[name] = handler
        """),
        _code("""
            class Basket:
                def __init__(self, items=list()):
                    self.items = items
        """),
    ],
    no_match=[
        _code("""
            def add_tag(tag, tags=None):
                tags = [] if tags is None else tags
                tags.append(tag)
                return tags
        """),
        _code("""
            def total(prices=[]):
                return sum(prices)
        """),
        _code("""
            def render(options={}):
                merged = {**DEFAULTS, **options}
                return merged
        """),
    ],
)
def mutable_default(module: PyModule) -> Iterator[CheckHit]:
    for function in _functions(module.tree):
        for name, default in _param_defaults(function):
            memo = "cache" in name.lower() or "memo" in name.lower()  # deliberate memoization
            how = _mutation(module, function, name) if _mutable_default(default) else None
            if how is None or memo:
                continue
            yield CheckHit(
                default.lineno,
                f"Default `{name}={_short(default)}` is shared across calls and {how} {_where_def(module, function)}",
                "The default object is built once, when the def runs, so every call that omits "
                f"`{name}` gets the same one: what one call adds shows up in the next.",
                f"Default to None and make a fresh one inside: `{name} = [] if {name} is None "
                f"else {name}` (or {{}} / set()).",
            )
