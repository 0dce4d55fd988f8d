"""``summary.md``: the human-readable result, sections in PROTOCOL.md 5.7's order.

Verdict and metadata; key findings by severity and convergence; issues to
address as checkboxes; improvements; the section heat map; links to each
agent's report; conflicts; the findings timeline.
"""

from __future__ import annotations

from collections import Counter

from fluxdrive.reports.cautions import cautions
from fluxdrive.synthesis import Finding, Synthesis

KEY_FINDINGS = 10


def _cell(text: str) -> str:
    return " ".join(text.replace("|", "\\|").split())


def _where(finding: Finding) -> str:
    return f" — `{finding.location}`" if finding.location else ""


def _warning(finding: Finding) -> str:
    notes = cautions(finding)
    shown = f" ⚠ {', '.join(notes)}" if notes else ""
    marks = _ungrounded(finding) + _not_confirmed(finding) + _supporters(finding) + _reacted(finding)
    return shown + marks + _measured(finding)


def _ungrounded(finding: Finding) -> str:
    """The marker of a finding not grounded in the reviewed input, with why (synthesis/grounding.py)."""
    return f" **[ungrounded]** {_cell(finding.not_grounded)}" if finding.not_grounded else ""


def _reacted(finding: Finding) -> str:
    """What peers answered in the reaction round (synthesis/reactions.py): disputes with evidence, evidenced
    confirmations, and hearsay (shown, not counted)."""
    found = finding.reactions
    if found is None:
        return ""
    parts = []
    if found.disputed_by:
        lowered = f" (demoted from {found.demoted_from})" if found.demoted_from else ""
        parts.append(f" **[disputed]** by {_cell(', '.join(found.disputed_by))}{lowered}")
    if found.confirmed_by:
        parts.append(f" — confirmed with evidence by {_cell(', '.join(found.confirmed_by))}")
    if found.hearsay:
        parts.append(f" — hearsay (not counted): {_cell(', '.join(found.hearsay))}")
    return "".join(parts)


def _measured(finding: Finding) -> str:
    """Where the confidence comes from, when it was measured (synthesis/measured.py)."""
    return f" — {_cell(finding.measured.sentence)}" if finding.measured is not None else ""


def _not_confirmed(finding: Finding) -> str:
    """The marker of a finding the checker model rejected, with its reason (synthesis/validation.py)."""
    return f" **[not confirmed]** {_cell(finding.not_confirmed)}" if finding.not_confirmed else ""


def _supporters(finding: Finding) -> str:
    """Who supports it, when analyzer evidence was given ("supported by fd-safety:py-sql-injection + openai:gpt-4o"),
    and the first refutation of one no model supports."""
    support = finding.support
    if support is None:
        return ""
    text = f" — supported by {_cell(support.named()) or 'nobody'}"
    if support.refuted and not support.models:
        model, reason = support.refuted[0]
        text += f" **[refuted by {_cell(model)}]** {_cell(reason)}"
    return text


def _section(title: str, rows: list[str], empty: str) -> list[str]:
    """A ``## title`` section: its rows, or the one line that says it has none."""
    return ["", f"## {title}", "", *(rows or [empty])]


def _header(result: Synthesis) -> list[str]:
    counts = result.counts()
    shown = ", ".join(f"{n} {s}" for s, n in counts.items() if n) or "no findings"
    lines = [
        f"# fluxdrive review: {result.input}",
        "",
        f"**Verdict: {result.verdict}** ({shown})"
        + (" — **incomplete**" if result.incomplete and result.verdict != "incomplete" else ""),
        "",
        f"- Reviewed: {result.reviewed} ({result.input_type})",
        f"- Agents: {len(result.agents_launched)} launched, {len(result.agents_completed)} completed"
        f" — {result.validation_line}",
    ]
    if result.early_stop:
        skipped = len(result.skipped_agents)
        lines.append(f"- Early stop: Stage 2 not launched ({skipped} agents skipped); convergence counts Stage 1 only")
    if result.content_routing_active:
        lines.append(
            "- Content routing was active: convergence counts only agents that received each finding's content"
        )
    lines += [f"- Incomplete: {reason}" for reason in result.incomplete]
    lines += [f"- Note: {note}" for note in [*result.notes, *result.info]]
    if result.skipped_files:
        lines += ["", f"## Not Reviewed ({len(result.skipped_files)} file(s))", ""]
        for left in result.skipped_files:
            who = f" — skipped by {', '.join(left.agents)}" if left.agents else " — left out before dispatch"
            lines.append(f"- `{left.path}`: {left.reason}{who}")
    return lines


