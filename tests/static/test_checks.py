"""Every fluxdrive check fires on its positive examples and not on its negatives."""

from __future__ import annotations

import posixpath

import pytest

from fluxdrive.runtimes.static.checks.engine.registry import CheckSpec, registered_checks
from fluxdrive.runtimes.static.checks.engine.runner import run_document_checks, run_python_checks

CHECKS = list(registered_checks().values())
KNOWN_FILES = {"docs/setup.md", "README.md", "src/app.py"}


def _run(spec: CheckSpec, snippet: str) -> list[str]:
    notes: list[str] = []
    if spec.kind == "python":
        hits = run_python_checks("app/module.py", snippet, [spec.name], notes)
    else:
        exists = lambda p: posixpath.normpath(posixpath.join("docs", p)) in KNOWN_FILES  # noqa: E731
        hits = run_document_checks("docs/plan.md", snippet, [spec.name], notes, exists)
    assert notes == [], notes
    return [h.hit.title for h in hits]


@pytest.mark.parametrize("spec", CHECKS, ids=[c.name for c in CHECKS])
def test_check_fires_on_its_examples(spec: CheckSpec) -> None:
    for snippet in spec.match:
        assert _run(spec, snippet), f"{spec.name} did not fire on:\n{snippet}"


@pytest.mark.parametrize("spec", CHECKS, ids=[c.name for c in CHECKS])
def test_check_is_quiet_on_its_counter_examples(spec: CheckSpec) -> None:
    for snippet in spec.no_match:
        titles = _run(spec, snippet)
        assert titles == [], f"{spec.name} fired on:\n{snippet}\n-> {titles}"


def test_check_tags_and_names() -> None:
    for spec in CHECKS:
        assert spec.tag in {
            "security",
            "correctness",
            "quality",
            "performance",
            "game-design",
            "architecture",
            "user-product",
            "decisions",
            "people",
            "resilience",
            "perception",
            "systems",
        }
        prefix = ("py-", "cli-") if spec.kind == "python" else ("doc-",)
        assert spec.name.startswith(prefix), spec.name
