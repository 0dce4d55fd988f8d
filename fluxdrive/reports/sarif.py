"""``findings.sarif``: SARIF 2.1.0 for code-scanning UIs (GitHub, GitLab, IDEs).

One run, tool ``fluxdrive`` with one rule per distinct rule id. A finding's
rule id is the analyzer rule an agent reported (``ruff:S608``) when there is
one, else ``fluxdrive/<agent>/<section>``. Levels: P0/P1 -> error, P2 ->
warning, P3 -> note. ``partialFingerprints`` carry the finding's fingerprint
(:mod:`fluxdrive.reports.fingerprint`, the one baselines use) - not the line -
so an alert survives unrelated edits above it.

A result's first place is its ``locations``; the other places of a finding
that stands for several (every line of one function, a rule folded into one
finding) are its ``relatedLocations``. A rule with a CWE is tagged the way
GitHub code scanning reads it (``security``, ``external/cwe/cwe-89``, a
``security-severity``), points at the CWE through ``relationships`` into the
run's CWE ``taxonomies``, and carries a ``fullDescription`` and ``help``
(text and markdown) taken from the reporting agent's explanation and fix.

What GitHub code scanning reads (its "SARIF support for code scanning" page)
and what the SARIF multitool's GitHub rules (``validate --rule-kind
"Sarif;Gh"``) check, and how each is met:

- **Rules**: every rule has ``shortDescription``, ``fullDescription`` (both at
  most 1024 characters), ``help`` (text and markdown) and a
  ``defaultConfiguration.level``; its ``properties`` carry ``precision``
  (``high`` for an analyzer's rule, ``medium`` for fluxdrive's heuristic
  document checks, else the finding's confidence) and, for a rule with a CWE,
  ``tags`` (at most 20) and ``security-severity``, else ``problem.severity``
  (error, warning, recommendation). Results carry ``ruleIndex`` into the
  driver's rules, sorted by id.
- **Places**: every ``artifactLocation`` is a repository-relative URI
  reference (forward slashes, no leading ``./`` or ``/``, percent-encoded)
  with ``uriBaseId: "%SRCROOT%"``; the run declares ``%SRCROOT%`` in
  ``originalUriBaseIds`` without a ``uri`` (the repository root, wherever it
  is checked out: GitHub resolves relative paths against the repository, and
  no machine path reaches the report). Every location has a region with
  ``startLine`` >= 1; a result keeps at most 1000 locations in all (GitHub's
  limit). A finding with no file location (a document section, a model
  finding with no place) points at line 1 of the best file there is, and says
  so in its message and ``properties.section``: GitHub needs one location per
  result to show it. The best file: the finding's section when it names a
  file other findings are located in; for a one-file or document review the
  reviewed file; for a review of a subdirectory that directory; else ``.``,
  the repository root.
- **Fingerprints**: ``partialFingerprints["fluxdriveFinding/v1"]`` is
  :func:`fluxdrive.reports.fingerprint.fingerprints` of the finding (file,
  rule or title, the flagged line's text, occurrence), read against the
  project root the HTML excerpts use; unique within one run by construction
  (one title twice in one file gets two). GitHub itself matches alerts on
  ``primaryLocationLineHash``, which its ``upload-sarif`` action computes
  from the source when a file lacks it; fluxdrive does not write one.
- **Run**: ``automationDetails.id`` is ``<category>/`` (``fluxdrive/`` unless
  a category is given), so reviews of different parts of one commit can be
  uploaded side by side; ``tool.driver`` has ``name``, ``fullName``,
  ``version``, ``semanticVersion`` (when the version is semver) and
  ``informationUri``.
"""

from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import quote

