"""Web session safety: weak randomness for security values, cookies without their protections, and
untrusted data stored in the session.

Both were missing categories (OWASP BenchmarkPython's weakrand and
securecookie: 0 of their cases were flagged): a "remember me" value made
with ``random.normalvariate()`` can be predicted from a few others, and a
cookie set with ``secure=False`` travels in clear text over HTTP.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from fluxdrive.runtimes.static.checks._common import (
    Function,
    example,
    is_literal,
    name_tail,
    qualified_name,
    route_call,
    snippet,
    walk_function,
)
from fluxdrive.runtimes.static.checks._flows import judge, tainted_at
from fluxdrive.runtimes.static.checks._template_links import unescaped_in_template
from fluxdrive.runtimes.static.checks.engine.pymodule import PyModule
from fluxdrive.runtimes.static.checks.engine.registry import CheckHit, python_check
from fluxdrive.runtimes.static.checks.engine.syntax import call_name, keyword, resolve

# --------------------------------------------------------------------------
# Weak randomness for security values (CWE-330)

_SECURE_SOURCES = ("secrets.", "os.urandom", "random.SystemRandom", "uuid.uuid4", "ssl.RAND_bytes")
_SECURITY_NAME = re.compile(
    r"(?i)(token|secret|passw|nonce|salt|otp|api_?key|session|cookie|remember|reset_?code|csrf|auth|verif)"
)


def _weak_random_call(node: ast.AST, imports: dict[str, str]) -> str | None:
    """The ``random.*`` call inside ``node`` (the module's PRNG, not ``secrets``/``SystemRandom``), if any."""
    for sub in ast.walk(node):
        if not isinstance(sub, ast.Call):
            continue
        name = qualified_name(sub, imports)
        if name.startswith(_SECURE_SOURCES) or ".SystemRandom" in name:
            continue
        if name.startswith("random.") or (name.startswith("numpy.random.") and "default_rng" not in name):
            return name
    return None


def _sink(target: ast.AST) -> str | None:
    """What a stored value becomes, when that is a security value: a session or cookie entry, a token."""
    if isinstance(target, ast.Subscript):
        container = snippet(target.value, 60)
        if _SECURITY_NAME.search(container):
            return f"{container}[…]"
    if isinstance(target, ast.Name) and _SECURITY_NAME.search(target.id):
        return f"`{target.id}`"
    if isinstance(target, ast.Attribute) and _SECURITY_NAME.search(target.attr):
        return f"`{snippet(target, 40)}`"
    return None


def _weak_values(function: Function, imports: dict[str, str]) -> dict[str, tuple[str, int]]:
    """Local names holding (a value derived from) a weak random call: name -> (call, line), in source order."""
    weak: dict[str, tuple[str, int]] = {}
    assignments = sorted(
        (n for n in walk_function(function) if isinstance(n, ast.Assign | ast.AnnAssign)), key=lambda n: n.lineno
    )
    for node in assignments:
        if not isinstance(node, ast.Assign | ast.AnnAssign) or node.value is None:
            continue
        call = _weak_random_call(node.value, imports)
        derived = next((weak[n.id] for n in ast.walk(node.value) if isinstance(n, ast.Name) and n.id in weak), None)
        origin = (call, node.lineno) if call else derived
        if origin is None:
            continue
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        for target in targets:
            if isinstance(target, ast.Name):
                weak[target.id] = origin
    return weak


@python_check(
    "py-weak-random-secret",
    tag="security",
    severity="P1",
    summary="a value from the random module (predictable) becomes a session value, cookie or token",
    match=[
        example("""
            import random
            def remember(session, user):
                value = str(random.normalvariate(0, 1))[2:]
                session["rememberMe"] = value
        """),
        example("""
            import random
            def reset(user):
                reset_token = "".join(random.choice("abcdef0123456789") for _ in range(32))
                return reset_token
        """),
        example("""
            from random import getrandbits
            def login(response):
                response.set_cookie("sid", str(getrandbits(64)))
        """),
    ],
    no_match=[
        example("""
            import secrets
            def remember(session):
                session["rememberMe"] = str(secrets.randbelow(2**32))
        """),
        example("""
            import random
            def shuffle_deck(cards):
                hand = random.sample(cards, 5)
                return hand
        """),
        example("""
            import random
            def jitter(delay):
                backoff = delay * random.uniform(0.5, 1.5)
                return backoff
        """),
    ],
    nodes=(ast.Assign, ast.Call),
)
def weak_random_secret(module: PyModule, node: ast.Assign | ast.Call) -> Iterator[CheckHit]:
    if not module.memo("mentions random", lambda: "random" in module.text):
        return
    imports = module.imports
    function = module.enclosing_function(node)
    weak = module.memo(("weak-random", function), lambda: _weak_values(function, imports) if function else {})
    hit = _weak_store(node, weak, imports)
    if hit is not None:
        call, sink, line = hit
        yield CheckHit(
            line=line,
            title=f"{call}() is predictable, and its value becomes {sink} {module.where(node)}",
            why=(
                "The random module is a Mersenne Twister: a few outputs reveal its state, so an attacker "
                "can predict the next session value, cookie or token and take over the account."
            ),
            fix="Use secrets.token_urlsafe() / secrets.randbelow() (or random.SystemRandom) for security values.",
        )


def _weak_store(
    node: ast.AST, weak: dict[str, tuple[str, int]], imports: dict[str, str]
) -> tuple[str, str, int] | None:
    """(call, sink, line) when ``node`` stores a weak random value where a security value goes."""
    if isinstance(node, ast.Assign):
        call = _weak_random_call(node.value, imports)
        origin = (call, node.lineno) if call else _weak_name(node.value, weak)
        if origin is None:
            return None
        for target in node.targets:
            sink = _sink(target)
            if sink is not None:
                return origin[0], sink, node.lineno
        return None
    if isinstance(node, ast.Call) and call_name(node).endswith("set_cookie"):
        value = node.args[1] if len(node.args) > 1 else keyword(node, "value")
        if value is None:
            return None
        call = _weak_random_call(value, imports)
        origin = (call, node.lineno) if call else _weak_name(value, weak)
        return (origin[0], "a cookie", node.lineno) if origin else None
    return None


def _weak_name(value: ast.AST, weak: dict[str, tuple[str, int]]) -> tuple[str, int] | None:
    return next((weak[n.id] for n in ast.walk(value) if isinstance(n, ast.Name) and n.id in weak), None)


# --------------------------------------------------------------------------
# Cookies without Secure / HttpOnly (CWE-614, CWE-1004)


@python_check(
    "py-insecure-cookie",
    tag="security",
    severity="P1",
    summary="a cookie (or a session storage's cookie) is set with secure=False or httponly=False",
    match=[
        example("""
            def remember(response, value):
                response.set_cookie("session", value, secure=False, httponly=True)
        """),
        example("""
            def remember(response, value):
                response.set_cookie("sid", value, secure=True, httponly=False)
        """),
        example("""
            from aiohttp_session.redis_storage import RedisStorage

            def sessions(app):
                return RedisStorage(app["redis"], httponly=False)
        """),
    ],
    no_match=[
        example("""
            def remember(response, value):
                response.set_cookie("session", value, secure=True, httponly=True, samesite="Lax")
        """),
        example("""
            from aiohttp_session.cookie_storage import EncryptedCookieStorage

            def sessions(key):
                return EncryptedCookieStorage(key, httponly=True, secure=True)
        """),
        example("""
            def theme(response):
                response.set_cookie("theme", "dark")
        """),
    ],
    nodes=(ast.Call,),
)
def insecure_cookie(module: PyModule, node: ast.Call) -> Iterator[CheckHit]:
    called = call_name(node)
    storage = name_tail(called).endswith("Storage")  # aiohttp_session's RedisStorage, EncryptedCookieStorage ...
    if not (called.endswith("set_cookie") or storage):
        return
    off = [flag for flag in ("secure", "httponly") if is_literal(keyword(node, flag), False)]
    if not off:
        return
    name = f"of the sessions {called}() keeps" if storage else snippet(node.args[0], 30) if node.args else "a cookie"
    yield CheckHit(
        line=node.lineno,
        title=f"Cookie {name} is set with {' and '.join(f'{f}=False' for f in off)} {module.where(node)}",
        why=(
            "Without Secure the browser also sends the cookie over plain HTTP, where anyone on the path reads "
            "it; without HttpOnly any script injected into the page can steal it."
        ),
        fix="Set secure=True and httponly=True (and samesite='Lax' or 'Strict') on cookies that carry state.",
    )


# --------------------------------------------------------------------------
# Untrusted data into the session (CWE-501, trust boundary violation)

_SESSION = re.compile(r"(?i)(^|\.)session$")


@python_check(
    "py-trust-boundary",
    tag="security",
    severity="P1",
    summary="data from the request is stored in the server-side session (as a key or a value)",
    match=[
        example("""
            import flask
            from flask import request
            def remember():
                bar = request.cookies.get("who") + "_SafeStuff"
                flask.session["userid"] = bar
        """),
        example("""
            from flask import request, session
            def pick():
                session[request.args["key"]] = "12345"
        """),
    ],
    no_match=[
        example("""
            import flask
            from flask import request
            def remember():
                param = request.form.get("who")
                values = {}
                values["keyA"] = "a-Value"
                values["keyB"] = param
                bar = values["keyA"]
                flask.session[bar] = "12345"
        """),
        example("""
            from flask import request, session
            def remember():
                num = 106
                bar = "This_should_always_happen" if 7 * 18 + num > 200 else request.args.get("x")
                session["userid"] = bar
        """),
        example("""
            from flask import request, session
            def login(user):
                session["user_id"] = int(request.form["id"])
        """),
    ],
    nodes=(ast.Assign,),
)
def trust_boundary(module: PyModule, node: ast.Assign) -> Iterator[CheckHit]:
    targets = [t for t in node.targets if isinstance(t, ast.Subscript) and _SESSION.search(snippet(t.value, 60))]
    for target in targets:
        source = tainted_at(module, node, target.slice) or tainted_at(module, node, node.value)
        if source is None:
            continue
        yield CheckHit(
            line=node.lineno,
            title=f"Data from {source} is stored in {snippet(target, 40)} {module.where(node)}",
            why=(
                "The session is trusted server-side state: code that reads it later believes what it holds. "
                "Putting request data there lets a client choose values the server will treat as its own."
            ),
            fix="Validate the value against what the server expects (an id it looked up, an allow-list) "
            "before storing it, or keep it out of the session.",
        )


# --------------------------------------------------------------------------
# Injection into LDAP filters, XPath queries, redirects and HTML (CWE-90, 643, 601, 79)


def sink_argument(module: PyModule, node: ast.Call, kind: str) -> ast.expr | None:
    """The argument of ``node`` a sink of ``kind`` (declared in the taint spec) watches, if it is one."""
    sink = module.taint_spec.sinks.get(kind)
    name = call_name(node)
    if sink is None or (name not in sink.calls and name.rsplit(".", 1)[-1] not in sink.calls):
        return None
    value = sink.value(node.args, {k.arg: k.value for k in node.keywords if k.arg})
    return value if isinstance(value, ast.expr) and not isinstance(value, ast.Starred) else None


@python_check(
    "py-ldap-injection",
    tag="security",
    severity="P1",
    summary="an LDAP search filter is built from request data (no escape_filter_chars)",
    match=[
        example("""
            from flask import request
            def find(conn):
                uid = request.form.get("uid")
                conn.search("ou=users", f"(&(objectclass=person)(uid={uid}))")
        """),
    ],
    no_match=[
        example("""
            from flask import request
            from ldap3.utils.conv import escape_filter_chars
            def find(conn):
                uid = escape_filter_chars(request.form.get("uid"))
                conn.search("ou=users", f"(&(objectclass=person)(uid={uid}))")
        """),
        example("""
            def find(conn):
                conn.search("ou=users", "(objectclass=person)")
        """),
    ],
    nodes=(ast.Call,),
)
def ldap_injection(module: PyModule, node: ast.Call) -> Iterator[CheckHit]:
    search = sink_argument(module, node, "ldap") if isinstance(node.func, ast.Attribute) else None
    source = tainted_at(module, node, search, module.taint_spec.cleaners_for("ldap"))
    if source:
        yield CheckHit(
            line=node.lineno,
            title=f"LDAP filter built from {source} reaches {call_name(node)}() {module.where(node)}",
            why="Characters such as `*`, `(`, `)` and `|` in the value rewrite the filter: an attacker lists "
            "every entry or bypasses a login that searches for uid and password.",
            fix="Escape every value with ldap3.utils.conv.escape_filter_chars (or ldap.filter.escape_filter_chars).",
        )


_XPATH_CALLS = {"XPath", "xpath", "XPathEvaluator", "evaluate", "find", "findall", "findtext", "iterfind", "select"}


@python_check(
    "py-xpath-injection",
    tag="security",
    severity="P1",
    summary="an XPath expression is built from request data (use XPath variables instead)",
    match=[
        example("""
            import elementpath
            from flask import request
            def employee(root):
                return elementpath.select(root, f"//user[@id='{request.args['id']}']")
        """),
        example("""
            import lxml.etree
            from flask import request
            def employee(root):
                query = f"/Employees/Employee[@emplid='{request.args['id']}']"
                return lxml.etree.XPath(query)(root)
        """),
        example("""
            from flask import request
            def employee(tree):
                return tree.xpath("//user[name='" + request.form["name"] + "']")
        """),
    ],
    no_match=[
        example("""
            import elementpath
            from flask import request
            def employee(root):
                uid = request.args["id"].replace("'", "&apos;")
                return elementpath.select(root, f"//user[@id='{uid}']")
        """),
        example("""
            from flask import request
            def employee(tree):
                return tree.xpath("//user[name=$name]", name=request.form["name"])
        """),
        example("""
            def employee(tree):
                return tree.findall("./Employee")
        """),
    ],
    nodes=(ast.Call,),
)
def xpath_injection(module: PyModule, node: ast.Call) -> Iterator[CheckHit]:
    if not node.args:
        return
    name = call_name(node)
    if name.rsplit(".", 1)[-1] not in _XPATH_CALLS or (name.rsplit(".", 1)[-1] == name and name != "XPath"):
        return
    qualified = qualified_name(node, module.imports)
    query = node.args[1] if qualified.startswith("elementpath.") and len(node.args) > 1 else node.args[0]
    source = tainted_at(module, node, query, quotes=True)  # elementpath.select(root, path): the path comes second
    if source and not (node.keywords and name.endswith("xpath")):
        yield CheckHit(
            line=node.lineno,
            title=f"XPath built from {source} reaches {name}() {module.where(node)}",
            why="A quote in the value ends the literal, and the rest becomes XPath: `' or '1'='1` returns "
            "every node, other predicates read data the query was meant to hide.",
            fix="Pass values as XPath variables (tree.xpath('//user[@id=$id]', id=value)) instead of formatting them in.",
        )


@python_check(
    "py-open-redirect",
    tag="security",
    severity="P1",
    summary="a redirect goes to a URL taken from the request",
    match=[
        example("""
            import flask
            from flask import request
            def back():
                return flask.redirect(request.args.get("next"))
        """),
    ],
    no_match=[
        example("""
            from flask import redirect, request, url_for
            def back():
                return redirect(url_for("home", tab=request.args.get("tab")))
        """),
        example("""
            from flask import redirect
            def home():
                return redirect("/")
        """),
    ],
    nodes=(ast.Call,),
)
def open_redirect(module: PyModule, node: ast.Call) -> Iterator[CheckHit]:
    target = sink_argument(module, node, "redirect")
    source = tainted_at(module, node, target, module.taint_spec.cleaners_for("url"))
    if source and target is not None and _own_host(module, node, target):
        return  # url_for("login") + "?next=" + request.url: the client picks the query, not the host
    if source:
        yield CheckHit(
            line=node.lineno,
            title=f"Redirect to a URL from {source} {module.where(node)}",
            evidence="high",
            why="A link on this site can send the visitor anywhere: phishing pages borrow the site's name, "
            "and OAuth-style flows leak tokens to the attacker's host.",
            fix="Redirect only to relative paths or an allow-list of hosts (url_has_allowed_host_and_scheme), "
            "or to url_for() of a named route.",
        )


_SAFE_MARKERS = frozenset({"mark_safe", "Markup", "SafeString", "SafeText"})
_FILTER_DECORATORS = frozenset({"filter", "simple_tag", "template_filter", "stringfilter", "app_template_filter"})


def _filter_marks_input_safe(module: PyModule, node: ast.Call) -> Iterator[CheckHit]:
    """A template filter or tag wraps the value it is given in mark_safe()/Markup() without escaping it.

    Templates apply filters to whatever they print - request data, headers, user profiles - so a
    filter that returns its input as markup turns autoescaping off for all of them (DRF's
    ``break_long_headers``, CVE-2024-21520).
    """
    function = module.enclosing_function(node)
    if function is None or call_name(node).rsplit(".", 1)[-1] not in _SAFE_MARKERS or not node.args:
        return
    decorators = {
        call_name(d if not isinstance(d, ast.Call) else d.func).rsplit(".", 1)[-1] for d in function.decorator_list
    }
    if not decorators & _FILTER_DECORATORS:
        return
    origin = judge(module, node, node.args[0], (*module.taint_spec.cleaners_for("html"), "format_html"))
    if origin.kind not in {"parameter", "outside"}:
        return
    yield CheckHit(
        line=node.lineno,
        title=f"Template filter {function.name}() marks its input safe without escaping it: {call_name(node)}(…)",
        why="Every template that applies this filter prints the value as raw HTML, whatever it holds: a "
        "header, a user's name, a query string. A <script> in it runs for whoever views the page.",
        fix="Escape the input first (conditional_escape / markupsafe.escape, or format_html with the value "
        "as an argument) and mark only the markup you add as safe.",
    )


def _own_host(module: PyModule, node: ast.AST, target: ast.AST) -> bool:
    """The URL starts with this site's own path: a url_for()/reverse() result or a "/path" literal."""
    value = resolve(target, module.enclosing_function(node)) if isinstance(target, ast.expr) else target
    while isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add):
        value = value.left
    if isinstance(value, ast.JoinedStr) and value.values:
        value = value.values[0]
        value = value.value if isinstance(value, ast.FormattedValue) else value
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "format":
        value = value.func.value
    if isinstance(value, ast.Constant) and isinstance(value.value, str):
        return len(value.value) > 1 and value.value[0] == "/" and value.value[1] not in "/\\"
    if isinstance(value, ast.Call):
        tail = call_name(value).rsplit(".", 1)[-1]
        return any(word in tail for word in module.taint_spec.cleaners_for("url"))
    return False


