"""A check's declaration is refused when a keyword is misspelt or missing, as a wrong call would be.

Both decorators take their keywords from one ``Declaration``; this keeps the old strictness of
spelled-out signatures, so a plugin's typo fails its import instead of being ignored.
"""

from __future__ import annotations

from typing import Any

import pytest

from fluxdrive.runtimes.static.checks.engine.registry import document_check, python_check, registered_checks

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
