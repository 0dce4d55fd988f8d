"""Turn the hits an agent owns into its report: filter, merge, fold, number, mask.

Noise control happens here, the same way for every analyzer: hits outside a
diff's changed lines, disabled rules and lines carrying ``# noqa`` /
``fluxdrive: ignore[...]`` are dropped; identical hits on one line merge;
hits of one rule inside one Python function become one finding with every
line; a rule firing more than ``max_per_rule`` times becomes one finding
listing every place. The places travel in the index line (``also:``), as
does the rule's CWE (``cwe:``, from ``data/rules/cwe.yaml``). Evidence and
titles are masked before anything is written.
"""

from __future__ import annotations

import fnmatch
import functools
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace

from fluxdrive.agents import AgentDefinition
from fluxdrive.config.model import StaticConfig
from fluxdrive.contracts import IndexEntry, IssueDetail, clean_field
from fluxdrive.contracts.fields import also_field, cwe_field, evidence_field, rule_field
from fluxdrive.core.masking import mask_text
from fluxdrive.runtimes.base import ReviewContent
from fluxdrive.runtimes.static.analyzers.base import AnalyzerOutput
from fluxdrive.runtimes.static.checks.engine.registry import registered_checks
from fluxdrive.runtimes.static.cwe import cwe_of
from fluxdrive.runtimes.static.hits import Hit, SecretMask, sort_hits
from fluxdrive.runtimes.static.ownership import Ownership
from fluxdrive.runtimes.static.placement import capped
from fluxdrive.runtimes.static.source import review_scope

_NOQA = re.compile(r"(?i)\bnoqa\b(?::\s*(?P<codes>[\w:,\s.-]+))?")
_NOSEC = re.compile(r"(?i)#\s*nosec\b")  # bandit's marker: the line was judged safe by a person
_IGNORE = re.compile(r"(?i)fluxdrive:\s*ignore(?:\[(?P<codes>[^\]]*)\])?")
_CWE_IN_TITLE = re.compile(r"\bCWE-[1-9]\d{0,4}\b")
MAX_SHARED = 10
LABELS = {
    "secrets": "detect-secrets",
    "ruff": "ruff",
    "patterns": "ast-grep/line rules",
    "flows": "JavaScript/TypeScript and Go data flow",
    "lizard": "lizard",
    "checks": "fluxdrive checks",
    "architecture": "import-graph analysis",
}


@dataclass(frozen=True, slots=True)
class Finding:
    """A hit, or a group of hits of one rule, as it will be reported.

    ``hit`` is the primary place (the most severe, then the first);
    ``others`` are the rest of the group: the other lines of one function
    (``scope`` names it), or every other place of a rule that fired more than
    ``max_per_rule`` times.
    """

    hit: Hit
    others: tuple[Hit, ...] = ()
    scope: str | None = None

    @property
    def places(self) -> tuple[str, ...]:
        """Every ``path:line`` of the finding, the primary one first."""
        return tuple(dict.fromkeys([self.hit.location, *(o.location for o in self.others)]))


FunctionAt = Callable[[str, int], "str | None"]  # (reported path, line) -> innermost Python function there


def _by_function(hits: list[Hit], function_at: FunctionAt | None) -> list[tuple[list[Hit], str | None]]:
    """One rule's hits grouped by the Python function they are in (other hits stay alone)."""
    groups: dict[tuple[object, ...], tuple[list[Hit], str | None]] = {}
    counts: dict[str, int] = {}
    for hit in hits:
        counts[hit.path] = counts.get(hit.path, 0) + 1
    for index, hit in enumerate(hits):
        scope = function_at(hit.path, hit.line) if function_at is not None and counts[hit.path] > 1 else None
        key: tuple[object, ...] = (hit.path, scope) if scope is not None else ("alone", index)
        groups.setdefault(key, ([], scope))[0].append(hit)
    return list(groups.values())


def _suppressed(hit: Hit, agent: AgentDefinition, content: ReviewContent) -> bool:
    """A comment on the hit's line waives it - unless the change under review added that comment
    to a line the safety review reports: a PR must not be able to silence its own findings."""
    if agent.name == "fd-safety" and content.changed_lines is not None:
        changed = content.changed_lines.get(hit.path)
        if changed is not None and hit.line in changed:
            return False
    if _NOSEC.search(hit.evidence):
        return True
    for pattern in (_NOQA, _IGNORE):
        match = pattern.search(hit.evidence)
        if match is None:
            continue
        codes = match.group("codes")
        if not codes or not codes.strip():
            return True
        wanted = {c.strip() for c in re.split(r"[,\s]+", codes) if c.strip()}
        short = hit.rule.split(":", 1)[-1]
        if hit.rule in wanted or short in wanted:
            return True
    return False


