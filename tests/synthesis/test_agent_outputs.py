"""The parser and the prose fallback on 42 realistic agent reports (tests/fixtures/agent-outputs)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml

from fluxdrive.contracts import classify_text
from fluxdrive.synthesis.prose import prose_findings

ROOT = Path(__file__).resolve().parent.parent / "fixtures" / "agent-outputs"
EXPECTED: dict[str, Any] = yaml.safe_load((ROOT / "expected.yaml").read_text())
FILES = sorted(k for k in EXPECTED if k.endswith(".md"))


def test_there_are_at_least_25_fixtures() -> None:
    assert len(FILES) >= 25
    assert sorted(str(p.relative_to(ROOT)) for p in ROOT.rglob("*.md")) == FILES


@pytest.mark.parametrize("name", FILES)
def test_classification_matches_expectations(name: str) -> None:
    expected = EXPECTED[name]
    with (ROOT / name).open(newline="") as handle:
        text = handle.read()
    result = classify_text(text)
    entries = result.index.entries
    assert result.status.value == expected["status"], result.reason
    assert result.usable_index is expected["usable_index"]
    assert result.partial is expected["partial"]
    assert len(entries) == expected["entries"]
    severities = Counter(e.severity for e in entries if not e.improvement)
    assert dict(severities) == expected["severities"]
    assert sum(1 for e in entries if e.improvement) == expected["improvements"]
    assert result.verdict == expected["verdict"]
    if "prose_findings" in expected:
        mined = prose_findings("agent", text)
        assert len(mined) == expected["prose_findings"], [f.title for f in mined]
        assert dict(Counter(f.severity for f in mined)) == expected["prose_severities"]
        assert all(f.from_prose for f in mined)


def test_error_message_comes_after_front_matter() -> None:
    result = classify_text((ROOT / "variants" / "oracle-review.md").read_text())
    assert result.reason.startswith("agent error: Oracle failed (exit 124)")


def test_failure_banner_is_an_error_not_a_review() -> None:
    result = classify_text((ROOT / "variants" / "oracle-council.md").read_text())
    assert result.reason == "agent failed: Oracle failed (exit 124)"
