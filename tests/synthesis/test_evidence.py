"""The pure half of analyzer evidence (fluxdrive.synthesis.evidence): answers, the cap, support and the ranking."""

from __future__ import annotations

import json
from pathlib import Path

from fluxdrive.contracts.run_manifest import ProvenanceRecord
from fluxdrive.synthesis.evidence import (
    Answer,
    Backing,
    Candidate,
    Given,
    candidate_findings,
    parse_answers,
    rank,
    rank_key,
    read_given,
)
from fluxdrive.synthesis.model import Finding, RawFinding, Support

MODEL = "openai:gpt-4o"


def _candidate(severity: str, place: str, rule: str = "fluxdrive:py-sql-injection", title: str = "t") -> Candidate:
    return Candidate("", severity, rule, place, title)


def test_answers_are_read_from_their_section_only_and_junk_is_ignored() -> None:
    text = (
        "### Findings Index\n- AE-001 | refuted | not in the evidence section: ignored\nVerdict: safe\n\n"
        "### Analyzer Evidence\n"
        "- AE-001 | Confirmed | `name` reaches execute()\n"
        "* AE-002 | refuted |   a constant, not input  \n"
        "- AE-003 | maybe | not a verdict\n"
        "- AE-004 confirmed no pipes\n"
        "AE-005 | confirmed | not a list item\n"
        "- AE-009 | confirmed | an id that was never given\n"
        "- AE-001 | refuted | a second answer: the first stands\n"
        "### Summary\n- AE-006 | confirmed | after the section\n"
    )
    answers = parse_answers(text, [f"AE-00{n}" for n in range(1, 7)])
    assert answers == {
        "AE-001": Answer("AE-001", "confirmed", "`name` reaches execute()"),
        "AE-002": Answer("AE-002", "refuted", "a constant, not input"),
    }
    assert parse_answers("no section at all", ["AE-001"]) == {}


def test_the_cap_keeps_the_most_severe_in_a_deterministic_order() -> None:
    found = [
        _candidate("P2", "a.py:3"),
        _candidate("P0", "b.py:10"),
        _candidate("P1", "a.py:1"),
        _candidate("P0", "b.py:9"),
        _candidate("P3", "a.py:1"),
    ]
    kept = rank(found, 3)
    assert [(c.id, c.severity, c.place) for c in kept] == [
        ("AE-001", "P0", "b.py:9"),  # line 9 before line 10: places order by number
        ("AE-002", "P0", "b.py:10"),
        ("AE-003", "P1", "a.py:1"),
    ]
    assert rank(list(reversed(found)), 3) == kept
    assert rank(found, 0) == []


def _finding(members: list[RawFinding], confidence: str = "high") -> Finding:
    return Finding(
        id="",
        severity=members[0].severity,
        agents=sorted({m.agent for m in members}),
        section="s",
        title=members[0].title,
        locations=[members[0].location or ""],
        confidence=confidence,
        members=members,
    )


def test_support_from_candidates_answers_and_the_models_own_findings() -> None:
    sql = Candidate("AE-001", "P0", "fluxdrive:py-sql-injection", "db.py:15", "SQL injection")
    xss = Candidate("AE-002", "P1", "fluxdrive:py-xss", "routes.py:38", "XSS")
    debug = Candidate("AE-003", "P1", "ruff:S201", "app.py:9", "debug")
    given = {"fd-safety": Given("fd-safety", MODEL, (sql, xss, debug))}
    answers = {
        "fd-safety": {
            "AE-001": Answer("AE-001", "confirmed", "yes"),
            "AE-002": Answer("AE-002", "refuted", "send_file builds no HTML"),
        }
    }
    raws = {r.local_id: r for r in candidate_findings(given)}
    own = RawFinding("fd-safety", "P0", "SF-001", "db.py", "SQL injection", "db.py:15")
    static = RawFinding("fd-static-peer", "P2", "X-001", "a.py", "long", "a.py:2", rule="lizard:complexity")
    other = RawFinding("fd-other", "P2", "O-001", "a.py", "naming", "a.py:3")
    claude = ProvenanceRecord(provider="anthropic", model_family="claude", model_id="claude-x")
    back = Backing(given, answers, {"fd-other": claude})

    confirmed, refuted, unanswered = (
        _finding([raws["AE-001"], own]),
        _finding([raws["AE-002"]]),
        _finding([raws["AE-003"]]),
    )
    alone, by_tool, by_other = _finding([own]), _finding([static]), _finding([other])
    for finding in (confirmed, refuted, unanswered, alone, by_tool, by_other):
        back.apply(finding)
    assert confirmed.support == Support(("fd-safety:py-sql-injection",), (MODEL,))
    assert refuted.support == Support(("fd-safety:py-xss",), (), ((MODEL, "send_file builds no HTML"),))
    assert refuted.confidence == "medium"  # one step lower
    assert unanswered.support == Support(("fd-safety:ruff:S201",)) and unanswered.confidence == "high"
    assert alone.support == Support((), (MODEL,))
    assert by_tool.support == Support(("fd-static-peer:lizard:complexity",))
    assert by_other.support == Support((), ("anthropic:claude-x",))

    # A run without evidence is left as it was.
    untouched = _finding([own])
    Backing({}, {}).apply(untouched)
    assert untouched.support is None and rank_key(untouched) == (0, 0, 0)


def test_ranking_unrefuted_then_supporters_then_confidence() -> None:
    def finding(support: Support, confidence: str) -> Finding:
        made = _finding([RawFinding("a", "P1", "A-1", "s", "t", "x.py:1")], confidence)
        made.support = support
        return made

    both = finding(Support(("a:r",), (MODEL,)), "low")
    tool_high = finding(Support(("a:r",)), "high")
    tool_low = finding(Support(("a:r",)), "low")
    refuted = finding(Support(("a:r",), (), ((MODEL, "no"),)), "high")
    ordered = sorted([refuted, tool_low, both, tool_high], key=rank_key)
    assert ordered == [both, tool_high, tool_low, refuted]


def test_evidence_files_are_read_back_and_bad_ones_noted(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    folder = tmp_path / "run" / "evidence"
    folder.mkdir(parents=True)
    one = Given("fd-safety", MODEL, (Candidate("AE-001", "P0", "r", "a.py:1", "t", ("v.py:3", "a.py:1"), "high"),))
    (folder / "fd-safety.json").write_text(json.dumps(one.record()))
    (folder / "fd-quality.json").write_text("{not json")
    (folder / "fd-other.json").write_text(json.dumps({"model": MODEL, "candidates": [{"id": "AE-001"}, 3]}))
    given, notes = read_given(tmp_path / "run", tmp_path, ["fd-safety", "fd-quality", "fd-other", "fd-absent"])
    assert given["fd-safety"] == one
    assert given["fd-other"] == Given("fd-other", MODEL, ())  # records that are not candidates are left out
    assert "fd-quality" not in given and len(notes) == 1 and notes[0].startswith("evidence/fd-quality.json ignored")
    assert one.candidates[0].line() == "- AE-001 | P0 | r | a.py:1 | t | flow (high evidence): v.py:3 -> a.py:1"
