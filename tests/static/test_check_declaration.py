"""A check's declaration is refused when a keyword is misspelt or missing, as a wrong call would be.

Both decorators take their keywords from one ``Declaration``; this keeps the old strictness of
spelled-out signatures, so a plugin's typo fails its import instead of being ignored.
"""

from __future__ import annotations

from typing import Any

import pytest

from fluxdrive.runtimes.static.checks.engine.registry import document_check, python_check, registered_checks
from fluxdrive.runtimes.static.checks.engine.runner import run_python_checks

FIELDS: dict[str, Any] = {"tag": "quality", "severity": "P3", "summary": "s", "match": ["a"], "no_match": ["b"]}


def test_a_misspelt_keyword_is_refused() -> None:
    with pytest.raises(TypeError, match=r"unknown arguments \['sumary'\]"):
        python_check("typo-check", **{**FIELDS, "sumary": "s"})
    assert "typo-check" not in registered_checks()


def test_a_missing_keyword_is_refused() -> None:
    fields = {k: v for k, v in FIELDS.items() if k != "summary"}
    with pytest.raises(TypeError, match=r"missing arguments \['summary'\]"):
        document_check("short-check", **fields)
    assert "short-check" not in registered_checks()


def test_a_check_declared_tests_false_is_not_run_on_test_modules() -> None:
    """``tests=False`` is data the runner acts on: the same code is a finding in app code, none in a test file."""
    spec = registered_checks()["py-debug-enabled"]
    assert spec.tests is False and registered_checks()["py-sql-injection"].tests is True
    text = "from flask import Flask\napp = Flask(__name__)\napp.run(debug=True)\n"
    found = {p: run_python_checks(p, text, ["py-debug-enabled"], []) for p in ("app.py", "tests/test_app.py")}
    assert [r.spec.name for r in found["app.py"]] == ["py-debug-enabled"]
    assert found["tests/test_app.py"] == []
