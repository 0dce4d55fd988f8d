"""``gl-code-quality-report.json``: the findings as a GitLab Code Quality report.

Why: GitLab's merge-request Code Quality widget (and, on higher tiers, the
pipeline's Code Quality tab and the markers in the changes view) reads a job
artifact declared as ``artifacts:reports:codequality``. With this report a
review's findings show up next to the diff without a SARIF-capable scanner
integration.

The format (GitLab's "Code Quality report format", a subset of the Code
Climate analyzer spec, ``codeclimate/platform`` ``spec/analyzers/SPEC.md``):
one JSON array of issues, each with ``description``, ``check_name``,
``fingerprint``, ``severity`` (``info``, ``minor``, ``major``, ``critical``,
``blocker``), ``location.path`` relative to the repository root and
``location.lines.begin``. GitLab validates each issue against its
``app/validators/json_schemas/codeclimate.json``, keeps issues by fingerprint
(two with one fingerprint are one entry) and reads nothing else. We also
write what the Code Climate spec requires of an issue (``type: issue``,
``categories``, ``lines.end``) and a ``content.body`` (finding id, agents,
CWE) for other Code Climate readers; GitLab ignores them.

The mapping:

- **One issue per place.** GitLab reads one location per issue and ignores
  Code Climate's ``other_locations`` (deprecated) and ``trace``, so a
  finding that stands for several places (every line of one function, a
  rule folded into one finding) is one issue per place - each line gets its
  marker - up to :data:`MAX_PLACES` per finding. Their descriptions drop the
  "(and N more lines)" suffix and say "(place k of n)" instead.
- **Severity**: P0 -> blocker, P1 -> critical, P2 -> major, P3 -> minor.
  Improvements are left out (the widget lists degradations; an improvement
  is a suggestion, not a violation); ``include_improvements=True`` adds
  them as ``info``.
- **check_name**: the analyzer rule an agent reported (``ruff:S608``,
  ``fluxdrive:py-sql-injection``, ``detect-secrets:secret-keyword``), else
  the reporting agent (``fd-safety``) for a model finding with no rule.
- **description**: the finding's one-line title, masked like every output
  (:func:`fluxdrive.core.masking.scrub_json` over the whole text).
- **categories**: ``Security`` for a finding with a CWE or from fd-safety,
  then by agent (:data:`AGENT_CATEGORIES`: correctness -> Bug Risk,
  performance -> Performance, quality -> Style, or Complexity/Duplication
  when the rule or title says so, ...).
- **fingerprint**: 32 hex digits of SHA-256 over the check name, the path,
  the masked and normalized title (without the "(and N more ...)" suffix)
  and the place's rank among the places with that same check, path and
  title, ordered by line. No line number: an issue keeps its fingerprint
  when lines above it are added or removed, so GitLab does not report it
  as fixed and new again; the rank keeps two identical issues in one file
  (two hard-coded secrets) apart, which GitLab would otherwise merge.
- **location.path**: the finding's file as synthesis has it - relative to
  the repository root a review finds by ``.git``, whether the input was the
  root, a subdirectory, one file or a diff - with any leading ``./`` or
  ``/`` dropped and forward slashes. ``lines.begin`` is the reported line
  (at least 1) and ``lines.end`` the same line (findings carry no end).
- **Findings without a file location** (a document section, a model
  finding with no place): GitLab needs a path (it builds the blob link from
  it), so they point at line 1 of the best file there is: the finding's
  section when it names a file other findings are located in, else, for a
  one-file or document review, the reviewed file (its root-relative path
  when another finding is located in it, else its name), for a directory
  review the reviewed directory, else (a diff, reports synthesized without
  a run) ``.``, the repository root.

- **An incomplete review** (an agent failed, timed out or was cut off)
  adds one ``critical`` issue per reason, check ``fluxdrive:incomplete-review``,
  at line 1 of the reviewed file or directory (``.`` for a diff). Why: the
  report is a bare list of issues, and GitLab reads ``[]`` as "no
  degradation"; a review whose fd-safety crashed must not look clean there.

Output is deterministic (sorted by path, line, severity, check name,
fingerprint), a JSON array, ``[]`` when there is nothing to report.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

from fluxdrive.core.masking import mask_text, scrub_json
from fluxdrive.synthesis import Finding, Synthesis
from fluxdrive.synthesis.dedup import normalize_title

SEVERITIES = {"P0": "blocker", "P1": "critical", "P2": "major", "P3": "minor"}
IMPROVEMENT_SEVERITY = "info"
_SEVERITY_RANK = {"blocker": 0, "critical": 1, "major": 2, "minor": 3, "info": 4}
MAX_PLACES = 1000
FINGERPRINT_VERSION = "fluxdrive-codequality/v1"
INCOMPLETE_CHECK = "fluxdrive:incomplete-review"
INCOMPLETE_SEVERITY = "critical"
SECURITY = "Security"
# the Code Climate categories: Bug Risk, Clarity, Compatibility, Complexity, Duplication, Performance, Security, Style
AGENT_CATEGORIES = {
    "fd-safety": SECURITY,
    "fd-correctness": "Bug Risk",
    "fd-resilience": "Bug Risk",
    "fd-performance": "Performance",
    "fd-quality": "Style",
    "fd-architecture": "Complexity",
    "fd-systems": "Complexity",
}
DEFAULT_CATEGORY = "Clarity"  # document and product agents (decisions, people, perception, user-product...)
_COMPLEXITY = re.compile(r"complex|too many|too long|nest|ruff:C90|ruff:PLR09", re.I)
_DUPLICATION = re.compile(r"duplicat|copy[- ]?past", re.I)
_MORE_PLACES = re.compile(r"\s*\(and \d+ more (?:places|lines)[^()]*(?:\(\))?\)$")
_LINE = re.compile(r"^(?P<path>.+):(?P<line>\d+)$")


def severity(finding: Finding) -> str:
    """The Code Climate severity of a finding."""
    return IMPROVEMENT_SEVERITY if finding.improvement else SEVERITIES.get(finding.severity, "major")


def check_name(finding: Finding) -> str:
    """The rule an agent reported, else the reporting agent."""
    return finding.rules[0] if finding.rules else (finding.agents[0] if finding.agents else "fluxdrive")


def categories(finding: Finding) -> list[str]:
    """The Code Climate categories of a finding (at least one, sorted)."""
    found = {AGENT_CATEGORIES.get(agent, DEFAULT_CATEGORY) for agent in finding.agents}
    if finding.cwe:
        found.add(SECURITY)
    text = " ".join([*finding.rules, finding.title])
    if "Style" in found and _COMPLEXITY.search(text):
        found.discard("Style")
        found.add("Complexity")
    if "Style" in found and _DUPLICATION.search(text):
        found.discard("Style")
        found.add("Duplication")
    return sorted(found)


def split_location(location: str) -> tuple[str, int]:
    """``path:line`` -> (repository-relative path, line >= 1); a bare path is line 1."""
    match = _LINE.match(location)
    path, line = (match["path"], int(match["line"])) if match else (location, 1)
    return _clean_path(path), max(line, 1)


def _clean_path(path: str) -> str:
    path = path.replace("\\", "/")
    while path.startswith("./"):
        path = path[2:]
    return path.lstrip("/") or "."


def _title(finding: Finding) -> str:
    """The title on one line (the spec wants no newline), without "(and N more places)"."""
    title = " ".join(finding.title.split())
    return _MORE_PLACES.sub("", title).strip() or title


def _fallback_path(result: Synthesis, finding: Finding, located: set[str]) -> str:
    """Where a finding with no file location points (see the module docstring)."""
    section = _clean_path(finding.section) if finding.section else ""
    if section in located:
        return section
    if result.input_type not in ("file", "document", "directory") or not result.input:
        return "."  # a diff, or reports synthesized without a run: no file stands for the input
    label = _clean_path(result.input)
    if result.input_type in ("file", "document"):
        same = sorted(p for p in located if p == label or p.endswith("/" + label))
        return same[0] if len(same) == 1 else label
    return label


def _places(result: Synthesis, finding: Finding, located: set[str]) -> list[tuple[str, int]]:
    if not finding.locations:
        return [(_fallback_path(result, finding, located), 1)]
    return [split_location(place) for place in finding.locations[:MAX_PLACES]]


def _body(finding: Finding) -> str:
    parts = [f"fluxdrive {finding.id} ({finding.severity})", f"agents: {', '.join(finding.agents)}"]
    if finding.population:
        parts.append(f"convergence {finding.convergence_label}")
    if finding.cwe:
        parts.append(", ".join(finding.cwe))
    return "; ".join(parts)


def _incomplete_issues(result: Synthesis) -> list[dict[str, Any]]:
    """One issue per reason the review is incomplete (none for a complete review)."""
    label = (
        _clean_path(result.input) if result.input_type in ("file", "document", "directory") and result.input else "."
    )
    issues = []
    for reason in result.incomplete:
        material = "\0".join([FINGERPRINT_VERSION, INCOMPLETE_CHECK, label, mask_text(reason)])
        issues.append(
            {
                "type": "issue",
                "check_name": INCOMPLETE_CHECK,
                "description": " ".join(f"Review incomplete, nothing here is shown safe: {reason}".split()),
                "categories": [SECURITY],
                "fingerprint": hashlib.sha256(material.encode()).hexdigest()[:32],
                "severity": INCOMPLETE_SEVERITY,
                "location": {"path": label, "lines": {"begin": 1, "end": 1}},
                "content": {"body": f"fluxdrive verdict {result.verdict}: {result.validation_line}"},
            }
        )
    return issues


def build_codeclimate(result: Synthesis, *, include_improvements: bool = False) -> list[dict[str, Any]]:
    """The report's issues, sorted; fingerprints unique."""
    findings = [*result.findings, *(result.improvements if include_improvements else [])]
    located = {split_location(place)[0] for f in findings for place in f.locations}
    drafts: list[tuple[tuple[str, str, str], int, int, dict[str, Any]]] = []
    for order, finding in enumerate(findings):
        name, title = check_name(finding), _title(finding)
        key_title = normalize_title(mask_text(title))
        places, total = _places(result, finding, located), max(len(finding.locations), 1)
        for number, (path, line) in enumerate(places, start=1):
            description = f"{title} (place {number} of {total})" if total > 1 else title
            issue: dict[str, Any] = {
                "type": "issue",
                "check_name": name,
                "description": description,
                "categories": categories(finding),
                "fingerprint": "",  # set below, once every place is known
                "severity": severity(finding),
                "location": {"path": path, "lines": {"begin": line, "end": line}},
                "content": {"body": _body(finding)},
            }
            drafts.append(((name, path, key_title), line, order, issue))
    rank: dict[tuple[str, str, str], int] = {}
    for key, _line, _order, issue in sorted(drafts, key=lambda d: (d[0], d[1], d[2])):
        occurrence = rank.get(key, 0)
        rank[key] = occurrence + 1
        material = "\0".join([FINGERPRINT_VERSION, *key, str(occurrence)])
        issue["fingerprint"] = hashlib.sha256(material.encode()).hexdigest()[:32]
    issues = [d[3] for d in drafts] + _incomplete_issues(result)
    return sorted(
        issues,
        key=lambda i: (
            i["location"]["path"],
            i["location"]["lines"]["begin"],
            _SEVERITY_RANK[i["severity"]],
            i["check_name"],
            i["fingerprint"],
        ),
    )


def render_codeclimate(result: Synthesis, *, include_improvements: bool = False) -> str:
    """The GitLab Code Quality report text (a JSON array; ``[]`` for none)."""
    issues = build_codeclimate(result, include_improvements=include_improvements)
    return scrub_json(json.dumps(issues, indent=2, ensure_ascii=False)) + "\n"
