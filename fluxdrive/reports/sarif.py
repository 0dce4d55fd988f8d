"""``findings.sarif``: SARIF 2.1.0 for code-scanning UIs (GitHub, GitLab, IDEs).

One run, tool ``fluxdrive`` with one rule per distinct rule id. A finding's
rule id is the analyzer rule an agent reported (``ruff:S608``) when there is
one, else ``fluxdrive/<agent>/<section>``. Levels: P0/P1 -> error, P2 ->
warning, P3 -> note. ``partialFingerprints`` hash the file and the normalized
title - not the line - so an alert survives unrelated edits above it.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

from fluxdrive import __version__
from fluxdrive._masking import scrub_json
from fluxdrive.synthesis import Finding, Synthesis
from fluxdrive.synthesis.dedup import normalize_title

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
LEVELS = {"P0": "error", "P1": "error", "P2": "warning", "P3": "note"}
INFORMATION_URI = "https://github.com/fluxdrive/fluxdrive"


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
    result: dict[str, Any] = {
        "ruleId": rule_id(finding),
        "level": LEVELS[finding.severity],
        "message": {"text": message},
        "partialFingerprints": {"fluxdriveFinding/v1": fingerprint(finding)},
        "properties": {
            "fluxdriveId": finding.id,
            "severity": finding.severity,
            "agents": finding.agents,
            "convergence": finding.convergence_label,
            "confidence": finding.confidence,
        },
    }
    if finding.locations:
        result["locations"] = [_location(loc) for loc in finding.locations]
    return result


def _rules(findings: list[Finding]) -> list[dict[str, Any]]:
    seen: dict[str, dict[str, Any]] = {}
    for finding in findings:
        identifier = rule_id(finding)
        if identifier not in seen:
            seen[identifier] = {
                "id": identifier,
                "name": _slug(identifier).replace("-", "_"),
                "shortDescription": {"text": finding.title[:200]},
                "properties": {"agent": finding.agents[0]},
            }
    return [seen[key] for key in sorted(seen)]


def build_sarif(result: Synthesis) -> dict[str, Any]:
    """The SARIF log of a synthesis."""
    findings = list(result.findings)
    return {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "fluxdrive",
                        "version": __version__,
                        "informationUri": INFORMATION_URI,
                        "rules": _rules(findings),
                    }
                },
                "results": [_result(f) for f in findings],
                "properties": {"verdict": result.verdict, "validation": result.validation_line},
            }
        ],
    }


def render_sarif(result: Synthesis) -> str:
    """findings.sarif text."""
    return scrub_json(json.dumps(build_sarif(result), indent=2, ensure_ascii=False)) + "\n"
