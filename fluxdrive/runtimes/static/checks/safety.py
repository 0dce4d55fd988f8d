"""fd-safety checks: untrusted data reaching dangerous sinks, and unsafe settings.

Each check follows data only within one function (a local assignment is
followed once, a module-level constant too); that catches the common cases
precisely and stays quiet when it cannot tell.
"""

from __future__ import annotations

import ast
import itertools
import re
import textwrap
from collections.abc import Iterator
from typing import TypeAlias

from fluxdrive.runtimes.static.checks.base import (
    SQL_WORDS,
    CheckHit,
    CheckSeverity,
    PyModule,
    call_name,
    is_constant,
    is_dynamic_string,
    keyword,
    python_check,
    resolve,
    string_parts,
)

Function: TypeAlias = ast.FunctionDef | ast.AsyncFunctionDef
Taint: TypeAlias = tuple[CheckSeverity, str]


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


def _is(node: ast.AST | None, value: object) -> bool:
    """``node`` is the literal True / False / None given."""
    return isinstance(node, ast.Constant) and node.value is value


def _text(node: ast.AST | None) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


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


def _module_values(tree: ast.Module) -> dict[str, ast.expr]:
    found: dict[str, ast.expr] = {}
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign):
            for target in stmt.targets:
                if isinstance(target, ast.Name):
                    found[target.id] = stmt.value
        elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.value:
            found[stmt.target.id] = stmt.value
    return found


def _value(node: ast.expr, function: ast.AST | None, values: dict[str, ast.expr]) -> ast.expr:
    """Follow one local assignment, else one module-level assignment."""
    value = resolve(node, function)
    if value is node and isinstance(node, ast.Name):
        return values.get(node.id, node)
    return value


def _calls(module: PyModule) -> Iterator[ast.Call]:
    for node in module.nodes:
        if isinstance(node, ast.Call):
            yield node


def _functions(tree: ast.AST) -> Iterator[Function]:
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            yield node


def _where_def(module: PyModule, function: Function) -> str:
    return module.where(function.body[0]) if function.body else f"in {function.name}()"


def _arg0(node: ast.Call, *names: str) -> ast.expr | None:
    if node.args and not isinstance(node.args[0], ast.Starred):
        return node.args[0]
    return next((value for name in names if (value := keyword(node, name)) is not None), None)


REQUEST_FIELDS = {
    "args",
    "form",
    "values",
    "files",
    "GET",
    "POST",
    "FILES",
    "query_params",
    "path_params",
    "cookies",
    "COOKIES",
    "json",
    "data",
    "get_json",
    "get_data",
    "match_info",
    "query",
    "body",
}


def _request_field(node: ast.AST) -> str | None:
    """``request.args`` when ``node`` reads client input from the request object."""
    if (
        isinstance(node, ast.Attribute)
        and node.attr in REQUEST_FIELDS
        and isinstance(node.value, ast.Name)
        and node.value.id in {"request", "req"}
    ):
        return f"{node.value.id}.{node.attr}"
    return None


def _from_request(node: ast.AST) -> str | None:
    return next((f for sub in ast.walk(node) if (f := _request_field(sub))), None)


def _bound(node: ast.expr, function: Function | None, values: dict[str, ast.expr]) -> ast.expr:
    """Like ``_value``, also following ``with open(p) as fh`` bindings."""
    value = _value(node, function, values)
    if value is not node or not isinstance(node, ast.Name) or function is None:
        return value
    for sub in ast.walk(function):
        for item in sub.items if isinstance(sub, ast.With | ast.AsyncWith) else []:
            if isinstance(item.optional_vars, ast.Name) and item.optional_vars.id == node.id:
                return item.context_expr
    return node


def _outside_input(node: ast.expr, function: Function | None, values: dict[str, ast.expr]) -> str | None:
    """Where a value clearly comes from outside: the request, a parameter, the network."""
    value = _bound(node, function, values)
    source = _from_request(value)
    if source:
        return source
    if is_dynamic_string(value):
        return "a built string"
    params = {a.arg for a in _positional(function) + function.args.kwonlyargs} if function else set()
    params -= {"self", "cls"}
    for sub in ast.walk(value):
        if isinstance(sub, ast.Name) and sub.id in params:
            return f"parameter `{sub.id}`"
        if isinstance(sub, ast.Call) and _tail(call_name(sub)) in {"recv", "recvfrom", "recv_bytes"}:
            return "the network"
        if isinstance(sub, ast.Call) and call_name(sub) in {"input", "sys.stdin.read", "sys.stdin.readline"}:
            return "user input"
    return None


# --------------------------------------------------------------------------
# SQL


SQL_SINKS = (
    "execute",
    "executemany",
    "executescript",
    "raw",
    "text",
    "query",
    "read_sql",
    "read_sql_query",
)


def _how(node: ast.AST) -> str:
    if isinstance(node, ast.JoinedStr):
        return "an f-string"
    if isinstance(node, ast.BinOp):
        return "'%' formatting" if isinstance(node.op, ast.Mod) else "string concatenation"
    return "str.format()"


@python_check(
    "py-sql-injection",
    tag="security",
    severity="P0",
    summary="SQL built from runtime values (f-string, %, +, format) reaches an execute/query call",
    match=[
        _code("""
            def get_user(cursor, user_id):
                cursor.execute(f"SELECT * FROM users WHERE id = {user_id}")
        """),
        _code("""
            def find(db, name):
                q = "SELECT id FROM items WHERE name = '%s'" % name
                return db.execute(q).fetchall()
        """),
        _code("""
            def delete(session, table, key):
                session.execute(text("DELETE FROM " + table + " WHERE k = " + key))
        """),
    ],
    no_match=[
        _code("""
            def get_user(cursor, user_id):
                cursor.execute("SELECT * FROM users WHERE id = %s", (user_id,))
        """),
        'def count(cursor):\n    cursor.execute("SELECT count(*) FROM users")\n',
        'def log(logger, user_id):\n    logger.info(f"selected user {user_id} where needed")\n',
    ],
)
def sql_injection(module: PyModule) -> Iterator[CheckHit]:
    for node in module.nodes:
        if not isinstance(node, ast.Call) or not node.args:
            continue
        name = call_name(node)
        if name.rsplit(".", 1)[-1] not in SQL_SINKS:
            continue
        function = module.enclosing_function(node)
        query = node.args[0]
        if isinstance(query, ast.Call) and call_name(query).endswith("text") and query.args:
            query = query.args[0]
        query = resolve(query, function)
        if not is_dynamic_string(query) or not SQL_WORDS.search(string_parts(query)):
            continue
        yield CheckHit(
            line=node.lineno,
            title=f"SQL built with {_how(query)} reaches {name}() {module.where(node)}",
            why=(
                "Values are pasted into the SQL text, so a crafted value can change the query: "
                "read or delete other rows, or run other statements."
            ),
            fix=(
                'Pass values as parameters (cursor.execute("... WHERE id = %s", (user_id,))) '
                "or use the ORM's query builder; never format SQL."
            ),
        )


# --------------------------------------------------------------------------
# Shell commands


SHELL_ALWAYS = {
    "os.system",
    "os.popen",
    "commands.getoutput",
    "commands.getstatusoutput",
    "subprocess.getoutput",
    "subprocess.getstatusoutput",
    "asyncio.create_subprocess_shell",
}
SHELL_OPTIONAL = {"Popen", "run", "call", "check_call", "check_output"}
SHELL_QUOTERS = {"shlex.quote", "pipes.quote", "quote", "shlex.join"}


def _shell_label(node: ast.Call, qualified: str) -> str | None:
    """How the call runs a shell (``os.system(…)``), or None when it does not."""
    if qualified in SHELL_ALWAYS:
        return f"{call_name(node)}(…)"
    subprocess_like = qualified.startswith("subprocess.") or "." not in qualified
    if subprocess_like and _tail(qualified) in SHELL_OPTIONAL and _is(keyword(node, "shell"), True):
        return f"{call_name(node)}(…, shell=True)"
    return None


