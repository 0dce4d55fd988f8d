"""fd-safety check: a value from outside becomes an option of an external program (argument injection, CWE-88).

An argument list keeps the shell out (no ``;``, no ``$(...)``), but the program
still reads every argument that starts with ``-`` as an option: a "repository
URL" ``--upload-pack=touch /tmp/x`` makes ``git clone`` run a command, a "host"
``-oProxyCommand=...`` does the same to ssh, a "file name"
``--checkpoint-action=exec=...`` to tar. cookiecutter (CVE-2022-24065), pip's
VCS support and many CI tools had this bug.

The check reads the argument vector a call runs when the list is visible in
the function (a literal, or a local list filled with ``append``/``extend``/
``+=``), judges every non-constant element with :func:`judge`, and stays quiet
when the element cannot become an option: a ``"--"`` before it, a guard that
refuses a leading ``-``, a value attached to an option (``f"--depth={n}"``), a
number or a sanitizer's result (``int()``..., and whatever a project lists under
``sanitizers: argument:`` in ``.fluxdrive/taint.yaml``). A program chosen by outside data is command
injection and left to ``py-command-injection``'s territory, as are shells run
with ``-c``.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from fluxdrive.runtimes.static.checks._common import (
    Function,
    example,
    first_arg,
    is_literal,
    name_tail,
    qualified_name,
    resolve_value,
    snippet,
    walk_function,
)
from fluxdrive.runtimes.static.checks._flows import Origin, judge, statement_of
from fluxdrive.runtimes.static.checks._scope import owning_class
from fluxdrive.runtimes.static.checks.engine.pymodule import PyModule
from fluxdrive.runtimes.static.checks.engine.registry import CheckHit, CheckSeverity, python_check
from fluxdrive.runtimes.static.checks.engine.syntax import call_name, is_constant, keyword, resolve

# --------------------------------------------------------------------------
# Programs whose options run commands or reach files: the P0 table (as data)

DANGEROUS: dict[str, str] = {
    "git": "`--upload-pack=<command>` or `-c core.sshCommand=<command>` runs a command",
    "hg": "`--config=hooks.<event>=<command>` or `--debugger` runs code",
    "svn": "`--config-option=config:tunnels:ssh=<command>` runs a command",
    "ssh": "`-oProxyCommand=<command>` runs a command",
    "scp": "`-oProxyCommand=<command>` or `-S <program>` runs a command",
    "sftp": "`-oProxyCommand=<command>` or `-S <program>` runs a command",
    "rsync": "`-e <command>` or `--rsh=<command>` runs a command",
    "curl": "`-o <file>` writes and `--config <file>` reads any file",
    "wget": "`--use-askpass=<command>` runs a command and `-O <file>` writes any file",
    "tar": "`--checkpoint-action=exec=<command>` or `--to-command=<command>` runs a command",
    "bsdtar": "`--use-compress-program=<command>` runs a command",
    "zip": "`-TT <command>` (`--unzip-command`) runs a command",
    "unzip": "`-d <dir>` with `-o` writes files anywhere",
    "7z": "`-o<dir>` writes files anywhere",
    "find": "`-exec <command> ;` runs a command and `-delete` removes files",
    "sendmail": "`-X <file>` writes the mail log to any file, `-C <file>` reads another configuration",
    "psql": "`-c <sql>` runs SQL and `-f <file>` reads any file",
    "mysql": "`-e <sql>` runs SQL and `--init-command` too",
}
# A program element 0 does not name: its subcommand says it is version control (``[vcs, "clone", url]``).
VCS_SUBCOMMANDS = frozenset(
    {"clone", "checkout", "fetch", "pull", "push", "ls-remote", "submodule", "switch", "cat-file", "ls-tree"}
)
VCS_DANGER = "a version-control tool's options (git `--upload-pack=<command>`, hg `--config=hooks...`) run commands"
# Programs that run the next word as the program (``sudo git clone url``).
WRAPPERS = frozenset({"sudo", "doas", "env", "nice", "nohup", "timeout", "ionice", "stdbuf", "chrt", "taskset"})
SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "cmd", "cmd.exe", "powershell", "powershell.exe", "pwsh"})
SEPARATORS = frozenset({"--", "--end-of-options"})

SUBPROCESS_CALLS = frozenset(
    {"subprocess.run", "subprocess.call", "subprocess.check_call", "subprocess.check_output", "subprocess.Popen"}
)
# os.exec*/spawn*: (position of the program, position of the argv list or of argv[0], takes an env last)
EXEC_V = {f"os.exec{s}": (0, 1) for s in ("v", "ve", "vp", "vpe")} | {
    f"os.spawn{s}": (1, 2) for s in ("v", "ve", "vp", "vpe")
}
EXEC_L = {f"os.exec{s}": (0, 1, s.endswith("e")) for s in ("l", "le", "lp", "lpe")} | {
    f"os.spawn{s}": (1, 2, s.endswith("e")) for s in ("l", "le", "lp", "lpe")
}

Item = tuple[ast.expr, bool]  # an argument, and whether it stands for a whole list of them (``*args``)


# --------------------------------------------------------------------------
# The argument vector a call runs


def _argv(
    module: PyModule, function: Function | None, expr: ast.expr, before: tuple[int, int], depth: int = 0
) -> list[Item] | None:
    """The items of an argument list as written, or None when the list is not visible here."""
    if depth > 6:
        return None
    if isinstance(expr, ast.List | ast.Tuple):
        return _items(module, function, expr.elts, before, depth)
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Add):
        left = _argv(module, function, expr.left, before, depth + 1)
        right = _argv(module, function, expr.right, before, depth + 1)
        return None if left is None else left + (right if right is not None else [(expr.right, True)])
    if isinstance(expr, ast.Name) and function is not None:
        return _local_list(module, function, expr.id, before, depth)
    return None


def _items(
    module: PyModule, function: Function | None, elements: list[ast.expr], before: tuple[int, int], depth: int
) -> list[Item]:
    out: list[Item] = []
    for element in elements:
        if isinstance(element, ast.Starred):
            inner = _argv(module, function, element.value, before, depth + 1)
            out.extend(inner if inner is not None else [(element.value, True)])
        else:
            out.append((element, False))
    return out


def _position(node: ast.AST) -> tuple[int, int]:
    return (getattr(node, "lineno", 0), getattr(node, "col_offset", 0))


def _list_events(
    module: PyModule, function: Function, name: str, before: tuple[int, int]
) -> list[tuple[tuple[int, int], str, ast.AST]]:
    """What the function does to the local list ``name`` before ``before``: set, add (``+=``), or a method."""
    events: list[tuple[tuple[int, int], str, ast.AST]] = []
    for node in walk_function(function):
        if not isinstance(node, ast.stmt) or _position(node) >= before:
            continue
        targets = (
            node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        )
        value = node.value if isinstance(node, ast.Assign | ast.AnnAssign) else None
        if value is not None and any(isinstance(t, ast.Name) and t.id == name for t in targets):
            events.append((_position(node), "set", value))
        elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name) and node.target.id == name:
            events.append((_position(node), "add", node.value))
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
            func = node.value.func
            if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == name:
                events.append((_position(node), func.attr, node.value))
    mine = [event for event in events if module.enclosing_function(event[2]) is function]
    return sorted(mine, key=lambda event: event[0])


def _local_list(
    module: PyModule, function: Function, name: str, before: tuple[int, int], depth: int
) -> list[Item] | None:
    """A local list as it stands at ``before``: its last assignment, then the appends, extends and ``+=`` after it."""
    events = _list_events(module, function, name, before)
    start = max((i for i, event in enumerate(events) if event[1] == "set"), default=None)
    first = events[start][2] if start is not None else None
    if start is None or not isinstance(first, ast.expr):
        return None
    items = _argv(module, function, first, events[start][0], depth + 1)
    if items is None:
        return None
    for position, kind, node in events[start + 1 :]:
        if kind == "add" and isinstance(node, ast.expr):
            items += _argv(module, function, node, position, depth + 1) or [(node, True)]
        elif isinstance(node, ast.Call) and kind == "append" and len(node.args) == 1:
            items.append((node.args[0], False))
        elif isinstance(node, ast.Call) and kind == "extend" and len(node.args) == 1:
            items += _argv(module, function, node.args[0], position, depth + 1) or [(node.args[0], True)]
        elif isinstance(node, ast.Call) and kind == "insert" and len(node.args) == 2:
            index = node.args[0].value if isinstance(node.args[0], ast.Constant) else None
            at = index if isinstance(index, int) and not isinstance(index, bool) else len(items)
            items.insert(at, (node.args[1], False))
    return items


def _command(module: PyModule, node: ast.Call) -> tuple[ast.expr, list[Item]] | None:
    """The program a call runs and the arguments it passes (argv[0] of exec-style calls left out)."""
    qualified = qualified_name(node, module.imports)
    function = module.enclosing_function(node)
    before = _position(statement_of(module, node))
    if qualified in SUBPROCESS_CALLS:
        if is_literal(keyword(node, "shell"), True):
            return None  # a shell parses the string: py-command-injection's
        argv = first_arg(node, "args")
        items = _argv(module, function, argv, before) if argv is not None else None
        return (items[0][0], items[1:]) if items and not items[0][1] else None
    if qualified in EXEC_V and len(node.args) > EXEC_V[qualified][1]:
        program, at = EXEC_V[qualified]
        items = _argv(module, function, node.args[at], before)
        return (node.args[program], items[1:]) if items is not None else None
    if qualified in EXEC_L and len(node.args) > EXEC_L[qualified][1]:
        program, at, env = EXEC_L[qualified]
        args = node.args[at + 1 : len(node.args) - 1 if env else None]
        return node.args[program], _items(module, function, args, before, 0)
    if qualified == "asyncio.create_subprocess_exec" or name_tail(qualified) == "subprocess_exec":
        given = node.args if qualified == "asyncio.create_subprocess_exec" else node.args[1:]
        items = _items(module, function, list(given), before, 0)
        return (items[0][0], items[1:]) if items and not items[0][1] else None
    return None


# --------------------------------------------------------------------------
# Which program, and how dangerous its options are


def _text(node: ast.expr, function: Function | None, module: PyModule) -> str | None:
    value = resolve_value(node, function, module.constants)
    if isinstance(value, ast.Call) and name_tail(call_name(value)) == "which" and value.args:
        value = resolve_value(value.args[0], function, module.constants)
    return value.value if isinstance(value, ast.Constant) and isinstance(value.value, str) else None


def _program(module: PyModule, node: ast.Call, program: ast.expr, items: list[Item]) -> tuple[str, str | None]:
    """The program's name as shown, and what its options can do when it is in :data:`DANGEROUS`."""
    function = module.enclosing_function(node)
    words = [None if many else _text(item, function, module) for item, many in items]
    text = _text(program, function, module)
    name = _basename(text) if text is not None else ""
    if name in WRAPPERS:  # sudo -u deploy git clone URL: a known program among the words, else the first plain one
        plain = [_basename(w) for w in words if w and not w.startswith("-") and "=" not in w and not w.isdigit()]
        name = next((w for w in plain if w in DANGEROUS), plain[0] if plain else name)
    executable = call_name(program) == "sys.executable" or name.startswith("python")
    if executable and len(words) > 1 and words[0] == "-m" and words[1]:
        name = words[1]  # python -m pip: the module is the program
    if name in DANGEROUS:
        return name, DANGEROUS[name]
    if text is None and not name:
        shown = snippet(program, 30)
        subcommand = next((w for w in words if w is not None), None)
        if subcommand in VCS_SUBCOMMANDS:
            return f"the version-control tool `{shown}`", VCS_DANGER
        return f"`{shown}`", None
    return name, None


