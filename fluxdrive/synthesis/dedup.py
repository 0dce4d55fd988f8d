"""Deduplication, PROTOCOL.md 5.4, rules in order.

1. Same file:line and same issue -> one finding crediting every agent, the
   highest severity, every agent's description. **Decision**: two findings
   that each name their analyzer rule (``rule:`` field) and name different
   rules are different issues, whatever their titles share: a shell
   injection and ``subprocess.run`` without ``check=`` on one line are two
   problems, and merging them would hand one's severity to the other's
   places.
2. Same file:line, different issues -> kept apart, ``co_located_with``.
3. Same issue, different locations -> kept apart, ``cross_references``.
4. Severities disagree -> the most severe wins; ``severity_conflict`` records each agent's.
5. Recommendations disagree -> both kept, attributed; no winner.

"Same issue" = normalized Levenshtein distance between titles below
``dedup_max_distance``, or at least ``dedup_min_shared_words`` meaningful
(non stop-word) words in common. **Decision**: at one file:line the place is
already pinned, so co-located findings are compared by title alone; for rule
3 the findings must also share a section, as the spec says.

Cost stays near-linear: rule 1 compares only findings at the same location
(blocked by file name and line, confirmed by path suffix; large buckets only
pairs sharing a word no more frequent than ``BLOCK_WORD_LIMIT``), rule 3
compares each finding of a section with one representative per distinct
issue found so far in that section, rule 2 links each finding to at most
``MAX_CO_LOCATED`` others at its place (many findings on a few lines must not
make every one of them list every other).
"""

from __future__ import annotations

import functools
import re
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from rapidfuzz.distance import Levenshtein

from fluxdrive.synthesis.model import SEVERITY_ORDER, RawFinding

BLOCK_WORD_LIMIT = 64
MAX_CROSS_REFERENCES = 20
MAX_CO_LOCATED = 20
# fmt: off
STOP_WORDS = frozenset([
    "a", "about", "above", "after", "again", "against", "all", "also", "an", "and", "any", "are", "as", "at",
    "be", "because", "been", "before", "being", "below", "between", "both", "but", "by", "can", "could", "did",
    "do", "does", "doing", "down", "during", "each", "few", "for", "from", "further", "had", "has", "have",
    "having", "here", "how", "if", "in", "into", "is", "it", "its", "itself", "just", "more", "most", "must",
    "no", "nor", "not", "now", "of", "off", "on", "once", "only", "or", "other", "our", "out", "over", "own",
    "same", "should", "so", "some", "such", "than", "that", "the", "their", "them", "then", "there", "these",
    "they", "this", "those", "through", "to", "too", "under", "until", "up", "very", "via", "was", "we", "were",
    "what", "when", "where", "which", "while", "who", "whom", "why", "will", "with", "within", "without", "would",
    "you", "your", "may", "might", "per", "use", "uses", "used", "using"
])
# fmt: on
_WORD = re.compile(r"[a-z0-9_]+")


def normalize_title(title: str) -> str:
    """Lowercase words only: what the distance is computed on."""
    return " ".join(_WORD.findall(title.lower()))


def meaningful_words(title: str) -> frozenset[str]:
    """Words of 3+ characters that are not stop words."""
    return frozenset(w for w in _WORD.findall(title.lower()) if len(w) >= 3 and w not in STOP_WORDS)


def title_key(title: str) -> tuple[str, frozenset[str]]:
    """What :meth:`Similarity.same` compares: the normalized title and its meaningful words."""
    return normalize_title(title), meaningful_words(title)


@dataclass(frozen=True, slots=True)
class Similarity:
    """The two thresholds of 'same issue'."""

    max_distance: float = 0.3
    min_shared_words: int = 3

    def same(self, a: tuple[str, frozenset[str]], b: tuple[str, frozenset[str]]) -> bool:
        """True when two (normalized title, words) pairs describe the same issue."""
        if len(a[1] & b[1]) >= self.min_shared_words:
            return True
        return Levenshtein.normalized_distance(a[0], b[0]) < self.max_distance


def compatible_paths(a: str, b: str) -> bool:
    """The same file named from different roots (``db.py`` vs ``shop/db.py``)."""
    return a == b or a.endswith("/" + b) or b.endswith("/" + a)


