"""One-to-one matching of produced findings to ground truth (an optimal assignment, not a greedy loop).

Similarity of a produced finding and an expected one, from 0 to 1:

- **place** (weight 0.5): the expected location resolved against the fixture
  (:mod:`fluxdrive.eval.locate`): same file (equal paths, or one ends with
  ``/`` + the other) and a line within ``WINDOW`` lines of the expected line
  or range (a section's lines, for a heading): 1 on it, 1/8 less per line away
  (0.625 at three lines), 0 beyond; 1 when the finding's section is the
  expected heading (case and punctuation aside); ``locate.WHOLE`` anywhere in
  a document the location names as a whole;
- **kind** (weight 0.3): the CWE ids overlap, or a word of the expected
  category (``sql-injection`` -> sql, injection) appears in the finding's
  title or rule ids;
- **text** (weight 0.2): rapidfuzz's token-set ratio of title and description.

A place that is a whole document (an anchor naming no heading) is weak
evidence, so such a pair also needs a text score of at least ``TEXT_FOR_WHOLE``
and is never a decoy hit. The reference's broad categories (``security``,
``correctness``, ``performance``, ``architecture``, ``style``) say nothing
about the kind, so any finding's kind fits them.

A pair needs a place score above 0 and a total of at least ``THRESHOLD``
(0.6: the right place alone is not enough - a P3 nit on the line of a leak
does not find the leak - it needs the kind or a similar description too).
Among eligible pairs, scipy's ``linear_sum_assignment`` picks the assignment
with the highest total similarity, so two findings never claim one defect
and one finding never counts twice.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from rapidfuzz import fuzz

from fluxdrive.eval.fixture import Decoy, Expected
from fluxdrive.eval.locate import WHOLE, Locator, Place, words
from fluxdrive.reports.findings_json import FindingOut
from fluxdrive.synthesis.dedup import compatible_paths
from fluxdrive.synthesis.measured import keys_of

WINDOW = 3
THRESHOLD = 0.6
TEXT_FOR_WHOLE = 0.65
WEIGHTS = {"place": 0.5, "kind": 0.3, "text": 0.2}
_PLACE = re.compile(r"^(?P<path>.+?):(?P<start>\d+)(?:-(?P<end>\d+))?$")  # a reported location (any path)
_WORD = re.compile(r"[a-z0-9]+")
_GENERIC = {"any", "security", "correctness", "quality", "performance", "architecture", "style", "bug", "issue",
            "missing"}  # fmt: skip


@dataclass(frozen=True, slots=True)
class Produced:
    """A finding as findings.json reports it, reduced to what matching reads.

    Why a view and not the findings.json model itself: it is frozen and
    hashable (tuples), so matching can key and compare findings, and it is
    what an evaluation run keeps per fixture.
    """

    id: str
    severity: str
    title: str
    locations: tuple[str, ...] = ()
    section: str = ""
    rules: tuple[str, ...] = ()
    cwe: tuple[str, ...] = ()
    agents: tuple[str, ...] = ()
    keys: tuple[tuple[str, str], ...] = ()  # what judging it measures: its rules, agent-model pairs (measured.py)

    @classmethod
    def of(cls, finding: FindingOut) -> Produced:
        return cls(
            id=finding.id,
            severity=finding.severity,
            title=finding.title,
            locations=tuple(finding.locations),
            section=finding.section,
            rules=tuple(finding.rules),
            cwe=tuple(finding.cwe),
            agents=tuple(finding.agents),
            keys=tuple(keys_of(finding.rules, finding.agents, finding.provenance)),
        )


@dataclass(frozen=True, slots=True)
class Pair:
    """A produced finding matched to an expected one, with the parts of its score."""

    expected: int
    produced: int
    score: float
    place: float
    kind: float
    text: float
    exact_place: bool


@dataclass(slots=True)
class Matching:
    """The assignment: matched pairs, the expected findings missed, the produced findings left over."""

    pairs: list[Pair] = field(default_factory=list)
    missed: list[int] = field(default_factory=list)
    extra: list[int] = field(default_factory=list)
    decoys_flagged: list[tuple[int, int]] = field(default_factory=list)  # (decoy, produced)


def _same_file(left: str, right: str) -> bool:
    """The same file named from different roots (synthesis's rule), a leading ``./`` aside."""
    return compatible_paths(_bare(left), _bare(right))


def _bare(path: str) -> str:
    while path.startswith("./"):
        path = path[2:]
    return path


def _normal(text: str) -> str:
    return words(text)


def place_score(expected: Place, finding: Produced) -> tuple[float, bool]:
    """(score, exactly on the place) of the finding's best location for the expected place."""
    if expected.heading and _normal(finding.section) == expected.heading:
        return 1.0, True
    best, exact = 0.0, False
    for location in finding.locations:
        found = _PLACE.match(location)
        if found is None or not expected.path or not _same_file(found["path"], expected.path):
            continue
        if expected.start:
            line = int(found["start"])
            distance = 0 if expected.start <= line <= expected.end else min(
                abs(line - expected.start), abs(line - expected.end))  # fmt: skip
            score = 1.0 - distance / (2 * (WINDOW + 1)) if distance <= WINDOW else 0.0
            if score > best:
                best, exact = score, distance == 0
        elif expected.whole and best < WHOLE:
            best = WHOLE
    return best, exact


def kind_score(category: str, cwe: str | None, finding: Produced) -> float:
    """1 when the CWE ids overlap or a specific word of the category is in the title or rule ids."""
    if cwe and cwe in finding.cwe:
        return 1.0
    words = set(_WORD.findall(category.lower())) - _GENERIC
    if not words:
        return 1.0 if category.lower() in _GENERIC else 0.0
    said = set(_WORD.findall(f"{finding.title} {' '.join(finding.rules)}".lower()))
    return 1.0 if words & said else 0.0


def text_score(description: str, finding: Produced) -> float:
    return float(fuzz.token_set_ratio(_normal(description), _normal(finding.title))) / 100.0


def _pair(i: int, j: int, expected: Expected, where: Place, finding: Produced) -> Pair | None:
    place, exact = place_score(where, finding)
    if place <= 0:
        return None
    kind = kind_score(expected.category, expected.cwe, finding)
    text = text_score(expected.description, finding)
    if _only_whole(where, place) and text < TEXT_FOR_WHOLE:
        return None
    score = WEIGHTS["place"] * place + WEIGHTS["kind"] * kind + WEIGHTS["text"] * text
    return Pair(i, j, round(score, 4), place, kind, round(text, 4), exact) if score >= THRESHOLD else None


def _only_whole(where: Place, place: float) -> bool:
    """The finding is in the place only as "somewhere in the document" (weak evidence)."""
    return where.whole and 0 < place <= WHOLE


def match(
    expected: Sequence[Expected],
    produced: Sequence[Produced],
    decoys: Sequence[Decoy] = (),
    locator: Locator | None = None,
) -> Matching:
    """The optimal one-to-one matching, then the decoys the left-over findings land on.

    ``locator`` resolves the locations against the fixture's input (default: as written, no document read).
    """
    from scipy.optimize import linear_sum_assignment  # type: ignore[import-untyped]

    locate = (locator or Locator()).resolve
    places = [locate(want.location) for want in expected]
    candidates = {
        (i, j): pair
        for i, want in enumerate(expected)
        for j, finding in enumerate(produced)
        if (pair := _pair(i, j, want, places[i], finding)) is not None
    }
    result = Matching()
    if candidates:
        cost = [[-(candidates[(i, j)].score) if (i, j) in candidates else 0.0 for j in range(len(produced))]
                for i in range(len(expected))]  # fmt: skip
        rows, cols = linear_sum_assignment(cost)
        result.pairs = sorted(
            (candidates[(int(i), int(j))] for i, j in zip(rows, cols, strict=True) if (int(i), int(j)) in candidates),
            key=lambda p: p.expected,
        )
    matched_expected = {p.expected for p in result.pairs}
    matched_produced = {p.produced for p in result.pairs}
    result.missed = [i for i in range(len(expected)) if i not in matched_expected]
    result.extra = [j for j in range(len(produced)) if j not in matched_produced]
    for d, decoy in enumerate(decoys):
        for j in result.extra:
            where = locate(decoy.location)
            place, _exact = place_score(where, produced[j])
            if place > 0 and not _only_whole(where, place) and kind_score(decoy.category, None, produced[j]) > 0:
                result.decoys_flagged.append((d, j))
                break
    return result