def _quoted(node: ast.expr) -> bool:
    """Every runtime piece of a command string went through shlex.quote."""
    if is_constant(node):
        return True
    if isinstance(node, ast.Call):
        if call_name(node) in SHELL_QUOTERS:
            return True
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr == "format":
            parts = [func.value, *node.args, *(k.value for k in node.keywords)]
            return all(_quoted(p) for p in parts)
        return False
    if isinstance(node, ast.JoinedStr):
        return all(_quoted(v.value) for v in node.values if isinstance(v, ast.FormattedValue))
    if isinstance(node, ast.BinOp):
        return _quoted(node.left) and _quoted(node.right)
    if isinstance(node, ast.Tuple):
        return all(_quoted(e) for e in node.elts)
    return False


@python_check(
    "py-command-injection",
    tag="security",
    severity="P0",
    summary="A non-constant command string runs through a shell (shell=True, os.system, os.popen)",
    match=[
        _code("""
            import subprocess

            def deploy(host):
                subprocess.run(f"ssh {host} systemctl restart app", shell=True, check=True)
        """),
        _code("""
            import os

            def archive(name):
                cmd = "tar czf /backups/" + name + ".tgz /srv/data"
                os.system(cmd)
        """),
        _code("""
            from flask import request
            import os

            def ping():
                return os.popen(request.args["host"]).read()
        """),
        _code("""
            import subprocess

            def run_hook(hook_cmd):
                return subprocess.check_output(hook_cmd, shell=True)
        """),
    ],
    no_match=[
        _code("""
            import subprocess

            def deploy(host):
                subprocess.run(["ssh", host, "systemctl", "restart", "app"], check=True)
        """),
        _code("""
            import os

            def clean():
                os.system("rm -rf /tmp/build-cache")
        """),
        _code("""
            import shlex, subprocess

            def deploy(host):
                subprocess.run(f"ssh {shlex.quote(host)} uptime", shell=True)
        """),
        _code("""
            import subprocess
            STATUS = "systemctl status app"

            def status():
                return subprocess.check_output(STATUS, shell=True)
        """),
    ],
)
def command_injection(module: PyModule) -> Iterator[CheckHit]:
    imports, values = _imports(module.tree), _module_values(module.tree)
    for node in _calls(module):
        label = _shell_label(node, _qualified(node, imports))
        command = _arg0(node, "args", "cmd", "command") if label else None
        if label is None or command is None:
            continue
        built = _value(command, module.enclosing_function(node), values)
        if isinstance(built, ast.List | ast.Tuple):  # with a shell only the first item is run
            built = built.elts[0] if built.elts else ast.Constant("")
        if _quoted(built):
            continue
        source = _from_request(built)
        strong = is_dynamic_string(built) or source is not None
        call = label.replace("…", _short(command, 30), 1)
        origin = f"built from {source or 'runtime data'}" if strong else f"from `{_short(command)}`"
        yield CheckHit(
            line=node.lineno,
            title=f"Command {origin} runs through a shell: {call} {module.where(node)}",
            why=(
                "The shell parses the whole string, so a value containing `;`, `&&`, `$(...)` "
                "or backticks runs extra commands with this process's rights."
                + ("" if strong else " Any caller that passes user-controlled text gets that.")
            ),
            fix=(
                'Pass an argument list without a shell (subprocess.run(["ssh", host, ...])); '
                "if a shell is unavoidable, wrap every runtime value in shlex.quote()."
            ),
            severity=None if strong else "P1",
        )


# --------------------------------------------------------------------------
# eval / exec


EVAL_NAMES = {"eval", "exec", "compile", "builtins.eval", "builtins.exec", "builtins.compile"}


def _constant_code(node: ast.expr) -> bool:
    if is_constant(node):
        return True
    compiled = isinstance(node, ast.Call) and call_name(node) == "compile" and bool(node.args)
    return compiled and isinstance(node, ast.Call) and is_constant(node.args[0])


def _runs_code(function: ast.AST | None) -> bool:
    """The function also evals/execs (so its compile() is reported there, once)."""
    calls = (call_name(n) for n in ast.walk(function) if isinstance(n, ast.Call)) if function else ()
    return any(_tail(c) in {"eval", "exec"} for c in calls)


@python_check(
    "py-eval-exec",
    tag="security",
    severity="P0",
    summary="eval/exec/compile run a non-constant string as Python code",
    match=[
        _code("""
            def calculate(expression):
                return eval(expression)
        """),
        _code("""
            from flask import request

            def apply_rule():
                code = request.form["rule"]
                exec(code, {"__builtins__": {}})
        """),
        _code("""
            def make_getter(field):
                return eval(f"lambda obj: obj.{field}")
        """),
    ],
    no_match=[
        _code("""
            import ast

            def parse(value):
                return ast.literal_eval(value)
        """),
        _code("""
            def setup():
                exec("import json", globals())
                code = compile("x + 1", "<expr>", "eval")
                return eval(code, {"x": 1})
        """),
        _code("""
            import re

            def pattern(word):
                return re.compile(word)
        """),
        "def evaluate(model, data):\n    model.eval()\n    return model(data)\n",
    ],
)
def eval_exec(module: PyModule) -> Iterator[CheckHit]:
    shadowed = {f.name for f in _functions(module.tree)}
    values = _module_values(module.tree)
    for node in _calls(module):
        name = call_name(node)
        if name not in EVAL_NAMES or _tail(name) in shadowed or not node.args:
            continue
        function = module.enclosing_function(node)
        code = node.args[0]
        if isinstance(code, ast.Starred) or (
            _tail(name) == "compile" and _runs_code(function or module.parents.get(node))
        ):
            continue
        compiled = _value(code, function, values)
        if isinstance(compiled, ast.Call) and call_name(compiled) == "compile" and compiled.args:
            code = compiled.args[0]  # exec(compile(src, ...)): judge the source text
        if _constant_code(_value(code, function, values)):
            continue
        origin = _outside_input(code, function, values)
        yield CheckHit(
            line=node.lineno,
            title=(
                f"{_tail(name)}() runs code from `{_short(code)}`"
                f"{f' ({origin})' if origin and not origin.startswith(('param', 'a ')) else ''} "
                f"{module.where(node)}"
            ),
            why=(
                "Whatever text reaches this call runs as Python with the process's permissions; "
                "an emptied __builtins__ does not sandbox it (object.__subclasses__() leads to os)."
            ),
            fix=(
                "Parse data instead of running it: ast.literal_eval for literals, json.loads for "
                "data, a dict of allowed operations for dispatch."
            ),
            severity=None if origin else "P1",
        )


# --------------------------------------------------------------------------
# Path traversal


ROUTE_METHODS = {"get", "post", "put", "patch", "delete", "route", "api_route", "websocket"}
NOT_PATH_PARAMS = {
    "self",
    "cls",
    "request",
    "req",
    "db",
    "session",
    "current_user",
    "background_tasks",
    "response",
}
NON_TEXT_TYPES = {"int", "float", "bool", "UUID", "datetime", "date", "Session", "Request"}
PATH_SANITIZERS = {
    "secure_filename",
    "basename",
    "safe_join",
    "is_relative_to",
    "relative_to",
    "commonpath",
}
FILE_SINKS = {
    "open",
    "io.open",
    "codecs.open",
    "send_file",
    "flask.send_file",
    "FileResponse",
    "send_from_directory",
    "os.remove",
    "os.unlink",
    "shutil.rmtree",
}
PATH_METHODS = {"open", "read_text", "read_bytes", "write_text", "write_bytes", "unlink"}
PATH_TYPES = {"Path", "PurePath", "PosixPath", "WindowsPath"}
FLASK_PLACEHOLDER = re.compile(r"<(?:(\w+)(?:\([^)]*\))?:)?(\w+)>")