def _placed(hit: Hit, reviewed: str) -> Hit:
    """The hit at the severity its file's place allows (tests, docs, examples, tooling: P2 at most).

    Checks written for documents (a plan without a rollback) judge the document itself: not capped.
    """
    if hit.claim.analyzer == "fluxdrive" and _document_checks().get(hit.claim.key) == "document":
        return hit
    severity, place = capped(hit.severity, hit.path, reviewed)
    if severity == hit.severity:
        return hit
    note = f" Lowered from {hit.severity} to {severity}: this is {place} code, not what the project ships."
    return replace(hit, severity=severity, why=hit.why + note)


@functools.cache
def _document_checks() -> dict[str, str]:
    return {name: spec.kind for name, spec in registered_checks().items()}


def _one_per_weakness(hits: list[Hit]) -> list[Hit]:
    """One hit per line and weakness: a line rule and a data-flow check naming the same CWE on the same
    line are one problem, reported once - by the most severe, then by fluxdrive's own check (it says why)."""
    best: dict[tuple[str, int, tuple[str, ...]], Hit] = {}
    for hit in hits:
        cwe = hit_cwe(hit)
        if not cwe:
            continue
        key = (hit.path, hit.line, cwe)
        mine = best.get(key)
        rank = (hit.severity, hit.claim.analyzer != "fluxdrive")
        if mine is None or rank < (mine.severity, mine.claim.analyzer != "fluxdrive"):
            best[key] = hit
    return [h for h in hits if not hit_cwe(h) or best[(h.path, h.line, hit_cwe(h))] is h]


def _disabled(hit: Hit, patterns: Sequence[str]) -> bool:
    return any(fnmatch.fnmatchcase(hit.rule, p) for p in patterns)


def _in_change(hit: Hit, content: ReviewContent) -> bool:
    if hit.also and hit.also.rpartition(":")[2].isdigit():  # found from another line (a view, for a template)
        path, _, line = hit.also.rpartition(":")
        if _at_change(path, int(line), content):
            return True
    return _at_change(hit.path, hit.line, content)


def _at_change(path: str, line: int, content: ReviewContent) -> bool:
    if content.focus is not None:
        if path not in content.focus:
            return False
        lines = content.focus[path]
        if lines is not None and line not in lines:
            return False
    shown = content.shown_lines if content.shown_lines is not None else content.changed_lines
    if shown is None:
        return True
    if path not in shown:
        return False
    lines = shown[path]
    return lines is None or line in lines


def select_hits(
    agent: AgentDefinition,
    outputs: Iterable[AnalyzerOutput],
    ownership: Ownership,
    settings: StaticConfig,
    content: ReviewContent,
    function_at: FunctionAt | None = None,
) -> list[Finding]:
    """The agent's hits after filtering, merging and folding, in report order.

    ``function_at`` names the Python function holding a reported line (None
    outside functions and for other languages): hits of one rule in one
    function become one finding.
    """
    seen: set[tuple[str, int, str]] = set()
    kept: list[Hit] = []
    named, reviewed = review_scope(content.input_type, content.files)  # a named file is what ships
    for output in outputs:
        for found in output.hits:
            if ownership.owner(found.claim, found.rule) != agent.name:
                continue
            if _disabled(found, settings.disabled_rules) or _suppressed(found, agent, content):
                continue
            if not _in_change(found, content):
                continue
            hit = found if named else _placed(found, reviewed)
            key = (hit.path, hit.line, hit.title)  # the same problem on one line, from any analyzer
            if key in seen:
                continue
            seen.add(key)
            kept.append(hit)
    kept = _one_per_weakness(kept)
    # A rule's hits fold per severity: a P2 never rides along as a place of a P1 finding.
    by_rule: dict[tuple[str, str], list[Hit]] = {}
    for hit in sort_hits(kept):
        by_rule.setdefault((hit.rule, hit.severity), []).append(hit)
    findings = []
    for hits in by_rule.values():
        groups = _by_function(hits, function_at)
        if len(groups) > settings.max_per_rule:
            first = min(hits, key=lambda h: (h.severity, h.path, h.line))
            findings.append(Finding(first, tuple(h for h in hits if h is not first)))
            continue
        for group, scope in groups:
            first = min(group, key=lambda h: (h.severity, h.path, h.line))
            others = tuple(h for h in group if h is not first)
            findings.append(Finding(first, others, scope if others else None))
    return sorted(findings, key=lambda f: (f.hit.severity, f.hit.path, f.hit.line, f.hit.rule))


