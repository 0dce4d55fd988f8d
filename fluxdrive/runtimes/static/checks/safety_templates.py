"""fd-safety check: template text that is not the program's own (server-side template injection, CWE-1336).

Jinja2, Django, Mako and Tornado templates are programs: ``{{ ''.__class__.__mro__[1].__subclasses__() }}``
in Jinja reaches ``os``, Mako's ``<% %>`` is plain Python. Rendering data
*through* a template is safe; compiling data *as* a template
(``render_template_string(request.args["t"])``, ``Environment().from_string(x)``)
runs whatever the sender wrote.

A template engine call with non-constant text is always reported; the data
flow decides how loudly: text from the request is P0, text of unknown origin
(a parameter, a database row) is P2 - "check where this comes from" - and
text that taint tracking proves constant is dropped. Tests build their own
templates: no finding there.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from typing import cast

from fluxdrive.runtimes.static.checks._common import (
    Function,
    example,
    first_arg,
    qualified_name,
    resolve_value,
    snippet,
    walk_function,
)
from fluxdrive.runtimes.static.checks._flows import judge_text
from fluxdrive.runtimes.static.checks.engine.pymodule import PyModule
from fluxdrive.runtimes.static.checks.engine.registry import CheckHit, CheckSeverity, python_check
from fluxdrive.runtimes.static.checks.engine.syntax import call_name

# Dotted names (after imports) of calls whose first argument (or ``text=``/``source=``) is template source.
TEMPLATE_CLASSES = {
    "jinja2.Template": "Jinja2",
    "jinja2.environment.Template": "Jinja2",
    "flask.render_template_string": "Jinja2",
    "flask.templating.render_template_string": "Jinja2",
    "quart.render_template_string": "Jinja2",
    "django.template.Template": "Django",
    "django.template.base.Template": "Django",
    "mako.template.Template": "Mako",
    "tornado.template.Template": "Tornado",
}
# Modules whose import makes ``<something>.from_string(text)`` a template compile.
ENGINE_MODULES = ("jinja2", "flask", "quart", "django", "starlette", "fastapi", "sanic", "aiohttp_jinja2")
ENGINE_RECEIVERS = ("env", "jinja", "engine", "templates")


def _engine(module: PyModule, node: ast.Call) -> str | None:
    """The engine compiling ``node``'s text (Jinja2, Django, ...), when ``node`` compiles template source."""
    name = qualified_name(node, module.imports)
    if name in TEMPLATE_CLASSES:
        return TEMPLATE_CLASSES[name]
    if not (isinstance(node.func, ast.Attribute) and node.func.attr == "from_string"):
        return None
    bound = resolve_value(node.func.value, module.enclosing_function(node), module.constants)
    receiver = f"{snippet(node.func.value, 80)} {snippet(bound, 80)}".lower()
    if "sandbox" in receiver:  # jinja2.sandbox.SandboxedEnvironment is made for untrusted templates
        return None
    imported = {origin.split(".", 1)[0] for origin in module.imports.values()}
    if any(word in receiver for word in ENGINE_RECEIVERS) and imported & set(ENGINE_MODULES):
        return "Django" if "django" in imported and "jinja2" not in imported else "Jinja2"
    return None


def _from_exception(function: Function | None, text: ast.expr) -> bool:
    """The text is built from an exception caught in the function (``"<h3>%s</h3>" % e``)."""
    if function is None:
        return False
    caught = {h.name for h in walk_function(function) if isinstance(h, ast.ExceptHandler) and h.name}
    return any(isinstance(n, ast.Name) and n.id in caught for n in ast.walk(text))


@python_check(
    "py-template-injection",
    tag="security",
    severity="P0",
    summary="text that is not a constant is compiled as a Jinja2/Django/Mako/Tornado template "
    "(P0 from the request, P2 of unknown origin)",
    match=[
        example("""
            from flask import render_template_string, request

            def hello():
                name = request.args.get("name", "world")
                return render_template_string("<p>Hello " + name + "</p>")
        """),
        example("""
            from jinja2 import Environment
            from flask import request

            def preview():
                return Environment().from_string(request.form["template"]).render()
        """),
        example("""
            import jinja2

            def render_note(text, context):
                return jinja2.Template(text).render(**context)
        """),
        example("""
            from django.template import Context, Template

            def page(request):
                return Template(request.POST["body"]).render(Context({}))
        """),
        example("""
            from flask import render_template_string

            def search(run, terms):
                try:
                    return run(terms)
                except ValueError as error:
                    page = "<h1>Search failed</h1><p>%s</p>" % str(error)
                    return render_template_string(page), 400
        """),
        example("""
            from mako.template import Template

            def render(source):
                return Template(text=source).render()
        """),
    ],
    no_match=[
        example("""
            from flask import render_template_string, request

            def hello():
                return render_template_string("<p>Hello {{ name }}</p>", name=request.args.get("name"))
        """),
        example("""
            import jinja2

            PAGE = "<h1>{{ title }}</h1>"

            def render(title):
                return jinja2.Template(PAGE).render(title=title)
        """),
        example("""
            from mako.template import Template

            def render(path):
                return Template(filename=path).render()
        """),
        example("""
            from string import Template

            def greet(text):
                return Template(text).substitute(name="x")
        """),
        example("""
            from jinja2.sandbox import SandboxedEnvironment

            def render(user_template, context):
                env = SandboxedEnvironment()
                return env.from_string(user_template).render(**context)
        """),
        example("""
            from cryptography.x509 import Certificate

            def load(pem):
                return Certificate.from_string(pem)
        """),
    ],
    nodes=(ast.Call,),
)
def template_injection(module: PyModule, node: ast.Call) -> Iterator[CheckHit]:
    engine = _engine(module, node)
    if engine is None or module.is_test_module():
        return
    text = first_arg(node, "source", "text", "template_string", "template")
    if text is None or isinstance(text, ast.Starred):
        return
    origin = judge_text(module, node, text)
    if origin is None:
        return
    function = module.enclosing_function(node)
    severity = origin.severity(outside="P0", parameter="P2", unknown="P2")
    if severity is None and _from_exception(function, resolve_value(text, function, module.constants)):
        severity = "P2"  # error pages echo exception text, and exceptions quote the input that caused them
    if severity is None:
        return
    source = origin.label if origin.kind == "outside" else None
    called = call_name(node)
    if source:
        title = f"Template text from {source} is compiled by {engine}: {called}(…) {module.where(node)}"
    else:
        title = (
            f"{called}() compiles `{snippet(text, 30)}` as a {engine} template: "
            f"check where this text comes from {module.where(node)}"
        )
    yield CheckHit(
        line=node.lineno,
        title=title,
        why=(
            f"{engine} template syntax is code: whoever writes the template text can read the "
            "server's configuration and secrets and, through Python's object graph, run commands."
            + (
                ""
                if source
                else " Harmless when the text is the application's own; dangerous if users or their data write it."
            )
        ),
        fix=(
            "Keep templates fixed (files or constants) and pass user data as render variables "
            "(render_template_string(TEMPLATE, name=name)); if users must write templates, use "
            "jinja2.sandbox.SandboxedEnvironment."
        ),
        severity=cast("CheckSeverity", severity),
        evidence=origin.proof,
    )