def _route_call(function: Function) -> ast.Call | None:
    """The ``@app.route("/x")`` / ``@router.post("/x")`` decorator, if any."""
    for decorator in function.decorator_list:
        if (
            isinstance(decorator, ast.Call)
            and isinstance(decorator.func, ast.Attribute)
            and decorator.func.attr in ROUTE_METHODS
            and _text(_arg0(decorator, "path", "rule")) is not None
        ):
            return decorator
    return None


def _route_path(function: Function) -> str:
    route = _route_call(function)
    return (_text(_arg0(route, "path", "rule")) or "") if route else ""


def _positional(function: Function) -> list[ast.arg]:
    return [*function.args.posonlyargs, *function.args.args]


def _defaults(function: Function) -> dict[str, ast.expr]:
    """Parameter name -> default value expression."""
    arguments = function.args
    positional = _positional(function)
    named = positional[len(positional) - len(arguments.defaults) :]
    found = {a.arg: d for a, d in zip(named, arguments.defaults, strict=True)}
    for arg, default in zip(arguments.kwonlyargs, arguments.kw_defaults, strict=True):
        if default is not None:
            found[arg.arg] = default
    return found


def _is_django_view(function: Function) -> bool:
    names = [a.arg for a in _positional(function) if a.arg not in {"self", "cls"}]
    return bool(names) and names[0] == "request"


def _client_param(arg: ast.arg, default: ast.expr | None) -> bool:
    """A handler parameter that can carry text from the client."""
    if arg.arg in NOT_PATH_PARAMS:
        return False
    if isinstance(default, ast.Call) and _tail(call_name(default)) in {"Depends", "Security"}:
        return False
    annotation = _short(arg.annotation, 300) if arg.annotation is not None else ""
    return "Depends(" not in annotation and _tail(annotation) not in NON_TEXT_TYPES


def _route_params(function: Function) -> set[str]:
    """Parameters of a request handler whose values come from the client."""
    if _route_call(function) is None and not _is_django_view(function):
        return set()
    candidates = [*_positional(function), *function.args.kwonlyargs]
    path = _route_path(function)
    if "<" in path:  # Flask: only the placeholders come from the URL, typed ones are safe
        placeholders = FLASK_PLACEHOLDER.findall(path)
        keep = {name for kind, name in placeholders if kind not in {"int", "float", "uuid"}}
        candidates = [a for a in candidates if a.arg in keep]
    defaults = _defaults(function)
    return {a.arg for a in candidates if _client_param(a, defaults.get(a.arg))}


def _taint(node: ast.AST, function: Function, params: set[str], depth: int = 0) -> Taint | None:
    """(severity, source) when an expression carries client input, else None."""
    if depth > 10:
        return None
    field = _request_field(node)
    if field:
        return "P0", field
    if isinstance(node, ast.Call) and _tail(call_name(node)) in PATH_SANITIZERS:
        return None
    if isinstance(node, ast.Name):
        if node.id in params:
            return "P1", f"route parameter `{node.id}`"
        value = resolve(node, function)
        return None if value is node else _taint(value, function, params, depth + 1)
    found: Taint | None = None
    for child in ast.iter_child_nodes(node):
        hit = _taint(child, function, params, depth + 1)
        if hit and (found is None or hit[0] == "P0"):
            found = hit
    return found


def _pathlike(node: ast.expr, function: Function, depth: int = 0) -> bool:
    """A pathlib path: ``Path(...)`` or ``base / name``, possibly through one variable."""
    value = resolve(node, function) if depth < 3 else node
    if isinstance(value, ast.Call):
        return _tail(call_name(value)) in PATH_TYPES
    if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Div):
        return _pathlike(value.left, function, depth + 1)
    return False


def _path_sink(node: ast.Call, function: Function) -> tuple[ast.expr, str] | None:
    """(path expression, label) when a call opens, sends or deletes a file."""
    name = call_name(node)
    if name in FILE_SINKS or _tail(name) in {"send_file", "FileResponse", "send_from_directory"}:
        # send_from_directory joins safely itself: only its directory argument is a risk
        arg = _arg0(node, "path", "file", "directory", "path_or_file")
        return (arg, f"{name}()") if arg is not None else None
    func = node.func
    if isinstance(func, ast.Attribute) and func.attr in PATH_METHODS:
        return (func.value, f"Path.{func.attr}()") if _pathlike(func.value, function) else None
    if isinstance(func, ast.Attribute) and func.attr == "save" and node.args:
        upload = _from_request(resolve(func.value, function)) == "request.files"
        return (node.args[0], "FileStorage.save()") if upload else None
    return None


def _sanitizes_paths(function: Function) -> bool:
    tails = {_tail(call_name(n)) for n in ast.walk(function) if isinstance(n, ast.Call)}
    if tails & PATH_SANITIZERS:
        return True
    return "startswith" in tails and bool(tails & {"realpath", "abspath", "resolve"})


@python_check(
    "py-path-traversal",
    tag="security",
    severity="P1",
    summary="A file path from request data or a route parameter is opened/sent without sanitizing",
    match=[
        _code("""
            import os
            from flask import request, send_file

            @app.route("/download")
            def download():
                name = request.args.get("file")
                return send_file(os.path.join("/srv/reports", name))
        """),
        _code("""
            @app.route("/logs/<path:name>")
            def show_log(name):
                with open(f"/var/log/app/{name}") as fh:
                    return fh.read()
        """),
        _code("""
            from pathlib import Path
            from fastapi import UploadFile

            @router.post("/upload")
            async def upload(file: UploadFile):
                target = Path("uploads") / file.filename
                target.write_bytes(await file.read())
        """),
    ],
    no_match=[
        _code("""
            import os
            from flask import request, send_file
            from werkzeug.utils import secure_filename

            @app.route("/download")
            def download():
                name = secure_filename(request.args.get("file"))
                return send_file(os.path.join("/srv/reports", name))
        """),
        _code("""
            @app.route("/report/<int:report_id>")
            def report(report_id):
                with open(f"/srv/reports/{report_id}.txt") as fh:
                    return fh.read()
        """),
        _code("""
            from flask import request, send_from_directory

            @app.route("/files")
            def files():
                return send_from_directory("/srv/files", request.args["name"])
        """),
        _code("""
            def load(path):
                with open(path) as fh:
                    return fh.read()
        """),
    ],
)
def path_traversal(module: PyModule) -> Iterator[CheckHit]:
    for function in _functions(module.tree):
        sinks = [(n, s) for n in ast.walk(function) if isinstance(n, ast.Call) and (s := _path_sink(n, function))]
        if not sinks or _sanitizes_paths(function):
            continue
        params = _route_params(function)
        lines: set[int] = set()
        for node, sink in sinks:
            if node.lineno in lines or module.enclosing_function(node) is not function:
                continue
            taint = _taint(sink[0], function, params)
            if taint is None:
                continue
            lines.add(node.lineno)
            yield CheckHit(
                line=node.lineno,
                title=f"Path from {taint[1]} reaches {sink[1]} unsanitized {module.where(node)}",
                why=(
                    "A value like `../../etc/passwd` (or an absolute path, which os.path.join and "
                    "Path / let replace the base) reaches any file this process can access."
                ),
                fix=(
                    "Reduce the name with werkzeug's secure_filename() or os.path.basename(), or "
                    "resolve the joined path and require .is_relative_to(BASE_DIR) before use."
                ),
                severity=taint[0],
            )


# --------------------------------------------------------------------------
# Deserialization