@dataclass
class Cluster:
    """Raw findings merged by rule 1, plus the links of rules 2 and 3."""

    members: list[RawFinding]
    co_located: set[int] = field(default_factory=set)
    cross_references: set[int] = field(default_factory=set)

    @property
    def severity(self) -> str:
        return min((m.severity for m in self.members), key=SEVERITY_ORDER.__getitem__)

    @functools.cached_property
    def locations(self) -> list[str]:
        return sorted({m.location for m in self.members if m.location})

    @functools.cached_property
    def places(self) -> frozenset[tuple[str, str]]:
        """(file name, line) of every location: the cheap first test of 'same place'."""
        return frozenset(
            (loc.rsplit(":", 1)[0].rsplit("/", 1)[-1].lower(), loc.rsplit(":", 1)[1]) for loc in self.locations
        )

    @property
    def agents(self) -> list[str]:
        return sorted({m.agent for m in self.members})

    def severity_by_agent(self) -> dict[str, str]:
        """Each agent's most severe rating of this finding."""
        rated: dict[str, str] = {}
        for member in self.members:
            current = rated.get(member.agent)
            if current is None or SEVERITY_ORDER[member.severity] < SEVERITY_ORDER[current]:
                rated[member.agent] = member.severity
        return dict(sorted(rated.items()))


class _UnionFind:
    def __init__(self, size: int) -> None:
        self.parent = list(range(size))

    def find(self, item: int) -> int:
        while self.parent[item] != item:
            self.parent[item] = self.parent[self.parent[item]]
            item = self.parent[item]
        return item

    def union(self, a: int, b: int) -> None:
        root_a, root_b = self.find(a), self.find(b)
        if root_a != root_b:
            self.parent[max(root_a, root_b)] = min(root_a, root_b)


Key = tuple[str, frozenset[str]]
SMALL_BUCKET = 48


def _candidate_pairs(indices: Sequence[int], keys: dict[int, Key]) -> list[tuple[int, int]]:
    """Pairs worth comparing: all of them in a small bucket, else those sharing a rare word."""
    if len(indices) <= SMALL_BUCKET:
        return [(a, b) for position, a in enumerate(indices) for b in indices[position + 1 :]]
    postings: dict[str, list[int]] = defaultdict(list)
    for i in indices:
        for word in keys[i][1] or {keys[i][0]}:
            postings[word].append(i)
    pairs: set[tuple[int, int]] = set()
    for members in postings.values():
        if len(members) <= BLOCK_WORD_LIMIT:
            pairs.update((a, b) for position, a in enumerate(members) for b in members[position + 1 :])
    return sorted(pairs)


def _location_key(finding: RawFinding) -> tuple[str, ...]:
    if finding.location:
        path, line = finding.location.rsplit(":", 1)
        return ("loc", path.rsplit("/", 1)[-1].lower(), line)
    return ("section", normalize_title(finding.section))


def _place_pairs(members: list[int], findings: Sequence[RawFinding], keys: dict[int, Key]) -> list[tuple[int, int]]:
    """Pairs at one (file name, line): same path, or paths naming the same file from different roots."""
    by_path: dict[str | None, list[int]] = defaultdict(list)
    for i in members:
        by_path[findings[i].file].append(i)
    pairs = [pair for group in by_path.values() for pair in _candidate_pairs(group, keys)]
    paths = sorted(p for p in by_path if p is not None)
    for position, left in enumerate(paths):
        for right in paths[position + 1 :]:
            if compatible_paths(left, right):
                pairs.extend((i, j) for i in by_path[left] for j in by_path[right])
    return pairs


def _rules_agree(a: RawFinding, b: RawFinding) -> bool:
    """False when both findings name their analyzer rule and the rules differ."""
    return a.rule is None or b.rule is None or a.rule == b.rule


def _merge_same_place(findings: Sequence[RawFinding], similar: Similarity) -> list[Cluster]:
    """Rule 1: union findings at one place that describe one issue."""
    keys = {i: (normalize_title(f.title), meaningful_words(f.title)) for i, f in enumerate(findings)}
    buckets: dict[tuple[str, ...], list[int]] = defaultdict(list)
    for index, finding in enumerate(findings):
        buckets[_location_key(finding)].append(index)
    union = _UnionFind(len(findings))
    for members in buckets.values():
        for i, j in _place_pairs(members, findings, keys):
            if _rules_agree(findings[i], findings[j]) and similar.same(keys[i], keys[j]):
                union.union(i, j)
    groups: dict[int, list[RawFinding]] = defaultdict(list)
    for index, finding in enumerate(findings):
        groups[union.find(index)].append(finding)
    return [Cluster(members) for _root, members in sorted(groups.items())]


