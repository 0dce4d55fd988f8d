"""Metrics of a matching: per fixture, per lane (the fixtures' ``agent_type``) and overall.

Recall is over the ground truth (all, and its P0/P1), precision over what the
reviewer reported (all, and its P0/P1), F1 from the two; severity accuracy
(exact and within one level) and location accuracy (the matched finding is on
the expected line or in the range) over the matched pairs; decoys flagged
counts the ``must_not_flag`` entries a left-over finding of their kind landed
on. Totals add the counts (micro), so a large fixture weighs what it holds.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass

from fluxdrive.eval.fixture import Expected
from fluxdrive.eval.match import Matching, Produced

SERIOUS = {"P0", "P1"}
LEVEL = {"P0": 0, "P1": 1, "P2": 2, "P3": 3}


@dataclass(slots=True)
class Counts:
    """Additive counts; every metric is a ratio of two of them."""

    expected: int = 0
    expected_serious: int = 0
    found: int = 0
    found_serious: int = 0
    produced: int = 0
    produced_serious: int = 0
    true_serious: int = 0  # produced P0/P1 matched to ground truth
    severity_exact: int = 0
    severity_near: int = 0
    place_exact: int = 0
    decoys: int = 0
    decoys_flagged: int = 0

    def add(self, other: Counts) -> Counts:
        for name, value in asdict(other).items():
            setattr(self, name, getattr(self, name) + value)
        return self

    def metrics(self) -> dict[str, float | None]:
        def ratio(top: int, bottom: int) -> float | None:
            return round(top / bottom, 4) if bottom else None

        recall, precision = ratio(self.found, self.expected), ratio(self.found, self.produced)
        f1 = (
            round(2 * recall * precision / (recall + precision), 4)
            if recall is not None and precision is not None and recall + precision > 0
            else (0.0 if recall is not None and precision is not None else None)
        )
        return {
            "recall": recall,
            "recall_p0p1": ratio(self.found_serious, self.expected_serious),
            "precision": precision,
            "precision_p0p1": ratio(self.true_serious, self.produced_serious),
            "f1": f1,
            "severity_exact": ratio(self.severity_exact, self.found),
            "severity_within_one": ratio(self.severity_near, self.found),
            "location_exact": ratio(self.place_exact, self.found),
            "decoys_flagged": ratio(self.decoys_flagged, self.decoys),
        }


def count(expected: Sequence[Expected], produced: Sequence[Produced], matching: Matching, decoys: int) -> Counts:
    """The counts of one fixture."""
    counts = Counts(
        expected=len(expected),
        expected_serious=sum(e.severity in SERIOUS for e in expected),
        produced=len(produced),
        produced_serious=sum(p.severity in SERIOUS for p in produced),
        decoys=decoys,
        decoys_flagged=len(matching.decoys_flagged),
    )
    for pair in matching.pairs:
        want, got = expected[pair.expected], produced[pair.produced]
        counts.found += 1
        counts.found_serious += want.severity in SERIOUS
        counts.true_serious += got.severity in SERIOUS
        gap = abs(LEVEL.get(want.severity, 9) - LEVEL.get(got.severity, 9))
        counts.severity_exact += gap == 0
        counts.severity_near += gap <= 1
        counts.place_exact += pair.exact_place
    return counts


def sum_counts(parts: Iterable[Counts]) -> Counts:
    result = Counts()
    for part in parts:
        result.add(part)
    return result