UNPICKLERS = {
    "pickle.load",
    "pickle.loads",
    "cPickle.load",
    "cPickle.loads",
    "_pickle.load",
    "_pickle.loads",
    "dill.load",
    "dill.loads",
    "cloudpickle.load",
    "cloudpickle.loads",
    "marshal.load",
    "marshal.loads",
    "shelve.open",
    "jsonpickle.decode",
    "pandas.read_pickle",
}
YAML_LOADS = {"yaml.load", "yaml.load_all"}
YAML_RISKY = {"yaml.unsafe_load", "yaml.unsafe_load_all", "yaml.full_load", "yaml.full_load_all"}
SAFE_LOADERS = {"SafeLoader", "CSafeLoader", "BaseLoader", "CBaseLoader"}
DATA_KEYWORDS = ("data", "stream", "file", "filename", "s", "fp", "filepath_or_buffer")


def _opens_constant(node: ast.AST, function: Function | None, values: dict[str, ast.expr]) -> bool:
    if not isinstance(node, ast.Call) or _tail(call_name(node)) != "open" or not node.args:
        return False
    return is_constant(_value(node.args[0], function, values))


def _local_file(arg: ast.expr, function: Function | None, values: dict[str, ast.expr]) -> bool:
    """The data is a file this code opens by a fixed path (trusted as far as the disk is)."""
    if _opens_constant(resolve(arg, function), function, values):
        return True
    if not isinstance(arg, ast.Name) or function is None:
        return False
    for node in ast.walk(function):
        for item in node.items if isinstance(node, ast.With | ast.AsyncWith) else []:
            bound = item.optional_vars
            if isinstance(bound, ast.Name) and bound.id == arg.id:
                return _opens_constant(item.context_expr, function, values)
    return False


def _deserializer(node: ast.Call, qualified: str) -> tuple[CheckSeverity, str] | None:
    """(severity, format) for a deserializing call that can build arbitrary objects."""
    if qualified in UNPICKLERS:
        return "P0", "pickle"
    if qualified in YAML_RISKY:
        return "P1", "yaml"
    if qualified in YAML_LOADS:
        loader = keyword(node, "Loader") or (node.args[1] if len(node.args) > 1 else None)
        if loader is None or _tail(call_name(loader)) not in SAFE_LOADERS:
            return "P0", "yaml"
    return None


@python_check(
    "py-unsafe-deserialization",
    tag="security",
    severity="P0",
    summary="pickle/marshal/dill/shelve/jsonpickle, or yaml.load without SafeLoader, on live data",
    match=[
        _code("""
            import pickle
            from flask import request

            def restore():
                state = pickle.loads(request.data)
                return state
        """),
        _code("""
            import yaml

            def read_config(path):
                with open(path) as fh:
                    return yaml.load(fh, Loader=yaml.Loader)
        """),
        _code("""
            import base64, pickle

            def from_cookie(value):
                return pickle.loads(base64.b64decode(value))
        """),
        _code("""
            import yaml

            def parse(text):
                return yaml.unsafe_load(text)
        """),
    ],
    no_match=[
        _code("""
            import yaml

            def read_config(path):
                with open(path) as fh:
                    return yaml.load(fh, Loader=yaml.SafeLoader)
        """),
        _code("""
            import json

            def restore(body):
                return json.loads(body)
        """),
        _code("""
            import yaml

            def parse(text):
                return yaml.safe_load(text)
        """),
        _code("""
            import pickle

            def payload():
                return pickle.dumps({"a": 1})
        """),
    ],
)
def unsafe_deserialization(module: PyModule) -> Iterator[CheckHit]:
    imports, values = _imports(module.tree), _module_values(module.tree)
    for node in _calls(module):
        kind = _deserializer(node, _qualified(node, imports))
        data = _arg0(node, *DATA_KEYWORDS) if kind else None
        function = module.enclosing_function(node) if data is not None else None
        if kind is None or data is None or is_constant(_value(data, function, values)):
            continue
        local = _local_file(data, function, values)
        outside = kind[0] == "P0" and _outside_input(data, function, values) is not None
        yaml = kind[1] == "yaml"
        yield CheckHit(
            line=node.lineno,
            title=(
                f"{call_name(node)}() deserializes `{_short(data)}`"
                f"{' without SafeLoader' if yaml else ''} {module.where(node)}"
            ),
            why=(
                "Non-safe YAML loaders build arbitrary Python objects from tags such as "
                "!!python/object/apply, which runs code chosen by whoever wrote the document."
                if yaml
                else "These formats rebuild objects by calling whatever the data names "
                "(__reduce__), so anyone who can supply or alter the bytes runs code here."
            )
            + (" The path is fixed: this matters if others can write that file." if local else ""),
            fix=(
                "Use yaml.safe_load() (or Loader=yaml.SafeLoader)."
                if yaml
                else "Use a data-only format (json, msgpack); if pickle is unavoidable, sign the "
                "bytes with hmac and verify the signature before loading."
            ),
            severity="P2" if local else (kind[0] if outside or kind[0] != "P0" else "P1"),
        )


# --------------------------------------------------------------------------
# TLS


HTTP_CALLS = {
    "get",
    "post",
    "put",
    "patch",
    "delete",
    "head",
    "options",
    "request",
    "stream",
    "send",
    "Client",
    "AsyncClient",
    "urlopen",
    "ws_connect",
}
TLS_WHY = (
    "Without certificate checks anyone on the network path (proxy, Wi-Fi, spoofed DNS) can pose "
    "as the server and read or change the traffic, including credentials sent with it."
)
TLS_FIX = (
    'Keep verification on; for a private CA pass its bundle (verify="/path/ca.pem", '
    "ctx.load_verify_locations) or set REQUESTS_CA_BUNDLE / SSL_CERT_FILE."
)


def _tls_off(node: ast.Call, qualified: str) -> str | None:
    """The argument that turns certificate checks off in an HTTP call, if any."""
    tail = _tail(qualified)
    http = qualified.startswith(("requests.", "httpx.", "aiohttp.")) or tail in HTTP_CALLS
    if _is(keyword(node, "verify"), False) and http:
        return "verify=False"
    if _is(keyword(node, "verify_certs"), False):
        return "verify_certs=False"
    if _text(keyword(node, "cert_reqs")) == "CERT_NONE":
        return "cert_reqs='CERT_NONE'"
    session = http and "session" in call_name(node).lower()
    aiohttp = qualified.startswith("aiohttp.") or tail == "TCPConnector" or session
    for name in ("ssl", "verify_ssl"):
        if aiohttp and _is(keyword(node, name), False):
            return f"{name}=False"
    return None


def _http_client(node: ast.expr, module: PyModule) -> bool:
    """``session`` / ``client`` / a name bound to requests.Session() or httpx.Client()."""
    if re.search(r"session|client|http", _short(node).lower()):
        return True
    value = _value(node, module.enclosing_function(node), _module_values(module.tree))
    return isinstance(value, ast.Call) and _tail(call_name(value)) in {"Session", "Client"}


def _tls_setting(node: ast.AST, module: PyModule) -> str | None:
    """A TLS weakening outside call arguments: CERT_NONE, check_hostname = False..."""
    if isinstance(node, ast.Attribute) and node.attr == "_create_unverified_context":
        return "ssl._create_unverified_context"
    if isinstance(node, ast.Attribute) and node.attr == "CERT_NONE":
        parent = module.parents.get(node)  # set as a value, not compared or used as a dict key
        assigned = isinstance(parent, ast.Assign | ast.AnnAssign | ast.keyword | ast.Call)
        return "ssl.CERT_NONE" if assigned and node is not getattr(parent, "func", None) else None
    if not isinstance(node, ast.Assign) or not _is(node.value, False):
        return None
    for target in node.targets:
        if not isinstance(target, ast.Attribute):
            continue
        client = target.attr == "verify" and _http_client(target.value, module)
        if target.attr == "check_hostname" or client:
            return f"{_short(target)} = False"
    return None


