"""fd-safety checks on request handlers: error details sent to clients, endpoints without auth.

Handlers are recognised by their route decorator (Flask, FastAPI and similar
routers) or, for Django, by a ``request`` first parameter.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from fluxdrive.runtimes.static.checks._common import (
    Function,
    caught_names,
    example,
    is_django_view,
    name_tail,
    param_defaults,
    positional_args,
    route_call,
    route_path,
    snippet,
    str_value,
    walk_function,
    where_def,
)
from fluxdrive.runtimes.static.checks.engine.pymodule import PyModule
from fluxdrive.runtimes.static.checks.engine.registry import CheckHit, python_check
from fluxdrive.runtimes.static.checks.engine.syntax import call_name, keyword

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
            return f"{call_name(sub)}({snippet(sub.args[0])})"
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
    return function is not None and (route_call(function) is not None or is_django_view(function))


def _client_sinks(handler: ast.ExceptHandler, routed: bool) -> Iterator[ast.AST]:
    """Expressions in an except body that become a response."""
    for stmt in handler.body:
        for node in ast.walk(stmt):
            if isinstance(node, ast.Call) and name_tail(call_name(node)) in RESPONSE_CALLS:
                yield node
            elif isinstance(node, ast.Return) and node.value is not None:
                value = node.value
                status = isinstance(value, ast.Tuple) and _status(value) is not None
                if status or (routed and isinstance(value, ast.Dict | ast.JoinedStr | ast.Call)):
                    yield node


@python_check(
    "py-error-leak",
    tag="security",
    severity="P2",
    summary="Exception text or a traceback is sent to the client from an except block",
    match=[
        example("""
            from flask import jsonify

            @app.route("/orders", methods=["POST"])
            def create_order():
                try:
                    return save_order()
                except Exception as e:
                    return jsonify({"error": str(e)}), 500
        """),
        example("""
            import traceback

            def handler(event):
                try:
                    process(event)
                except Exception:
                    return {"statusCode": 500, "body": traceback.format_exc()}, 500
        """),
        example("""
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
        example("""
            from flask import jsonify

            @app.route("/orders", methods=["POST"])
            def create_order():
                try:
                    return save_order()
                except Exception:
                    logger.exception("order failed")
                    return jsonify({"error": "internal error"}), 500
        """),
        example("""
            from flask import jsonify

            @app.route("/orders", methods=["POST"])
            def create_order():
                try:
                    return save_order()
                except ValidationError as e:
                    return jsonify({"error": str(e)}), 400
        """),
        example("""
            def parse(raw):
                try:
                    return int(raw)
                except Exception as e:
                    raise ValueError(str(e))
        """),
    ],
    nodes=(ast.ExceptHandler,),
)
def error_leak(module: PyModule, handler: ast.ExceptHandler) -> Iterator[CheckHit]:
    internal = bool(caught_names(handler) & (BROAD_EXCEPTIONS | INTERNAL_EXCEPTIONS))
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
    return {(str_value(e) or "").upper() for e in node.elts}


def _methods(function: Function) -> set[str]:
    """HTTP methods a handler answers, from its route or Django decorators."""
    methods: set[str] = set()
    route = route_call(function)
    if route is not None and isinstance(route.func, ast.Attribute):
        if route.func.attr in {"post", "put", "patch", "delete"}:
            methods.add(route.func.attr.upper())
        methods |= _listed(keyword(route, "methods"))
    for decorator in function.decorator_list:
        name = name_tail(call_name(decorator))
        if name in DJANGO_METHOD_DECORATORS:
            methods |= set(DJANGO_METHOD_DECORATORS[name])
            if isinstance(decorator, ast.Call) and decorator.args:
                methods |= _listed(decorator.args[0])
    return methods


