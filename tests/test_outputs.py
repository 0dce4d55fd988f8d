"""Classifying agent outputs: valid / error / malformed / missing, with reasons."""

from __future__ import annotations

from pathlib import Path

from fluxdrive.contracts import (
    IndexEntry,
    IssueDetail,
    OutputStatus,
    Report,
    classify_output,
    classify_text,
    parse_index,
    render_report,
    write_agent_output,
)


def test_valid_report_reason_counts_findings(tmp_path: Path) -> None:
    entries = (IndexEntry("P0", "SF-001", "app.py", "SQL built from request input", "app.py:12"),)
    text = render_report(
        Report(
            entries,
            summary="One injection.",
            details={"SF-001": IssueDetail(evidence="q = 'x' + y")},
        )
    )
    result = classify_output(write_agent_output(tmp_path, "fd-safety", text))
    assert result.status is OutputStatus.VALID
    assert result.reason == "1 finding, verdict risky"
    assert result.has_sentinel and result.usable_index


def test_missing_file_and_empty_file(tmp_path: Path) -> None:
    assert classify_output(tmp_path / "nope.md").status is OutputStatus.MISSING
    (tmp_path / "empty.md").write_text("\n\n")
    empty = classify_output(tmp_path / "empty.md")
    assert empty.status is OutputStatus.MISSING and empty.reason == "empty output"


def test_sentinel_only_file_counts_as_empty(tmp_path: Path) -> None:
    assert classify_output(write_agent_output(tmp_path, "a", "")).status is OutputStatus.MISSING


def test_prose_without_index_needs_the_fallback() -> None:
    result = classify_text("# Review\n\n**P1**: the retry loop never backs off (client.py:40)\n")
    assert result.status is OutputStatus.MALFORMED
    assert not result.usable_index
    assert "prose fallback" in result.reason


def test_missing_verdict_is_malformed_but_usable() -> None:
    result = classify_text('### Findings Index\n- P1 | QS-001 | "API" | Inconsistent errors\n')
    assert result.status is OutputStatus.MALFORMED
    assert result.usable_index
    assert "no Verdict line" in result.reason


def test_huge_output_is_read_from_head_and_tail(tmp_path: Path) -> None:
    head = '### Findings Index\n- P2 | PF-001 | "Loop" | Regex compiled per row\nVerdict: safe\n\n'
    path = tmp_path / "big.md"
    with path.open("w") as handle:
        handle.write(head)
        handle.write(("x" * 1000 + "\n") * 3000)  # ~3 MB of prose
        handle.write("<!-- flux-drive:complete -->\n")
    result = classify_output(path)
    assert result.status is OutputStatus.VALID
    assert result.truncated_read and result.has_sentinel


def test_report_rendering_round_trips_through_the_parser() -> None:
    entries = (
        IndexEntry("P1", "CR-001", "db.py", "Read-modify-write without a lock", "db.py:9"),
        IndexEntry("P3", "CR-002", "db.py", "Name the retry constant", improvement=True),
    )
    text = render_report(Report(entries, summary="s", acknowledgements=("fd-safety: injection noted",)))
    assert parse_index(text).entries == entries
    assert "### Issues Found\n1. CR-001 P1: Read-modify-write without a lock (db.py:9)" in text
    assert "### Improvements\n- CR-002: Name the retry constant" in text
    assert "### Peer Findings Acknowledged\n- fd-safety: injection noted" in text