def _tls_hit(node: ast.AST, module: PyModule, imports: dict[str, str]) -> CheckHit | None:
    if not isinstance(node, ast.Call):
        setting = _tls_setting(node, module)
        if setting is None:
            return None
        title = f"TLS verification weakened: {setting} {module.where(node)}"
        return CheckHit(getattr(node, "lineno", 1), title, TLS_WHY, TLS_FIX)
    qualified = _qualified(node, imports)
    if qualified.endswith("disable_warnings") and "urllib3" in qualified:
        return CheckHit(
            node.lineno,
            f"urllib3.disable_warnings() hides insecure-request warnings {module.where(node)}",
            "Silencing InsecureRequestWarning usually accompanies verify=False and hides every "
            "place that talks TLS without checking certificates.",
            "Remove it and fix the requests that warn (keep verification on).",
            severity="P2",
        )
    flag = _tls_off(node, qualified)
    if flag is None:
        return None
    where = module.where(node)
    title = f"TLS certificate verification disabled: {call_name(node)}(…, {flag}) {where}"
    return CheckHit(node.lineno, title, TLS_WHY, TLS_FIX)


@python_check(
    "py-tls-verify-disabled",
    tag="security",
    severity="P1",
    summary="TLS certificate/hostname verification off (verify=False, CERT_NONE, unverified ctx)",
    match=[
        _code("""
            import requests

            def fetch_invoice(url, token):
                return requests.get(url, headers={"Authorization": token}, verify=False)
        """),
        _code("""
            import ssl

            def context():
                ctx = ssl.create_default_context()
                ctx.check_hostname = False
                ctx.verify_mode = ssl.CERT_NONE
                return ctx
        """),
        _code("""
            import httpx

            client = httpx.Client(base_url="https://billing.internal", verify=False)
        """),
        _code("""
            import ssl, urllib.request

            def get(url):
                return urllib.request.urlopen(url, context=ssl._create_unverified_context())
        """),
    ],
    no_match=[
        _code("""
            import requests

            def fetch_invoice(url):
                return requests.get(url, verify="/etc/ssl/internal-ca.pem", timeout=10)
        """),
        _code("""
            import ssl

            def strict(ctx):
                if ctx.verify_mode == ssl.CERT_NONE:
                    raise ValueError("insecure context")
        """),
        _code("""
            def check(form):
                return form.validate(verify=False)
        """),
    ],
)
def tls_verify_disabled(module: PyModule) -> Iterator[CheckHit]:
    imports = _imports(module.tree)
    for node in module.nodes:
        hit = _tls_hit(node, module, imports)
        if hit:
            yield hit


# --------------------------------------------------------------------------
# Weak crypto


SECURITY_PREFIXES = (
    "passw",
    "pwd",
    "secret",
    "token",
    "auth",
    "sign",
    "session",
    "salt",
    "hmac",
    "credential",
    "nonce",
    "otp",
    "csrf",
    "jwt",
    "apikey",
    "cookie",
)
RANDOM_PREFIXES = (
    "passw",
    "pwd",
    "secret",
    "token",
    "salt",
    "nonce",
    "otp",
    "csrf",
    "apikey",
    "invite",
    "reset",
    "verification",
    "sessionid",
    "sessionkey",
)
RANDOM_CALLS = {
    "random",
    "randint",
    "choice",
    "choices",
    "randrange",
    "getrandbits",
    "sample",
    "shuffle",
}
WEAK_CIPHERS = {"DES": "DES", "ARC4": "RC4", "Blowfish": "Blowfish", "ARC2": "RC2"}


def _words(text: str) -> set[str]:
    """Lower-case words of the identifiers in some text (snake_case and camelCase split)."""
    found = [w.lower() for w in re.findall(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])", text)]
    return set(found) | {a + b for a, b in itertools.pairwise(found)}  # api_key -> apikey


def _mentions(text: str, prefixes: tuple[str, ...]) -> bool:
    for word in _words(text):
        if word.startswith(("author", "signal", "tokeniz")) and not word.startswith("authoriz"):
            continue
        if word.startswith(prefixes):
            return True
    return False


def _weak_hash(node: ast.Call, qualified: str) -> str | None:
    if qualified in {"hashlib.md5", "hashlib.sha1"}:
        return qualified
    algorithm = (_text(node.args[0]) or "").lower() if node.args else ""
    if qualified == "hashlib.new" and algorithm in {"md5", "sha1"}:
        return f"hashlib.new('{algorithm}')"
    return None


def _weak_cipher(node: ast.AST) -> str | None:
    if isinstance(node, ast.Attribute) and node.attr == "MODE_ECB":
        return "ECB mode"
    if not isinstance(node, ast.Call):
        return None
    parts = call_name(node).split(".")
    if len(parts) >= 2 and parts[-1] == "new" and parts[-2] in WEAK_CIPHERS:
        return WEAK_CIPHERS[parts[-2]]
    if len(parts) >= 2 and parts[-2] == "algorithms" and parts[-1] in {"ARC4", "Blowfish"}:
        return parts[-1]
    return "ECB mode" if parts[-2:] == ["modes", "ECB"] else None


def _cipher_hit(module: PyModule, node: ast.AST) -> CheckHit | None:
    cipher = _weak_cipher(node)
    parent = module.parents.get(node)
    if cipher is None or (cipher == "ECB mode" and parent is not None and _weak_cipher(parent)):
        return None  # DES.new(key, DES.MODE_ECB) is reported once, for the cipher
    return CheckHit(
        getattr(node, "lineno", 1),
        f"Broken cipher {cipher} used {module.where(node)}",
        "ECB encrypts equal blocks to equal ciphertext, so patterns in the data show through."
        if cipher == "ECB mode"
        else f"{cipher} has a small key or block size and practical attacks; treat what it protects as readable.",
        "Use authenticated encryption: cryptography's Fernet, or AESGCM with a fresh random nonce per message.",
    )


def _hash_hit(module: PyModule, node: ast.Call, qualified: str, context: str) -> CheckHit | None:
    weak = _weak_hash(node, qualified)
    if weak is None:
        return None
    if not _mentions(context, SECURITY_PREFIXES):
        return CheckHit(
            node.lineno,
            f"{weak} used {module.where(node)}",
            "MD5/SHA-1 are broken for security; fine for checksums and cache keys.",
            "If this is a checksum, pass usedforsecurity=False to say so; else use hashlib.sha256.",
            severity="P3",
        )
    return CheckHit(
        node.lineno,
        f"{weak} protects a secret {module.where(node)}",
        "MD5 and SHA-1 collisions are cheap and both are fast to brute-force, so hashes of "
        "passwords, tokens or signed data can be forged or reversed.",
        "Use hmac with hashlib.sha256 for signatures and a slow salted KDF (hashlib.scrypt, "
        "argon2, bcrypt) for passwords.",
    )


def _random_hit(module: PyModule, node: ast.Call, qualified: str, context: str) -> CheckHit | None:
    module_call = qualified.startswith("random.") and "()" not in qualified  # not SystemRandom()
    if not module_call or _tail(qualified) not in RANDOM_CALLS:
        return None
    if not _mentions(context, RANDOM_PREFIXES):
        return None
    return CheckHit(
        node.lineno,
        f"{call_name(node)}() makes a secret value {module.where(node)}",
        "The random module is a Mersenne Twister: after about 600 observed outputs every later "
        "token or password it makes can be predicted.",
        "Use the secrets module (secrets.token_urlsafe(32), secrets.choice) or os.urandom.",
    )


