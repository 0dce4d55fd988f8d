"""The adversarial suite's figures, printed at the end of every run that exercised them."""

from __future__ import annotations

import sys

import pytest


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    module = sys.modules.get("tests.adversarial.test_secrets")
    lines = module.figures() if module is not None else []
    if lines:
        terminalreporter.section("secrets: planted / found raw anywhere")
        for line in lines:
            terminalreporter.write_line(line)
