"""Ground truth vs findings for bench/judgment.py: where a problem is, and which finding found it.

The matching rule (also in bench/judgment.py's docstring):

- A ground-truth entry names a file and a place in it: ``line: N``, ``lines:
  "a-b"``, a list of lines/ranges (any of them counts), or ``section:
  Heading`` for markdown documents (the heading's line through the line before
  the next heading of the same or a higher level).
- A finding is *compatible* with an entry when one of its locations
  (``findings.json`` ``locations``, else ``location``) is in the same file (the
  paths are equal, or one ends with ``/`` + the other) at a line within 3
  lines of the entry's place, or, for a section entry, when the finding's
  ``section`` names that heading; and its severity is at most one level away
  from the entry's (a P0 problem is not "found" by a P3 nit on the same line);
  and (strict matching, the default) it is about the same kind of problem: its
  title and rule ids contain a word of the entry's category family
  (``FAMILIES`` below: an SQL-injection entry is not found by a resource-leak
  finding on the next line). Categories with no family (interflux's generic
  "security", "correctness", "style", ...) accept any finding. Loose matching
  (``strict=False``) is the location and severity rule alone.
- Findings and entries are matched one to one (maximum bipartite matching),
  P0/P1 entries first, each entry trying its closest finding first (severity,
  then lines), so a problem found twice counts once.
- A P0/P1 finding compatible with no entry at all is a *false P0/P1*. A
  second finding about an entry that another finding already matched is a
  duplicate, not a false positive.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

TOLERANCE = 3
SEVERITIES = ("P0", "P1", "P2", "P3")
_AUTH = r"auth|login|permission|access|owner|idor|unauthenticated|forg|session|cookie|jwt|signature|password|role"
_DESTRUCTIVE = r"delete|drop|truncat|destr|rm -rf|data loss|irreversib|backup|rollback|remove|wipe"
FAMILIES: dict[str, str] = {
    "sql-injection": r"sql|query|inject",
    "command-injection": r"shell|command|exec|subprocess|system|inject|spawn",
    "code-injection": r"eval|exec|code|inject",
    "template-injection": r"template|ssti|inject|render",
    "hardcoded-secret": r"secret|token|key|password|credential|hard-?coded",
    "path-traversal": r"path|travers|file|director",
    "xss": r"xss|cross-site script|html|mark_?safe|escap|sanitiz",
    "csrf": r"csrf|cross-site request",
    "cors": r"cors|origin",
    "unsafe-deserialization": r"pickle|yaml|deserial|loader|unsafe",
    "tls-verification-disabled": r"tls|ssl|certificate|verif|skipverify",
    "weak-crypto": r"md5|sha-?1|hash|crypt|weak|broken",
    "weak-password-hashing": r"md5|sha-?1|hash|crypt|weak|password",
    "insecure-randomness": r"random|predictable|secrets|entropy",
    "timing-attack": r"timing|constant[- ]time|compare_digest|hmac|compar",
    "missing-authentication": _AUTH,
    "missing-authorization": _AUTH,
    "authentication": _AUTH,
    "authentication-bypass": _AUTH,
    "authorization": _AUTH,
    "session-forgery": _AUTH,
    "information-leak": r"leak|stack|trace|error|expos|disclos|internal|enumerat",
    "race-condition": r"race|lock|mutex|concurren|thread|goroutine|synchroni|shared|atomic",
    "concurrency": r"race|lock|concurren|thread|goroutine|context|copy",
    "resource-leak": r"leak|close|resource|defer|never|open",
    "ignored-error": r"error|\berr\b|ignor|unchecked|discard|thrown away",
    "error-handling": r"error|ignor|set -e|pipefail|fail",
    "swallowed-exception": r"except|swallow|silen|pass\b|ignor",
    "n-plus-one": r"n\+1|loop|per item|each|query",
    "sequential-requests": r"loop|sequential|await|serial|parallel",
    "blocking-io": r"block|sync|event loop",
    "blocking-call-in-async": r"block|sync|event loop|timeout",
    "mutable-default": r"mutable|default",
    "async-foreach": r"foreach|async|await",
    "unhandled-rejection": r"promise|catch|reject|then",
    "debug-enabled": r"debug",
    "server-timeouts": r"timeout|slowloris",
    "defer-in-loop": r"defer",
    "destructive-migration": _DESTRUCTIVE,
    "destructive-command": _DESTRUCTIVE,
    "data-loss": _DESTRUCTIVE + r"|lost|loss|verif",
    "irreversible-migration": _DESTRUCTIVE + r"|revers|down",
    "missing-rollback": r"rollback|roll back|revert",
    "unresolved-marker": r"tbd|todo|fixme|unresolved|placeholder",
    "open-questions": r"question|owner|undecided",
    "vague-requirement": r"vague|measur|testab|criteri|ambigu",
    "vague-testing": r"vague|test|criteri|verif",
    "missing-metrics": r"metric|success|measur|kpi",
    "privacy": r"privacy|personal|pii|gdpr|consent|third[- ]party|e-?mail|phone|retention",
    "compliance": r"consent|complian|gdpr|tcpa|legal|regulat|opt-?in",
    "rollout": r"rollout|roll out|staged|gradual|flag|kill switch|rollback",
    "retries": r"retr|idempot|backoff|timeout|attempt",
    "idempotency": r"idempot|retr|duplicate",
    "ordering": r"order|sequence",
    "pagination": r"paginat|limit|unbounded|cursor",
    "validation": r"validat|minimum|required|negative|schema",
    "error-responses": r"error|status|response|4\d\d",
    "credential-in-url": r"query|url|api[_ ]?key|credential|secret",
    "ssrf": r"ssrf|url|internal|validat",
    "missing-signature": r"sign|hmac|verif|authentic",
    "missing-signature-check": r"sign|hmac|verif|authentic|webhook",
    "business-logic": r"price|amount|client|trust|tamper",
    "open-redirect": r"redirect|url",
    "supply-chain": r"curl|pipe|download|verif|pin",
    "unbounded-input": r"limit|size|unbounded|maxbytes|readall",
}
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_LOCATION = re.compile(r"^(?:\./)?(.+?):(\d+)(?:[-:,]\d+)*$")


@dataclass(frozen=True)
class Truth:
    """One ground-truth entry of a case."""

    index: int
    file: str
    ranges: tuple[tuple[int, int], ...]
    section: str | None
    severity: str
    category: str
    description: str

    @property
    def blocking(self) -> bool:
        return self.severity in ("P0", "P1")

    def where(self) -> str:
        if self.section and not self.ranges:
            return f"{self.file} [{self.section}]"
        spans = ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in self.ranges)
        return f"{self.file}:{spans}" + (f" [{self.section}]" if self.section else "")


@dataclass(frozen=True)
class Finding:
    """The part of a findings.json finding the matching needs."""

    id: str
    severity: str
    title: str
    places: tuple[tuple[str, int], ...]
    section: str | None
    agents: tuple[str, ...]
    rules: tuple[str, ...] = ()

    @property
    def blocking(self) -> bool:
        return self.severity in ("P0", "P1")

    def where(self) -> str:
        return ", ".join(f"{p}:{n}" for p, n in self.places) or (self.section or "-")


@dataclass
class Score:
    """One run scored against a case's ground truth."""

    matched: dict[int, str] = field(default_factory=dict)  # truth index -> finding id
    false_blocking: list[Finding] = field(default_factory=list)
    duplicates: int = 0

    def found(self, truths: list[Truth], *, blocking_only: bool = False) -> int:
        return sum(1 for t in truths if t.index in self.matched and (t.blocking or not blocking_only))