def _basename(text: str) -> str:
    name = text.replace("\\", "/").rsplit("/", 1)[-1].lower()
    return name.removesuffix(".exe")


# --------------------------------------------------------------------------
# Values that cannot become an option


def _prefix(value: ast.expr) -> str:
    """The constant text a built string starts with ("" when it starts with a runtime value)."""
    if isinstance(value, ast.JoinedStr) and value.values:
        first = value.values[0]
        return first.value if isinstance(first, ast.Constant) and isinstance(first.value, str) else ""
    if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add):
        if isinstance(value.left, ast.Constant) and isinstance(value.left.value, str):
            return value.left.value
        return _prefix(value.left)
    if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Mod) and isinstance(value.left, ast.Constant):
        return str(value.left.value).split("%", 1)[0]
    func = value.func if isinstance(value, ast.Call) else None
    if isinstance(func, ast.Attribute) and func.attr == "format" and isinstance(func.value, ast.Constant):
        return str(func.value.value).split("{", 1)[0]
    return ""


def _unwrapped(value: ast.expr) -> ast.expr:
    """``str(x)`` / ``os.fspath(x)`` / ``f"{x}"`` -> ``x``."""
    if isinstance(value, ast.Call) and call_name(value) in {"str", "os.fspath", "fspath"} and len(value.args) == 1:
        return _unwrapped(value.args[0])
    if isinstance(value, ast.JoinedStr) and len(value.values) == 1 and isinstance(value.values[0], ast.FormattedValue):
        return _unwrapped(value.values[0].value)
    return value