def _auth_dependency(function: Function, route: ast.Call | None) -> str | None:
    """A FastAPI ``Depends(get_current_user)``-style parameter or route dependency."""
    places: list[ast.expr] = [*dict(param_defaults(function)).values()]
    places += [a.annotation for a in positional_args(function) if a.annotation is not None]
    dependencies = keyword(route, "dependencies") if route is not None else None
    if dependencies is not None:
        places.append(dependencies)
    for place in places:
        for call in ast.walk(place):
            depends = isinstance(call, ast.Call) and name_tail(call_name(call)) in DEPENDS
            if depends and DEPENDS_AUTH.search(snippet(call, 200)):
                return snippet(call)
    return None


def _auth_marker(function: Function, guarded: set[str]) -> str | None:
    """How a handler authenticates (decorator, dependency, router, body check), or None."""
    route = route_call(function)
    for decorator in function.decorator_list:
        name = call_name(decorator)
        public = "AllowAny" in snippet(decorator, 200)
        if decorator is not route and AUTH_WORDS.search(name) and not public:
            return f"@{name}"
    if route is not None and snippet(route.func).rsplit(".", 1)[0] in guarded:
        return "router-level auth"
    dependency = _auth_dependency(function, route)
    if dependency:
        return dependency
    for node in walk_function(function):
        named = isinstance(node, ast.Attribute | ast.Name)
        if named and AUTH_WORDS.search(snippet(node, 200).rsplit(".", 1)[-1]):
            return "a check in the body"
    return None


def _guarded_receivers(module: PyModule) -> set[str]:
    """Routers/blueprints that authenticate every request (router dependencies, before_request)."""
    guarded: set[str] = set()
    for node in module.of_type(ast.Assign, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
            dependencies = keyword(node.value, "dependencies")
            if dependencies is not None and AUTH_WORDS.search(snippet(dependencies, 300)):
                guarded |= {snippet(t) for t in node.targets}
        for decorator in getattr(node, "decorator_list", []):
            if isinstance(decorator, ast.Attribute) and decorator.attr == "before_request":
                guarded.add(snippet(decorator.value))
    return guarded


def _public(text: str) -> bool:
    """Login, signup, health, webhook... endpoints are public by design."""
    lowered = text.lower()
    words = set(re.split(r"[^a-z0-9]+", lowered))
    compact = re.sub(r"[^a-z]", "", lowered)
    return bool(words & PUBLIC_WORDS) or any(w in compact for w in ("login", "signin", "signup"))


def _handlers(module: PyModule) -> list[Function]:
    found = []
    for function in module.function_defs:
        django = bool(function.decorator_list) and is_django_view(function)
        if route_call(function) is not None or (django and not module.enclosing_function(function)):
            found.append(function)
    return found


@python_check(
    "py-unauthenticated-endpoint",
    tag="security",
    severity="P1",
    summary="A state-changing endpoint lacks the auth guard the module's other handlers use",
    match=[
        example("""
            @app.route("/projects", methods=["GET"])
            @login_required
            def list_projects():
                return jsonify(Project.query.all())

            @app.route("/projects/<int:pid>", methods=["DELETE"])
            def delete_project(pid):
                Project.query.filter_by(id=pid).delete()
                return "", 204
        """),
        example("""
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
        example("""
            @app.route("/projects/<int:pid>", methods=["DELETE"])
            def delete_project(pid):
                Project.query.filter_by(id=pid).delete()
                return "", 204
        """),
        example("""
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
        example("""
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
        path = route_path(function)
        methods = _methods(function) & WRITE_METHODS
        sensitive = methods or function.name.startswith(SENSITIVE_NAMES) or "/admin" in path
        if markers[id(function)] or not sensitive or _public(f"{function.name} {path}"):
            continue
        verb = "/".join(sorted(methods)) or "Handler"
        yield CheckHit(
            function.lineno,
            f"{verb} {path or 'view'} has no auth check (other handlers here use "
            f"{convention}) {where_def(module, function)}",
            "Anyone who can reach the server can call this state-changing endpoint without "
            "logging in; the module's other handlers show that authentication is expected here.",
            f"Add the same guard ({convention}), or say in a comment why this endpoint is public.",
        )