def _ranges(raw: Any) -> list[tuple[int, int]]:
    items = raw if isinstance(raw, list) else [raw]
    spans: list[tuple[int, int]] = []
    for item in items:
        text = str(item).strip()
        first, _, last = text.partition("-")
        spans.append((int(first), int(last or first)))
    return spans


def section_range(text: str, heading: str) -> tuple[int, int] | None:
    """Lines (1-based, inclusive) of the markdown section whose heading text is ``heading``."""
    lines = text.splitlines()
    fence = False
    start = level = 0
    for number, line in enumerate(lines, start=1):
        if line.lstrip().startswith("```"):
            fence = not fence
            continue
        match = None if fence else _HEADING.match(line)
        if match is None:
            continue
        if start and len(match.group(1)) <= level:
            return start, number - 1
        if not start and match.group(2).strip() == heading:
            start, level = number, len(match.group(1))
    return (start, len(lines)) if start else None


def load_truths(entries: list[dict[str, Any]], repo: Path) -> list[Truth]:
    """The case's ``ground_truth:`` entries; ``section:`` resolved against the materialized file."""
    truths = []
    for index, entry in enumerate(entries):
        spans: list[tuple[int, int]] = []
        for key in ("line", "lines"):
            if key in entry:
                spans += _ranges(entry[key])
        section = entry.get("section")
        if section:
            found = section_range((repo / entry["file"]).read_text(encoding="utf-8"), section)
            if found is None:
                raise ValueError(f"ground truth {index}: no section {section!r} in {entry['file']}")
            spans.append(found)
        if not spans:
            raise ValueError(f"ground truth {index}: needs line, lines or section")
        if entry["severity"] not in SEVERITIES:
            raise ValueError(f"ground truth {index}: severity {entry['severity']!r}")
        truths.append(
            Truth(
                index=index,
                file=entry["file"],
                ranges=tuple(spans),
                section=section,
                severity=entry["severity"],
                category=str(entry.get("category", "")),
                description=" ".join(str(entry.get("description", "")).split()),
            )
        )
    return truths


