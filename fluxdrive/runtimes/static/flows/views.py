"""Request data a handler renders into a template that prints it unescaped: XSS at the template line.

``res.render("search", { term: req.query.q })`` is safe as long as the view
escapes ``term``. EJS's ``<%- term %>``, Handlebars' ``{{{term}}}``, Pug's
``!{term}`` and ``p!= term``, and Nunjucks' ``{{ term | safe }}`` do not: that
line is where the fix goes, so the finding is reported there, naming the
handler. The engine records each render with the data it passes (dotted keys
of an object literal, as far as they are written); the templates are read
through a reader the runtime gives (confined to the project), so this module
never touches the file system itself.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable
from dataclasses import dataclass

from fluxdrive.runtimes.static.provenance import Origin

TemplateReader = Callable[[str], str | None]  # project-relative path -> text, or None when absent
EXTENSIONS = ("ejs", "hbs", "handlebars", "pug", "jade", "njk", "mustache", "html")
VIEW_FOLDERS = ("views", "templates", "src/views", "app/views", "server/views")
RAW_OUTPUT = (
    re.compile(r"<%-\s*([A-Za-z_$][\w$.]*)"),  # EJS
    re.compile(r"\{\{\{\s*([A-Za-z_$][\w$.]*)\s*\}\}\}"),  # Handlebars, Mustache
    re.compile(r"\{\{&\s*([A-Za-z_$][\w$.]*)"),  # Mustache's unescaped form
    re.compile(r"!\{\s*([A-Za-z_$][\w$.]*)"),  # Pug interpolation
    re.compile(r"^\s*[\w.#-]*(?:\([^)]*\))?!=\s*([A-Za-z_$][\w$.]*)"),  # Pug: p!= value
    re.compile(r"\{\{\s*([A-Za-z_$][\w$.]*)\s*\|\s*safe\b"),  # Nunjucks
)
SKIPPED = re.compile(r"^\s*(include|block|extend|layout)\b")


@dataclass(frozen=True, slots=True)
class Render:
    """One ``res.render(view, data)`` with the fields of ``data`` that carry outside data."""

    path: str
    line: int
    view: str
    fields: tuple[tuple[str, Origin], ...]


@dataclass(frozen=True, slots=True)
class ViewHit:
    """A template line printing, unescaped, a field a handler filled with outside data."""

    path: str
    line: int
    expression: str
    origin: Origin
    handler: str
    evidence: str = ""
    rule = "xss"
    severity = "P1"
    fix = "Print it escaped (<%= %>, {{ }}, #{ }) or sanitize the markup where it is made (DOMPurify, sanitize-html)."
    evidence_level = "high"

    @property
    def title(self) -> str:
        return f"HTML from {self.origin.label} is printed unescaped by `{self.expression}` (rendered at {self.handler})"

    @property
    def why(self) -> str:
        return (
            "The template prints the value as raw HTML; markup the sender chose runs as script in the "
            "visitor's browser, with the site's cookies and rights (cross-site scripting)."
        )


def template_paths(view: str, handler: str) -> list[str]:
    """Where a view named in ``res.render`` may live, nearest the handler first."""
    if not view or view.startswith("/") or ".." in view.split("/"):
        return []
    names = [view] if "." in posixpath.basename(view) else [f"{view}.{ext}" for ext in EXTENSIONS]
    folders: list[str] = []
    folder = posixpath.dirname(handler)
    while True:
        folders.extend(posixpath.join(folder, f) if folder else f for f in VIEW_FOLDERS)
        if not folder:
            break
        folder = posixpath.dirname(folder)
    return [posixpath.join(f, name) for f in dict.fromkeys(folders) for name in names]


def raw_outputs(text: str) -> list[tuple[int, str, str]]:
    """(line, expression, the line's text) for every place a template prints an expression unescaped."""
    found: list[tuple[int, str, str]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        for pattern in RAW_OUTPUT:
            for match in pattern.finditer(line):
                expression = match.group(1)
                if not SKIPPED.match(expression):
                    found.append((number, expression, line.strip()[:200]))
    return found


def _reaches(expression: str, field: str) -> bool:
    """``output.term`` prints the field ``output.term``, and ``output`` prints all of ``output``."""
    if field == "*":  # the handler passed the request's data whole: every name the view prints is the sender's
        return True
    return expression == field or field.startswith(expression + ".") or expression.startswith(field + ".")


def view_hits(renders: list[Render], read: TemplateReader) -> list[ViewHit]:
    """Template lines that print outside data unescaped, one per line and expression."""
    hits: dict[tuple[str, int, str], ViewHit] = {}
    for render in renders:
        for candidate in template_paths(render.view, render.path):
            text = read(candidate)
            if text is None:
                continue
            for line, expression, evidence in raw_outputs(text):
                for field, origin in render.fields:
                    if _reaches(expression, field):
                        handler = f"{render.path}:{render.line}"
                        hit = ViewHit(candidate, line, expression, origin, handler, evidence)
                        hits.setdefault((candidate, line, expression), hit)
            break  # the first template found is the one the engine renders
    return list(hits.values())
