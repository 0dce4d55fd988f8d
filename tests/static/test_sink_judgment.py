"""A dangerous sink is always judged: data flow sets its severity, never whether it is reported.

Each case is the shape real applications and libraries have (a ``BaseHTTPRequestHandler``
app, a tornado handler, an aiohttp view, a WSGI app, GraphQL resolvers, a CLI, a public
class that evals a constructor argument), checked through the real check runner.
"""

from __future__ import annotations

import textwrap

import pytest

from fluxdrive.runtimes.static.checks.engine.runner import run_python_checks

SINKS = ["py-sql-injection", "py-command-injection", "py-eval-exec", "py-unsafe-deserialization"]


def _found(source: str, path: str = "app/server.py") -> dict[int, tuple[str, str]]:
    notes: list[str] = []
    hits = run_python_checks(path, textwrap.dedent(source), SINKS, notes)
    assert notes == [], notes
    return {h.hit.line: (h.hit.severity, h.hit.title) for h in hits}


HANDLER = """\
import pickle
import sqlite3
import subprocess
from http.server import BaseHTTPRequestHandler
from urllib.parse import parse_qs, urlparse


class Handler(BaseHTTPRequestHandler):
    def do_GET(self):
        params = {k: v[0] for k, v in parse_qs(urlparse(self.path).query).items()}
        subprocess.run("nslookup " + params["domain"], shell=True)
        pickle.loads(bytes.fromhex(params["object"]))
        cursor = sqlite3.connect("db").cursor()
        cursor.execute("SELECT * FROM users WHERE name = '" + params["name"] + "'")

    def do_POST(self):
        body = self.rfile.read(int(self.headers["Content-Length"]))
        eval(parse_qs(body.decode())["expr"][0])
"""


def test_a_base_http_request_handler_reads_the_request_through_self() -> None:
    found = _found(HANDLER)
    assert {line: severity for line, (severity, _) in found.items()} == {11: "P0", 12: "P0", 14: "P0", 18: "P0"}
    assert "self.path" in found[11][1] and "self.rfile" in found[18][1]


def test_self_attributes_carry_what_the_class_was_built_from() -> None:
    found = _found(
        """\
        class Parallel:
            def __init__(self, pre_dispatch="2 * n_jobs"):
                self.pre_dispatch = pre_dispatch
                self.batch = 4

            def dispatch(self):
                return eval(self.pre_dispatch)

            def _size(self):
                return eval(self.batch_expression)

            def fixed(self):
                return eval("1 + 1")
        """
    )
    # a public constructor's argument: the caller's choice (P0); an attribute set nowhere: unknown (P2)
    assert found[7][0] == "P0" and found[10][0] == "P2" and 13 not in found, found
    assert "check where" not in found[7][1]


def test_unknown_origin_is_a_p2_constant_is_nothing() -> None:
    found = _found(
        """\
        import subprocess
        from settings import COMMAND

        TABLE = "users"


        def purge(cursor):
            cursor.execute("DELETE FROM " + TABLE)
            cursor.execute("DELETE FROM " + current_table())
            subprocess.run(COMMAND + " --now", shell=True)


        def _savepoint(cursor, name):
            cursor.execute("SAVEPOINT %s" % name)


        def release(cursor, name):
            cursor.execute(f"RELEASE SAVEPOINT {name}")
        """
    )
    assert 8 not in found  # a module constant
    assert found[9][0] == "P2" and found[10][0] == "P2"  # an unknown helper, an imported setting
    assert found[14][0] == "P2"  # a private helper's parameter: the library's own data
    assert found[18][0] == "P0"  # a public function's parameter, in a statement SQL_WORDS never knew


@pytest.mark.parametrize(
    ("source", "line"),
    [
        (  # tornado
            """\
            import tornado.web
            class Lookup(tornado.web.RequestHandler):
                def get(self):
                    host = self.get_argument("host")
                    import os
                    os.system("ping -c 1 " + host)
            """,
            6,
        ),
        (  # aiohttp
            """\
            async def find(request):
                name = request.match_info["name"]
                await request.app["db"].execute(f"SELECT * FROM t WHERE name = '{name}'")
            """,
            3,
        ),
        (  # WSGI
            """\
            import os
            def application(environ, start_response):
                os.popen("grep " + environ["QUERY_STRING"] + " /var/log/app.log")
            """,
            3,
        ),
        (  # graphene
            """\
            import pickle, base64
            class Query:
                def resolve_restore(self, info, blob):
                    return pickle.loads(base64.b64decode(blob))
            """,
            4,
        ),
        (  # ariadne
            """\
            from ariadne import QueryType
            query = QueryType()
            @query.field("calc")
            def resolve_calc(obj, info, expression):
                return eval(expression)
            """,
            5,
        ),
        (  # django class-based view: URL captures in self.kwargs
            """\
            import subprocess
            from django.views import View
            class Ping(View):
                def get(self, request, *args, **kwargs):
                    return subprocess.check_output("ping " + self.kwargs["host"], shell=True)
            """,
            5,
        ),
    ],
)
def test_framework_entry_points_are_sources(source: str, line: int) -> None:
    found = _found(source)
    assert found.get(line, ("", ""))[0] == "P0", found


