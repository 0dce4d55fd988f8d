"""Taint across the project: declarations as data, helper summaries across files, user sinks."""

from __future__ import annotations

import asyncio
import textwrap
from pathlib import Path

import pytest
import yaml

from fluxdrive.agents import builtin_agents
from fluxdrive.config import load_config
from fluxdrive.contracts import classify_output
from fluxdrive.runtimes import AgentTask, ReviewContent, run_guarded
from fluxdrive.runtimes.static import StaticRuntime
from fluxdrive.runtimes.static.checks.engine.runner import run_python_checks
from fluxdrive.runtimes.static.checks.engine.taint_spec import SINK_KINDS, TaintSpecError, extend, parse, shipped
from fluxdrive.runtimes.static.project_modules import (
    declarations,
    module_loader,
    project_summaries,
    read_declarations,
)
from fluxdrive.workspace import review_files

WRAPPER = """\
class request_wrapper:
    def __init__(self, request):
        self.request = request

    def get_form_parameter(self, name):
        return self.request.form.get(name)

    def get_safe_value(self, name):
        return "bar"
"""

VIEW = """\
from flask import request
from helpers import separate_request


def find(conn):
    wrapper = separate_request.request_wrapper(request)
    uid = wrapper.{method}("uid")
    conn.search("ou=users", f"(uid={{uid}})")
"""


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")


def _ldap_hits(root: Path, method: str) -> list[str]:
    _write(root, {"helpers/__init__.py": "", "helpers/separate_request.py": WRAPPER})
    _write(root, {"views/find.py": VIEW.format(method=method)})
    project, note = project_summaries(root, 1_000_000, read_declarations(root))
    assert note is None
    text = (root / "views/find.py").read_text(encoding="utf-8")
    ran = run_python_checks("views/find.py", text, ["py-ldap-injection"], [], project=project)
    return [r.hit.title for r in ran]


def test_a_helper_in_another_file_that_returns_a_constant_is_clean(tmp_path: Path) -> None:
    assert _ldap_hits(tmp_path, "get_safe_value") == []


def test_a_helper_in_another_file_that_reads_the_request_is_a_source(tmp_path: Path) -> None:
    titles = _ldap_hits(tmp_path, "get_form_parameter")
    assert len(titles) == 1 and "request.form" in titles[0]


def test_without_the_project_the_wrapper_taints_everything(tmp_path: Path) -> None:
    """The summary is what makes the difference: alone, the file cannot know get_safe_value is constant."""
    _write(tmp_path, {"views/find.py": VIEW.format(method="get_safe_value")})
    text = (tmp_path / "views/find.py").read_text(encoding="utf-8")
    assert run_python_checks("views/find.py", text, ["py-ldap-injection"], []) != []


def test_local_helpers_are_summarized_within_a_file() -> None:
    code = textwrap.dedent("""\
        import subprocess
        from flask import request

        def constant(value):
            return "ls -l"

        def passthrough(value):
            return "ls " + value

        def view():
            subprocess.run(constant(request.args["d"]), shell=True)
            subprocess.run(passthrough(request.args["d"]), shell=True)
    """)
    ran = run_python_checks("app.py", code, ["py-command-injection"], [])
    assert [r.hit.line for r in ran] == [12]


def test_modules_load_only_inside_the_root(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    _write(outside, {"secret_helpers.py": "def leak():\n    return 1\n"})
    root = tmp_path / "project"
    _write(root, {"pkg/__init__.py": "", "pkg/mod.py": "def f():\n    return 2\n", "src/lib/core.py": "X = 1\n"})
    (root / "linked.py").symlink_to(outside / "secret_helpers.py")
    load = module_loader(root, 1_000_000)
    assert load("pkg.mod") is not None and load("pkg.mod").path == "pkg/mod.py"  # type: ignore[union-attr]
    assert load("pkg") is not None
    assert load("lib.core") is not None  # src/ layout
    assert load("linked") is None  # a symlink out of the project
    assert load("missing.module") is None
    assert load("../etc") is None


def test_the_shipped_declarations_parse_and_cover_every_sink_kind() -> None:
    spec = shipped()
    assert {"request", "req"} <= spec.objects
    assert "args" in spec.fields and spec.calls["input"] == "user input"
    assert set(spec.sinks) == set(SINK_KINDS)
    assert all(sink.cwe.startswith("CWE-") for sink in spec.custom)


def test_a_project_extends_the_declarations() -> None:
    extra = parse(
        {
            "sources": {"objects": ["ctx"], "calls": {"read_socket": "the network"}},
            "sanitizers": {"html": ["purify"]},
            "sinks": {"html": {"calls": ["render_raw"]}, "calls": [{"call": "db.raw", "cwe": "CWE-89"}]},
        },
        "test",
    )
    spec = extend(shipped(), extra)
    assert "ctx" in spec.objects and "request" in spec.objects
    assert "purify" in spec.cleaners_for("html") and "escape" in spec.cleaners_for("html")
    assert {"render_raw", "make_response"} <= spec.sinks["html"].calls
    assert spec.custom[-1].calls == frozenset({"db.raw"})


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ([], "expected a table"),
        ({"sources": {"objects": "request"}}, "sources.objects: expected a list of strings"),
        ({"sinks": {"calls": [{"call": "x", "argument": "first"}]}}, "argument: expected a number"),
        ({"sources": {"calls": {"input": 3}}}, "sources.calls: expected a table"),
    ],
)
def test_bad_declarations_are_named(data: object, message: str) -> None:
    with pytest.raises(TaintSpecError, match=message):
        parse(data, "x.yaml")


def _safety_titles(root: Path) -> tuple[list[str], str]:
    config = load_config(root, env={}).config
    output = root.parent / "out"
    output.mkdir(exist_ok=True)
    agent = builtin_agents()["fd-safety"]
    task = AgentTask(
        agent, "", ReviewContent(root, review_files(root, root)), output, output / "p.jsonl", config, 120.0
    )
    asyncio.run(run_guarded(StaticRuntime(), task))
    report = output / "fd-safety.md"
    return [e.title for e in classify_output(report).index.entries], report.read_text(encoding="utf-8")


def test_a_users_sink_in_fluxdrive_taint_yaml_is_reported_in_a_real_review(tmp_path: Path) -> None:
    root = tmp_path / "app"
    _write(
        root,
        {
            "views.py": """\
                from flask import request
                from ourdb import db

                def report():
                    return db.raw(request.args["where"])
            """,
            ".fluxdrive/taint.yaml": yaml.safe_dump(
                {
                    "sinks": {
                        "calls": [
                            {"call": "db.raw", "cwe": "CWE-89", "what": "raw SQL", "why": "db.raw runs SQL text."}
                        ]
                    }
                }
            ),
        },
    )
    titles, _ = _safety_titles(root)
    assert any("db.raw()" in t and "raw SQL (CWE-89)" in t and "request.args" in t for t in titles), titles


def test_a_bad_declarations_file_is_a_note_not_a_crash(tmp_path: Path) -> None:
    root = tmp_path / "app"
    _write(root, {"views.py": "def f():\n    return 1\n", ".fluxdrive/taint.yaml": "sources: [oops\n"})
    spec, note = declarations(read_declarations(root))
    assert spec == shipped() and note is not None and note.startswith(".fluxdrive/taint.yaml ignored:")
    _, report = _safety_titles(root)
    assert ".fluxdrive/taint.yaml ignored" in report