@python_check(
    "py-weak-crypto",
    tag="security",
    severity="P1",
    summary="MD5/SHA-1, DES/RC4/Blowfish, ECB mode or `random` used where security depends on it",
    match=[
        _code("""
            import hashlib

            def hash_password(password, salt):
                return hashlib.md5((salt + password).encode()).hexdigest()
        """),
        _code("""
            from Crypto.Cipher import DES

            def encrypt(key, data):
                return DES.new(key, DES.MODE_ECB).encrypt(data)
        """),
        _code("""
            import random, string

            def new_reset_token():
                return "".join(random.choice(string.ascii_letters) for _ in range(32))
        """),
        _code("""
            import hashlib

            def etag(body):
                return hashlib.sha1(body).hexdigest()
        """),
    ],
    no_match=[
        _code("""
            import hashlib

            def etag(body):
                return hashlib.md5(body, usedforsecurity=False).hexdigest()
        """),
        _code("""
            import secrets

            def new_reset_token():
                return secrets.token_urlsafe(32)
        """),
        _code("""
            import random

            def roll_dice():
                return random.randint(1, 6)
        """),
        _code("""
            import hashlib

            def hash_password(password, salt):
                return hashlib.scrypt(password.encode(), salt=salt, n=2**14, r=8, p=1)
        """),
    ],
)
def weak_crypto(module: PyModule) -> Iterator[CheckHit]:
    imports = _imports(module.tree)
    for node in module.nodes:
        hit = _cipher_hit(module, node)
        if hit is None and isinstance(node, ast.Call):
            qualified = _qualified(node, imports)
            if not qualified.startswith(("hashlib.", "random.")):
                continue
            if _is(keyword(node, "usedforsecurity"), False):
                continue
            function = module.enclosing_function(node)
            context = f"{function.name if function else ''} {module.line_text(node.lineno)}"
            hit = _hash_hit(module, node, qualified, context)
            hit = hit or _random_hit(module, node, qualified, context)
        if hit and not (hit.severity == "P3" and module.is_test_module()):
            yield hit


# --------------------------------------------------------------------------
# CORS


def _wildcard(node: ast.AST | None) -> bool:
    if isinstance(node, ast.List | ast.Tuple | ast.Set):
        return any(_wildcard(e) for e in node.elts)
    return _text(node) in {"*", ".*", "^.*$", ".+"}


def _resource_open(options: ast.expr) -> bool:
    """One flask_cors resources entry; a missing "origins" key means "*"."""
    if not isinstance(options, ast.Dict):
        return True
    pairs = zip(options.keys, options.values, strict=True)
    origins = [value for key, value in pairs if _text(key) == "origins"]
    return not origins or _wildcard(origins[0])


def _flask_cors_open(node: ast.Call) -> bool:
    """flask_cors CORS()/cross_origin() that allows any origin."""
    origins = keyword(node, "origins")
    if origins is not None:
        return _wildcard(origins)
    resources = keyword(node, "resources")
    if isinstance(resources, ast.Dict):
        return any(_resource_open(v) for v in resources.values)
    return True  # no origins given: the library default is "*"


def _cors(line: int, title: str, risky: bool) -> CheckHit:
    return CheckHit(
        line,
        title,
        "With credentials allowed, any website a logged-in user visits can call this API as "
        "that user and read the answers (the caller's Origin is echoed back)."
        if risky
        else "Any website can read these responses from a visitor's browser; fine only for truly public data.",
        'List the trusted origins (origins=["https://app.example.com"]) and allow credentials only for those.',
        severity="P1" if risky else "P2",
    )


def _cors_call_hit(node: ast.Call, qualified: str, module: PyModule) -> CheckHit | None:
    tail = _tail(qualified)
    if tail not in {"CORS", "cross_origin", "add_middleware", "Middleware"}:
        return None
    where = module.where(node)
    if tail in {"CORS", "cross_origin"} and qualified.startswith("flask_cors"):
        if not _flask_cors_open(node):
            return None
        creds = _is(keyword(node, "supports_credentials"), True)
        flag = ", supports_credentials=True" if creds else ""
        return _cors(node.lineno, f"{tail}(…{flag}) allows every origin {where}", creds)
    middleware = _short(node.args[0]) if node.args else ""
    if tail not in {"add_middleware", "Middleware"} or _tail(middleware) != "CORSMiddleware":
        return None
    if not any(_wildcard(keyword(node, k)) for k in ("allow_origins", "allow_origin_regex")):
        return None
    creds = _is(keyword(node, "allow_credentials"), True)
    flag = " with credentials" if creds else ""
    return _cors(node.lineno, f"CORSMiddleware allows every origin{flag} {where}", creds)


def _header_pairs(node: ast.AST) -> list[tuple[ast.expr | None, ast.expr]]:
    """(header name, value) pairs a statement or expression sets."""
    if isinstance(node, ast.Assign):
        return [(t.slice, node.value) for t in node.targets if isinstance(t, ast.Subscript)]
    if isinstance(node, ast.Dict):
        return list(zip(node.keys, node.values, strict=True))
    setters = {"add", "set", "setdefault", "add_header"}
    if isinstance(node, ast.Call) and _tail(call_name(node)) in setters and len(node.args) == 2:
        return [(node.args[0], node.args[1])]
    return []


def _header_hit(node: ast.AST, module: PyModule) -> CheckHit | None:
    """``Access-Control-Allow-Origin: *`` or the request's Origin echoed back."""
    for key, value in _header_pairs(node):
        if (_text(key) or "").lower() != "access-control-allow-origin":
            continue
        source = _short(value, 200)
        reflected = "origin" in source.lower() and "request" in source
        if _text(value) == "*" or reflected:
            what = "echoes the request's Origin" if reflected else "is *"
            title = f"Access-Control-Allow-Origin {what} {module.where(node)}"
            credentials = "access-control-allow-credentials" in module.text.lower()
            return _cors(getattr(node, "lineno", 1), title, reflected and credentials)
    return None


@python_check(
    "py-permissive-cors",
    tag="security",
    severity="P1",
    summary="CORS open to every origin (P1 with credentials): flask_cors, CORSMiddleware, headers",
    match=[
        _code("""
            from flask import Flask
            from flask_cors import CORS

            app = Flask(__name__)
            CORS(app, supports_credentials=True)
        """),
        _code("""
            from fastapi.middleware.cors import CORSMiddleware

            app.add_middleware(CORSMiddleware, allow_origins=["*"], allow_credentials=True)
        """),
        _code("""
            def add_headers(response):
                response.headers["Access-Control-Allow-Origin"] = "*"
                return response
        """),
        _code("""
            from flask_cors import CORS

            CORS(app, resources={r"/api/*": {"origins": "*"}})
        """),
    ],
    no_match=[
        _code("""
            from flask_cors import CORS

            CORS(app, origins=["https://app.example.com"], supports_credentials=True)
        """),
        _code("""
            from fastapi.middleware.cors import CORSMiddleware

            app.add_middleware(
                CORSMiddleware, allow_origins=["https://app.example.com"], allow_credentials=True
            )
        """),
        _code("""
            def add_headers(response):
                response.headers["Access-Control-Allow-Origin"] = "https://app.example.com"
                return response
        """),
    ],
)
def permissive_cors(module: PyModule) -> Iterator[CheckHit]:
    imports = _imports(module.tree)
    for node in module.nodes:
        hit = None
        if isinstance(node, ast.Call):
            hit = _cors_call_hit(node, _qualified(node, imports), module)
        hit = hit or _header_hit(node, module)
        if hit:
            yield hit


# --------------------------------------------------------------------------
# Debug mode


NOT_DEPLOYED = {"dev", "development", "local", "test", "tests", "example", "examples"}
DEBUG_CALLS = {"run", "FastAPI", "Starlette", "run_simple", "Quart"}
APP_NAMES = re.compile(r"(\w*_)?app|application|server")


def _settings_file(path: str) -> bool:
    """A production-looking settings module (not dev/local/test settings)."""
    parts = path.lower().split("/")
    name, folder = parts[-1], (parts[-2] if len(parts) > 1 else "")
    if not name.endswith(".py") or set(re.split(r"[^a-z]+", path.lower())) & NOT_DEPLOYED:
        return False
    return name.startswith(("settings", "config")) or folder in {"settings", "config"}


def _debug_call(node: ast.Call) -> str | None:
    name = call_name(node)
    if _is(keyword(node, "debug"), True) and _tail(name) in DEBUG_CALLS:
        return f"{name}(…, debug=True)"
    if name.endswith("config.update") and _is(keyword(node, "DEBUG"), True):
        return f"{name}(DEBUG=True)"
    return None