def _key_findings(result: Synthesis) -> list[str]:
    key = [f for f in result.findings if f.severity in ("P0", "P1")][:KEY_FINDINGS] or result.findings[:3]
    rows = [
        f"- **{finding.id}** {finding.title}{_where(finding)} ({finding.convergence_label} agents: "
        f"{', '.join(finding.agents)}; confidence {finding.confidence}){_warning(finding)}"
        for finding in key
    ]
    return _section("Key Findings", rows, "No findings.")


def _issues(result: Synthesis) -> list[str]:
    rows = []
    for finding in result.findings:
        extra = []
        if finding.severity_conflict:
            extra.append("severity disputed")
        if finding.co_located_with:
            extra.append(f"same place as {', '.join(finding.co_located_with)}")
        if finding.cross_references:
            extra.append(f"see also {', '.join(finding.cross_references)}")
        suffix = f" — {'; '.join(extra)}" if extra else ""
        rows.append(
            f"- [ ] **{finding.id}** ({finding.severity}, {finding.convergence_label}) {finding.title}{_where(finding)}"
            f" — {', '.join(finding.agents)}{suffix}{_ungrounded(finding)}{_not_confirmed(finding)}"
            f"{_reacted(finding)}"
            f"{_supporters(finding)}"
        )
    return _section("Issues to Address", rows, "Nothing to address.")


def _improvements(result: Synthesis) -> list[str]:
    rows = [f"- **{i.id}** {i.title}{_where(i)} — {', '.join(i.agents)}" for i in result.improvements]
    return _section("Improvements", rows, "None suggested.")


def _heat_map(result: Synthesis) -> list[str]:
    issues = Counter(f.section for f in result.findings)
    improvements = Counter(f.section for f in result.improvements)
    agents: dict[str, set[str]] = {}
    for finding in [*result.findings, *result.improvements]:
        agents.setdefault(finding.section, set()).update(finding.agents)
    rows = [
        f"| {_cell(section) or '(none)'} | {issues[section]} | {improvements[section]} | {len(agents[section])} |"
        for section in sorted(agents, key=lambda s: (-issues[s], -improvements[s], s))
    ]
    if rows:
        rows[:0] = ["| Section | Issues | Improvements | Agents Reporting |", "|---|---|---|---|"]
    return _section("Section Heat Map", rows, "No findings.")


def _agent_reports(result: Synthesis) -> list[str]:
    lines = ["", "## Agent Reports", ""]
    for name, output in result.outputs.items():
        link = f"[{output.path.name}]({output.path.name})" if output.path is not None else "(no report)"
        state = output.status.value + (", partial" if output.partial else "")
        lines.append(f"- {name}: {link} — {state}: {output.reason}")
    return lines


def _conflicts(result: Synthesis) -> list[str]:
    return _section("Conflicts", [f"- ({conflict.kind}) {conflict.text}" for conflict in result.conflicts], "None.")


def _timeline(result: Synthesis) -> list[str]:
    line = result.timeline
    lines = ["", "## Findings Timeline", ""]
    if line.entries:
        lines += ["| Time | Agent | Severity | Category | Summary |", "|---|---|---|---|---|"]
        lines += [
            f"| {e.timestamp} | {e.agent} | {e.severity} | {e.category} | {_cell(e.summary)} |" for e in line.entries
        ]
    else:
        lines.append("No findings were shared on the peer channel.")
    adjustments = line.of_kind("adjustment")
    contradictions = line.of_kind("contradiction")
    disagreements = line.of_kind("disagreement")
    lines += [
        "",
        f"**Cross-agent adjustments:** {len(adjustments)} acknowledgement(s) of earlier blocking findings"
        + (f" by {len({e.agent for e in adjustments})} agent(s)." if adjustments else "."),
        f"**Unresolved contradictions:** {len(contradictions) or 'None'}",
    ]
    if disagreements:
        lines.append(f"**Acknowledged disagreements:** {len(disagreements)}")
    return lines


def render_summary(result: Synthesis) -> str:
    """summary.md text."""
    sections = [
        _header(result),
        _key_findings(result),
        _issues(result),
        _improvements(result),
        _heat_map(result),
        _agent_reports(result),
        _conflicts(result),
        _timeline(result),
    ]
    return "\n".join(line for section in sections for line in section) + "\n"