from fluxdrive.core.masking import scrub_json
from fluxdrive.core.version import __version__
from fluxdrive.reports._cwe import CWE_URI, cwe_names, cwe_number, cwe_tag, cwe_url
from fluxdrive.reports.codeclimate import split_location
from fluxdrive.reports.fingerprint import fingerprints
from fluxdrive.reports.html import project_root
from fluxdrive.reports.notes import AgentNotes
from fluxdrive.synthesis import Finding, Synthesis
from fluxdrive.synthesis.model import SEVERITY_ORDER

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
LEVELS = {"P0": "error", "P1": "error", "P2": "warning", "P3": "note"}
UNGROUNDED_LEVEL = "note"  # a finding whose place or quoted code is not in the reviewed input (synthesis/grounding.py)
INFORMATION_URI = "https://github.com/fluxdrive/fluxdrive"
# GitHub code scanning ranks security alerts by this rule property (critical >= 9, high >= 7, medium >= 4)
SECURITY_SEVERITY = {"P0": "9.0", "P1": "7.5", "P2": "5.0", "P3": "2.0"}
MAX_LOCATIONS = 1000  # GitHub rejects a result with more (primary and related together)
MAX_TAGS = 20  # GitHub's limit per rule
MAX_DESCRIPTION = 1000  # GitHub: at most 1024 characters
CWE_TAXONOMY = "CWE"
SRCROOT = "%SRCROOT%"
DEFAULT_CATEGORY = "fluxdrive"
FINGERPRINT_KEY = "fluxdriveFinding/v1"
# GitHub's problem.severity of a non-security rule, by the rule's most severe finding
PROBLEM_SEVERITY = {"P0": "error", "P1": "error", "P2": "warning", "P3": "recommendation"}
CONFIDENCE_PRECISION = {"high": "high", "medium": "medium", "low": "low"}
_PRECISION_ORDER = ["low", "medium", "high"]
_SEMVER = re.compile(
    r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?(?:\+[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?$"
)
_MORE_PLACES = re.compile(r"\s*\(and \d+ more (?:places|lines)[^()]*(?:\(\))?\)$")


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:60] or "general"


def rule_id(finding: Finding) -> str:
    """The SARIF rule of a finding (stable across runs)."""
    if finding.rules:
        return finding.rules[0]
    return f"fluxdrive/{finding.agents[0]}/{_slug(finding.section)}"


def _location(path: str, line: int) -> dict[str, Any]:
    """A physical location: a URI reference relative to the repository root, and a line >= 1."""
    return {
        "physicalLocation": {
            "artifactLocation": {"uri": quote(path, safe="/"), "uriBaseId": SRCROOT},
            "region": {"startLine": max(line, 1)},
        }
    }


def _fallback_path(result: Synthesis, finding: Finding, located: set[str]) -> str:
    """The file a finding with no file location points at (line 1); see the module docstring."""
    section = split_location(finding.section)[0] if finding.section else ""
    if section in located:
        return section
    label = split_location(result.input)[0] if result.input else "."
    if result.input_type in ("file", "document"):
        same = sorted(p for p in located if p == label or p.endswith("/" + label))
        return same[0] if len(same) == 1 else label
    if result.input_type == "directory" and any(p.startswith(label + "/") for p in located):
        return label  # a subdirectory review; the repository root's own label is its name, not a path
    return "."


def _places(result: Synthesis, finding: Finding, located: set[str]) -> list[tuple[str, int]]:
    """(path, line) of each place, the first primary; a finding with no file location gets a fallback."""
    if not finding.locations:
        return [(_fallback_path(result, finding, located), 1)]
    return [split_location(place) for place in finding.locations[:MAX_LOCATIONS]]


def _result(finding: Finding, places: list[tuple[str, int]], rule_index: int, fingerprint: str) -> dict[str, Any]:
    message = f"{finding.title} ({finding.id}; {finding.convergence_label} agents: {', '.join(finding.agents)})"
    if not finding.locations:
        where = f"section {finding.section!r}" if finding.section else "no place"
        message += f" [reported for {where}, not a line; shown at line 1 of {places[0][0]}]"
    properties: dict[str, Any] = {
        "fluxdriveId": finding.id,
        "severity": finding.severity,
        "agents": finding.agents,
        "convergence": finding.convergence_label,
        "confidence": finding.confidence,
    }
    if finding.cwe:
        properties["cwe"] = finding.cwe
    if not finding.locations:
        properties["section"] = finding.section
    level = LEVELS[finding.severity]
    if finding.grounding is not None and not finding.grounding.grounded:
        # Not in the reviewed input: shown as a note, whatever the agents said, with why and what they said.
        properties["grounding"] = {"grounded": False, "reason": finding.grounding.reason}
        if finding.grounding.demoted_from:
            properties["grounding"]["demotedFrom"] = finding.grounding.demoted_from
        message += f" [not grounded: {finding.grounding.reason}]"
        level = UNGROUNDED_LEVEL
    if finding.validation is not None:  # a checker model of another family's answer (synthesis/validation.py)
        checked = finding.validation
        properties["validation"] = {"status": checked.status, "checker": checked.checker, "reason": checked.reason}
        if checked.demoted_from:
            properties["validation"]["demotedFrom"] = checked.demoted_from
        if finding.not_confirmed:
            message += f" [not confirmed: {finding.not_confirmed}]"
            level = UNGROUNDED_LEVEL
    if finding.support is not None:  # analyzers and models behind it (synthesis/evidence.py)
        support = finding.support
        properties["support"] = {"analyzers": list(support.analyzers), "models": list(support.models)}
        if support.refuted:
            properties["support"]["refuted"] = dict(support.refuted)
    if finding.measured is not None:  # the precision measured for its rule or agent-model pair (runs/precision.py)
        measured = finding.measured
        properties["measured"] = {"key": measured.key, "precision": measured.precision, "judged": measured.judged}
        if measured.demoted_from:
            properties["measured"]["demotedFrom"] = measured.demoted_from
    result: dict[str, Any] = {
        "ruleId": rule_id(finding),
        "ruleIndex": rule_index,
        "level": level,
        "message": {"text": message},
        "locations": [_location(*places[0])],
        "partialFingerprints": {FINGERPRINT_KEY: fingerprint},
        "properties": properties,
    }
    related, total = places[1:], len(finding.locations)
    if related:
        result["relatedLocations"] = [
            {**_location(*place), "id": number, "message": {"text": f"Also here: place {number + 1} of {total}"}}
            for number, place in enumerate(related, start=1)
        ]
    return result


def _precision(identifier: str, group: list[Finding]) -> str:
    """GitHub's ``precision``: an analyzer's rule is high, fluxdrive's document heuristics medium, else confidence."""
    if group[0].rules:
        return "medium" if identifier.startswith("fluxdrive:doc-") else "high"
    return max((CONFIDENCE_PRECISION.get(f.confidence, "low") for f in group), key=_PRECISION_ORDER.index)


def _notes(notes: AgentNotes, finding: Finding) -> tuple[str, str]:
    """The (explanation, fix) an agent wrote for this finding, from the first agent that wrote one."""
    return notes.first((agent, finding.source_ids[agent]) for agent in finding.agents if agent in finding.source_ids)


def _help(identifier: str, finding: Finding, cwes: list[str], why: str, fix: str) -> dict[str, Any]:
    names = cwe_names()
    weakness = [(f"{c}: {names[c]}" if c in names else c, cwe_url(c)) for c in cwes]
    text = [why or finding.title]
    markdown = [f"**{finding.title}**", "", why] if why else [f"**{finding.title}**"]
    if fix:
        text.append(f"Fix: {fix}")
        markdown += ["", f"**Fix:** {fix}"]
    if cwes:
        text.append("Weakness: " + "; ".join(f"{name} ({url})" for name, url in weakness))
        markdown += ["", "**Weakness:** " + ", ".join(f"[{name}]({url})" for name, url in weakness)]
    source = f"Rule `{identifier}`" if finding.rules else "Finding"
    markdown += ["", f"{source}, reported by {', '.join(finding.agents)}."]
    return {"text": "\n\n".join(text), "markdown": "\n".join(markdown)}


def _rules(result: Synthesis, findings: list[Finding]) -> tuple[list[dict[str, Any]], list[str]]:
    """The driver's rules (sorted by id) and the CWE ids they name (the taxa, in order)."""
    grouped: dict[str, list[Finding]] = {}
    for finding in findings:
        grouped.setdefault(rule_id(finding), []).append(finding)
    cwes_of = {key: sorted({c for f in group for c in f.cwe}, key=_cwe_key) for key, group in grouped.items()}
    taxa = sorted({c for cwes in cwes_of.values() for c in cwes}, key=_cwe_key)
    position = {cwe: index for index, cwe in enumerate(taxa)}
    notes = AgentNotes(result)
    rules = []
    for identifier in sorted(grouped):
        group = sorted(grouped[identifier], key=lambda f: SEVERITY_ORDER[f.severity])
        first, cwes = group[0], cwes_of[identifier]
        why, fix = next((n for n in (_notes(notes, f) for f in group) if any(n)), ("", ""))
        rule: dict[str, Any] = {
            "id": identifier,
            "name": _slug(identifier).replace("-", "_"),
            "shortDescription": {"text": _MORE_PLACES.sub("", first.title)[:200]},
            "fullDescription": {"text": (why or first.title)[:MAX_DESCRIPTION]},
            "defaultConfiguration": {"level": LEVELS[first.severity]},
            "help": _help(identifier, first, cwes, why, fix),
            "properties": {"agent": first.agents[0], "precision": _precision(identifier, group)},
        }
        if cwes:
            rule["helpUri"] = cwe_url(cwes[0])
            rule["properties"]["tags"] = ["security", *(cwe_tag(c) for c in cwes)][:MAX_TAGS]
            rule["properties"]["security-severity"] = SECURITY_SEVERITY[first.severity]
            rule["relationships"] = [
                {
                    "target": {"id": c, "index": position[c], "toolComponent": {"name": CWE_TAXONOMY, "index": 0}},
                    "kinds": ["relevant"],
                }
                for c in cwes
            ]
        else:
            rule["properties"]["problem.severity"] = PROBLEM_SEVERITY[first.severity]
        rules.append(rule)
    return rules, taxa


def _cwe_key(cwe: str) -> tuple[int, str]:
    number = cwe_number(cwe)
    return (int(number), cwe) if number.isdigit() else (0, cwe)


def _taxonomy(taxa: list[str]) -> dict[str, Any]:
    names = cwe_names()
    return {
        "name": CWE_TAXONOMY,
        "organization": "MITRE",
        "informationUri": CWE_URI,
        "shortDescription": {"text": "The MITRE Common Weakness Enumeration"},
        "isComprehensive": False,
        "taxa": [
            {
                "id": cwe,
                "name": names.get(cwe, cwe),
                "shortDescription": {"text": names.get(cwe, cwe)},
                "helpUri": cwe_url(cwe),
            }
            for cwe in taxa
        ],
    }


def empty_run(category: str = DEFAULT_CATEGORY, rules: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """A run with no results yet: the tool, the category and the source root (also a whole log when a diff
    is empty: the same category, so the upload closes earlier alerts)."""
    driver: dict[str, Any] = {
        "name": "fluxdrive",
        "fullName": "fluxdrive multi-agent review",
        "version": __version__,
        "informationUri": INFORMATION_URI,
        "rules": rules or [],
    }
    if _SEMVER.match(__version__):
        driver["semanticVersion"] = __version__
    return {
        "tool": {"driver": driver},
        "automationDetails": {"id": category.strip("/") + "/"},
        "originalUriBaseIds": {SRCROOT: {"description": {"text": "The root of the reviewed repository."}}},
        "results": [],
    }


def build_sarif(result: Synthesis, *, category: str = DEFAULT_CATEGORY) -> dict[str, Any]:
    """The SARIF log of a synthesis; ``category`` is GitHub's analysis category (``automationDetails.id``)."""
    findings = list(result.findings)
    rules, taxa = _rules(result, findings)
    run = empty_run(category, rules)
    driver = run["tool"]["driver"]
    if taxa:
        driver["supportedTaxonomies"] = [{"name": CWE_TAXONOMY, "index": 0}]
        run["taxonomies"] = [_taxonomy(taxa)]
    index = {rule["id"]: number for number, rule in enumerate(rules)}
    located = {split_location(place)[0] for f in findings for place in f.locations}
    marks = fingerprints(findings, project_root(result) or result.output_dir)
    results = [
        _result(f, _places(result, f, located), index[rule_id(f)], mark)
        for f, mark in zip(findings, marks, strict=True)
    ]
    run["results"] = results
    run["properties"] = {"verdict": result.verdict, "validation": result.validation_line}
    if result.incomplete:  # a reader of the log must not take "no results" for "clean"
        run["properties"]["complete"] = False
        run["invocations"] = [
            {
                "executionSuccessful": False,
                "toolExecutionNotifications": [
                    {"level": "error", "message": {"text": f"review incomplete: {reason}"}}
                    for reason in result.incomplete
                ],
            }
        ]
    return {"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [run]}


def render_sarif(result: Synthesis, *, category: str = DEFAULT_CATEGORY) -> str:
    """findings.sarif text."""
    return scrub_json(json.dumps(build_sarif(result, category=category), indent=2, ensure_ascii=False)) + "\n"
