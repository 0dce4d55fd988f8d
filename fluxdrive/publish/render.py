"""The Markdown fluxdrive posts: inline comment bodies, the review body, the summary comment.

Each body carries a hidden marker so a later run recognizes what it posted:
``<!-- fluxdrive:finding:<fingerprint> -->`` on an inline comment,
``<!-- fluxdrive:summary -->`` on the summary comment. Text from a review
(titles, explanations, fixes) is scrubbed (credentials masked, terminal
controls dropped), cannot close or forge a marker, and cannot ping anyone
(``@name`` is broken with a zero-width space).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from fluxdrive._masking import scrub
from fluxdrive.publish.report import PublishedFinding, RunReport

SUMMARY_MARKER = "<!-- fluxdrive:summary -->"
FINDING_MARKER = "<!-- fluxdrive:finding:{} -->"
RESOLVED_MARKER = "<!-- fluxdrive:resolved:{} -->"
FINDING_MARKER_RE = re.compile(r"<!-- fluxdrive:finding:([0-9a-f]{8,64}) -->")
RESOLVED_MARKER_RE = re.compile(r"<!-- fluxdrive:resolved:([0-9a-f]{8,64}) -->")
MAX_BODY = 60_000  # GitHub refuses comment bodies over 65,536 characters
MAX_ROWS = 100
SEVERITY_LABEL = {"P0": "🔴 P0", "P1": "🟠 P1", "P2": "🟡 P2", "P3": "🔵 P3"}
VERDICT_LABEL = {"safe": "✅ safe", "needs-changes": "⚠️ needs-changes", "risky": "⛔ risky", "error": "❌ error"}
_MENTION = re.compile(r"@(?=[A-Za-z0-9])")


def text(value: str, limit: int = 2000) -> str:
    """Review text made safe for a comment: scrubbed, no HTML comments, no mentions, bounded."""
    value = scrub(value).replace("<!--", "&lt;!--").replace("-->", "--&gt;")
    value = _MENTION.sub("@\u200b", value)
    return value if len(value) <= limit else value[: limit - 1] + "…"


def cell(value: str, limit: int = 300) -> str:
    """:func:`text` for one table cell: one line, pipes escaped."""
    return " ".join(text(value, limit).split()).replace("|", "\\|")


def code(value: str) -> str:
    """An inline code span that survives backticks in ``value``."""
    value = " ".join(text(value, 300).split())
    fence = "``" if "`" in value else "`"
    return f"{fence} {value} {fence}" if fence == "``" else f"`{value}`"


def counts_line(report: RunReport) -> str:
    """``3 P0 · 1 P1`` (or ``no findings``)."""
    parts = [f"{n} {sev}" for sev, n in sorted(report.counts.items()) if n]
    return " · ".join(parts) if parts else "no findings"


def finding_comment(finding: PublishedFinding, *, extra_places: Iterable[str] = ()) -> str:
    """The body of one inline comment."""
    lines = [f"**{SEVERITY_LABEL.get(finding.severity, finding.severity)} · {text(finding.title, 500)}**", ""]
    if finding.why:
        lines += [text(finding.why), ""]
    if finding.fix:
        lines += [f"**Fix:** {text(finding.fix)}", ""]
    others = list(extra_places)
    if others:
        shown = ", ".join(code(p) for p in others[:10])
        more = f" and {len(others) - 10} more" if len(others) > 10 else ""
        lines += [f"Also at: {shown}{more}", ""]
    meta = [f"{finding.id}", f"agents: {', '.join(text(a, 80) for a in finding.agents)}"]
    if finding.convergence:
        meta.append(f"convergence {finding.convergence}")
    if finding.rules:
        meta.append(f"rule {code(finding.rules[0])}")
    if finding.cwe:
        meta.append(", ".join(text(c, 40) for c in finding.cwe))
    lines += [f"<sub>fluxdrive · {' · '.join(meta)}</sub>", FINDING_MARKER.format(finding.fingerprint)]
    return "\n".join(lines)


def review_body(report: RunReport, inline: int, sha: str) -> str:
    """The short body of the pull request review."""
    return (
        f"**fluxdrive** · verdict **{VERDICT_LABEL.get(report.verdict, report.verdict)}** · {counts_line(report)}"
        f" · {inline} new inline comment(s) on `{sha[:12]}`. The summary comment has the full picture."
    )


def _finding_rows(findings: list[PublishedFinding]) -> list[str]:
    rows = ["| Severity | Finding | Location | Agents |", "|---|---|---|---|"]
    for finding in findings[:MAX_ROWS]:
        place = code(str(finding.place)) if finding.place else "—"
        rows.append(
            f"| {SEVERITY_LABEL.get(finding.severity, finding.severity)} | {cell(finding.title)} | {place} "
            f"| {cell(', '.join(finding.agents))} |"
        )
    if len(findings) > MAX_ROWS:
        rows.append(f"| | … and {len(findings) - MAX_ROWS} more (see findings.json) | | |")
    return rows


def summary_comment(
    report: RunReport,
    *,
    sha: str,
    inline: list[PublishedFinding],
    outside: list[PublishedFinding],
    resolved: int = 0,
    summary_url: str | None = None,
) -> str:
    """The summary comment: verdict, counts, what is inline, the findings outside the diff, the agents."""
    verdict = VERDICT_LABEL.get(report.verdict, report.verdict)
    lines = [
        SUMMARY_MARKER,
        f"## fluxdrive review: {verdict}",
        "",
        f"**Verdict:** {verdict} · **Findings:** {counts_line(report)} · **Commit:** `{sha[:12]}`",
    ]
    if not report.complete:
        reasons = "; ".join(text(r, 200) for r in report.incomplete_reasons[:5]) or "an agent did not finish"
        lines.append(f"**Incomplete:** {reasons}")
    lines.append("")
    said = [f"{len(inline)} finding(s) on changed lines are commented inline"]
    if outside:
        said.append(f"{len(outside)} outside the diff are listed below")
    if resolved:
        said.append(f"{resolved} fixed since the last run (threads resolved)")
    if report.improvements:
        said.append(f"{report.improvements} improvement suggestion(s) are in the full report")
    lines += ["; ".join(said) + ".", ""]
    if outside:
        lines += ["### Findings outside the diff", "", *_finding_rows(outside), ""]
    if report.agents:
        lines += ["<details><summary>Agents</summary>", "", "| Agent | Outcome |", "|---|---|"]
        lines += [
            f"| {cell(a.name, 80)} | {cell(f'{a.status}: {a.reason}' if a.reason else a.status)} |"
            for a in report.agents
        ]
        lines += ["", "</details>", ""]
    if summary_url:
        lines.append(f"[Full report]({text(summary_url, 500).replace(')', '%29')})")
    lines.append("<sub>Posted by fluxdrive; this comment is updated on every run.</sub>")
    body = "\n".join(lines)
    return body if len(body) <= MAX_BODY else body[: MAX_BODY - 80] + "\n\n… (truncated; see findings.json)"


def check_summary(report: RunReport) -> str:
    """The check run's ``output.summary``: verdict, counts, every finding, the agents."""
    verdict = VERDICT_LABEL.get(report.verdict, report.verdict)
    lines = [f"**Verdict:** {verdict} · **Findings:** {counts_line(report)}", ""]
    if not report.complete:
        lines += ["**Incomplete:** " + ("; ".join(text(r, 200) for r in report.incomplete_reasons[:5]) or "yes"), ""]
    if report.findings:
        lines += [*_finding_rows(report.findings), ""]
    if report.agents:
        lines += ["| Agent | Outcome |", "|---|---|"]
        lines += [
            f"| {cell(a.name, 80)} | {cell(f'{a.status}: {a.reason}' if a.reason else a.status)} |"
            for a in report.agents
        ]
    body = "\n".join(lines)
    return body if len(body) <= MAX_BODY else body[: MAX_BODY - 40] + "\n\n… (truncated)"
