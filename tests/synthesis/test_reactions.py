"""The reaction round in synthesis (issue 31, item 1): evidence counts, agreement alone does not.

Pure: findings and reactions built in memory, citations looked up in files held in memory
(the same Reader the grounding check uses).
"""

from __future__ import annotations

import json
from pathlib import Path

from fluxdrive.config.model import SynthesisConfig
from fluxdrive.contracts import OutputStatus
from fluxdrive.contracts.run_manifest import ProvenanceRecord
from fluxdrive.synthesis.convergence import measure
from fluxdrive.synthesis.model import AgentOutput, Finding, RawFinding, Reactions
from fluxdrive.synthesis.reactions import Reaction, independent, load, sycophancy, weigher

DB = "".join(f"line {n}\n" for n in range(1, 41))  # a 40-line file
FILES = {"shop/db.py": DB, "shop/routes.py": DB}


def _read(path: str) -> str | None:
    return FILES.get(path)


def _finding(severity: str = "P1", agents: tuple[str, ...] = ("fd-safety",), place: str = "shop/db.py:15") -> Finding:
    return Finding(
        id=f"{severity}-1",
        severity=severity,
        agents=list(agents),
        section="shop/db.py",
        title="SQL built from a request value",
        locations=[place],
        source_ids={a: f"{a[3:5].upper()}-001" for a in agents},
    )


def _react(agent: str, verdict: str, finding: Finding, *evidence: str) -> Reaction:
    return Reaction(agent, verdict, finding.id, tuple(finding.source_ids.items()), evidence, tuple(finding.locations))


def test_a_confirmation_counts_only_with_a_grounded_citation_of_its_own() -> None:
    finding = _finding()
    own = _react("fd-correctness", "confirm", finding, "shop/routes.py:22")
    repeated = _react("fd-quality", "confirm", finding, "shop/db.py:15")  # the original's place again
    past_end = _react("fd-systems", "confirm", finding, "shop/db.py:93")  # a line the file does not have
    bare = _react("fd-resilience", "confirm", finding)  # "agreed", no citation at all
    assert independent(own, finding.locations, _read)
    assert not independent(repeated, finding.locations, _read)
    assert not independent(past_end, finding.locations, _read)
    assert not independent(bare, finding.locations, _read)
    weigher([own, repeated, past_end, bare], _read)(finding)
    assert finding.reactions == Reactions(
        confirmed_by=("fd-correctness",), hearsay=("fd-quality", "fd-resilience", "fd-systems")
    )


def test_hearsay_does_not_raise_convergence_but_evidence_does() -> None:
    outputs = {
        name: AgentOutput(name, None, OutputStatus.VALID, "", False, (), provenance=ProvenanceRecord(
            provider="openai", model_family="openai", model_id="gpt-4o"))
        for name in ("fd-safety", "fd-correctness", "fd-quality")
    }  # fmt: skip
    members = [RawFinding("fd-safety", "P1", "SA-001", "shop/db.py", "SQL", "shop/db.py:15")]
    settings = SynthesisConfig()
    alone = measure(members, "P1", outputs, None, settings)
    heard = measure(members, "P1", outputs, None, settings, reactions=Reactions(hearsay=("fd-correctness",)))
    shown = measure(members, "P1", outputs, None, settings, reactions=Reactions(confirmed_by=("fd-correctness",)))
    assert (alone.convergence, alone.confidence) == (1, "low")
    assert (heard.convergence, heard.confidence) == (1, "low")
    assert (shown.convergence, shown.confidence) == (2, "medium") and shown.population == 3
    doubted = measure(members, "P1", outputs, None, settings, reactions=Reactions(
        confirmed_by=("fd-correctness",), disputed_by=("fd-quality",)))  # fmt: skip
    assert doubted.confidence == "low"