ABSOLUTE = frozenset({"abspath", "realpath", "resolve", "absolute"})
NUMBERS = frozenset({"int", "float", "bool"})


def _cannot_be_option(value: ast.expr, function: Function | None, module: PyModule) -> bool:
    """Constants, values attached to an option or after fixed text, absolute paths, numbers."""
    built = resolve_value(value, function, module.constants)
    if is_constant(built):
        return True
    prefix = _prefix(built)
    if prefix and (not prefix.startswith("-") or "=" in prefix):  # f"--depth={n}", f"origin/{branch}"
        return True
    inner = _unwrapped(built)
    if isinstance(inner, ast.Call) and name_tail(call_name(inner)) in ABSOLUTE:
        return True  # an absolute path starts with "/"
    return _number_parameter(_unwrapped(value), function)


def _number_parameter(value: ast.expr, function: Function | None) -> bool:
    if not isinstance(value, ast.Name) or function is None:
        return False
    arguments = function.args
    for arg in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]:
        if arg.arg == value.id:
            return isinstance(arg.annotation, ast.Name) and arg.annotation.id in NUMBERS
    return False


def _after_separator(items: list[Item], index: int) -> bool:
    return any(isinstance(item, ast.Constant) and item.value in SEPARATORS for item, _ in items[:index])


