"""``findings.sarif``: SARIF 2.1.0 for code-scanning UIs (GitHub, GitLab, IDEs).

One run, tool ``fluxdrive`` with one rule per distinct rule id. A finding's
rule id is the analyzer rule an agent reported (``ruff:S608``) when there is
one, else ``fluxdrive/<agent>/<section>``. Levels: P0/P1 -> error, P2 ->
warning, P3 -> note. ``partialFingerprints`` hash the file and the normalized
title - not the line - so an alert survives unrelated edits above it.

A result's first place is its ``locations``; the other places of a finding
that stands for several (every line of one function, a rule folded into one
finding) are its ``relatedLocations``. A rule with a CWE is tagged the way
GitHub code scanning reads it (``security``, ``external/cwe/cwe-89``, a
``security-severity``), points at the CWE through ``relationships`` into the
run's CWE ``taxonomies``, and carries a ``fullDescription`` and ``help``
(text and markdown) taken from the reporting agent's explanation and fix.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

from fluxdrive import __version__
from fluxdrive._masking import scrub_json
from fluxdrive.reports._cwe import CWE_URI, cwe_names, cwe_number, cwe_tag, cwe_url
from fluxdrive.synthesis import Finding, Synthesis
from fluxdrive.synthesis.dedup import normalize_title
from fluxdrive.synthesis.model import SEVERITY_ORDER
from fluxdrive.synthesis.prose import issue_notes

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
LEVELS = {"P0": "error", "P1": "error", "P2": "warning", "P3": "note"}
INFORMATION_URI = "https://github.com/fluxdrive/fluxdrive"
# GitHub code scanning ranks security alerts by this rule property (critical >= 9, high >= 7, medium >= 4)
SECURITY_SEVERITY = {"P0": "9.0", "P1": "7.5", "P2": "5.0", "P3": "2.0"}
MAX_RELATED = 1000
CWE_TAXONOMY = "CWE"
_MORE_PLACES = re.compile(r"\s*\(and \d+ more (?:places|lines)[^()]*(?:\(\))?\)$")


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:60] or "general"


def rule_id(finding: Finding) -> str:
    """The SARIF rule of a finding (stable across runs)."""
    if finding.rules:
        return finding.rules[0]
    return f"fluxdrive/{finding.agents[0]}/{_slug(finding.section)}"


def fingerprint(finding: Finding) -> str:
    """A hash of file and normalized title: stable when lines move."""
    file = finding.location.rsplit(":", 1)[0] if finding.location else ""
    return hashlib.sha256(f"{file}\0{normalize_title(finding.title)}".encode()).hexdigest()[:32]


def _location(location: str) -> dict[str, Any]:
    path, line = location.rsplit(":", 1)
    return {
        "physicalLocation": {
            "artifactLocation": {"uri": path.lstrip("/")},
            "region": {"startLine": max(int(line), 1)},
        }
    }


def _result(finding: Finding) -> dict[str, Any]:
    message = f"{finding.title} ({finding.id}; {finding.convergence_label} agents: {', '.join(finding.agents)})"
    properties: dict[str, Any] = {
        "fluxdriveId": finding.id,
        "severity": finding.severity,
        "agents": finding.agents,
        "convergence": finding.convergence_label,
        "confidence": finding.confidence,
    }
    if finding.cwe:
        properties["cwe"] = finding.cwe
    result: dict[str, Any] = {
        "ruleId": rule_id(finding),
        "level": LEVELS[finding.severity],
        "message": {"text": message},
        "partialFingerprints": {"fluxdriveFinding/v1": fingerprint(finding)},
        "properties": properties,
    }
    if finding.locations:
        result["locations"] = [_location(finding.locations[0])]
    related, total = finding.locations[1 : MAX_RELATED + 1], len(finding.locations)
    if related:
        result["relatedLocations"] = [
            {**_location(place), "id": number, "message": {"text": f"Also here: place {number + 1} of {total}"}}
            for number, place in enumerate(related, start=1)
        ]
    return result


def _notes(result: Synthesis, finding: Finding, cache: dict[str, dict[str, tuple[str, str]]]) -> tuple[str, str]:
    """The (explanation, fix) an agent wrote for this finding, from the first agent that wrote one."""
    for agent in finding.agents:
        local = finding.source_ids.get(agent)
        output = result.outputs.get(agent)
        if local is None or output is None:
            continue
        if agent not in cache:
            cache[agent] = issue_notes(output.text)
        why, fix = cache[agent].get(local, ("", ""))
        if why or fix:
            return why, fix
    return "", ""


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
    cache: dict[str, dict[str, tuple[str, str]]] = {}
    rules = []
    for identifier in sorted(grouped):
        group = sorted(grouped[identifier], key=lambda f: SEVERITY_ORDER[f.severity])
        first, cwes = group[0], cwes_of[identifier]
        why, fix = next((n for n in (_notes(result, f, cache) for f in group) if any(n)), ("", ""))
        rule: dict[str, Any] = {
            "id": identifier,
            "name": _slug(identifier).replace("-", "_"),
            "shortDescription": {"text": _MORE_PLACES.sub("", first.title)[:200]},
            "fullDescription": {"text": (why or first.title)[:1000]},
            "help": _help(identifier, first, cwes, why, fix),
            "properties": {"agent": first.agents[0]},
        }
        if cwes:
            rule["helpUri"] = cwe_url(cwes[0])
            rule["properties"]["tags"] = ["security", *(cwe_tag(c) for c in cwes)]
            rule["properties"]["security-severity"] = SECURITY_SEVERITY[first.severity]
            rule["relationships"] = [
                {
                    "target": {"id": c, "index": position[c], "toolComponent": {"name": CWE_TAXONOMY, "index": 0}},
                    "kinds": ["relevant"],
                }
                for c in cwes
            ]
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


def build_sarif(result: Synthesis) -> dict[str, Any]:
    """The SARIF log of a synthesis."""
    findings = list(result.findings)
    rules, taxa = _rules(result, findings)
    driver: dict[str, Any] = {
        "name": "fluxdrive",
        "version": __version__,
        "informationUri": INFORMATION_URI,
        "rules": rules,
    }
    run: dict[str, Any] = {"tool": {"driver": driver}}
    if taxa:
        driver["supportedTaxonomies"] = [{"name": CWE_TAXONOMY, "index": 0}]
        run["taxonomies"] = [_taxonomy(taxa)]
    run["results"] = [_result(f) for f in findings]
    run["properties"] = {"verdict": result.verdict, "validation": result.validation_line}
    return {"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [run]}


def render_sarif(result: Synthesis) -> str:
    """findings.sarif text."""
    return scrub_json(json.dumps(build_sarif(result), indent=2, ensure_ascii=False)) + "\n"
