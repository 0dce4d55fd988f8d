"""fd-safety checks: file paths from the client reaching open/send/delete calls.

Only request handlers are judged (a route decorator or a Django-style
``request`` first parameter); their client-controlled parameters and request
fields are followed through local assignments, and any sanitizing call in the
handler silences the check.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from typing import TypeAlias

from fluxdrive.runtimes.static.checks._common import (
    Function,
    example,
    first_arg,
    from_request,
    is_django_view,
    name_tail,
    param_defaults,
    positional_args,
    qualified_name,
    request_field,
    route_call,
    route_path,
    snippet,
    walk_function,
)
from fluxdrive.runtimes.static.checks._flows import proven_clean, tainted_at
from fluxdrive.runtimes.static.checks.engine.pymodule import PyModule
from fluxdrive.runtimes.static.checks.engine.registry import CheckHit, CheckSeverity, python_check
from fluxdrive.runtimes.static.checks.engine.syntax import call_name, resolve
from fluxdrive.runtimes.static.checks.engine.taint_spec import TaintSpec

Taint: TypeAlias = tuple[CheckSeverity, str]
Cleaners: TypeAlias = frozenset[str] | set[str]


# --------------------------------------------------------------------------
# Path traversal


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
PATH_TYPES = {"Path", "PurePath", "PosixPath", "WindowsPath"}
FLASK_PLACEHOLDER = re.compile(r"<(?:(\w+)(?:\([^)]*\))?:)?(\w+)>")


def _client_param(arg: ast.arg, default: ast.expr | None) -> bool:
    """A handler parameter that can carry text from the client."""
    if arg.arg in NOT_PATH_PARAMS:
        return False
    if isinstance(default, ast.Call) and name_tail(call_name(default)) in {"Depends", "Security"}:
        return False
    annotation = snippet(arg.annotation, 300) if arg.annotation is not None else ""
    return "Depends(" not in annotation and name_tail(annotation) not in NON_TEXT_TYPES


def _route_params(function: Function) -> set[str]:
    """Parameters of a request handler whose values come from the client."""
    if route_call(function) is None and not is_django_view(function):
        return set()
    candidates = [*positional_args(function), *function.args.kwonlyargs]
    path = route_path(function)
    if "<" in path:  # Flask: only the placeholders come from the URL, typed ones are safe
        placeholders = FLASK_PLACEHOLDER.findall(path)
        keep = {name for kind, name in placeholders if kind not in {"int", "float", "uuid"}}
        candidates = [a for a in candidates if a.arg in keep]
    defaults = dict(param_defaults(function))
    return {a.arg for a in candidates if _client_param(a, defaults.get(a.arg))}


def _taint(node: ast.AST, function: Function, params: set[str], clean: Cleaners, depth: int = 0) -> Taint | None:
    """(severity, source) when an expression carries client input, else None."""
    if depth > 10:
        return None
    field = request_field(node)
    if field:
        return "P0", field
    if isinstance(node, ast.Call) and name_tail(call_name(node)) in clean:
        return None
    if isinstance(node, ast.Name):
        if node.id in params:
            return "P1", f"route parameter `{node.id}`"
        value = resolve(node, function)
        return None if value is node else _taint(value, function, params, clean, depth + 1)
    found: Taint | None = None
    for child in ast.iter_child_nodes(node):
        hit = _taint(child, function, params, clean, depth + 1)
        if hit and (found is None or hit[0] == "P0"):
            found = hit
    return found


def _pathlike(node: ast.expr, function: Function, depth: int = 0) -> bool:
    """A pathlib path: ``Path(...)`` or ``base / name``, possibly through one variable."""
    value = resolve(node, function) if depth < 3 else node
    if isinstance(value, ast.Call):
        return name_tail(call_name(value)) in PATH_TYPES
    if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Div):
        return _pathlike(value.left, function, depth + 1)
    return False


def _path_sink(node: ast.Call, function: Function, spec: TaintSpec) -> tuple[ast.expr, str] | None:
    """(path expression, label) when a call opens, sends or deletes a file."""
    name = call_name(node)
    files, paths = spec.sinks["path"], spec.sinks["path_object"]
    if name in files.calls or name_tail(name) in {"send_file", "FileResponse", "send_from_directory"}:
        # send_from_directory joins safely itself: only its directory argument is a risk
        arg = first_arg(node, *files.keywords)
        return (arg, f"{name}()") if arg is not None else None
    func = node.func
    if isinstance(func, ast.Attribute) and func.attr in paths.calls:
        return (func.value, f"Path.{func.attr}()") if _pathlike(func.value, function) else None
    if isinstance(func, ast.Attribute) and func.attr == "save" and node.args:
        upload = from_request(resolve(func.value, function)) == "request.files"
        return (node.args[0], "FileStorage.save()") if upload else None
    return None


def _flow_taint(module: PyModule, node: ast.Call, path: ast.expr) -> Taint | None:
    """Request data the path carries by taint tracking (through helpers, loops, dict entries), as P1."""
    source = tainted_at(module, node, path, module.taint_spec.cleaners_for("path"))
    return ("P1", source) if source else None


def _sanitizes_paths(function: Function, clean: Cleaners) -> bool:
    tails = {name_tail(call_name(n)) for n in walk_function(function) if isinstance(n, ast.Call)}
    if tails & clean:
        return True
    return "startswith" in tails and bool(tails & {"realpath", "abspath", "resolve"})


@python_check(
    "py-path-traversal",
    tag="security",
    severity="P1",
    summary="A file path from request data or a route parameter is opened/sent without sanitizing",
    match=[
        example("""
            import os
            from flask import request, send_file

            @app.route("/download")
            def download():
                name = request.args.get("file")
                return send_file(os.path.join("/srv/reports", name))
        """),
        example("""
            @app.route("/logs/<path:name>")
            def show_log(name):
                with open(f"/var/log/app/{name}") as fh:
                    return fh.read()
        """),
        example("""
            from pathlib import Path
            from fastapi import UploadFile

            @router.post("/upload")
            async def upload(file: UploadFile):
                target = Path("uploads") / file.filename
                target.write_bytes(await file.read())
        """),
    ],
    no_match=[
        example("""
            import os
            from flask import request, send_file
            from werkzeug.utils import secure_filename

            @app.route("/download")
            def download():
                name = secure_filename(request.args.get("file"))
                return send_file(os.path.join("/srv/reports", name))
        """),
        example("""
            @app.route("/report/<int:report_id>")
            def report(report_id):
                with open(f"/srv/reports/{report_id}.txt") as fh:
                    return fh.read()
        """),
        example("""
            from flask import request, send_from_directory

            @app.route("/files")
            def files():
                return send_from_directory("/srv/files", request.args["name"])
        """),
        example("""
            def load(path):
                with open(path) as fh:
                    return fh.read()
        """),
    ],
)
def path_traversal(module: PyModule) -> Iterator[CheckHit]:
    spec = module.taint_spec
    clean = frozenset(spec.cleaners_for("path"))
    for function in module.function_defs:
        calls = [n for n in walk_function(function) if isinstance(n, ast.Call)]
        sinks = [(n, s) for n in calls if (s := _path_sink(n, function, spec))]
        if not sinks or _sanitizes_paths(function, clean):
            continue
        params = _route_params(function)
        lines: set[int] = set()
        for node, sink in sinks:
            if node.lineno in lines or module.enclosing_function(node) is not function:
                continue
            taint = _taint(sink[0], function, params, clean) or _flow_taint(module, node, sink[0])
            if taint is None or proven_clean(module, node, sink[0], spec.cleaners_for("path")):
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


@python_check(
    "py-prefix-containment",
    tag="security",
    severity="P1",
    summary="os.path.commonprefix decides whether a path is inside a directory (it compares characters)",
    match=[
        example("""
            import os

            def lookup(directory, path):
                full = os.path.realpath(os.path.join(directory, path))
                if os.path.commonprefix([full, directory]) != directory:
                    return None
                return full
        """),
    ],
    no_match=[
        example("""
            import os

            def lookup(directory, path):
                full = os.path.realpath(os.path.join(directory, path))
                if os.path.commonpath([full, directory]) != directory:
                    return None
                return full
        """),
        example("""
            import os

            def shared_prefix(names):
                return os.path.commonprefix(names)
        """),
    ],
    nodes=(ast.Call,),
)
def prefix_containment(module: PyModule, node: ast.Call) -> Iterator[CheckHit]:
    """starlette's StaticFiles (CVE-2023-29159): ``/static-secret`` passed a check for ``/static``."""
    if qualified_name(node, module.imports) not in {"os.path.commonprefix", "posixpath.commonprefix"}:
        return
    parent = module.parents.get(node)
    if not isinstance(parent, ast.Compare):  # a containment test compares the prefix with the directory
        return
    yield CheckHit(
        line=node.lineno,
        title=f"Containment checked with os.path.commonprefix() {module.where(node)}",
        why="commonprefix compares strings character by character, so /srv/static-private shares the prefix "
        "/srv/static: a path outside the directory passes the check.",
        fix="Compare path components: os.path.commonpath([full, directory]) == directory, or "
        "Path(full).is_relative_to(directory) after resolving both.",
    )
