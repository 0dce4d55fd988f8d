"""AgentDropout and the expansion decision on real agent definitions (PROTOCOL.md 4.8, 4.9)."""

from __future__ import annotations

from pathlib import Path

import pytest

from fluxdrive.agents import Roster, load_roster
from fluxdrive.config.model import DropoutConfig, ExpansionConfig
from fluxdrive.launch.dropout import assess_dropout, render_dropout
from fluxdrive.launch.expansion import Decision, choose, decide, render_decision
from fluxdrive.synthesis import Finding


@pytest.fixture
def roster(tmp_path: Path) -> Roster:
    return load_roster(tmp_path)


def _finding(n: int, severity: str, agents: list[str], title: str, **extra: object) -> Finding:
    return Finding(f"{severity}-{n}", severity, agents, "app.py", title, ["app.py:10"], **extra)


SQL = _finding(1, "P0", ["fd-safety"], "SQL injection: request value concatenated into cursor.execute")
LAYER = _finding(2, "P1", ["fd-architecture"], "Handlers import the database layer directly")


def _decide(roster: Roster, findings: list[Finding], **kw: object) -> Decision:
    args = {
        "stage1_failed": False,
        "roster": roster,
        "boosted": set(),
        "dropped": [],
        "config": ExpansionConfig(),
        **kw,
    }
    return decide(["fd-correctness", "fd-performance"], ["fd-user-product"], findings, **args)  # type: ignore[arg-type]


def test_recommend_cites_findings_and_adjacency(roster: Roster) -> None:
    decision = _decide(roster, [SQL, LAYER])
    assert decision.kind == "recommend"
    assert decision.recommended == ("fd-correctness",)
    scores = {c.agent: c.score for c in decision.candidates}
    # fd-correctness lists fd-safety as adjacent (+3 for its P0); fd-performance lists fd-architecture (+2 for a P1).
    assert scores == {"fd-correctness": 3, "fd-performance": 2, "fd-user-product": 0}
    text = render_decision(decision)
    assert (
        "fd-correctness (3): P0 'SQL injection: request value concatenated into cursor.execute' by fd-safety (adjacent)"
        in text
    )
    assert choose(decision, "recommended") == ["fd-correctness"]
    assert choose(decision, "all") == ["fd-correctness", "fd-performance"]
    assert choose(decision, "none") == []


def test_offer_has_no_default_and_stop_below_two(roster: Roster) -> None:
    offer = _decide(roster, [LAYER])
    assert offer.kind == "offer" and offer.recommended == ()
    assert choose(offer, "recommended") == []
    quiet = _decide(roster, [_finding(3, "P2", ["fd-quality"], "Long function")])
    assert quiet.kind == "stop" and "Recommend stopping" in quiet.message


def test_edge_cases_nothing_found_and_all_failed(roster: Roster) -> None:
    nothing = _decide(roster, [])
    assert nothing.kind == "stop" and "Stage 1 found nothing" in nothing.message
    assert choose(nothing, "all") == ["fd-correctness", "fd-performance"], "expansion stays possible"
    failed = _decide(roster, [], stage1_failed=True)
    assert failed.kind == "fallback"
    assert choose(failed, "recommended") == ["fd-correctness", "fd-performance"]


def test_disagreement_and_domain_criteria_points(roster: Roster) -> None:
    disputed = _finding(
        4,
        "P1",
        ["fd-safety", "fd-quality"],
        "Retry loop re-sends the payment request",
        severity_conflict={"fd-safety": "P1", "fd-quality": "P2"},
    )
    scores = {c.agent: c.score for c in _decide(roster, [disputed], boosted={"fd-correctness"}).candidates}
    # +2 P1 by fd-safety (adjacent), +2 disagreement involving a neighbour, +1 domain criteria ("retry" is in its lane)
    assert scores["fd-correctness"] == 5


def test_dropout_drops_redundant_never_exempt(roster: Roster) -> None:
    perf = [
        _finding(n, "P1", ["fd-architecture"], f"Unbounded query in the listing endpoint {n} adds latency")
        for n in range(3)
    ]
    result = assess_dropout(
        ["fd-performance", "fd-correctness", "fd-user-product"],
        ["fd-architecture", "fd-safety"],
        [*perf, SQL],
        roster,
        {"fd-user-product": 0.3},
        DropoutConfig(),
        tokens_for=lambda name: 40_000,
    )
    rows = {r.agent: r for r in result.rows}
    assert rows["fd-performance"].score == 0.6 and rows["fd-performance"].dropped  # own lane 0.4 + density 0.2
    assert rows["fd-correctness"].exempt and not rows["fd-correctness"].dropped
    assert rows["fd-user-product"].score == 0.1 and not rows["fd-user-product"].dropped  # low trust only
    assert result.dropped == ["fd-performance"] and result.tokens_saved == 40_000
    table = render_dropout(result)
    assert "fd-performance" in table and "dropped" in table and "about 40,000 tokens saved" in table
    decision = _decide(roster, [*perf, SQL], dropped=result.dropped)
    assert "fd-performance" not in decision.recommended
    assert "fd-performance" in choose(decision, "all"), "launch all restores dropped agents"


@pytest.mark.parametrize(
    ("candidates", "findings", "config", "why"),
    [
        (["fd-performance", "fd-quality"], [SQL], DropoutConfig(enabled=False), "dropout is disabled"),
        (["fd-performance"], [SQL], DropoutConfig(), "only one candidate"),
        (["fd-performance", "fd-quality"], [], DropoutConfig(), "Stage 1 found nothing"),
    ],
)
def test_dropout_skips(
    roster: Roster, candidates: list[str], findings: list[Finding], config: DropoutConfig, why: str
) -> None:
    result = assess_dropout(candidates, ["fd-safety"], findings, roster, {}, config, tokens_for=lambda n: 1)
    assert result.skipped == why and result.dropped == []
    assert render_dropout(result) == f"Dropout: skipped ({why})"


def test_with_no_candidate_the_decision_is_one_line_that_says_something() -> None:
    """Issue 30, item 11: a table header with nothing under it was printed on every run."""
    stop = Decision("stop", (), (), "No Stage 2 candidates: the review ends after Stage 1.")
    assert render_decision(stop) == "Expansion decision: No Stage 2 candidates: the review ends after Stage 1."
