"""The adversarial suite's figures, printed at the end of every run that exercised them."""

from __future__ import annotations

import sys

import pytest

FIGURES = {
    "tests.adversarial.test_secrets": "secrets: planted / found raw anywhere",
    "tests.adversarial.test_bad_inputs": "bad inputs: tried / handled with a clear line",
}


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    for name, title in FIGURES.items():
        module = sys.modules.get(name)
        lines = module.figures() if module is not None else []
        if lines:
            terminalreporter.section(title)
            for line in lines:
                terminalreporter.write_line(line)