def _debug_assignment(node: ast.Assign, module: PyModule) -> str | None:
    if not _is(node.value, True):
        return None
    top_level = module.parents.get(node) is module.tree
    for target in node.targets:
        text = f"{_short(target)} = True"
        if isinstance(target, ast.Attribute) and target.attr == "debug":
            if APP_NAMES.fullmatch(_short(target.value)):
                return text
        elif isinstance(target, ast.Subscript) and _short(target).endswith("config['DEBUG']"):
            return text
        elif isinstance(target, ast.Name) and target.id == "DEBUG" and top_level:
            return text if _settings_file(module.path) else None
    return None


@python_check(
    "py-debug-enabled",
    tag="security",
    severity="P1",
    summary="Framework debug mode on in code (app.run(debug=True), DEBUG = True in settings)",
    match=[
        _code("""
            from flask import Flask

            app = Flask(__name__)

            if __name__ == "__main__":
                app.run(host="0.0.0.0", debug=True)
        """),
        _code("""
            from fastapi import FastAPI

            app = FastAPI(debug=True)
        """),
        'app.config["DEBUG"] = True\n',
    ],
    no_match=[
        _code("""
            import os

            if __name__ == "__main__":
                app.run(debug=os.environ.get("FLASK_DEBUG") == "1")
        """),
        _code("""
            import uvicorn

            uvicorn.run("app:app", reload=True)
        """),
        "DEBUG = True\n",
    ],
)
def debug_enabled(module: PyModule) -> Iterator[CheckHit]:
    if module.is_test_module():
        return
    for node in module.nodes:
        switch = None
        if isinstance(node, ast.Call):
            switch = _debug_call(node)
        elif isinstance(node, ast.Assign):
            switch = _debug_assignment(node, module)
        if switch:
            yield CheckHit(
                getattr(node, "lineno", 1),
                f"Debug mode on in code: {switch} {module.where(node)}",
                "Debug mode shows stack traces, settings and source to any client, and "
                "Werkzeug's debugger gives whoever reaches it a Python console on the server.",
                "Read the flag from the environment (default off) and keep it off in deployed settings.",
            )


# --------------------------------------------------------------------------
# Error details sent to clients


RESPONSE_CALLS = {
    "jsonify",
    "JSONResponse",
    "JsonResponse",
    "HttpResponse",
    "HttpResponseServerError",
    "Response",
    "make_response",
    "PlainTextResponse",
    "HTMLResponse",
    "abort",
    "HTTPException",
    "json_response",
    "render_template",
}
BROAD_EXCEPTIONS = {"Exception", "BaseException"}
INTERNAL_EXCEPTIONS = {
    "DatabaseError",
    "OperationalError",
    "IntegrityError",
    "ProgrammingError",
    "SQLAlchemyError",
    "DBAPIError",
    "OSError",
    "IOError",
    "RuntimeError",
    "ConnectionError",
    "RequestException",
    "HTTPError",
    "ClientError",
    "BotoCoreError",
    "Error",
}
TRACEBACK_CALLS = {
    "traceback.format_exc",
    "traceback.format_exception",
    "traceback.format_tb",
    "format_exc",
}


def _caught(handler: ast.ExceptHandler) -> set[str]:
    if handler.type is None:
        return {"BaseException"}
    types = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return {_tail(_short(t, 200)) for t in types}


