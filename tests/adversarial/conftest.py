"""The adversarial suite's shared fixture (the fake provider) and its figures, printed at the end of a run."""

from __future__ import annotations

import sys
import uuid
from collections.abc import Iterator

import pytest

from tests.fakes.llm_server import FakeProvider, Text

CLEAN_REPORT = "### Findings Index\nVerdict: safe\n\n### Summary\nNothing in my lane.\n"

FIGURES = {
    "tests.adversarial.test_secrets": "secrets: planted / found raw anywhere",
    "tests.adversarial.test_bad_inputs": "bad inputs: tried / handled with a clear line",
    "tests.adversarial.test_orphans": "orphans after kill -9",
    "tests.adversarial.test_fail_closed": "incomplete reviews reported as safe anywhere",
    "tests.adversarial.test_comment_injection": "comment injection: payloads posted / rendered live",
}


def figures() -> dict[str, list[str]]:
    """The figures of the adversarial modules that ran in this process, by title."""
    found = {}
    for name, title in FIGURES.items():
        module = sys.modules.get(name)
        lines = module.figures() if module is not None else []
        if lines:
            found[title] = list(lines)
    return found


@pytest.fixture
def provider(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeProvider]:
    """The wire-level fake provider as the OpenAI endpoint (a fresh fake key; fast backoff for retries)."""
    with FakeProvider(default=Text(CLEAN_REPORT)) as fake:
        monkeypatch.setenv("OPENAI_BASE_URL", fake.base_url_openai)
        monkeypatch.setenv("OPENAI_API_KEY", f"sk-test-{uuid.uuid4().hex}")
        monkeypatch.setenv("FLUXDRIVE_DISPATCH__BACKOFF_BASE_S", "0.01")
        monkeypatch.setenv("FLUXDRIVE_DISPATCH__BACKOFF_MAX_S", "0.2")
        yield fake
