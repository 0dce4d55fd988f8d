"""A whole agent report: the index first, then prose for humans.

PROTOCOL.md section 6: after the index come a Summary (3-5 lines), Issues
Found (numbered: severity, evidence, explanation) and Improvements. Runtimes
build a :class:`Report` and render it, so every report has the same shape
whether an analyzer or a model produced it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from fluxdrive.contracts.findings_index import IndexEntry, render_index


@dataclass(frozen=True, slots=True)
class IssueDetail:
    """The prose behind one index entry, keyed by the entry's id."""

    evidence: str = ""
    explanation: str = ""
    fix: str = ""


@dataclass(frozen=True, slots=True)
class Report:
    """Everything an agent says about its input."""

    entries: tuple[IndexEntry, ...]
    summary: str = ""
    details: dict[str, IssueDetail] = field(default_factory=dict)
    acknowledgements: tuple[str, ...] = ()


def _indent(text: str, prefix: str = "   ") -> list[str]:
    return [f"{prefix}{line}" if line else "" for line in text.strip().splitlines()]


def render_report(report: Report) -> str:
    """Render the index and the prose sections in the contract's order."""
    findings = [e for e in report.entries if not e.improvement]
    improvements = [e for e in report.entries if e.improvement]
    out = [render_index(report.entries).rstrip("\n"), "", "### Summary"]
    out.append(report.summary.strip() or "No issues found in the reviewed content.")
    out += ["", "### Issues Found"]
    if not findings:
        out.append("None.")
    for number, entry in enumerate(findings, start=1):
        where = f" ({entry.location})" if entry.location else ""
        out.append(f"{number}. {entry.id} {entry.severity}: {entry.title}{where}")
        detail = report.details.get(entry.id, IssueDetail())
        if detail.evidence:
            out.append("   Evidence:")
            out += _indent(detail.evidence, "       ")
        if detail.explanation:
            out += _indent(detail.explanation)
        if detail.fix:
            out.append(f"   Fix: {detail.fix.strip()}")
    out += ["", "### Improvements"]
    if not improvements:
        out.append("None.")
    for entry in improvements:
        detail = report.details.get(entry.id, IssueDetail())
        suffix = f" - {detail.fix.strip()}" if detail.fix else ""
        out.append(f"- {entry.id}: {entry.title}{suffix}")
    if report.acknowledgements:
        out += ["", "### Peer Findings Acknowledged"]
        out += [f"- {line}" for line in report.acknowledgements]
    return "\n".join(out) + "\n"