def _title(finding: Finding, mask: SecretMask) -> str:
    hit = finding.hit
    title = mask_text(hit.title)
    if finding.others and finding.scope:
        where = "" if f"{finding.scope}()" in title else f" in {finding.scope}()"
        title += f" (and {len(finding.others)} more lines{where})"
    elif finding.others:
        title += f" (and {len(finding.others)} more places)"
    return clean_field(title)


def _detail(finding: Finding, mask: SecretMask) -> IssueDetail:
    hit = finding.hit
    evidence = mask.apply(hit.path, hit.line, hit.evidence) if hit.evidence else ""
    explanation = [mask_text(hit.why), f"Rule: {hit.rule}"]
    if hit.also:
        explanation.append(f"Also at: {hit.also}")
    if finding.others:
        places = [o.also or o.location for o in finding.others]
        shown = ", ".join(places[:50]) + (f", ... ({len(places) - 50} more)" if len(places) > 50 else "")
        explanation.append(f"{'Other lines' if finding.scope else 'Other places'}: {shown}")
    return IssueDetail(evidence=evidence, explanation="\n".join(explanation), fix=mask_text(hit.fix))


def hit_cwe(hit: Hit) -> tuple[str, ...]:
    """The CWE of a hit: the one its title names (a declared taint sink's), else its rule's from the table."""
    named = tuple(dict.fromkeys(_CWE_IN_TITLE.findall(hit.title)))
    return named or cwe_of(hit.rule)


def _extra(finding: Finding) -> tuple[str, ...]:
    """The index fields after the location: the rule, its CWE, the other places."""
    fields = [
        rule_field(finding.hit.rule),
        cwe_field(hit_cwe(finding.hit)),
        also_field(finding.places[1:]),
        evidence_field(finding.hit.evidence_level),
    ]
    return tuple(f for f in fields if f)


def build_entries(
    agent: AgentDefinition, findings: Sequence[Finding], mask: SecretMask
) -> tuple[tuple[IndexEntry, ...], dict[str, IssueDetail]]:
    """Index entries (ids in order) and the prose behind each."""
    entries = []
    details = {}
    for number, finding in enumerate(findings, start=1):
        hit = finding.hit
        identifier = f"{agent.prefix}-{number:03d}"
        entries.append(
            IndexEntry(
                severity=hit.severity,  # type: ignore[arg-type]
                id=identifier,
                section=clean_field(hit.section or hit.path) or hit.path,
                title=_title(finding, mask) or hit.rule,
                location=clean_field(f"{hit.path}:{hit.line}"),
                extra=_extra(finding),
            )
        )
        details[identifier] = _detail(finding, mask)
    return tuple(entries), details


def summarize(
    agent: AgentDefinition,
    content: ReviewContent,
    files: int,
    lines: int,
    entries: Sequence[IndexEntry],
    outputs: Sequence[AnalyzerOutput],
    notes: Sequence[str],
) -> str:
    """The 3-5 line Summary section."""
    if files == 0:
        return "Nothing to review: the input has no readable files."
    counts = {s: sum(1 for e in entries if e.severity == s) for s in ("P0", "P1", "P2", "P3")}
    ran = [LABELS.get(o.name, o.name) for o in outputs if o.error is None]
    shown = ", ".join(f"{n} {s}" for s, n in counts.items() if n) or "none"
    out = [
        f"Static review by {agent.name} of {files} file(s), {lines:,} lines, "
        f"with {', '.join(ran) or 'no analyzers'}: {len(entries)} finding(s) ({shown})."
    ]
    top = next((e for e in entries if e.severity in ("P0", "P1")), None)
    if top is not None:
        out.append(f"Most important: {top.title} ({top.location}).")
    failed = [f"{o.name} ({o.error})" for o in outputs if o.error]
    if failed:
        out.append(f"Not run: {'; '.join(failed)}. The verdict covers only the checks that ran.")
    if notes:
        out.append(f"Notes: {'; '.join(notes[:3])}" + (f"; and {len(notes) - 3} more" if len(notes) > 3 else "") + ".")
    if content.changed_lines is not None:
        out.append("Only lines changed by the diff were reported.")
    return "\n".join(out)
