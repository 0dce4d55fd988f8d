"""A view that passes request data to a template printing it with ``|safe`` is reported at the template line.

Real reviews of small Flask and Django projects: the finding lands on the template's line
(where it is fixed), names the view, and is reported once even though the ``|safe`` line
rule fires on the same line; a constant passed to the same template is not reported.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from fluxdrive.cli import main

TEMPLATE = "<html>\n<body>\n  <h1>Results for {{ query|safe }}</h1>\n  <p>{{ count }} found</p>\n</body>\n</html>\n"


def _review(root: Path, out: Path) -> list[dict[str, object]]:
    for args in (("init", "-q"), ("add", "-A"), ("commit", "-qm", "x")):
        subprocess.run(["git", "-c", "user.email=t@t.invalid", "-c", "user.name=t", *args], cwd=root, check=True)
    assert main(["review", str(root), "--yes", "--agents", "fd-safety", "--output-dir", str(out), "-q"]) in (0, 1)
    return json.loads((out / "findings.json").read_text())["findings"]  # type: ignore[no-any-return]


def test_flask_view_to_safe_template_line(tmp_path: Path) -> None:
    root = tmp_path / "shop"
    (root / "app" / "templates").mkdir(parents=True)
    (root / "app" / "templates" / "results.html").write_text(TEMPLATE)
    (root / "app" / "views.py").write_text(
        "from flask import Flask, render_template, request\n"
        "app = Flask(__name__)\n\n"
        '@app.route("/search")\n'
        "def search():\n"
        '    q = request.args.get("q", "")\n'
        '    return render_template("results.html", query=q, count=3)\n'
    )
    findings = _review(root, tmp_path / "out")
    at_template = [f for f in findings if "app/templates/results.html:3" in f["locations"]]  # type: ignore[operator]
    assert len(at_template) == 1, findings
    (finding,) = at_template
    assert finding["severity"] == "P1" and "CWE-79" in finding["cwe"]  # type: ignore[operator]
    assert "`query` from request.args" in str(finding["title"]) and "search()" in str(finding["title"])


def test_django_context_and_a_constant_are_told_apart(tmp_path: Path) -> None:
    root = tmp_path / "site"
    (root / "blog" / "templates" / "blog").mkdir(parents=True)
    (root / "blog" / "templates" / "blog" / "post.html").write_text(
        "{% extends 'base.html' %}\n<div>{{ body|safe }}</div>\n<p>{{ note|safe }}</p>\n"
    )
    (root / "blog" / "views.py").write_text(
        "from django.shortcuts import render\n\n"
        "def preview(request):\n"
        '    context = {"body": request.POST["body"], "note": "<b>draft</b>"}\n'
        '    return render(request, "blog/post.html", context)\n'
    )
    findings = _review(root, tmp_path / "out")
    serious = {loc for f in findings if f["severity"] in ("P0", "P1") for loc in f["locations"]}  # type: ignore[attr-defined]
    assert "blog/templates/blog/post.html:2" in serious, findings
    assert "blog/templates/blog/post.html:3" not in serious  # a constant: the |safe line rule's P2 at most
