"""Merge imported analyzer results into a review's findings: corroboration, or findings of their own.

Pure functions over a :class:`~fluxdrive.synthesis.Synthesis` and the
parsed results (no I/O), applied after synthesis and before a baseline, so
a baseline written from such a review knows the imported findings too.

**Same finding.** A result corroborates a finding when it points into the
same file within ``LINE_SLACK`` lines of one of the finding's places and
is about the same weakness:

1. they share a CWE, or two of their CWEs belong to one family (OS
   command injection CWE-78 and command injection CWE-77; hard-coded
   password CWE-259 and hard-coded credentials CWE-798);
2. bandit's ``Bnnn`` is ruff's ``Snnn`` (ruff's flake8-bandit rules are
   ports of bandit's);
3. one side's title speaks of the family the other side's CWE names
   ("SQL", "pickle", "shell", "debug"...): bandit files Flask's
   ``debug=True`` under CWE-94, fluxdrive under CWE-489;
4. neither side names a CWE of a known family: the titles are the same
   issue by synthesis's own test (:class:`~fluxdrive.synthesis.dedup.Similarity`).

The nearest such finding wins (then the most severe, then the first id). A
corroborated finding keeps its title, rule and place; it gains the tool and
its rule in ``imported_from``, the tool's wording in ``descriptions``, one
convergence per tool, a confidence level, no "verification recommended",
and dedup rule 4 applies: the most severe rating wins and
``severity_conflict`` records each.

**A finding of its own.** Any other result becomes a finding owned by the
agent whose domain it is (a security result -> fd-safety, anything else ->
fd-quality), with ``rules: ["semgrep:<rule>"]`` and a title that is the
tool's message with the tool and rule named. Results of other tools at the
same place about the same weakness join it (counted once, converged).

Every imported tool counts as one more reviewer that looked at the whole
input (M grows by one per tool). Findings are renumbered the way synthesis
numbers them, and every reference to an id follows.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from fluxdrive.config.model import SynthesisConfig
from fluxdrive.contracts import derive_verdict
from fluxdrive.imports.sarif import ImportedResult, SarifImport
from fluxdrive.synthesis import Conflict, Finding, Synthesis
from fluxdrive.synthesis.convergence import LEVELS
from fluxdrive.synthesis.dedup import Similarity, compatible_paths, title_key
from fluxdrive.synthesis.model import SEVERITY_ORDER

LINE_SLACK = 2
SECURITY_OWNER = "fd-safety"
QUALITY_OWNER = "fd-quality"
MAX_RULE_IN_TITLE = 40
_BANDIT = re.compile(r"^B(\d{3})$")

# Weakness families: CWE numbers that name one kind of problem, and the words a title uses for it.
FAMILIES: tuple[tuple[str, frozenset[int], re.Pattern[str]], ...] = tuple(
    (name, frozenset(cwes), re.compile(words))
    for name, cwes, words in (
        ("command", {77, 78, 88}, r"shell|command|subprocess|os\.system|popen"),
        ("sql", {89, 564, 943}, r"\bsql|query|queries"),
        ("code", {94, 95, 96, 1336}, r"\beval\b|\bexec\b|code injection|template injection|from_string"),
        ("deserialization", {502}, r"pickle|deserializ|unpickl|marshal|yaml\.load|shelve"),
        ("xss", {79, 80, 116}, r"\bxss\b|cross.site script|\bhtml\b|escap|mark_safe|\|safe|innerhtml"),
        ("path", {22, 23, 36, 73}, r"travers|\.\./|path injection"),
        ("secret", {259, 312, 321, 522, 798}, r"secret|password|credential|api.?key|token|private key|hard.?coded"),
        ("crypto", {326, 327, 328, 759, 760, 916}, r"\bmd5\b|\bsha1\b|weak hash|cipher|\bdes\b|crypto"),
        ("tls", {295, 297}, r"verif|certificate|\btls\b|\bssl\b"),
        ("ssrf", {918}, r"ssrf|server.side request|\burl\b"),
        ("xml", {611, 776}, r"\bxxe\b|\bxml\b"),
        ("random", {330, 338}, r"random"),
        ("redirect", {601}, r"redirect"),
        ("tempfile", {108, 377}, r"\btemp|\btmp"),
        ("debug", {11, 215, 489}, r"debug"),
        ("errors", {390, 391, 396, 397, 703, 754, 755}, r"\bexcept|swallow|silently"),
    )
)


@dataclass(frozen=True, slots=True)
class ImportScope:
    """What the review covered: imported results elsewhere are left out (counted in a note).

    ``files`` None means every file; ``changed`` (a diff) keeps only results on added lines, as the
    review's own findings are.
    """

    files: frozenset[str] | None = None
    changed: Mapping[str, frozenset[int]] | None = None

    def keeps(self, result: ImportedResult) -> bool:
        if self.changed is not None:
            return result.line in self.changed.get(result.path, frozenset())
        return self.files is None or result.path in self.files


@dataclass
class _Evidence:
    """What imported results added to one finding."""

    finding: Finding
    results: list[ImportedResult]
    imported_only: bool


def apply_imports(
    synthesis: Synthesis, imports: Sequence[SarifImport], scope: ImportScope, settings: SynthesisConfig
) -> Synthesis:
    """A new synthesis with the imported results merged (see the module docstring); the input is unchanged."""
    if not imports:
        return synthesis
    tools = sorted({tool for item in imports for tool in item.tools})
    every = sorted(
        {r for item in imports for r in item.results},
        key=lambda r: (r.path, r.line, r.tool, r.rule, r.message),
    )
    kept = [r for r in every if scope.keeps(r)]
    similar = Similarity(settings.dedup_max_distance, settings.dedup_min_shared_words)
    findings = [dataclasses.replace(f) for f in synthesis.findings]
    evidence: dict[int, _Evidence] = {}
    places = _Places(findings)
    completed = len(synthesis.agents_completed)
    for result in kept:
        target = places.match(result, similar)
        if target is None:
            target = _new_finding(result, completed)
            findings.append(target)
            places.add(target)
            evidence[id(target)] = _Evidence(target, [], imported_only=True)
        evidence.setdefault(id(target), _Evidence(target, [], imported_only=False)).results.append(result)
    conflicts = list(synthesis.conflicts)
    for item in evidence.values():
        conflicts += _absorb(item, settings)
    for finding in findings:
        finding.population += len(tools)
    findings, renamed = _renumber(findings)
    corroborated = sum(1 for e in evidence.values() if not e.imported_only)
    new = sum(1 for e in evidence.values() if e.imported_only)
    notes = [*synthesis.notes, *(note for item in imports for note in item.notes)]
    info = [*synthesis.info, _summary(imports, tools, len(kept), corroborated, new, len(every) - len(kept))]
    was = synthesis.findings_verdict
    return dataclasses.replace(
        synthesis,
        findings=findings,
        findings_verdict=was if was == "error" else derive_verdict(f.severity for f in findings),
        conflicts=[_renamed_conflict(c, renamed) for c in conflicts],
        notes=notes,
        info=info,
    )


class _Places:
    """Findings by file name, for the 'same place' test."""

    def __init__(self, findings: Iterable[Finding]) -> None:
        self.by_name: dict[str, list[tuple[Finding, str, int]]] = {}
        for finding in findings:
            self.add(finding)

    def add(self, finding: Finding) -> None:
        for place in finding.locations:
            path, sep, line = place.rpartition(":")
            if sep and line.isdigit():
                self.by_name.setdefault(path.rsplit("/", 1)[-1], []).append((finding, path, int(line)))

    def match(self, result: ImportedResult, similar: Similarity) -> Finding | None:
        name = result.path.rsplit("/", 1)[-1]
        near = [
            (abs(line - result.line), SEVERITY_ORDER[finding.severity], finding.id, index, finding)
            for index, (finding, path, line) in enumerate(self.by_name.get(name, []))
            if abs(line - result.line) <= LINE_SLACK
            and compatible_paths(path, result.path)
            and not finding.improvement
            and same_weakness(result, finding, similar)
        ]
        return min(near, key=lambda n: n[:4])[4] if near else None


def same_weakness(result: ImportedResult, finding: Finding, similar: Similarity) -> bool:
    """Whether ``result`` and ``finding`` (already at one place) are about the same weakness."""
    ours, theirs = _families(finding.cwe), _families(result.cwe)
    if set(result.cwe) & set(finding.cwe) or ours & theirs:
        return True
    twin = _ruff_twin(result)
    if twin is not None and twin in finding.rules:
        return True
    if _speaks_of(finding.title, theirs) or _speaks_of(result.message, ours):
        return True
    if ours or theirs:
        return False
    return similar.same(title_key(result.message), title_key(finding.title))


def _speaks_of(text: str, families: set[str]) -> bool:
    """Whether ``text`` uses the words of one of ``families`` (a weakness named by the other side's CWE)."""
    lowered = text.lower()
    return any(pattern.search(lowered) for name, _cwes, pattern in FAMILIES if name in families)


def _families(cwes: Iterable[str]) -> set[str]:
    numbers = {int(c.rsplit("-", 1)[-1]) for c in cwes if c.rsplit("-", 1)[-1].isdigit()}
    return {name for name, members, _words in FAMILIES if members & numbers}


def _ruff_twin(result: ImportedResult) -> str | None:
    """ruff's port of a bandit rule (bandit B608 -> ruff:S608)."""
    match = _BANDIT.match(result.rule) if result.tool == "bandit" else None
    return f"ruff:S{match.group(1)}" if match else None


def _short_rule(rule: str) -> str:
    """A rule id short enough for a title: semgrep's dotted ids keep their last part."""
    return rule if len(rule) <= MAX_RULE_IN_TITLE else rule.rsplit(".", 1)[-1][:MAX_RULE_IN_TITLE]


def _new_finding(result: ImportedResult, completed: int) -> Finding:
    owner = SECURITY_OWNER if result.security else QUALITY_OWNER
    return Finding(
        id="",
        severity=result.severity,
        agents=[owner],
        section=f"Imported from {result.tool}",
        title=f"{result.message} ({result.tool} {_short_rule(result.rule)})",
        locations=[f"{result.path}:{result.line}"],
        population=completed,
        rules=[],
        cwe=[],
    )


def _absorb(item: _Evidence, settings: SynthesisConfig) -> list[Conflict]:
    """Fold one finding's imported results into it; the severity conflict it now has, if new."""
    finding = item.finding
    tools = sorted({r.tool for r in item.results})
    pairs = sorted({(r.tool, r.rule) for r in item.results})
    finding.imported_from = sorted({*finding.imported_from, *pairs})
    descriptions = dict(finding.descriptions)
    for result in item.results:
        said = descriptions.get(result.tool)
        if said is None or result.message not in said.split(" / "):
            descriptions[result.tool] = result.message if said is None else f"{said} / {result.message}"
    finding.descriptions = dict(sorted(descriptions.items()))
    finding.convergence += len(tools)
    high, medium = settings.confidence_high, settings.confidence_medium
    counted = 2 if finding.convergence >= high else int(finding.convergence >= medium)
    if item.imported_only:
        for result in item.results:
            place = f"{result.path}:{result.line}"
            if place not in finding.locations:
                finding.locations.append(place)
        finding.cwe = sorted({c for r in item.results for c in r.cwe}, key=_cwe_key)
        finding.rules = sorted({r.reference for r in item.results})
        finding.confidence = LEVELS[counted]
        finding.cross_family_convergence = len(tools)  # each tool is its own family
        finding.weighted_convergence = 1 + settings.cross_family_weight * (len(tools) - 1)
        finding.severity = min((r.severity for r in item.results), key=SEVERITY_ORDER.__getitem__)
        finding.verification_recommended = finding.convergence <= 1 and finding.severity in ("P0", "P1")
        return []
    finding.cross_family_convergence += len(tools)
    finding.weighted_convergence += settings.cross_family_weight * len(tools)
    finding.confidence = LEVELS[min(2, max(LEVELS.index(finding.confidence) + 1, counted))]
    finding.verification_recommended = False
    return _rule_four(finding, item.results)


def _rule_four(finding: Finding, results: Sequence[ImportedResult]) -> list[Conflict]:
    """Dedup rule 4 with the tools as raters: the most severe wins, each rating recorded."""
    ratings = dict(finding.severity_conflict or dict.fromkeys(finding.agents, finding.severity))
    for result in results:
        previous = ratings.get(result.tool)
        if previous is None or SEVERITY_ORDER[result.severity] < SEVERITY_ORDER[previous]:
            ratings[result.tool] = result.severity
    if len(set(ratings.values())) <= 1:
        return []
    had_conflict = finding.severity_conflict is not None
    finding.severity_conflict = dict(sorted(ratings.items()))
    finding.severity = min(ratings.values(), key=SEVERITY_ORDER.__getitem__)
    if had_conflict:
        return []  # synthesis already listed it; its text names the agents' ratings
    text = ", ".join(f"{a} {s}" for a, s in finding.severity_conflict.items())
    return [Conflict("severity", finding.id, f"{finding.id} {finding.title}: rated {text}; {finding.severity} kept")]


def _cwe_key(cwe: str) -> tuple[int, str]:
    number = cwe.rsplit("-", 1)[-1]
    return (int(number), cwe) if number.isdigit() else (0, cwe)


def _renumber(findings: list[Finding]) -> tuple[list[Finding], dict[str, str]]:
    """Synthesis's order and numbering (severity, convergence descending, title), and old id -> new id."""
    ordered = sorted(
        findings, key=lambda f: (SEVERITY_ORDER[f.severity], -f.convergence, f.title.lower(), f.locations, f.agents)
    )
    counters: dict[str, int] = {}
    renamed: dict[str, str] = {}
    for finding in ordered:
        counters[finding.severity] = counters.get(finding.severity, 0) + 1
        new = f"{finding.severity}-{counters[finding.severity]}"
        if finding.id:
            renamed[finding.id] = new
        finding.id = new
    for finding in ordered:
        finding.co_located_with = [renamed.get(i, i) for i in finding.co_located_with]
        finding.cross_references = [renamed.get(i, i) for i in finding.cross_references]
    return ordered, renamed


def _renamed_conflict(conflict: Conflict, renamed: Mapping[str, str]) -> Conflict:
    if conflict.finding is None:
        return conflict
    old = conflict.finding
    new = renamed.get(old, old)
    text = new + conflict.text[len(old) :] if conflict.text.startswith(old + " ") else conflict.text
    return dataclasses.replace(conflict, finding=new, text=text)


def _summary(
    imports: Sequence[SarifImport], tools: Sequence[str], kept: int, corroborated: int, new: int, outside: int
) -> str:
    """One info line: what was imported, what it did, what was left out and why."""
    sources = ", ".join(item.source for item in imports)
    line = (
        f"imported {kept} result(s) of {', '.join(tools) or 'no tool'} from {sources}: "
        f"{corroborated} finding(s) corroborated, {new} new finding(s)"
    )
    skipped: dict[str, int] = {}
    for item in imports:
        for why, count in item.skipped.items():
            skipped[why] = skipped.get(why, 0) + count
    left = [f"{count} {why}" for why, count in sorted(skipped.items())]
    if outside:
        left.insert(0, f"{outside} outside what this review covered")
    return line + (f"; left out: {', '.join(left)}" if left else "")