def load_findings(document: dict[str, Any]) -> list[Finding]:
    """The findings of a findings.json document."""
    findings = []
    for raw in document.get("findings", []):
        places = []
        for location in raw.get("locations") or [raw.get("location")]:
            match = _LOCATION.match(str(location or "").strip())
            if match:
                places.append((match.group(1), int(match.group(2))))
        findings.append(
            Finding(
                id=str(raw.get("id")),
                severity=str(raw.get("severity")),
                title=str(raw.get("title", "")),
                places=tuple(places),
                section=raw.get("section"),
                agents=tuple(raw.get("agents") or ()),
                rules=tuple(raw.get("rules") or ()),
            )
        )
    return findings


def same_file(a: str, b: str) -> bool:
    a, b = a.removeprefix("./"), b.removeprefix("./")
    return a == b or a.endswith("/" + b) or b.endswith("/" + a)


def same_kind(finding: Finding, truth: Truth) -> bool:
    """The finding's title or rule ids use a word of the entry's category family (no family: any finding)."""
    family = FAMILIES.get(truth.category)
    text = " ".join((finding.title, *finding.rules)).lower()
    return family is None or re.search(family, text) is not None


def distance(finding: Finding, truth: Truth) -> int | None:
    """Lines between the finding and the entry's place (0 inside it; 0 for a section named by the finding), or None."""
    if truth.section and finding.section and finding.section.strip().lstrip("#").strip() == truth.section:
        return 0
    gaps = [
        max(a - line, line - b, 0)
        for path, line in finding.places
        if same_file(path, truth.file)
        for a, b in truth.ranges
    ]
    nearest = min(gaps, default=None)
    return nearest if nearest is not None and nearest <= TOLERANCE else None


def compatible(finding: Finding, truth: Truth, *, strict: bool = True) -> bool:
    """Same place (file and line +-3, or the section), severity at most one level apart, and (strict) same kind."""
    if finding.severity not in SEVERITIES:
        return False
    if abs(SEVERITIES.index(finding.severity) - SEVERITIES.index(truth.severity)) > 1:
        return False
    return distance(finding, truth) is not None and (not strict or same_kind(finding, truth))


def _cost(finding: Finding, truth: Truth) -> tuple[int, int]:
    return abs(SEVERITIES.index(finding.severity) - SEVERITIES.index(truth.severity)), distance(finding, truth) or 0


def _augment(truth: int, edges: dict[int, list[int]], owner: dict[int, int], seen: set[int]) -> bool:
    for finding in edges[truth]:
        if finding in seen:
            continue
        seen.add(finding)
        if finding not in owner or _augment(owner[finding], edges, owner, seen):
            owner[finding] = truth
            return True
    return False


def score(truths: list[Truth], findings: list[Finding], *, strict: bool = True) -> Score:
    """Match one to one (P0/P1 ground truth first, closest finding first) and count false P0/P1 findings."""
    edges = {
        t.index: sorted(
            (i for i, f in enumerate(findings) if compatible(f, t, strict=strict)),
            key=lambda i, t=t: _cost(findings[i], t),
        )
        for t in truths
    }
    owner: dict[int, int] = {}  # finding position -> truth index
    for truth in sorted(truths, key=lambda t: (SEVERITIES.index(t.severity), t.index)):
        _augment(truth.index, edges, owner, set())
    result = Score(matched={t: findings[f].id for f, t in owner.items()})
    for position, finding in enumerate(findings):
        touched = any(position in edges[t.index] for t in truths)
        if finding.blocking and not touched:
            result.false_blocking.append(finding)
        elif touched and position not in owner:
            result.duplicates += 1
    return result