def test_a_route_parameter_the_framework_converts_is_not_text() -> None:
    found = _found(
        """\
        from flask import Flask
        app = Flask(__name__)

        @app.route("/report/<int:report_id>")
        def report(report_id, cursor):
            cursor.execute("SELECT * FROM reports WHERE id = %d" % report_id)
        """
    )
    assert found.get(6, ("",))[0] != "P0", found


def test_command_line_arguments_stay_low() -> None:
    found = _found(
        """\
        import subprocess, sys
        import click

        @click.command()
        @click.argument("path")
        def build(path):
            subprocess.run("make -C " + path, shell=True)

        def main():
            subprocess.run("ls " + sys.argv[1], shell=True)
        """
    )
    assert found[7][0] == "P2" and found[10][0] == "P2", found


def test_a_template_filter_that_marks_its_input_safe_is_xss_an_escaping_one_is_not() -> None:
    notes: list[str] = []
    source = textwrap.dedent(
        """\
        from django import template
        from django.utils.html import conditional_escape
        from django.utils.safestring import mark_safe

        register = template.Library()

        @register.filter
        def break_long_headers(header):
            return mark_safe("<br> " + ", <br>".join(header.split(",")))

        @register.filter
        def bold(value):
            return mark_safe("<b>" + conditional_escape(value) + "</b>")
        """
    )
    hits = run_python_checks("app/templatetags/tags.py", source, ["py-xss"], notes)
    assert [h.hit.line for h in hits] == [9], [h.hit.title for h in hits]


def test_builtins_eval_is_the_builtin_even_where_the_module_defines_eval() -> None:
    found = run_python_checks(
        "pkg/imagemath.py",
        "import builtins\n\ndef eval(expression, **kw):\n    return builtins.eval(expression, kw)\n",
        ["py-eval-exec"],
        [],
    )
    assert [(h.hit.line, h.hit.severity) for h in found] == [(4, "P0")]  # a public function's parameter


def test_library_internals_that_are_not_attacks() -> None:
    """Classes measured on healthy projects: a class loading only what it dumped itself (rich's Style.meta),
    a redirect whose host is the site's own (starlette's login redirect with ?next=), a TLS opt-out the
    caller asked for (httpx's verify=False), an Origin echoed after an allow-list check (starlette's CORS)."""
    source = textwrap.dedent(
        """\
        import ssl
        from marshal import dumps, loads
        from starlette.responses import RedirectResponse

        class Style:
            def __init__(self, meta=None):
                self._meta = None if meta is None else dumps(meta)

            def combine(self, other):
                self._meta = self._meta or other._meta

            @property
            def meta(self):
                return {} if self._meta is None else loads(self._meta)

        def requires(request, redirect):
            next_url = f"{request.url_for(redirect)}?next={request.url}"
            return RedirectResponse(url=next_url, status_code=303)

        def create_ssl_context(verify=True):
            ctx = ssl.create_default_context()
            if verify is False:
                ctx.check_hostname = False
            return ctx

        def preflight(self, request, headers):
            origin = request.headers["origin"]
            if self.is_allowed_origin(origin=origin):
                headers["Access-Control-Allow-Origin"] = origin
        """
    )
    checks = [*SINKS, "py-open-redirect", "py-tls-verify-disabled", "py-permissive-cors"]
    hits = run_python_checks("pkg/lib.py", source, checks, [])
    assert [(h.hit.line, h.hit.severity) for h in hits if (h.hit.severity or h.spec.severity) in ("P0", "P1")] == []
    assert [(h.hit.line, h.hit.severity) for h in hits] == [(23, "P2")]  # the opt-out stays visible, below P1


def test_a_loader_table_the_request_picks_from_is_a_deserialization_sink() -> None:
    found = _found(
        """\
        import json
        import pickle
        from flask import request

        ALL_SERDE = {"application/json": json.loads, "application/x-pickle": pickle.loads}

        def restore():
            loader = ALL_SERDE[request.content_type]
            return loader(request.get_data())

        def restore_json():
            return json.loads(request.get_data())
        """
    )
    assert {line: severity for line, (severity, _) in found.items()} == {9: "P0"}, found
