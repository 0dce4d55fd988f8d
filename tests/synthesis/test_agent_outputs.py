"""The parser and the prose fallback on 47 realistic agent reports (tests/fixtures/agent-outputs).

real-world/ holds shapes of real model and review-bot reports (sources in its
README.md); for those the exact findings, and the count of ignored candidate
lines, are pinned in expected.yaml.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml

from fluxdrive.contracts import classify_text
from fluxdrive.synthesis import synthesize
from fluxdrive.synthesis.prose import MAX_PROSE_FINDINGS, mine_prose, prose_findings

ROOT = Path(__file__).resolve().parent.parent / "fixtures" / "agent-outputs"
EXPECTED: dict[str, Any] = yaml.safe_load((ROOT / "expected.yaml").read_text())
FILES = sorted(k for k in EXPECTED if k.endswith(".md"))


def test_there_are_at_least_25_fixtures() -> None:
    assert len(FILES) >= 25
    reports = (p for p in ROOT.rglob("*.md") if p.name != "README.md")
    assert sorted(str(p.relative_to(ROOT)) for p in reports) == FILES


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
        result = mine_prose("agent", text)
        mined = list(result.findings)
        assert mined == prose_findings("agent", text)
        assert len(mined) == expected["prose_findings"], [f.title for f in mined]
        assert dict(Counter(f.severity for f in mined)) == expected["prose_severities"]
        assert all(f.from_prose for f in mined)
        assert [f.local_id for f in mined] == [f"agent-prose-{n}" for n in range(1, len(mined) + 1)]
        assert result.ignored == expected.get("prose_ignored", result.ignored)
        assert result.dropped == 0
        if "prose_expected" in expected:
            assert [[f.severity, f.title, f.location] for f in mined] == expected["prose_expected"]


def test_error_message_comes_after_front_matter() -> None:
    result = classify_text((ROOT / "variants" / "oracle-review.md").read_text())
    assert result.reason.startswith("agent error: Oracle failed (exit 124)")


def test_failure_banner_is_an_error_not_a_review() -> None:
    result = classify_text((ROOT / "variants" / "oracle-council.md").read_text())
    assert result.reason == "agent failed: Oracle failed (exit 124)"


# --- prose fallback precision (issue 12 item 6) --------------------------------------------------------


def test_a_heading_or_a_bold_word_alone_is_not_a_finding() -> None:
    """The shape of the 177-findings report: severity words as headings and labels, fragments under them."""
    text = """## Issues Found

### Critical

**Important**

- `quick` = seconds
- **Critical**
- Typos

#### Thread Safety (6 issues)

| Location | Issue |
|---|---|
| `shop/db.py:6` | shared connection |

### Minor

- The export helper opens its file without a context manager (shop/db.py:30)
"""
    result = mine_prose("fd-quality", text)
    assert [(f.severity, f.title) for f in result.findings] == [
        ("P3", "The export helper opens its file without a context manager")
    ]
    assert result.ignored == 3, "`quick` = seconds, Typos and the table heading; the labels are not candidates"


def test_labels_give_their_severity_and_markers_win() -> None:
    text = """## 🔴 Critical Issues (Must Fix)

- The ping route hands the host field to a shell (shop/routes.py:45)
- [P2] A timeout is missing on the outbound health check (shop/routes.py:46)

**Nice to have:**

- The export helper could share the report writer with the admin page

### Warnings (Should Fix)

#### Admin purge never commits

**Priority:** HIGH - the endpoint lies about deleting rows

The DELETE is never committed, so the rows survive while the endpoint answers ok.

- the connection is dropped without commit()

#### Tracebacks in error responses

Every 500 returns `traceback.format_exc()` to the client, file paths included.
"""
    mined = mine_prose("fd-safety", text).findings
    assert [(f.severity, f.title, f.location) for f in mined] == [
        ("P0", "The ping route hands the host field to a shell", "shop/routes.py:45"),
        ("P2", "A timeout is missing on the outbound health check", "shop/routes.py:46"),
        ("P3", "The export helper could share the report writer with the admin page", None),
        ("P1", "Admin purge never commits", None),
        ("P2", "Tracebacks in error responses", None),
    ]
    assert [f.section for f in mined] == ["🔴 Critical Issues (Must Fix)"] * 3 + ["Warnings (Should Fix)"] * 2


def test_prose_findings_are_capped_most_severe_first() -> None:
    severities = ["P3", "P2", "P0", "P3", "P1"] * 8  # 40 findings: 8 of P0, 8 of P1, 8 of P2, 16 of P3
    lines = [f"- {s}: the handler number {n} swallows its error without logging it" for n, s in enumerate(severities)]
    result = mine_prose("fd-quality", "## Findings\n\n" + "\n".join(lines) + "\n")
    assert (len(result.findings), result.dropped, result.ignored) == (MAX_PROSE_FINDINGS, 40 - MAX_PROSE_FINDINGS, 0)
    counts = Counter(f.severity for f in result.findings)
    assert counts == {"P0": 8, "P1": 8, "P2": 8, "P3": 1}, "the least severe go first"
    numbers = [int(f.title.split()[3]) for f in result.findings]
    assert numbers == sorted(numbers), "the kept ones stay in order of appearance"
    assert [f.local_id for f in result.findings][-1] == f"fd-quality-prose-{MAX_PROSE_FINDINGS}"
    assert result.summary() == (
        f"{MAX_PROSE_FINDINGS} finding(s) from prose; 15 more dropped over the cap of {MAX_PROSE_FINDINGS}"
        " (the least severe)"
    )


def test_synthesis_says_what_the_prose_fallback_left_out(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    (run / "fd-quality.md").write_bytes((ROOT / "real-world" / "claude-audit.md").read_bytes())
    (run / "fd-safety.md").write_bytes((ROOT / "real-world" / "codex-review.md").read_bytes())
    result = synthesize(run)
    quality, safety = result.outputs["fd-quality"], result.outputs["fd-safety"]
    assert quality.reason == (
        "no Findings Index found (prose fallback needed); 15 finding(s) from prose;"
        " 29 candidate line(s) ignored (no sentence, a field line or a heading with no description)"
    )
    assert safety.reason.endswith("; 4 finding(s) from prose")
    assert result.notes == [
        "fd-quality: prose fallback: 15 finding(s) from prose;"
        " 29 candidate line(s) ignored (no sentence, a field line or a heading with no description)"
    ], "a report that lost nothing adds no note"
