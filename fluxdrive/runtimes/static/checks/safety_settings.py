"""fd-safety checks: unsafe framework settings (CORS open to every origin, debug mode on).

Both look at constant settings in code: library calls such as flask_cors
``CORS(...)`` and ``CORSMiddleware``, response headers, ``debug=True`` and
``DEBUG = True`` in production-looking settings modules.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from fluxdrive.runtimes.static.checks._common import (
    example,
    is_literal,
    name_tail,
    qualified_name,
    snippet,
    str_value,
)
from fluxdrive.runtimes.static.checks.engine.pymodule import PyModule
from fluxdrive.runtimes.static.checks.engine.registry import CheckHit, python_check
from fluxdrive.runtimes.static.checks.engine.syntax import call_name, keyword

# --------------------------------------------------------------------------
# CORS


def _wildcard(node: ast.AST | None) -> bool:
    if isinstance(node, ast.List | ast.Tuple | ast.Set):
        return any(_wildcard(e) for e in node.elts)
    return str_value(node) in {"*", ".*", "^.*$", ".+"}


def _resource_open(options: ast.expr) -> bool:
    """One flask_cors resources entry; a missing "origins" key means "*"."""
    if not isinstance(options, ast.Dict):
        return True
    pairs = zip(options.keys, options.values, strict=True)
    origins = [value for key, value in pairs if str_value(key) == "origins"]
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
    tail = name_tail(qualified)
    if tail not in {"CORS", "cross_origin", "add_middleware", "Middleware"}:
        return None
    where = module.where(node)
    if tail in {"CORS", "cross_origin"} and qualified.startswith("flask_cors"):
        if not _flask_cors_open(node):
            return None
        creds = is_literal(keyword(node, "supports_credentials"), True)
        flag = ", supports_credentials=True" if creds else ""
        return _cors(node.lineno, f"{tail}(…{flag}) allows every origin {where}", creds)
    middleware = snippet(node.args[0]) if node.args else ""
    if tail not in {"add_middleware", "Middleware"} or name_tail(middleware) != "CORSMiddleware":
        return None
    if not any(_wildcard(keyword(node, k)) for k in ("allow_origins", "allow_origin_regex")):
        return None
    creds = is_literal(keyword(node, "allow_credentials"), True)
    flag = " with credentials" if creds else ""
    return _cors(node.lineno, f"CORSMiddleware allows every origin{flag} {where}", creds)


def _header_pairs(node: ast.AST) -> list[tuple[ast.expr | None, ast.expr]]:
    """(header name, value) pairs a statement or expression sets."""
    if isinstance(node, ast.Assign):
        return [(t.slice, node.value) for t in node.targets if isinstance(t, ast.Subscript)]
    if isinstance(node, ast.Dict):
        return list(zip(node.keys, node.values, strict=True))
    setters = {"add", "set", "setdefault", "add_header"}
    if isinstance(node, ast.Call) and name_tail(call_name(node)) in setters and len(node.args) == 2:
        return [(node.args[0], node.args[1])]
    return []


def _header_hit(node: ast.AST, module: PyModule) -> CheckHit | None:
    """``Access-Control-Allow-Origin: *`` or the request's Origin echoed back."""
    for key, value in _header_pairs(node):
        if (str_value(key) or "").lower() != "access-control-allow-origin":
            continue
        source = snippet(value, 200)
        reflected = "origin" in source.lower() and "request" in source
        if reflected and _origin_checked(module, node):
            return None  # starlette's CORSMiddleware: echoed only after is_allowed_origin()
        if str_value(value) == "*" or reflected:
            what = "echoes the request's Origin" if reflected else "is *"
            title = f"Access-Control-Allow-Origin {what} {module.where(node)}"
            credentials = "access-control-allow-credentials" in module.text.lower()
            return _cors(getattr(node, "lineno", 1), title, reflected and credentials)
    return None


_ORIGIN_CHECK = re.compile(r"(?i)allow|valid|trust|permit|whitelist")


def _origin_checked(module: PyModule, node: ast.AST) -> bool:
    """``node`` runs only after the origin passed a check: ``if is_allowed_origin(o):`` / ``if o in ALLOWED:``."""
    for parent in module.ancestors(node):
        if isinstance(parent, ast.FunctionDef | ast.AsyncFunctionDef):
            return False
        if not isinstance(parent, ast.If) or node not in ast.walk(ast.Module(body=parent.body, type_ignores=[])):
            continue
        for test in ast.walk(parent.test):
            if isinstance(test, ast.Call) and _ORIGIN_CHECK.search(call_name(test)):
                return True
            if isinstance(test, ast.Compare) and isinstance(test.ops[0], ast.In):
                return True
    return False