# --------------------------------------------------------------------------
# Guards that refuse a leading dash


@dataclass(frozen=True, slots=True)
class _Subject:
    """What a guard must test: ``keys`` are the dumped expressions that stand for the value (itself,
    its one local assignment, the name a method chain starts from); ``patterns`` the module's
    ``NAME = re.compile(r"...")`` constants, for ``NAME.match(value)`` guards."""

    keys: frozenset[str]
    patterns: Mapping[str, str]


def _subjects(value: ast.expr, function: Function | None) -> set[str]:
    """The expressions a guard may test to vouch for ``value`` (itself, its one local assignment, its name)."""
    keys = {ast.dump(value), ast.dump(resolve(value, function))}
    inner = value
    while isinstance(inner, ast.Call) and isinstance(inner.func, ast.Attribute):  # url.strip() -> url
        inner = inner.func.value
    if isinstance(inner, ast.Name):
        keys.add(ast.dump(inner))
    return keys


def _is(node: ast.AST, subject: _Subject) -> bool:
    return ast.dump(node) in subject.keys


def _method(node: ast.AST, name: str, subject: _Subject) -> ast.Call | None:
    """``subject.name(...)`` -> the call, when its receiver is the subject."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == name:
        return node if _is(node.func.value, subject) else None
    return None


def _strings(node: ast.expr) -> list[str] | None:
    """The constant text of a string or a tuple of strings."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.Tuple) and all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.elts):
        return [e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    return None


def _first_char(node: ast.AST, subject: _Subject) -> bool:
    """``x[0]`` / ``x[:1]`` of the subject."""
    if not (isinstance(node, ast.Subscript) and _is(node.value, subject)):
        return False
    index = node.slice
    if isinstance(index, ast.Constant):
        return index.value == 0
    return isinstance(index, ast.Slice) and index.lower is None and _literal_int(index.upper, 1)


def _literal_int(node: ast.AST | None, value: int) -> bool:
    return isinstance(node, ast.Constant) and node.value == value and not isinstance(node.value, bool)


def _dash_test(test: ast.expr, subject: _Subject, *, says_dash: bool = True) -> bool:
    """True whenever the subject starts with ``-`` (so ``if test: raise`` refuses options).

    With ``says_dash=False`` the mirror question: true only when the subject does not start with
    ``-`` (so ``if not test: raise`` refuses options). ``not`` swaps the two and ``or`` / ``and``
    swap with them, so one walk over the condition answers both.
    """
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.Or if says_dash else ast.And):
        return any(_dash_test(part, subject, says_dash=says_dash) for part in test.values)
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return _dash_test(test.operand, subject, says_dash=not says_dash)
    call = _method(test, "startswith", subject)
    if call is not None and call.args:
        prefixes = _strings(call.args[0])
        if says_dash:
            return "-" in (prefixes or [])
        # url.startswith(("https://", "git@")): a fixed first character
        return bool(prefixes) and all(p and not p.startswith("-") for p in prefixes or [])
    if _dash_compare(test, subject, says_dash=says_dash):
        return True
    return not says_dash and isinstance(test, ast.Call) and _regex_guard(test, subject)  # a pattern refusing a dash