@python_check(
    "py-xss",
    tag="security",
    severity="P1",
    summary="request data reaches an HTML response unescaped (returned by a view, Markup, make_response)",
    match=[
        example("""
            import aiohttp_jinja2
            from jinja2 import PackageLoader
            def init(app):
                aiohttp_jinja2.setup(app, loader=PackageLoader("shop", "templates"), autoescape=False)
        """),
        example("""
            from flask import request
            def init(app):
                @app.route("/hello", methods=["POST"])
                def hello():
                    name = request.form.get("name")
                    return f"<p>Hello {name}</p>"
        """),
        example("""
            from flask import make_response, request
            def greet():
                return make_response("Hello " + request.args["name"])
        """),
    ],
    no_match=[
        example("""
            import aiohttp_jinja2
            from jinja2 import PackageLoader, select_autoescape
            def init(app):
                aiohttp_jinja2.setup(app, loader=PackageLoader("shop", "templates"), autoescape=select_autoescape())
        """),
        example("""
            from flask import request
            from markupsafe import escape
            def init(app):
                @app.route("/hello", methods=["POST"])
                def hello():
                    return f"<p>Hello {escape(request.form.get('name'))}</p>"
        """),
        example("""
            from flask import jsonify, request
            def init(app):
                @app.route("/api/hello")
                def hello():
                    return jsonify(name=request.args.get("name"))
        """),
        example("""
            from flask import make_response, request
            def init(app):
                @app.route("/hello")
                def hello():
                    response = make_response(("Saved.", {"X-Name": request.args.get("name")}))
                    return response
        """),
    ],
    nodes=(ast.Return, ast.Call),
)
def xss(module: PyModule, node: ast.Return | ast.Call) -> Iterator[CheckHit]:
    if isinstance(node, ast.Call):
        yield from unescaped_in_template(module, node)
        yield from _filter_marks_input_safe(module, node)
    if isinstance(node, ast.Call) and (engine := _autoescape_off(module, node)):
        yield CheckHit(
            line=node.lineno,
            title=f"Templates render without escaping: {engine}(autoescape=False) {module.where(node)}",
            why="Every variable a template prints goes into the page as raw HTML, so any value a user "
            "controls (a name, a comment) can carry a <script> that runs for every visitor.",
            fix="Turn autoescape on (autoescape=True or select_autoescape(['html', 'xml'])) and mark the "
            "few trusted HTML fragments with Markup.",
        )
        return
    value: ast.AST | None = None
    if isinstance(node, ast.Return):
        function = module.enclosing_function(node)
        value = node.value if function is not None and _is_route(module, function) else None
        if isinstance(value, ast.Tuple) and value.elts:  # (body, status) / (body, status, headers)
            value = value.elts[0]
        if isinstance(value, ast.Dict | ast.List | ast.ListComp | ast.DictComp):
            value = None  # Flask and FastAPI send these as JSON, not HTML
    else:
        value = sink_argument(module, node, "html")
        if isinstance(value, ast.Tuple) and value.elts:  # make_response((body, headers)): the body is the HTML
            value = value.elts[0]
    cleaners = module.taint_spec.cleaners_for("html")
    if isinstance(node, ast.Return):  # a response object was judged where it was built (make_response above)
        cleaners += tuple(sorted(module.taint_spec.sinks["html"].calls)) if "html" in module.taint_spec.sinks else ()
    source = tainted_at(module, node, value, cleaners) if value is not None else None
    if source and source.startswith("request parameter"):
        source = None  # typed route/body parameters: files, models, ids; their bodies are rarely HTML
    if source:
        yield CheckHit(
            line=node.lineno,
            title=f"HTML response built from {source} without escaping {module.where(node)}",
            evidence="high",
            why="The browser runs any <script> the value carries, in this site's origin: sessions, "
            "tokens and every action the user can take are the attacker's.",
            fix="Render through a template with autoescaping, or escape each value (markupsafe.escape); "
            "never wrap request data in Markup().",
        )


def _autoescape_off(module: PyModule, node: ast.Call) -> str | None:
    """A Jinja set-up call with ``autoescape=False`` (aiohttp_jinja2.setup, jinja2.Template, ...).

    ``jinja2.Environment(autoescape=False)`` itself is ruff's S701; this covers the wrappers
    that pass the flag on to it.
    """
    if not is_literal(keyword(node, "autoescape"), False):
        return None
    name = qualified_name(node, module.imports)
    if "jinja" not in name.lower() or name.endswith("Environment"):
        return None
    return call_name(node)


def _is_route(module: PyModule, function: Function) -> bool:
    return module.memo(("route", function), lambda: route_call(function) is not None)