def _link_co_located(clusters: list[Cluster]) -> None:
    """Rule 2: different issues at one file:line point at each other (each at most MAX_CO_LOCATED others).

    Why bounded: a report of thousands of findings on a few lines would give
    every finding thousands of neighbours - a pairwise pass and a
    ``co_located_with`` list that both grow with the square of the findings
    (10,000 findings on 30 lines took minutes). Each cluster takes its
    neighbours in cluster order until it holds MAX_CO_LOCATED, so the pass is
    near-linear; a line with up to MAX_CO_LOCATED + 1 issues links exactly as
    before. Paths are compared once per pair of distinct paths, not per pair
    of findings.
    """
    by_place: dict[tuple[str, str], dict[str, list[int]]] = defaultdict(lambda: defaultdict(list))
    for index, cluster in enumerate(clusters):
        for location in cluster.locations:
            path, line = location.rsplit(":", 1)
            by_place[(path.rsplit("/", 1)[-1].lower(), line)][path].append(index)
    for by_path in by_place.values():
        paths = sorted(by_path)
        for path in paths:
            near = sorted({j for other in paths if compatible_paths(path, other) for j in by_path[other]})
            for i in by_path[path]:
                linked = clusters[i].co_located
                for j in near:
                    if len(linked) >= MAX_CO_LOCATED:
                        break
                    if j != i:
                        linked.add(j)


def _share_location(a: Cluster, b: Cluster) -> bool:
    if not a.places & b.places:
        return False
    for left in a.locations:
        for right in b.locations:
            lp, ll = left.rsplit(":", 1)
            rp, rl = right.rsplit(":", 1)
            if ll == rl and compatible_paths(lp, rp):
                return True
    return False


def _link_cross_references(clusters: list[Cluster], similar: Similarity, title_of: Callable[[Cluster], str]) -> None:
    """Rule 3: the same issue in the same section at different places.

    Findings of a section are grouped by single link to each group's first
    member (its representative), compared only with the first
    ``BLOCK_WORD_LIMIT`` groups holding each of its words, so the cost grows
    with the findings, not with findings x distinct issues; every member of a group then points
    at the group's other members (at most MAX_CROSS_REFERENCES of them).
    """
    by_section: dict[str, list[int]] = defaultdict(list)
    for index, cluster in enumerate(clusters):
        by_section[normalize_title(cluster.members[0].section)].append(index)
    for members in by_section.values():
        groups: list[list[int]] = []
        representatives: list[Key] = []
        postings: dict[str, list[int]] = defaultdict(list)
        for i in members:
            title = title_of(clusters[i])
            key = (normalize_title(title), meaningful_words(title))
            # Bounded fan-out: of the groups sharing a word, only that word's first BLOCK_WORD_LIMIT (the
            # earliest groups, the ones ``next`` would pick first) - a word every title holds ("unsafe")
            # must not make each finding test every issue of the section (5,000 on 30 lines: 3.1M tests).
            words = key[1] or {key[0]}
            candidates = sorted({g for word in words for g in postings.get(word, ())[:BLOCK_WORD_LIMIT]})
            home = next((g for g in candidates if similar.same(key, representatives[g])), None)
            if home is None:
                home = len(groups)
                groups.append([])
                representatives.append(key)
                for word in key[1] or {key[0]}:
                    postings[word].append(home)
            groups[home].append(i)
        for group in groups:
            for i in group:
                for j in group:
                    if len(clusters[i].cross_references) >= MAX_CROSS_REFERENCES:
                        break
                    if j != i and not _share_location(clusters[i], clusters[j]):
                        clusters[i].cross_references.add(j)


def deduplicate(
    findings: Sequence[RawFinding], similar: Similarity, title_of: Callable[[Cluster], str]
) -> list[Cluster]:
    """Rules 1-3 over one kind of finding (findings or improvements)."""
    clusters = _merge_same_place(findings, similar)
    _link_co_located(clusters)
    _link_cross_references(clusters, similar, title_of)
    return clusters