def _no_dash_test(test: ast.expr, subject: _Subject) -> bool:
    """True only when the subject does not start with ``-`` (see :func:`_dash_test`)."""
    return _dash_test(test, subject, says_dash=False)


def _dash_compare(test: ast.expr, subject: _Subject, *, says_dash: bool) -> bool:
    """``x[0] == "-"`` or ``x.lstrip("-") != x`` (``says_dash``), or their negations (``!=``, ``==``)."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
        return False
    left, right, op = test.left, test.comparators[0], test.ops[0]
    first_char_op, stripped_op = (ast.Eq, ast.NotEq) if says_dash else (ast.NotEq, ast.Eq)
    if isinstance(op, first_char_op) and (
        (_first_char(left, subject) and _dash(right)) or (_first_char(right, subject) and _dash(left))
    ):
        return True
    stripped = _method(left, "lstrip", subject)
    if isinstance(op, stripped_op) and stripped is not None and _is(right, subject):
        return bool(stripped.args) and _strings(stripped.args[0]) == ["-"]
    return False


def _dash(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and node.value == "-"


def _regex_guard(call: ast.Call, subject: _Subject) -> bool:
    """``re.match(r"^[\\w.]", x)`` / ``PATTERN.fullmatch(x)``: a pattern whose first character is no dash."""
    tail = name_tail(call_name(call))
    if tail not in {"match", "fullmatch", "search"}:
        return False
    receiver = call.func.value if isinstance(call.func, ast.Attribute) else None
    if isinstance(receiver, ast.Name) and receiver.id != "re":  # PATTERN.match(x), PATTERN = re.compile(r"...")
        pattern = subject.patterns.get(receiver.id)
        return (
            bool(call.args)
            and _is(call.args[0], subject)
            and pattern is not None
            and refuses_dash(pattern, anchored=tail != "search")
        )
    if len(call.args) < 2 or not _is(call.args[1], subject):
        return False
    given = call.args[0]
    return (
        isinstance(given, ast.Constant)
        and isinstance(given.value, str)
        and refuses_dash(given.value, anchored=tail != "search")
    )


_CLASS_ESCAPES = {"w": False, "d": False, "s": False, "W": True, "D": True, "S": True}


def refuses_dash(pattern: str, *, anchored: bool) -> bool:
    """The regular expression cannot match text that starts with ``-`` (its first atom excludes it).

    Conservative: a group, an alternation, an optional first atom or anything unusual answers False.
    """
    text = pattern
    if text.startswith(("\\A", "^")):
        text = text[2:] if text.startswith("\\A") else text[1:]
    elif not anchored:
        return False
    if "|" in pattern or not text:
        return False
    if text[0] == "[":
        end, members = _char_class(text)
        if end < 0:
            return False
        after = text[end + 1 : end + 2]
    elif text[0] == "\\" and len(text) > 1:
        if text[1] not in _CLASS_ESCAPES and text[1].isalnum():
            return False
        members = _CLASS_ESCAPES.get(text[1], text[1] == "-")
        after = text[2:3]
    elif text[0] in "(.)?*+{":
        return False
    else:
        members = text[0] == "-"
        after = text[1:2]
    return not members and after not in {"?", "*", "{"}


def _char_class(text: str) -> tuple[int, bool]:
    """(index of the closing ``]``, whether ``-`` is in the class) for text starting with ``[``."""
    i, negated = 1, text[1:2] == "^"
    i += negated
    chars: list[str] = []
    dash = False
    start = i
    while i < len(text):
        c = text[i]
        if c == "]" and i > start:
            break
        if c == "\\" and i + 1 < len(text):
            escaped = text[i + 1]
            dash = dash or _CLASS_ESCAPES.get(escaped, escaped == "-")
            i += 2
            continue
        if c == "-" and chars and i + 1 < len(text) and text[i + 1] != "]":
            low, high = chars[-1], text[i + 1]
            dash = dash or low <= "-" <= high
            i += 2
            continue
        dash = dash or c == "-"
        chars.append(c)
        i += 1
    if i >= len(text):
        return -1, False
    return i, (not dash) if negated else dash


def _guarded(module: PyModule, node: ast.Call, value: ast.expr) -> bool:
    """A test before the call (or around it) refuses a value of ``value``'s that starts with ``-``."""
    function = module.enclosing_function(node)
    if function is None:
        return False
    patterns = module.memo("argument-injection patterns", lambda: _compiled_patterns(module))
    subject = _Subject(frozenset(_subjects(value, function)), patterns)
    here = _position(statement_of(module, node))
    for statement in walk_function(function):
        if isinstance(statement, ast.If) and _position(statement) < here:
            if _leaves(statement.body) and _dash_test(statement.test, subject):
                return True
            if _leaves(statement.orelse) and _no_dash_test(statement.test, subject):
                return True
        elif (
            isinstance(statement, ast.Assert) and _position(statement) < here and _no_dash_test(statement.test, subject)
        ):
            return True
    child: ast.AST = node
    for parent in module.ancestors(node):  # if not url.startswith("-"): run(...)
        if isinstance(parent, ast.If) and child in parent.body and _no_dash_test(parent.test, subject):
            return True
        if parent is function:
            break
        child = parent
    return False


def _leaves(block: list[ast.stmt]) -> bool:
    return bool(block) and isinstance(block[-1], ast.Return | ast.Raise | ast.Continue | ast.Break)


def _compiled_patterns(module: PyModule) -> dict[str, str]:
    """``NAME = re.compile(r"...")`` at module level: the pattern each NAME stands for."""
    return {
        name: value.args[0].value
        for name, value in module.constants.items()
        if isinstance(value, ast.Call)
        and name_tail(call_name(value)) == "compile"
        and value.args
        and isinstance(value.args[0], ast.Constant)
        and isinstance(value.args[0].value, str)
    }


# --------------------------------------------------------------------------
# The check


# Classes whose methods run as a command-line program (Django's management commands): their
# parameters come from whoever runs the command, or from the project's own database.
COMMAND_CLASSES = frozenset({"BaseCommand", "LabelCommand", "AppCommand"})


def _severity(module: PyModule, function: Function, origin: Origin, dangerous: bool) -> CheckSeverity | None:
    if origin.kind == "outside":
        return "P0" if dangerous else "P1"
    if origin.kind == "parameter" and dangerous and not _command_method(module, function):
        return "P1"
    return None  # the command line, what the flow cannot see, constants: not reported


def _command_method(module: PyModule, function: Function) -> bool:
    cls = owning_class(module, function)
    return cls is not None and any(call_name(base).rsplit(".", 1)[-1] in COMMAND_CLASSES for base in cls.bases)


@python_check(
    "py-argument-injection",
    tag="security",
    severity="P1",
    summary="A value from outside is passed to an external program where it can start with '-' and become an option",
    tests=False,  # a test's arguments are the test's own
    match=[
        example("""
            import subprocess
            from flask import request

            def mirror():
                url = request.args["url"]
                subprocess.run(["git", "clone", url, "/srv/mirror"], check=True)
        """),
        example("""
            import subprocess

            def clone(url, dest):
                cmd = ["git", "clone", "--quiet"]
                cmd.append(url)
                cmd += [dest]
                subprocess.check_call(cmd)
        """),
        example("""
            import subprocess
            from flask import request

            def show():
                return subprocess.check_output(["cat", request.form["name"]])
        """),
    ],
    no_match=[
        example("""
            import subprocess
            from flask import request

            def mirror():
                url = request.args["url"]
                subprocess.run(["git", "clone", "--", url, "/srv/mirror"], check=True)
        """),
        example("""
            import subprocess
            from flask import request

            def mirror():
                url = request.args["url"]
                if url.startswith("-"):
                    raise ValueError("not a repository URL")
                subprocess.run(["git", "clone", url, "/srv/mirror"], check=True)
        """),
        example("""
            import subprocess
            from flask import request

            def mirror():
                depth = request.args["depth"]
                subprocess.run(["git", "clone", f"--depth={depth}", "https://example.com/app.git"], check=True)
        """),
        example("""
            import subprocess

            def status():
                return subprocess.check_output(["git", "status", "--porcelain"])
        """),
        example("""
            import subprocess

            def _clone(url):
                subprocess.run(["git", "clone", url], check=True)
        """),
    ],
    nodes=(ast.Call,),
)
def argument_injection(module: PyModule, node: ast.Call) -> Iterator[CheckHit]:
    found = _command(module, node)
    if found is None or not found[1]:
        return
    program, items = found
    function = module.enclosing_function(node)
    if function is None:
        return
    name, danger = _program(module, node, program, items)
    words = {i.value for i, many in items if not many and isinstance(i, ast.Constant)}
    if name in SHELLS and words & {"-c", "/c", "/C", "-Command"}:
        return  # sh -c TEXT: the shell parses it, py-command-injection's
    chosen = not is_constant(resolve_value(program, function, module.constants))
    if chosen and judge(module, node, program).kind == "outside":
        return  # the client picks the program: command injection, not an option
    cleaners = module.taint_spec.cleaners_for("argument")
    worst: tuple[CheckSeverity, ast.expr, Origin] | None = None
    for index, (item, many) in enumerate(items):
        if _after_separator(items, index) or _cannot_be_option(item, function, module) or _guarded(module, node, item):
            continue
        origin = judge(module, node, item, cleaners)
        if many and origin.kind != "outside":
            continue  # *args from the caller: a list of arguments is meant to carry options
        severity = _severity(module, function, origin, danger is not None)
        if severity is not None and (worst is None or severity < worst[0]):
            worst = (severity, item, origin)
    if worst is None:
        return
    severity, item, origin = worst
    shown = f"`{snippet(item, 30)}`"
    who = f"Parameter {shown}" if origin.kind == "parameter" else f"Value {shown} from {origin.label}"
    how = danger or "an option changes what the program does (which files it reads or writes, what it runs)"
    yield CheckHit(
        line=getattr(item, "lineno", node.lineno),  # where the value enters the argument list
        title=f"{who} becomes an option of {name} (argument injection) {module.where(node)}",
        why=(
            f"An argument list keeps the shell out, but {name} reads any argument that starts with `-` "
            f"as an option: {how}. A value like `--upload-pack=touch /tmp/pwned` is not a URL or a name "
            "to the program, it is an instruction."
        ),
        fix=(
            'Put "--" before values from outside (["git", "clone", "--", url, dest]) so the program '
            'only ever reads them as operands, or refuse values that start with "-" before the call.'
        ),
        severity=severity,
        evidence=origin.proof,
    )
