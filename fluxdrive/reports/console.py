"""The short report a caller reads on stdout (PROTOCOL.md 5.8 and 11).

Verdict and completion first, then findings by severity with convergence
(``N/M``, one M for the whole report: :mod:`fluxdrive.reports.tally`) and a
warning on single-agent P0/P1, the heat map, conflicts and the timeline in
one line each, and the paths of every output. It is built as plain text to a
character budget (4,000 by default: a 7-agent review must cost a calling
assistant well under 1,000 tokens); what does not fit is counted, never cut
mid-line. ``verbose`` lists everything.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path

from fluxdrive.reports.tally import ratio, reporters
from fluxdrive.synthesis import Finding, Synthesis

TITLE_WIDTH = 96  # without a terminal to fit (a pipe, a file, an MCP answer)
MIN_TITLE = 30
# green, yellow, red
VERDICT_COLOUR = {"SAFE": "32", "NEEDS-CHANGES": "33", "RISKY": "31", "INCOMPLETE": "31", "ERROR": "31"}


def _finding_line(finding: Finding, width: int | None = None, of: int = 0) -> str:
    """One finding on one line; ``width`` (the terminal's columns) cuts the title so the line never wraps.

    ``of``: the report's one convergence denominator (:func:`fluxdrive.reports.tally.reporters`).
    """
    warning = " [single agent]" if finding.convergence <= 1 and finding.severity in ("P0", "P1") else ""
    warning += " [ungrounded]" if finding.not_grounded else ""
    warning += " [not confirmed]" if finding.not_confirmed else ""
    warning += _measured_mark(finding)
    where = f" {finding.location}" if finding.location else ""
    prefix = f"  {finding.id:<6} {ratio(finding, of):>5}{warning} "
    room = TITLE_WIDTH if width is None else max(MIN_TITLE, width - len(prefix) - len(where))
    title = finding.title if len(finding.title) <= room else finding.title[: room - 1] + "…"
    return f"{prefix}{title}{where}"


def _measured_mark(finding: Finding) -> str:
    """``[measured 18/20 right]`` when the confidence comes from judged findings (synthesis/measured.py), with
    ``demoted`` when a low measured precision lowered the severity."""
    measured = finding.measured
    if measured is None:
        return ""
    demoted = f", demoted from {measured.demoted_from}" if measured.demoted_from else ""
    return f" [measured {measured.right}/{measured.judged} right{demoted}]"


def reviewers_line(result: Synthesis) -> str:
    """How many reviewers reported, in plain words (the machine-readable form is ``validation_line``)."""
    total = len(result.outputs)
    failed, partial = len(result.agents_failed), len(result.agents_partial)
    loose = sum(1 for o in result.outputs.values() if o.status.value == "malformed" and not o.partial)
    done = total - failed - partial
    line = f"All {total} reviewers reported" if done == total else f"{done} of {total} reviewers reported"
    trouble = []
    if failed:
        trouble.append(f"{failed} failed")
    if partial:
        trouble.append(f"{partial} cut off at the timeout")
    if loose:
        trouble.append(f"{loose} report(s) read loosely (not in the expected format)")
    if trouble:
        line += ": " + ", ".join(trouble)
    ideas = len(result.improvements)
    if ideas:
        line += f"; {ideas} improvement idea(s) in summary.md"
    return line


def colour_verdict(text: str, verdict: str) -> str:
    """The first occurrence of the verdict word in bold colour (red risky, yellow needs-changes, green safe)."""
    word = verdict.upper()
    code = VERDICT_COLOUR.get(word)
    return text.replace(word, f"\x1b[1;{code}m{word}\x1b[0m", 1) if code else text


def _footer(result: Synthesis, files: list[Path]) -> list[str]:
    sections = Counter(f.section for f in result.findings)
    lines = []
    if sections:
        hot = ", ".join(
            f"{section} ({count})" for section, count in sorted(sections.items(), key=lambda i: (-i[1], i[0]))[:5]
        )
        lines.append(f"Heat map: {hot}")
    if result.conflicts:
        kinds = Counter(c.kind for c in result.conflicts)
        lines.append("Conflicts: " + ", ".join(f"{n} {k}" for k, n in sorted(kinds.items())) + " (see summary.md)")
    shared = _shared_line(result)
    if shared:
        lines.append(shared)
    if files:
        directory = files[0].parent
        lines.append(f"Files in {directory}: {', '.join(p.name for p in files)}")
    return lines


def _shared_line(result: Synthesis) -> str | None:
    """What the reviewers shared on the channel while working, counted in findings.

    Why findings, not events: the timeline has one event per (finding,
    reviewer) pair, so "12 finding(s); 15 taken up" read as more taken up
    than shared. Counts of zero are left out: they say nothing.
    """
    line = result.timeline
    if not line.entries:
        return None

    def findings(kind: str) -> int:
        return len({(e.blocking_agent, e.summary, e.location) for e in line.of_kind(kind)})

    parts = [f"Shared while working: {len(line.entries)} finding(s)"]
    taken, open_ = findings("adjustment"), findings("contradiction")
    if taken:
        parts.append(f"{taken} of them taken up by another reviewer")
    if open_:
        parts.append(f"{open_} disputed by another reviewer and left open")
    return "; ".join(parts)


def skipped_line(result: Synthesis) -> str:
    """``Not reviewed: 2 file(s) - big.py (2,100,000 bytes, over ...); ...`` (the full list is in summary.md)."""
    skipped = result.skipped_files
    shown = "; ".join(f"{f.path} ({f.reason})" for f in skipped[:3])
    more = f"; and {len(skipped) - 3} more (see summary.md)" if len(skipped) > 3 else ""
    return f"Not reviewed: {len(skipped)} file(s) - {shown}{more}"[:500]


def agent_lines(result: Synthesis, seconds: Mapping[str, float] | None = None) -> list[str]:
    """One compact line per agent: status, what it found, how long it took.

    The counts are of the review's final findings this agent reported (after
    merging duplicates and folding repeats), so they add up with the verdict
    line's totals; the agent's own report may list more lines.
    """
    lines = ["Agents:"]
    credited: dict[str, Counter[str]] = {}
    for finding in result.findings:
        for agent in finding.agents:
            credited.setdefault(agent, Counter())[finding.severity] += 1
    for name, output in sorted(result.outputs.items()):
        counts = credited.get(name, Counter())
        found = ", ".join(f"{counts[s]} {s}" for s in ("P0", "P1", "P2", "P3") if counts[s]) or "no findings"
        if output.failed:
            state, found = "failed", output.reason[:60]
        elif output.partial:
            state = "partial"
        else:
            state = output.status.value
        took = f"  {seconds[name]:.1f} s" if seconds and name in seconds else ""
        lines.append(f"  {name:<18} {state:<9} {found}{took}")
    return lines


def render_console(
    result: Synthesis,
    files: list[Path],
    *,
    budget: int = 4000,
    verbose: bool = False,
    agents: Sequence[str] = (),
    width: int | None = None,
) -> str:
    """The stdout report, at most ``budget`` characters unless ``verbose``.

    ``agents`` (for a review: :func:`agent_lines`) follow the verdict lines.
    On a terminal, ``width`` fits each finding to one line (and the CLI
    colours the verdict word with :func:`colour_verdict`, after scrubbing).
    """
    counts = result.counts()
    shown = ", ".join(f"{n} {s}" for s, n in counts.items() if n) or "no findings"
    of = reporters(result)
    head = [f"Verdict: {result.verdict.upper()} ({shown})", reviewers_line(result)]
    imported = of - len(result.agents_completed)
    if imported and result.findings:  # --import-sarif's tools count as reporters: say what M is made of
        head[1] += f"; N/{of} beside a finding counts these {of - imported} and {imported} imported tool(s)"
    if result.early_stop:
        head.append(f"Stage 2 not needed: {len(result.skipped_agents)} more reviewer(s) not launched (why: summary.md)")
    incomplete = result.incomplete
    if incomplete:
        if result.verdict != "incomplete":  # a risky or needs-changes verdict that did not cover everything
            head[0] += " - INCOMPLETE"
        head.append("Incomplete: " + "; ".join(incomplete)[:400])
    if result.skipped_files:
        head.append(skipped_line(result))
    head.extend(agents)
    footer = _footer(result, files)
    used = sum(len(line) + 1 for line in head + footer)
    body: list[str] = []
    omitted: Counter[str] = Counter()
    current = None
    for finding in result.findings:
        line = _finding_line(finding, width, of)
        header = f"{finding.severity}:" if finding.severity != current else None
        cost = len(line) + 1 + (len(header) + 1 if header else 0)
        reserve = 80  # room for the "not shown" line
        if not verbose and used + cost + reserve > budget:
            omitted[finding.severity] += 1
            continue
        if header:
            body.append(header)
            current = finding.severity
        body.append(line)
        used += cost
    if omitted:
        parts = ", ".join(f"{n} {s}" for s, n in sorted(omitted.items()))
        body.append(f"  ... and {parts} more (see summary.md or --verbose)")
    return "\n".join([*head, *body, *footer]) + "\n"
