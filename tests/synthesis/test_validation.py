"""Cross-model validation as synthesis applies it (issue 31, item 2): parsing the checker, demoting a rejection.

Pure units; the reading edge is tested against a real file. The end-to-end review is in
tests/launch/test_validation.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from fluxdrive.synthesis.model import Finding, Validation
from fluxdrive.synthesis.validation import FILE_NAME, Check, apply, index, parse_answer, read, render


@pytest.mark.parametrize(
    ("answer", "parsed"),
    [
        ("CONFIRMED: line 8 divides by len(prices)", ("confirmed", "line 8 divides by len(prices)")),
        ("  REJECTED:   callers check first \n", ("rejected", "callers check first")),
        ("REJECTED: two\nlines", ("rejected", "two lines")),
        ("confirmed: lower case", ("unclear", "confirmed: lower case")),
        ("I think CONFIRMED: maybe", ("unclear", "I think CONFIRMED: maybe")),
        ("REJECTED:", ("unclear", "REJECTED:")),
        ("", ("unclear", "(empty answer)")),
    ],
)
def test_the_answer_is_parsed_strictly(answer: str, parsed: tuple[str, str]) -> None:
    assert parse_answer(answer) == parsed


def _finding(severity: str = "P0") -> Finding:
    return Finding("P0-1", severity, ["fd-safety"], "s", "t", ["app/x.py:3"], source_ids={"fd-safety": "SF-001"})


def _check(status: str, members: tuple[tuple[str, str], ...] = (("fd-safety", "SF-001"),)) -> Check:
    return Check(members, "P0-1", "P0", "t", "app/x.py:3", "openai:gpt-4o", "anthropic:claude-sonnet-4-6",
                 status, "why")  # type: ignore[arg-type]  # fmt: skip


def test_a_rejected_p0_drops_to_p2_and_is_kept() -> None:
    finding = _finding()
    apply(finding, index([_check("rejected")]))
    assert finding.severity == "P2"
    assert finding.validation == Validation("not-confirmed", "anthropic:claude-sonnet-4-6", "why", "P0",
                                            "openai:gpt-4o")  # fmt: skip
    assert finding.not_confirmed == "anthropic:claude-sonnet-4-6: why (demoted from P0)"


@pytest.mark.parametrize(("status", "shown"), [("confirmed", "confirmed"), ("unclear", "unclear"),
                                               ("unvalidated", "unvalidated")])  # fmt: skip
def test_anything_but_a_rejection_keeps_the_severity(status: str, shown: str) -> None:
    finding = _finding("P1")
    apply(finding, index([_check(status)]))
    assert finding.severity == "P1" and finding.validation is not None and finding.validation.status == shown
    assert finding.not_confirmed == ""


def test_a_finding_nobody_checked_is_left_alone() -> None:
    finding = _finding()
    apply(finding, index([_check("rejected", (("fd-other", "SF-001"),))]))
    assert finding.severity == "P0" and finding.validation is None


def test_read_back_skips_a_torn_line(tmp_path: Path) -> None:
    (tmp_path / FILE_NAME).write_text(render([_check("rejected")]) + '{"finding": "P0-2", "sta')
    checks, notes = read(tmp_path, tmp_path)
    assert checks == [_check("rejected")]
    assert notes == [f"skipped 1 incomplete or invalid line(s) of {FILE_NAME}"]
    assert read(tmp_path / "none", tmp_path) == ([], [])
