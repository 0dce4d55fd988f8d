"""fd-safety checks: untrusted data run as code (SQL, shell commands, eval/exec, unpickling).

Each check follows data only within one function (a local assignment is
followed once, a module-level constant too); that catches the common cases
precisely and stays quiet when it cannot tell.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from fluxdrive.runtimes.static.checks._common import (
    Function,
    example,
    first_arg,
    from_request,
    is_literal,
    name_tail,
    positional_args,
    qualified_name,
    resolve_value,
    snippet,
    walk_function,
)
from fluxdrive.runtimes.static.checks._flows import Origin, judge, origin_note, sink_hit, tainted_at
from fluxdrive.runtimes.static.checks.engine.pymodule import PyModule
from fluxdrive.runtimes.static.checks.engine.registry import CheckHit, CheckSeverity, python_check
from fluxdrive.runtimes.static.checks.engine.syntax import (
    SQL_WORDS,
    call_name,
    is_constant,
    is_dynamic_string,
    keyword,
    resolve,
    string_parts,
)

# --------------------------------------------------------------------------
# Where a value comes from


def _bound(node: ast.expr, function: Function | None, values: dict[str, ast.expr]) -> ast.expr:
    """Like :func:`resolve_value`, also following ``with open(p) as fh`` bindings."""
    value = resolve_value(node, function, values)
    if value is not node or not isinstance(node, ast.Name) or function is None:
        return value
    for sub in walk_function(function):
        for item in sub.items if isinstance(sub, ast.With | ast.AsyncWith) else []:
            if isinstance(item.optional_vars, ast.Name) and item.optional_vars.id == node.id:
                return item.context_expr
    return node


def _outside_input(node: ast.expr, function: Function | None, values: dict[str, ast.expr]) -> str | None:
    """Where a value clearly comes from outside: the request, a parameter, the network."""
    value = _bound(node, function, values)
    source = from_request(value)
    if source:
        return source
    if is_dynamic_string(value):
        return "a built string"
    params = {a.arg for a in positional_args(function) + function.args.kwonlyargs} if function else set()
    params -= {"self", "cls"}
    for sub in ast.walk(value):
        if isinstance(sub, ast.Name) and sub.id in params:
            return f"parameter `{sub.id}`"
        if isinstance(sub, ast.Call) and name_tail(call_name(sub)) in {"recv", "recvfrom", "recv_bytes"}:
            return "the network"
        if isinstance(sub, ast.Call) and call_name(sub) in {"input", "sys.stdin.read", "sys.stdin.readline"}:
            return "user input"
    return None


# --------------------------------------------------------------------------
# SQL


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
        example("""
            def get_user(cursor, user_id):
                cursor.execute(f"SELECT * FROM users WHERE id = {user_id}")
        """),
        example("""
            def find(db, name):
                q = "SELECT id FROM items WHERE name = '%s'" % name
                return db.execute(q).fetchall()
        """),
        example("""
            def delete(session, table, key):
                session.execute(text("DELETE FROM " + table + " WHERE k = " + key))
        """),
    ],
    no_match=[
        example("""
            def get_user(cursor, user_id):
                cursor.execute("SELECT * FROM users WHERE id = %s", (user_id,))
        """),
        'def count(cursor):\n    cursor.execute("SELECT count(*) FROM users")\n',
        'def log(logger, user_id):\n    logger.info(f"selected user {user_id} where needed")\n',
        example("""
            from flask import request

            def lookup(cursor):
                param = request.args.get("name")
                num = 106
                bar = "constant" if 7 * 18 + num > 200 else param
                cursor.execute(f"SELECT * FROM users WHERE name = '{bar}'")
        """),
    ],
    nodes=(ast.Call,),
)
def sql_injection(module: PyModule, node: ast.Call) -> Iterator[CheckHit]:
    if not node.args:
        return
    name = call_name(node)
    tail = name.rsplit(".", 1)[-1]
    if tail not in module.taint_spec.sinks["sql"].calls:
        return
    function = module.enclosing_function(node)
    query = node.args[0]
    if isinstance(query, ast.Call) and call_name(query).endswith("text") and query.args:
        query = query.args[0]
    built = query
    query = resolve(query, function)
    if is_dynamic_string(query):
        if not _is_sql(query, tail):
            return
        origin = judge(module, node, built, module.taint_spec.cleaners_for("sql"))
    elif tail in {"raw", "query"}:  # generic names: only built SQL text says they run SQL
        return
    else:  # text that is not built here is SQL only when the request supplies it whole
        outside = tainted_at(module, node, built, module.taint_spec.cleaners_for("sql"))
        if outside is None or is_constant(query):
            return
        origin = Origin.source(outside)
    severity = origin.severity()
    if severity is None:
        return
    how = _how(query) if is_dynamic_string(query) else "text"
    yield sink_hit(
        module,
        node,
        origin,
        severity,
        title=f"SQL built with {how} {origin.evidence} reaches {name}()".replace("  ", " "),
        why=(
            "Values are pasted into the SQL text, so a crafted value can change the query: "
            "read or delete other rows, or run other statements." + origin_note(origin, _UNSEEN)
        ),
        fix=(
            'Pass values as parameters (cursor.execute("... WHERE id = %s", (user_id,))) '
            "or use the ORM's query builder; never format SQL."
        ),
    )


# Statements that name no table or clause SQL_WORDS knows (savepoints, session settings, DDL).
_STATEMENT = re.compile(
    r"^\s*(savepoint|release|rollback|commit|begin|pragma|set|show|grant|revoke|truncate|alter|create|drop|"
    r"vacuum|attach|detach|copy|call|lock|explain|analyze|comment\s+on|declare|fetch|listen|notify|use|"
    r"replace|merge|with|exec|reindex|cluster|refresh)\b",
    re.IGNORECASE,
)
_SQL_ALWAYS = frozenset({"text", "raw", "RawSQL", "read_sql", "read_sql_query", "executescript"})


def _is_sql(query: ast.AST, sink: str) -> bool:
    """The built text is SQL: its words say so, or the sink takes nothing else (``text()``, ``raw()``)."""
    words = string_parts(query)
    if SQL_WORDS.search(words) or sink in _SQL_ALWAYS:
        return True
    return sink in {"execute", "executemany"} and bool(_STATEMENT.search(words))


# What to check when the value's origin is not visible here (see :func:`origin_note`).
_UNSEEN = " Where this value comes from is not visible here; if any of it can come from a user, it is exploitable."


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


SHELLS = {"sh", "bash", "zsh", "dash", "ksh", "cmd", "cmd.exe", "powershell", "powershell.exe", "pwsh"}
SHELL_FLAGS = {"-c", "/c", "/C", "-Command", "-command"}


def _shell_label(node: ast.Call, qualified: str, function: Function | None = None) -> str | None:
    """How the call runs a shell (``os.system(…)``), or None when it does not."""
    if qualified in SHELL_ALWAYS:
        return f"{call_name(node)}(…)"
    subprocess_like = qualified.startswith("subprocess.") or "." not in qualified
    if subprocess_like and name_tail(qualified) in SHELL_OPTIONAL:
        if is_literal(keyword(node, "shell"), True):
            return f"{call_name(node)}(…, shell=True)"
        argv = first_arg(node, "args")
        words = _argv_words(argv, function) if argv is not None else set()
        shell = next((w for w in sorted(words) if w.rsplit("/", 1)[-1] in SHELLS), None)
        if shell and words & SHELL_FLAGS:
            return f"{call_name(node)}([{shell!r}, '-c', …])"
    return None


def _argv_words(argv: ast.expr, function: Function | None) -> set[str]:
    """The constant strings of an argument list: a literal list, or a local list filled with .append()."""
    if isinstance(argv, ast.List | ast.Tuple):
        return {e.value for e in argv.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)}
    if not (isinstance(argv, ast.Name) and function is not None):
        return set()
    words: set[str] = set()
    for node in walk_function(function):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in {"append", "extend", "insert"}
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id == argv.id
        ):
            for arg in node.args:
                words |= _argv_words(arg, None) if isinstance(arg, ast.List | ast.Tuple) else set()
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                    words.add(arg.value)
        elif isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == argv.id for t in node.targets):
            words |= _argv_words(node.value, None)
    return words


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
        example("""
            import subprocess
            from flask import request
            def echo():
                command = "sh -c "
                command += f"echo {request.args['text']}"
                return subprocess.run(command, shell=True, capture_output=True).stdout
        """),
        example("""
            import subprocess

            def deploy(host):
                subprocess.run(f"ssh {host} systemctl restart app", shell=True, check=True)
        """),
        example("""
            import os

            def archive(name):
                cmd = "tar czf /backups/" + name + ".tgz /srv/data"
                os.system(cmd)
        """),
        example("""
            from flask import request
            import os

            def ping():
                return os.popen(request.args["host"]).read()
        """),
        example("""
            import subprocess

            def run_hook(hook_cmd):
                return subprocess.check_output(hook_cmd, shell=True)
        """),
        example("""
            import subprocess
            from flask import request

            def echo():
                argv = []
                argv.append("sh")
                argv.append("-c")
                argv.append(f"echo {request.args['msg']}")
                return subprocess.run(argv, capture_output=True).stdout
        """),
    ],
    no_match=[
        example("""
            import subprocess
            from flask import request

            def echo():
                return subprocess.run(["echo", request.args["msg"]], capture_output=True).stdout
        """),
        example("""
            import subprocess

            def deploy(host):
                subprocess.run(["ssh", host, "systemctl", "restart", "app"], check=True)
        """),
        example("""
            import os

            def clean():
                os.system("rm -rf /tmp/build-cache")
        """),
        example("""
            import shlex, subprocess

            def deploy(host):
                subprocess.run(f"ssh {shlex.quote(host)} uptime", shell=True)
        """),
        example("""
            import subprocess
            STATUS = "systemctl status app"

            def status():
                return subprocess.check_output(STATUS, shell=True)
        """),
    ],
    nodes=(ast.Call,),
)
def command_injection(module: PyModule, node: ast.Call) -> Iterator[CheckHit]:
    imports, values = module.imports, module.constants
    function = module.enclosing_function(node)
    label = _shell_label(node, qualified_name(node, imports), function)
    command = first_arg(node, "args", "cmd", "command") if label else None
    if label is None or command is None:
        return
    built = resolve_value(command, function, values)
    argv_shell = "', '-c'" in label
    if isinstance(built, ast.List | ast.Tuple) and not argv_shell:  # with a shell only the first item is run
        built = built.elts[0] if built.elts else ast.Constant("")
    outside = tainted_at(module, node, command, ("quote",))  # built up by += or through helpers
    if outside is None and not argv_shell and _quoted(built):
        return
    origin = Origin.source(outside) if outside else judge(module, node, command, ("quote",))
    severity = origin.severity(parameter="P0" if is_dynamic_string(built) or argv_shell else "P1")
    if severity is None:
        return
    call = label.replace("…", snippet(command, 30), 1)
    built_from = origin.label if origin.kind != "unknown" else ""
    where = f"built from {built_from}" if built_from else f"from `{snippet(command)}`"
    yield sink_hit(
        module,
        node,
        origin,
        severity,
        title=f"Command {where} runs through a shell: {call}",
        why=(
            "The shell parses the whole string, so a value containing `;`, `&&`, `$(...)` "
            "or backticks runs extra commands with this process's rights." + origin_note(origin, _UNSEEN)
        ),
        fix=(
            'Pass an argument list without a shell (subprocess.run(["ssh", host, ...])); '
            "if a shell is unavoidable, wrap every runtime value in shlex.quote()."
        ),
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
    calls = (call_name(n) for n in walk_function(function) if isinstance(n, ast.Call)) if function else ()
    return any(name_tail(c) in {"eval", "exec"} for c in calls)


@python_check(
    "py-eval-exec",
    tag="security",
    severity="P0",
    summary="eval/exec/compile run a non-constant string as Python code",
    match=[
        example("""
            def calculate(expression):
                return eval(expression)
        """),
        example("""
            from flask import request

            def apply_rule():
                code = request.form["rule"]
                exec(code, {"__builtins__": {}})
        """),
        example("""
            def make_getter(field):
                return eval(f"lambda obj: obj.{field}")
        """),
    ],
    no_match=[
        example("""
            import ast

            def parse(value):
                return ast.literal_eval(value)
        """),
        example("""
            def setup():
                exec("import json", globals())
                code = compile("x + 1", "<expr>", "eval")
                return eval(code, {"x": 1})
        """),
        example("""
            import re

            def pattern(word):
                return re.compile(word)
        """),
        "def evaluate(model, data):\n    model.eval()\n    return model(data)\n",
        example("""
            from flask import request

            def echo():
                bar = request.cookies.get("expr", "")
                if not bar.startswith("'") or not bar.endswith("'") or "'" in bar[1:-1]:
                    return "Eval argument must be a plain string literal."
                return eval(bar)
        """),
        example("""
            from flask import request

            def pick():
                values = {}
                values["keyA"] = "'a-Value'"
                values["keyB"] = request.args.get("x")
                bar = values["keyA"]
                return eval(bar)
        """),
    ],
    nodes=(ast.Call,),
)
def eval_exec(module: PyModule, node: ast.Call) -> Iterator[CheckHit]:
    shadowed = module.memo("defined-functions", lambda: {f.name for f in module.function_defs})
    values = module.constants
    name = call_name(node)
    if name not in EVAL_NAMES or name in shadowed or not node.args:  # builtins.eval is never the module's own
        return
    function = module.enclosing_function(node)
    code = node.args[0]
    if isinstance(code, ast.Starred) or (
        name_tail(name) == "compile" and _runs_code(function or module.parents.get(node))
    ):
        return
    compiled = resolve_value(code, function, values)
    if isinstance(compiled, ast.Call) and call_name(compiled) == "compile" and compiled.args:
        code = compiled.args[0]  # exec(compile(src, ...)): judge the source text
    outside = tainted_at(module, node, code)  # the last assignment is not the only one that can reach here
    if outside is None and _constant_code(resolve_value(code, function, values)):
        return
    origin = Origin.source(outside) if outside else judge(module, node, code)
    severity = origin.severity()
    if severity is None:
        return
    shown = origin.label if origin.kind in {"outside", "command line"} else ""
    yield sink_hit(
        module,
        node,
        origin,
        severity,
        title=f"{name_tail(name)}() runs code from `{snippet(code)}`{f' ({shown})' if shown else ''}",
        why=(
            "Whatever text reaches this call runs as Python with the process's permissions; "
            "an emptied __builtins__ does not sandbox it (object.__subclasses__() leads to os)."
            + origin_note(origin, _UNSEEN)
        ),
        fix=(
            "Parse data instead of running it: ast.literal_eval for literals, json.loads for "
            "data, a dict of allowed operations for dispatch."
        ),
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
    if not isinstance(node, ast.Call) or name_tail(call_name(node)) != "open" or not node.args:
        return False
    return is_constant(resolve_value(node.args[0], function, values))


def _local_file(arg: ast.expr, function: Function | None, values: dict[str, ast.expr]) -> bool:
    """The data is a file this code opens by a fixed path (trusted as far as the disk is)."""
    if _opens_constant(resolve(arg, function), function, values):
        return True
    if not isinstance(arg, ast.Name) or function is None:
        return False
    for node in walk_function(function):
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
        if loader is None or name_tail(call_name(loader)) not in SAFE_LOADERS:
            return "P0", "yaml"
    return None


@python_check(
    "py-unsafe-deserialization",
    tag="security",
    severity="P0",
    summary="pickle/marshal/dill/shelve/jsonpickle, or yaml.load without SafeLoader, on live data",
    match=[
        example("""
            import pickle
            from flask import request

            def restore():
                state = pickle.loads(request.data)
                return state
        """),
        example("""
            import yaml

            def read_config(path):
                with open(path) as fh:
                    return yaml.load(fh, Loader=yaml.Loader)
        """),
        example("""
            import base64, pickle

            def from_cookie(value):
                return pickle.loads(base64.b64decode(value))
        """),
        example("""
            import yaml

            def parse(text):
                return yaml.unsafe_load(text)
        """),
    ],
    no_match=[
        example("""
            import yaml

            def read_config(path):
                with open(path) as fh:
                    return yaml.load(fh, Loader=yaml.SafeLoader)
        """),
        example("""
            import json

            def restore(body):
                return json.loads(body)
        """),
        example("""
            import yaml

            def parse(text):
                return yaml.safe_load(text)
        """),
        example("""
            import pickle

            def payload():
                return pickle.dumps({"a": 1})
        """),
    ],
    nodes=(ast.Call,),
)
def unsafe_deserialization(module: PyModule, node: ast.Call) -> Iterator[CheckHit]:
    imports, values = module.imports, module.constants
    kind = _deserializer(node, qualified_name(node, imports)) or _dispatched_loader(module, node)
    data = first_arg(node, *DATA_KEYWORDS) if kind else None
    function = module.enclosing_function(node) if data is not None else None
    if kind is None or data is None or is_constant(resolve_value(data, function, values)):
        return
    local = _local_file(data, function, values)
    origin = judge(module, node, data, ("dumps", "dump"))  # loads(dumps(x)) gives back what x was
    if (origin.kind == "clean" or _own_serialization(module, data)) and not local:
        return
    yaml = kind[1] == "yaml"
    severity = "P2" if local else origin.severity(outside=kind[0], parameter="P1")
    if severity is None:
        return
    yield sink_hit(
        module,
        node,
        origin,
        severity,
        title=(
            f"{call_name(node)}() deserializes `{snippet(data)}`"
            f"{' without SafeLoader' if yaml else ''}"
            f"{f' ({origin.label})' if origin.kind == 'outside' else ''}"
        ),
        why=(
            "Non-safe YAML loaders build arbitrary Python objects from tags such as "
            "!!python/object/apply, which runs code chosen by whoever wrote the document."
            if yaml
            else "These formats rebuild objects by calling whatever the data names "
            "(__reduce__), so anyone who can supply or alter the bytes runs code here."
        )
        + (
            " The path is fixed: this matters if others can write that file." if local else origin_note(origin, _UNSEEN)
        ),
        fix=(
            "Use yaml.safe_load() (or Loader=yaml.SafeLoader)."
            if yaml
            else "Use a data-only format (json, msgpack); if pickle is unavoidable, sign the "
            "bytes with hmac and verify the signature before loading."
        ),
    )


def _own_serialization(module: PyModule, data: ast.expr) -> bool:
    """``loads(self._meta)`` where the class only ever sets ``self._meta = dumps(...)``: its own bytes."""
    if not (isinstance(data, ast.Attribute) and isinstance(data.value, ast.Name) and data.value.id == "self"):
        return False
    cls = next((p for p in module.ancestors(data) if isinstance(p, ast.ClassDef)), None)
    if cls is None:
        return False
    values = [
        node.value
        for node in ast.walk(cls)
        if isinstance(node, ast.Assign)
        for target in node.targets
        if isinstance(target, ast.Attribute) and target.attr == data.attr and isinstance(target.value, ast.Name)
    ]
    branches = [b for v in values for b in _alternatives(v)]
    dumped = [v for v in branches if isinstance(v, ast.Call) and "dump" in call_name(v).rsplit(".", 1)[-1]]
    copied = [v for v in branches if isinstance(v, ast.Attribute) and v.attr == data.attr]  # other._meta
    return bool(dumped) and all(v in dumped or v in copied or is_constant(v) for v in branches)


def _alternatives(value: ast.expr) -> list[ast.expr]:
    """The values an expression can take: both arms of ``a if c else b``, every operand of ``a or b``."""
    if isinstance(value, ast.IfExp):
        return [*_alternatives(value.body), *_alternatives(value.orelse)]
    if isinstance(value, ast.BoolOp):
        return [alternative for operand in value.values for alternative in _alternatives(operand)]
    return [value]


def _dispatched_loader(module: PyModule, node: ast.Call) -> tuple[CheckSeverity, str] | None:
    """``LOADERS[content_type](body)``: a call through a table whose entries include an unpickler.

    Serializer registries (``{"application/json": json.loads, "application/pickle": pickle.loads}``)
    hide the loader behind a lookup the client's Content-Type chooses; the call is as dangerous as
    the worst entry the client can pick.
    """
    tables = module.memo("unpickler tables", lambda: _unpickler_tables(module))
    func = node.func
    if not tables or not isinstance(func, ast.Name | ast.Subscript):
        return None
    if isinstance(func, ast.Name):  # loader = LOADERS[kind]; loader(body)
        func = resolve(func, module.enclosing_function(node))
    if isinstance(func, ast.Subscript) and isinstance(func.value, ast.Name) and func.value.id in tables:
        return "P0", "pickle"
    return None


def _unpickler_tables(module: PyModule) -> frozenset[str]:
    """Module-level dicts with an unpickler among their values (``{"pickle": pickle.loads, ...}``)."""
    found = set()
    for name, table in module.constants.items():
        for entry in table.values if isinstance(table, ast.Dict) else ():
            dotted = _dotted_name(entry)
            head, dot, rest = dotted.partition(".")
            origin = module.imports.get(head)
            if (f"{origin}{dot}{rest}" if origin else dotted) in UNPICKLERS:
                found.add(name)
    return frozenset(found)


def _dotted_name(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        inner = _dotted_name(node.value)
        return f"{inner}.{node.attr}" if inner else ""
    return ""
