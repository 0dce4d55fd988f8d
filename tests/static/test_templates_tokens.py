"""The real offline review finds template injection, unverified JWTs and |safe in template files (issue 27).

Two small Flask apps, reviewed by ``fluxdrive review DIR`` as a user would:
one renders request text as a template, decodes a request's JWT with the
signature check off and prints a variable (P2: check it) and a request
parameter (P1) with ``|safe`` in ``templates/page.html``; its healthy twin renders constant templates with the
request data as variables, verifies its tokens and lets autoescaping work.
The first must come out with those findings at their lines and severities,
the second with none of them.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.conftest import CliResult

Cli = Callable[..., CliResult]

RISKY_APP = """\
import os

import jwt
from flask import Flask, render_template, render_template_string, request

app = Flask(__name__)


@app.route("/hello")
def hello():
    name = request.args.get("name", "world")
    return render_template_string("<p>Hello " + name + "</p>")


@app.route("/me")
def me():
    token = request.headers.get("Authorization", "").removeprefix("Bearer ")
    claims = jwt.decode(token, os.environ["JWT_KEY"], algorithms=["HS256"], options={"verify_signature": False})
    return {"user": claims["sub"]}


@app.route("/page")
def page():
    return render_template("page.html", body=request.args.get("body", ""))
"""
RISKY_TEMPLATE = """\
<!doctype html>
<html>
  <body>
    <h1>{{ title }}</h1>
    <div class="body">{{ body|safe }}</div>
    <p>You searched for {{ request.args.q|safe }}</p>
  </body>
</html>
"""
HEALTHY_APP = """\
import os

import jwt
from flask import Flask, render_template, render_template_string, request

app = Flask(__name__)
GREETING = "<p>Hello {{ name }}</p>"


@app.route("/hello")
def hello():
    return render_template_string(GREETING, name=request.args.get("name", "world"))


@app.route("/me")
def me():
    token = request.headers.get("Authorization", "").removeprefix("Bearer ")
    claims = jwt.decode(token, os.environ["JWT_KEY"], algorithms=["HS256"], audience="shop")
    return {"user": claims["sub"]}


@app.route("/page")
def page():
    return render_template("page.html", body=request.args.get("body", ""))
"""
HEALTHY_TEMPLATE = """\
<!doctype html>
<html>
  <body>
    <h1>{{ title }}</h1>
    <div class="body">{{ body }}</div>
    <p>You searched for {{ request.args.q }}</p>
    <script>var settings = {{ settings|tojson|safe }};</script>
  </body>
</html>
"""
NEW_RULES = {
    "fluxdrive:py-template-injection",
    "fluxdrive:py-jwt-unverified",
    "fluxdrive:py-eval-wrapper",
    "lines:any-template-safe-filter",
    "lines:any-template-safe-request",
    "lines:any-template-autoescape-off",
    "fluxdrive:py-xss",
}


def _project(root: Path, app: str, template: str) -> Path:
    (root / "templates").mkdir(parents=True)
    (root / "app.py").write_text(app)
    (root / "templates" / "page.html").write_text(template)
    return root


def _review(cli: Cli, project: Path, out: Path) -> list[tuple[str, str, str, str]]:
    done = cli("review", str(project), "--yes", "-q", "--fail-on", "never", "--output-dir", str(out))
    assert (out / "findings.json").exists(), done.out + done.err
    findings: dict[str, Any] = json.loads((out / "findings.json").read_text())
    return [
        (rule, f["severity"], location, f["title"])
        for f in findings["findings"]
        for rule in f["rules"]
        for location in f["locations"]
        if rule in NEW_RULES
    ]


def test_template_injection_unverified_jwt_and_safe_filter_are_reported(cli: Cli, tmp_path: Path) -> None:
    project = _project(tmp_path / "shop", RISKY_APP, RISKY_TEMPLATE)
    found = {(rule, severity, location) for rule, severity, location, _ in _review(cli, project, tmp_path / "out")}
    assert found == {
        ("fluxdrive:py-template-injection", "P0", "app.py:12"),
        ("fluxdrive:py-xss", "P1", "app.py:12"),  # the rendered request text is also the page's HTML
        ("fluxdrive:py-jwt-unverified", "P0", "app.py:18"),
        # the view fills `body` from the request: the data-flow finding replaces the line rule's P2 "check it"
        ("fluxdrive:py-xss", "P1", "templates/page.html:5"),
        ("lines:any-template-safe-request", "P1", "templates/page.html:6"),  # the request's text: reflected XSS
    }


def test_constant_templates_verified_tokens_and_autoescaping_are_quiet(cli: Cli, tmp_path: Path) -> None:
    project = _project(tmp_path / "shop", HEALTHY_APP, HEALTHY_TEMPLATE)
    assert _review(cli, project, tmp_path / "out") == []