@python_check(
    "py-permissive-cors",
    tag="security",
    severity="P1",
    summary="CORS open to every origin (P1 with credentials): flask_cors, CORSMiddleware, headers",
    match=[
        example("""
            from flask import Flask
            from flask_cors import CORS

            app = Flask(__name__)
            CORS(app, supports_credentials=True)
        """),
        example("""
            from fastapi.middleware.cors import CORSMiddleware

            app.add_middleware(CORSMiddleware, allow_origins=["*"], allow_credentials=True)
        """),
        example("""
            def add_headers(response):
                response.headers["Access-Control-Allow-Origin"] = "*"
                return response
        """),
        example("""
            from flask_cors import CORS

            CORS(app, resources={r"/api/*": {"origins": "*"}})
        """),
    ],
    no_match=[
        example("""
            from flask_cors import CORS

            CORS(app, origins=["https://app.example.com"], supports_credentials=True)
        """),
        example("""
            from fastapi.middleware.cors import CORSMiddleware

            app.add_middleware(
                CORSMiddleware, allow_origins=["https://app.example.com"], allow_credentials=True
            )
        """),
        example("""
            def add_headers(response):
                response.headers["Access-Control-Allow-Origin"] = "https://app.example.com"
                return response
        """),
    ],
    nodes=(ast.Assign, ast.Dict, ast.Call),
)
def permissive_cors(module: PyModule, node: ast.Assign | ast.Dict | ast.Call) -> Iterator[CheckHit]:
    imports = module.imports
    hit = None
    if isinstance(node, ast.Call):
        hit = _cors_call_hit(node, qualified_name(node, imports), module)
    hit = hit or _header_hit(node, module)
    if hit:
        yield hit


# --------------------------------------------------------------------------
# Debug mode


NOT_DEPLOYED = {"dev", "development", "local", "test", "tests", "example", "examples"}
DEBUG_CALLS = {"run", "FastAPI", "Starlette", "run_simple", "Quart", "Application"}  # Application: aiohttp
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
    if is_literal(keyword(node, "debug"), True) and name_tail(name) in DEBUG_CALLS:
        return f"{name}(…, debug=True)"
    if name.endswith("config.update") and is_literal(keyword(node, "DEBUG"), True):
        return f"{name}(DEBUG=True)"
    return None


def _debug_assignment(node: ast.Assign, module: PyModule) -> str | None:
    if not is_literal(node.value, True):
        return None
    top_level = module.parents.get(node) is module.tree
    for target in node.targets:
        text = f"{snippet(target)} = True"
        if isinstance(target, ast.Attribute) and target.attr == "debug":
            if APP_NAMES.fullmatch(snippet(target.value)):
                return text
        elif isinstance(target, ast.Subscript) and snippet(target).endswith("config['DEBUG']"):
            return text
        elif isinstance(target, ast.Name) and target.id == "DEBUG" and top_level:
            return text if _settings_file(module.local_path) else None
    return None


@python_check(
    "py-debug-enabled",
    tag="security",
    severity="P1",
    summary="Framework debug mode on in code (app.run(debug=True), DEBUG = True in settings)",
    tests=False,
    match=[
        example("""
            from flask import Flask

            app = Flask(__name__)

            if __name__ == "__main__":
                app.run(host="0.0.0.0", debug=True)
        """),
        example("""
            from fastapi import FastAPI

            app = FastAPI(debug=True)
        """),
        example("""
            from aiohttp import web

            app = web.Application(debug=True)
        """),
        'app.config["DEBUG"] = True\n',
    ],
    no_match=[
        example("""
            import os

            if __name__ == "__main__":
                app.run(debug=os.environ.get("FLASK_DEBUG") == "1")
        """),
        example("""
            import uvicorn

            uvicorn.run("app:app", reload=True)
        """),
        "DEBUG = True\n",
    ],
    nodes=(ast.Call, ast.Assign),
)
def debug_enabled(module: PyModule, node: ast.Call | ast.Assign) -> Iterator[CheckHit]:
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
