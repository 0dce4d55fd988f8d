"""Request data a view hands to a template that prints it unescaped (``{{ message|safe }}``).

Neither file alone is the bug: the view passes ``message=request.args["m"]`` to
an autoescaping template, and the template marks one variable ``|safe``
because it usually holds trusted HTML. A ``|safe`` line rule alone is noise on
healthy projects (staff-written help texts, rendered Markdown); the view alone
looks correct. Together, request text reaches the page as markup - the
reflected and stored XSS of intentionally vulnerable apps and real CVEs.

So the XSS check follows render calls (Flask's ``render_template``, Django's
``render``/``render_to_string``, Starlette's ``TemplateResponse``,
aiohttp-jinja2's ``render_template``), finds the template under a
``templates/`` folder beside the view or above it, and reports the template
line that prints a request-tainted variable with ``|safe``.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from fluxdrive.runtimes.static.checks._flows import tainted_at
from fluxdrive.runtimes.static.checks.engine.pymodule import PyModule
from fluxdrive.runtimes.static.checks.engine.registry import CheckHit
from fluxdrive.runtimes.static.checks.engine.syntax import call_name, resolve

RENDERERS = frozenset({"render_template", "render", "render_to_response", "render_to_string", "TemplateResponse"})
_TEMPLATE_NAME = re.compile(r"\.(?:html?|jinja2?|j2|djhtml|njk|txt|xml)$")
_NOT_VARIABLES = frozenset({"status", "status_code", "headers", "media_type", "background", "request", "using"})


def _template_name(call: ast.Call) -> str | None:
    for arg in [*call.args, *(k.value for k in call.keywords if k.arg in {"template_name", "name"})]:
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str) and _TEMPLATE_NAME.search(arg.value):
            return arg.value
    return None


def _variables(module: PyModule, call: ast.Call) -> Iterator[tuple[str, ast.expr]]:
    """(name, value) of what the call passes to the template: keywords and context dicts."""
    function = module.enclosing_function(call)
    for keyword in call.keywords:
        if keyword.arg and keyword.arg not in _NOT_VARIABLES and keyword.arg != "context":
            yield keyword.arg, keyword.value
    contexts = [*call.args, *(k.value for k in call.keywords if k.arg == "context")]
    for given in contexts:
        context = resolve(given, function) if isinstance(given, ast.Name) else given
        if isinstance(context, ast.Dict):
            for key, value in zip(context.keys, context.values, strict=True):
                if isinstance(key, ast.Constant) and isinstance(key.value, str):
                    yield key.value, value


def _unescaped_line(text: str, variable: str) -> tuple[int, str] | None:
    """The first line printing ``variable`` (or a field of it) through ``|safe``."""
    pattern = re.compile(r"\{\{-?\s*" + re.escape(variable) + r"(?:\.\w+|\[[^\]]*\])*\s*(?:\|[^}]*?)?\|\s*safe\b")
    for number, line in enumerate(text.splitlines(), start=1):
        if pattern.search(line):
            return number, line
    return None


def unescaped_in_template(module: PyModule, call: ast.Call) -> Iterator[CheckHit]:
    """Request data passed by ``call`` and printed with ``|safe`` in the template it renders."""
    project = module.project
    if project is None or project.templates is None or call_name(call).rsplit(".", 1)[-1] not in RENDERERS:
        return
    name = _template_name(call)
    found = project.templates(module.path, name) if name else None
    if found is None:
        return
    path, text = found
    cleaners = module.taint_spec.cleaners_for("html")
    for variable, value in _variables(module, call):
        printed = _unescaped_line(text, variable)
        source = tainted_at(module, call, value, cleaners) if printed else None
        if printed is None or source is None:
            continue
        yield CheckHit(
            line=call.lineno,
            title=(
                f"`{variable}` from {source} is printed unescaped (|safe) in {path}:{printed[0]}, "
                f"rendered by {call_name(call)}() {module.where(call)}"
            ),
            why="The template turns off escaping for this variable and the view fills it from the request, "
            "so a <script> in the request runs in every browser that renders the page.",
            fix=f"Drop |safe in {path} (autoescaping then escapes it), or sanitize the HTML in the view "
            "(bleach/nh3) before passing it.",
            severity="P1",
            place=(path, printed[0], printed[1]),
            evidence="high",
        )