def _names(node: ast.AST, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name


def _rooted(node: ast.AST, name: str) -> bool:
    """``e`` or ``e.orig`` / ``e.args[0]``: an expression reading the exception ``name``."""
    while isinstance(node, ast.Attribute | ast.Subscript):
        node = node.value
    return _names(node, name)


def _leak(node: ast.AST, name: str | None) -> str | None:
    """The exception detail an expression carries: str(e), e.args, traceback.format_exc()..."""
    for sub in ast.walk(node):
        if isinstance(sub, ast.Call) and call_name(sub) in TRACEBACK_CALLS:
            return f"{call_name(sub)}()"
        if name is None:
            continue
        converted = isinstance(sub, ast.Call) and call_name(sub) in {"str", "repr", "format"}
        if converted and isinstance(sub, ast.Call) and sub.args and _rooted(sub.args[0], name):
            return f"{call_name(sub)}({_short(sub.args[0])})"
        if isinstance(sub, ast.FormattedValue) and _names(sub.value, name):
            return f"{{{name}}} in an f-string"
        detail = isinstance(sub, ast.Attribute) and sub.attr in {"args", "message"}
        if detail and isinstance(sub, ast.Attribute) and _names(sub.value, name):
            return f"{name}.{sub.attr}"
    return None


def _status(node: ast.AST) -> int | None:
    codes = [
        n.value for n in ast.walk(node) if isinstance(n, ast.Constant) and type(n.value) is int and 400 <= n.value < 600
    ]
    return max(codes) if codes else None


def _is_handler(function: Function | None) -> bool:
    return function is not None and (_route_call(function) is not None or _is_django_view(function))


def _client_sinks(handler: ast.ExceptHandler, routed: bool) -> Iterator[ast.AST]:
    """Expressions in an except body that become a response."""
    for stmt in handler.body:
        for node in ast.walk(stmt):
            if isinstance(node, ast.Call) and _tail(call_name(node)) in RESPONSE_CALLS:
                yield node
            elif isinstance(node, ast.Return) and node.value is not None:
                value = node.value
                status = isinstance(value, ast.Tuple) and _status(value) is not None
                if status or (routed and isinstance(value, ast.Dict | ast.JoinedStr | ast.Call)):
                    yield node


@python_check(
    "py-error-leak",
    tag="security",
    severity="P1",
    summary="Exception text or a traceback is sent to the client from an except block",
    match=[
        _code("""
            from flask import jsonify

            @app.route("/orders", methods=["POST"])
            def create_order():
                try:
                    return save_order()
                except Exception as e:
                    return jsonify({"error": str(e)}), 500
        """),
        _code("""
            import traceback

            def handler(event):
                try:
                    process(event)
                except Exception:
                    return {"statusCode": 500, "body": traceback.format_exc()}, 500
        """),
        _code("""
            from fastapi import HTTPException

            @router.get("/report")
            async def report(db):
                try:
                    return await db.fetch_report()
                except Exception as exc:
                    raise HTTPException(status_code=500, detail=f"query failed: {exc}")
        """),
    ],
    no_match=[
        _code("""
            from flask import jsonify

            @app.route("/orders", methods=["POST"])
            def create_order():
                try:
                    return save_order()
                except Exception:
                    logger.exception("order failed")
                    return jsonify({"error": "internal error"}), 500
        """),
        _code("""
            from flask import jsonify

            @app.route("/orders", methods=["POST"])
            def create_order():
                try:
                    return save_order()
                except ValidationError as e:
                    return jsonify({"error": str(e)}), 400
        """),
        _code("""
            def parse(raw):
                try:
                    return int(raw)
                except Exception as e:
                    raise ValueError(str(e))
        """),
    ],
)
def error_leak(module: PyModule) -> Iterator[CheckHit]:
    for handler in module.nodes:
        if not isinstance(handler, ast.ExceptHandler):
            continue
        internal = bool(_caught(handler) & (BROAD_EXCEPTIONS | INTERNAL_EXCEPTIONS))
        seen: set[int] = set()
        for sink in _client_sinks(handler, _is_handler(module.enclosing_function(handler))):
            leak = _leak(sink, handler.name)
            line = getattr(sink, "lineno", handler.lineno)
            if leak is None or line in seen:
                continue
            server_error = (_status(sink) or 0) >= 500 or "traceback" in leak
            if not internal and not server_error:
                continue  # a validation message sent with a 4xx is meant for the client
            seen.add(line)
            yield CheckHit(
                line,
                f"Exception details ({leak}) sent to the client {module.where(sink)}",
                "Exception text and tracebacks carry SQL, file paths, hostnames and library "
                "versions that help an attacker map the system, and can include other users' data.",
                "Log the exception server-side (logger.exception) and return a generic message "
                "with an error id the user can quote.",
            )


# --------------------------------------------------------------------------
# Endpoints without the auth the rest of the module uses


AUTH_WORDS = re.compile(
    r"login_required|jwt_required|auth(?!or(?!i))|permission|token_required|roles?_required|"
    r"admin_required|user_passes_test|staff_member_required|superuser|current_user|verify_token|"
    r"api_key|is_authenticated|requires_|signed_in|logged_in|get_jwt_identity",
    re.IGNORECASE,
)
DEPENDS_AUTH = re.compile(r"auth(?!or(?!i))|user|token|verify|permission|admin|api_key|principal|scope", re.IGNORECASE)
PUBLIC_WORDS = {
    "login",
    "logout",
    "signin",
    "signup",
    "register",
    "registration",
    "forgot",
    "reset",
    "health",
    "healthz",
    "webhook",
    "webhooks",
    "callback",
    "oauth",
    "ping",
    "token",
    "public",
}
WRITE_METHODS = {"POST", "PUT", "PATCH", "DELETE"}
DJANGO_METHOD_DECORATORS = {"require_POST": ["POST"], "require_http_methods": [], "api_view": []}
DEPENDS = {"Depends", "Security"}
SENSITIVE_NAMES = ("delete_", "admin_", "update_", "remove_")


def _listed(node: ast.AST | None) -> set[str]:
    if not isinstance(node, ast.List | ast.Tuple | ast.Set):
        return set()
    return {(_text(e) or "").upper() for e in node.elts}


def _methods(function: Function) -> set[str]:
    """HTTP methods a handler answers, from its route or Django decorators."""
    methods: set[str] = set()
    route = _route_call(function)
    if route is not None and isinstance(route.func, ast.Attribute):
        if route.func.attr in {"post", "put", "patch", "delete"}:
            methods.add(route.func.attr.upper())
        methods |= _listed(keyword(route, "methods"))
    for decorator in function.decorator_list:
        name = _tail(call_name(decorator))
        if name in DJANGO_METHOD_DECORATORS:
            methods |= set(DJANGO_METHOD_DECORATORS[name])
            if isinstance(decorator, ast.Call) and decorator.args:
                methods |= _listed(decorator.args[0])
    return methods


def _auth_dependency(function: Function, route: ast.Call | None) -> str | None:
    """A FastAPI ``Depends(get_current_user)``-style parameter or route dependency."""
    places: list[ast.expr] = [*_defaults(function).values()]
    places += [a.annotation for a in _positional(function) if a.annotation is not None]
    dependencies = keyword(route, "dependencies") if route is not None else None
    if dependencies is not None:
        places.append(dependencies)
    for place in places:
        for call in ast.walk(place):
            depends = isinstance(call, ast.Call) and _tail(call_name(call)) in DEPENDS
            if depends and DEPENDS_AUTH.search(_short(call, 200)):
                return _short(call)
    return None


def _auth_marker(function: Function, guarded: set[str]) -> str | None:
    """How a handler authenticates (decorator, dependency, router, body check), or None."""
    route = _route_call(function)
    for decorator in function.decorator_list:
        name = call_name(decorator)
        public = "AllowAny" in _short(decorator, 200)
        if decorator is not route and AUTH_WORDS.search(name) and not public:
            return f"@{name}"
    if route is not None and _short(route.func).rsplit(".", 1)[0] in guarded:
        return "router-level auth"
    dependency = _auth_dependency(function, route)
    if dependency:
        return dependency
    for node in ast.walk(function):
        named = isinstance(node, ast.Attribute | ast.Name)
        if named and AUTH_WORDS.search(_short(node, 200).rsplit(".", 1)[-1]):
            return "a check in the body"
    return None


def _guarded_receivers(module: PyModule) -> set[str]:
    """Routers/blueprints that authenticate every request (router dependencies, before_request)."""
    guarded: set[str] = set()
    for node in module.nodes:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
            dependencies = keyword(node.value, "dependencies")
            if dependencies is not None and AUTH_WORDS.search(_short(dependencies, 300)):
                guarded |= {_short(t) for t in node.targets}
        for decorator in getattr(node, "decorator_list", []):
            if isinstance(decorator, ast.Attribute) and decorator.attr == "before_request":
                guarded.add(_short(decorator.value))
    return guarded


def _public(text: str) -> bool:
    """Login, signup, health, webhook... endpoints are public by design."""
    lowered = text.lower()
    words = set(re.split(r"[^a-z0-9]+", lowered))
    compact = re.sub(r"[^a-z]", "", lowered)
    return bool(words & PUBLIC_WORDS) or any(w in compact for w in ("login", "signin", "signup"))


def _handlers(module: PyModule) -> list[Function]:
    found = []
    for function in _functions(module.tree):
        django = bool(function.decorator_list) and _is_django_view(function)
        if _route_call(function) is not None or (django and not module.enclosing_function(function)):
            found.append(function)
    return found


@python_check(
    "py-unauthenticated-endpoint",
    tag="security",
    severity="P1",
    summary="A state-changing endpoint lacks the auth guard the module's other handlers use",
    match=[
        _code("""
            @app.route("/projects", methods=["GET"])
            @login_required
            def list_projects():
                return jsonify(Project.query.all())

            @app.route("/projects/<int:pid>", methods=["DELETE"])
            def delete_project(pid):
                Project.query.filter_by(id=pid).delete()
                return "", 204
        """),
        _code("""
            from fastapi import APIRouter, Depends

            router = APIRouter()

            @router.get("/users/me")
            async def me(user=Depends(get_current_user)):
                return user

            @router.put("/users/{user_id}/role")
            async def update_role(user_id: int, role: str):
                await set_role(user_id, role)
        """),
    ],
    no_match=[
        _code("""
            @app.route("/projects/<int:pid>", methods=["DELETE"])
            def delete_project(pid):
                Project.query.filter_by(id=pid).delete()
                return "", 204
        """),
        _code("""
            @app.route("/projects", methods=["GET"])
            @login_required
            def list_projects():
                return jsonify(Project.query.all())

            @app.route("/login", methods=["POST"])
            def login():
                return issue_session(request.form)

            @app.route("/projects/<int:pid>", methods=["DELETE"])
            @login_required
            def delete_project(pid):
                Project.query.filter_by(id=pid).delete()
        """),
        _code("""
            router = APIRouter(dependencies=[Depends(require_api_key)])

            @router.get("/items")
            async def items(user=Depends(get_current_user)):
                return []

            @router.post("/items")
            async def add_item(item: dict):
                return item
        """),
    ],
)
def unauthenticated_endpoint(module: PyModule) -> Iterator[CheckHit]:
    handlers = _handlers(module)
    guarded = _guarded_receivers(module)
    markers = {id(f): _auth_marker(f, guarded) for f in handlers}
    visible = ("@", "Depends", "Security")
    convention = next((m for m in markers.values() if m and m.startswith(visible)), None)
    if convention is None:
        return
    for function in handlers:
        path = _route_path(function)
        methods = _methods(function) & WRITE_METHODS
        sensitive = methods or function.name.startswith(SENSITIVE_NAMES) or "/admin" in path
        if markers[id(function)] or not sensitive or _public(f"{function.name} {path}"):
            continue
        verb = "/".join(sorted(methods)) or "Handler"
        yield CheckHit(
            function.lineno,
            f"{verb} {path or 'view'} has no auth check (other handlers here use "
            f"{convention}) {_where_def(module, function)}",
            "Anyone who can reach the server can call this state-changing endpoint without "
            "logging in; the module's other handlers show that authentication is expected here.",
            f"Add the same guard ({convention}), or say in a comment why this endpoint is public.",
        )
