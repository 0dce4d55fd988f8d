"""The Findings Index contract: canonical form, real-world variants, properties."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fluxdrive.contracts import (
    IndexEntry,
    clean_field,
    derive_verdict,
    parse_index,
    render_error_stub,
    render_index,
)

CANONICAL = """### Findings Index
- P1 | SF-001 | "Authentication" | Session tokens stored in localStorage
- P2 | SF-002 | "API Design" | No rate limit on public endpoints | src/api.py:88
Verdict: needs-changes

### Summary
Two issues.
"""


def test_canonical_form_parses_without_notes() -> None:
    parsed = parse_index(CANONICAL)
    assert parsed.found
    assert parsed.notes == () and parsed.violations == ()
    assert parsed.verdict == "needs-changes" == parsed.declared_verdict
    assert [(e.severity, e.id, e.section, e.title, e.location) for e in parsed.entries] == [
        ("P1", "SF-001", "Authentication", "Session tokens stored in localStorage", None),
        ("P2", "SF-002", "API Design", "No rate limit on public endpoints", "src/api.py:88"),
    ]


def test_render_produces_the_canonical_text() -> None:
    entries = parse_index(CANONICAL).entries
    assert render_index(entries) == CANONICAL.split("\n\n", 1)[0] + "\n"


@pytest.mark.parametrize("level", ["##", "###", "####"])
def test_heading_levels_two_to_four(level: str) -> None:
    parsed = parse_index(CANONICAL.replace("###", level, 1))
    assert len(parsed.entries) == 2
    assert parsed.violations == ()


def test_front_matter_and_metadata_lines_before_the_index() -> None:
    text = (
        "---\nagent: fd-safety\ntier: sonnet\n---\n"
        "<!-- run-uuid: 1234 -->\n# Safety review\n\n**Reviewer**: fd-safety\n**Date**: 2026-02-22\n---\n\n" + CANONICAL
    )
    parsed = parse_index(text)
    assert [e.id for e in parsed.entries] == ["SF-001", "SF-002"]
    assert parsed.verdict == "needs-changes"


def test_crlf_line_endings() -> None:
    parsed = parse_index(CANONICAL.replace("\n", "\r\n"))
    assert [e.id for e in parsed.entries] == ["SF-001", "SF-002"]
    assert parsed.entries[1].location == "src/api.py:88"
    assert "CRLF line endings" in parsed.notes
    assert parsed.violations == ()


def test_index_inside_a_code_fence() -> None:
    text = "Here is my report.\n\n```markdown\n" + CANONICAL.split("\n\n")[0] + "\n```\n"
    parsed = parse_index(text)
    assert len(parsed.entries) == 2
    assert "index inside a code fence" in parsed.notes


def test_extra_fields_after_the_title() -> None:
    text = '### Findings Index\n- P0 | CR-001 | "DB" | Lost update on balance | app/db.py:41 | race | fix: lock\nVerdict: risky\n'
    (entry,) = parse_index(text).entries
    assert entry.location == "app/db.py:41"
    assert entry.extra == ("race", "fix: lock")


def test_older_bullet_shape() -> None:
    text = "## Findings Index\n- [P0-SQL1] SQL built by concatenation (app/db.py:41)\n- [P2-NAM] Vague name\nVerdict: risky\n"
    parsed = parse_index(text)
    first, second = parsed.entries
    assert (first.severity, first.id, first.location, first.title) == (
        "P0",
        "P0-SQL1",
        "app/db.py:41",
        "SQL built by concatenation",
    )
    assert second.location is None and second.severity == "P2"
    assert "older [P0-XXX] bullet shape" in parsed.notes


def test_missing_verdict_is_derived_and_marked() -> None:
    text = '### Findings Index\n- P0 | SF-001 | "Auth" | Hard-coded admin password\n\n### Summary\nBad.\n'
    parsed = parse_index(text)
    assert parsed.verdict == "risky"
    assert parsed.declared_verdict is None
    assert any("no Verdict line" in v for v in parsed.violations)


def test_declared_verdict_that_disagrees_is_a_violation_and_derived_wins() -> None:
    text = '### Findings Index\n- P0 | SF-001 | "Auth" | Injection\nVerdict: safe\n'
    parsed = parse_index(text)
    assert parsed.verdict == "risky"
    assert any("disagrees" in v for v in parsed.violations)


def test_bold_verdict_and_bold_severity() -> None:
    text = '### Findings Index\n- **P1** | QS-001 | "Naming" | Vague names\n**Verdict:** needs-changes\n'
    parsed = parse_index(text)
    assert parsed.entries[0].severity == "P1"
    assert parsed.violations == ()


def test_table_index_with_word_severity() -> None:
    text = (
        "## Findings Index\n\n| Severity | ID | Section | Title |\n|---|---|---|---|\n"
        "| HIGH | SAF-01 | Auth | Tokens never expire |\n| P2 | SAF-02 | API | No pagination |\n"
        "\nVerdict: needs-changes\n"
    )
    parsed = parse_index(text)
    assert [(e.severity, e.id) for e in parsed.entries] == [("P1", "SAF-01"), ("P2", "SAF-02")]
    assert "index written as a table" in parsed.notes
    assert "word severities mapped to P0..P3" in parsed.violations


def test_improvement_lines_are_kept_apart_from_findings() -> None:
    text = '### Findings Index\n- P2 | QS-001 | "Tests" | No test for retry\n- IMP | QS-002 | "Docs" | Document the flags\n- IMP-3 | "Step 1" | Split the module\nVerdict: safe\n'
    parsed = parse_index(text)
    assert [e.improvement for e in parsed.entries] == [False, True, True]
    assert [e.id for e in parsed.findings] == ["QS-001"]
    assert parsed.violations == ()


def test_template_block_is_ignored_in_favour_of_the_real_index() -> None:
    text = (
        'Use this format:\n\n```\n### Findings Index\n- SEVERITY | ID | "Section" | Title\n'
        "Verdict: safe|needs-changes|risky\n```\n\n" + CANONICAL
    )
    parsed = parse_index(text)
    assert [e.id for e in parsed.entries] == ["SF-001", "SF-002"]


def test_quoted_error_example_in_a_fence_does_not_make_an_error() -> None:
    text = CANONICAL + "\nAn error stub looks like:\n```\n### Findings Index\nVerdict: error\n\nAgent failed\n```\n"
    parsed = parse_index(text)
    assert parsed.verdict == "needs-changes"
    assert not parsed.is_error


def test_final_index_at_the_end_is_used_when_the_top_one_is_empty() -> None:
    text = (
        "## Findings Index\n(filled in at the end)\n\n## Analysis\nlots of prose\n\n"
        '## Final Findings Index\n- P1 | AR-001 | "Layers" | UI imports the DB driver\nVerdict: needs-changes\n'
    )
    parsed = parse_index(text)
    assert [e.id for e in parsed.entries] == ["AR-001"]


def test_severity_is_anchored() -> None:
    text = '### Findings Index\n- P10 | X-001 | "S" | Not a severity\n- P2 | X-002 | "S" | Mentions P0 in the title\nVerdict: safe\n'
    parsed = parse_index(text)
    assert [e.severity for e in parsed.entries] == ["P2"]
    assert parsed.verdict == "safe"


def test_noncanonical_ids_are_accepted_with_a_note() -> None:
    text = '### Findings Index\n- P1 | P0-1 | "S" | Something\nVerdict: needs-changes\n'
    parsed = parse_index(text)
    assert parsed.entries[0].id == "P0-1"
    assert "1 id(s) not of the form AB-001" in parsed.notes


def test_zero_findings() -> None:
    parsed = parse_index("### Findings Index\nVerdict: safe\n")
    assert parsed.found and parsed.entries == () and parsed.verdict == "safe"
    assert parsed.violations == ()


def test_empty_index_without_verdict_is_not_a_clean_review() -> None:
    parsed = parse_index("### Findings Index\n\n### Summary\n")
    assert not parsed.found
    assert any("possibly truncated" in v for v in parsed.violations)


def test_no_index_at_all() -> None:
    parsed = parse_index("# Review\n\nThe code looks mostly fine but the auth is weak.\n")
    assert not parsed.found


def test_yaml_front_matter_issue_list() -> None:
    text = (
        "---\nagent: fd-quality\nissues:\n  - {id: Q-1, severity: P1, section: API, title: Inconsistent errors}\n"
        "verdict: needs-changes\n---\n\nProse.\n"
    )
    parsed = parse_index(text)
    assert [(e.id, e.severity, e.section) for e in parsed.entries] == [("Q-1", "P1", "API")]
    assert parsed.verdict == "needs-changes"


def test_error_stub_round_trip() -> None:
    parsed = parse_index(render_error_stub("timed out after 300 s\nwhile reading"))
    assert parsed.is_error and parsed.verdict == "error"
    assert parsed.error_message == "timed out after 300 s while reading"
    assert render_error_stub("boom") == (
        "### Findings Index\nVerdict: error\n\nAgent failed to produce findings after retry. Error: boom\n"
    )


@pytest.mark.parametrize(
    ("severities", "verdict"),
    [
        ([], "safe"),
        (["P3", "P2"], "safe"),
        (["P2", "P1"], "needs-changes"),
        (["P1", "P0"], "risky"),
    ],
)
def test_derive_verdict(severities: list[str], verdict: str) -> None:
    assert derive_verdict(severities) == verdict


def test_entry_validation_rejects_fields_that_would_not_round_trip() -> None:
    with pytest.raises(ValueError, match="title"):
        IndexEntry("P1", "SF-001", "S", "a | b")
    with pytest.raises(ValueError, match="severity"):
        IndexEntry("P4", "SF-001", "S", "t")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="extra"):
        IndexEntry("P1", "SF-001", "S", "t", extra=("x",))
    assert clean_field(" a | b\nc ") == "a / b c"


# ---------------------------------------------------------------- properties

_TEXT = st.text(
    alphabet=st.characters(blacklist_categories=("Cs", "Cc"), blacklist_characters="\u2028\u2029\x85")
    | st.sampled_from(list('|"`*#-[]():')),
    min_size=1,
    max_size=40,
)


def _valid(value: str) -> bool:
    try:
        IndexEntry("P1", "AB-001", "S", value)
    except ValueError:
        return False
    return True


_FIELD = _TEXT.map(clean_field).filter(_valid)

_ENTRY = st.builds(
    IndexEntry,
    severity=st.sampled_from(["P0", "P1", "P2", "P3"]),
    improvement=st.just(False),
    id=st.from_regex(r"[A-Z]{2,3}-[0-9]{3}", fullmatch=True),
    section=st.one_of(st.just(""), _FIELD),
    title=_FIELD,
    location=st.one_of(st.none(), st.from_regex(r"[a-z/]{1,20}\.py:[1-9][0-9]{0,3}", fullmatch=True)),
) | st.builds(
    IndexEntry,
    severity=st.just("P3"),
    improvement=st.just(True),
    id=st.from_regex(r"[A-Z]{2,3}-[0-9]{3}", fullmatch=True),
    section=_FIELD,
    title=_FIELD,
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_ENTRY, max_size=8))
def test_render_then_parse_is_the_identity(entries: list[IndexEntry]) -> None:
    parsed = parse_index(render_index(entries))
    assert parsed.entries == tuple(entries)
    assert parsed.verdict == derive_verdict(e.severity for e in entries if not e.improvement)
    assert parsed.violations == ()


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_parse_never_raises_on_arbitrary_text(text: str) -> None:
    result = parse_index(text)
    assert result.verdict in ("safe", "needs-changes", "risky", "error")


_LINES = st.sampled_from(
    [
        "### Findings Index",
        "## Findings Index",
        "```",
        "---",
        "Verdict: risky",
        "Verdict: error",
        "Verdict: safe|needs-changes|risky",
        '- P0 | SF-001 | "A" | t',
        "- [P1-X] thing (a.py:3)",
        "| P1 | A | B | C |",
        "|---|---|",
        '- SEVERITY | ID | "Section" | Title',
        "issues: [{id: 1}]",
        "",
    ]
)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(_LINES, st.text(max_size=30)), max_size=25))
def test_parse_never_raises_on_index_like_garbage(lines: list[str]) -> None:
    result = parse_index("\n".join(lines))
    assert all(e.severity in ("P0", "P1", "P2", "P3") for e in result.entries)