def test_an_all_hearsay_team_is_flagged_as_sycophancy() -> None:
    first, second = _finding(), _finding("P0", ("fd-correctness",), "shop/routes.py:3")
    agreeing = [
        _react("fd-correctness", "confirm", first),
        _react("fd-quality", "confirm", first, "shop/db.py:15"),
        _react("fd-safety", "confirm", second),
        _react("fd-quality", "confirm", second),
    ]
    weigh = weigher(agreeing, _read)
    for finding in (first, second):
        weigh(finding)
    note = sycophancy([first, second], agreeing)
    assert note == (
        "sycophancy: fd-correctness, fd-quality, fd-safety confirmed 4 finding(s) without independent evidence; "
        "their agreement was not counted"
    )


def test_no_sycophancy_with_evidence_a_dispute_or_a_single_agent() -> None:
    finding = _finding()
    evidenced = [
        _react("fd-correctness", "confirm", finding, "shop/routes.py:4"),
        _react("fd-quality", "confirm", finding),
    ]
    weigher(evidenced, _read)(finding)
    assert sycophancy([finding], evidenced) is None  # half the confirmations had evidence

    finding = _finding()
    disputed = [*(_react(a, "confirm", finding) for a in ("fd-correctness", "fd-quality")),
                _react("fd-systems", "dispute", finding)]  # fmt: skip
    weigher(disputed, _read)(finding)
    assert sycophancy([finding], disputed) is None

    finding = _finding()
    alone = [_react("fd-correctness", "confirm", finding)]
    weigher(alone, _read)(finding)
    assert sycophancy([finding], alone) is None


def test_two_evidenced_disputes_lower_a_lone_p0_one_level() -> None:
    finding = _finding("P0")
    disputes = [_react(a, "dispute", finding, "shop/db.py:14") for a in ("fd-correctness", "fd-quality")]
    weigher(disputes, _read)(finding)
    assert finding.severity == "P1"
    assert finding.reactions == Reactions(disputed_by=("fd-correctness", "fd-quality"), demoted_from="P0")


def test_disputes_without_evidence_or_against_a_shared_finding_do_not_lower_severity() -> None:
    finding = _finding("P0")
    unsupported = [_react(a, "dispute", finding) for a in ("fd-correctness", "fd-quality")]
    weigher(unsupported, _read)(finding)
    assert finding.severity == "P0" and finding.reactions == Reactions()

    shared = _finding("P1", ("fd-safety", "fd-correctness"))
    disputes = [_react(a, "dispute", shared, "shop/db.py:2") for a in ("fd-quality", "fd-systems")]
    weigher(disputes, _read)(shared)
    assert shared.severity == "P1" and shared.reactions is not None and shared.reactions.disputed_by


def test_a_reporter_cannot_react_to_its_own_finding() -> None:
    finding = _finding()
    weigher([_react("fd-safety", "confirm", finding, "shop/routes.py:2")], _read)(finding)
    assert finding.reactions is None


def test_the_file_is_read_confined_and_a_torn_line_is_skipped(tmp_path: Path) -> None:
    line = {"agent": "fd-quality", "verdict": "confirm", "finding": "P1-1", "targets": [["fd-safety", "SA-001"]],
            "evidence": ["shop/db.py:3"], "original": ["shop/db.py:15"]}  # fmt: skip
    (tmp_path / "reactions.jsonl").write_text(json.dumps(line) + "\n" + '{"agent": "fd-x", "verd')
    found, notes = load(tmp_path, tmp_path)
    assert found == [Reaction("fd-quality", "confirm", "P1-1", (("fd-safety", "SA-001"),), ("shop/db.py:3",),
                              ("shop/db.py:15",))]  # fmt: skip
    assert notes == ["skipped 1 incomplete or invalid line(s) of reactions.jsonl"]
    outside = tmp_path / "run"
    outside.mkdir()
    (outside / "reactions.jsonl").symlink_to(tmp_path.parent / "elsewhere.jsonl")
    (tmp_path.parent / "elsewhere.jsonl").write_text(json.dumps(line) + "\n")
    found, notes = load(outside, tmp_path)
    assert found == [] and notes and notes[0].startswith("reactions.jsonl ignored")
