"""``summary.html``: the review as one self-contained page for people.

One file, nothing to fetch: the style sheet, the charts (inline SVG) and a
small script are all inline, and a Content-Security-Policy forbids every
request (and every script but that one, by its hash). The page shows the
verdict with its counts, the reviewers and their outcomes, the findings by
severity (each with its places, agents, convergence, the agent's
explanation and fix, and a few lines of the code around it), a heat map of
files, the peer-findings timeline, improvements and conflicts.

Without JavaScript everything is shown and the filter controls stay hidden;
with it, checkboxes hide and show findings by severity and by agent.

Every text comes from agents or reviewed files and is treated as hostile:
each piece is scrubbed (credentials masked, terminal controls stripped) and
HTML-escaped before it is placed, so the page needs no scrubbing afterwards
(a masked value would run on into the markup); code excerpts are read only
inside the project root (see :mod:`fluxdrive.reports.html_excerpt`).
"""

from __future__ import annotations

import stat
from collections import Counter
from collections.abc import Mapping
from pathlib import Path

from fluxdrive.contracts.run_manifest import RUN_FILE, RunManifest, load_manifest
from fluxdrive.core.confine import is_inside
from fluxdrive.core.project import find_project_root
from fluxdrive.core.version import __version__
from fluxdrive.reports.cautions import cautions
from fluxdrive.reports.html_assets import CONTENT_SECURITY_POLICY, SCRIPT, SEVERITY_NAMES, STYLE
from fluxdrive.reports.html_chart import SEVERITIES, clock, heat_map, text, timeline_svg
from fluxdrive.reports.html_excerpt import Excerpt, ExcerptReader
from fluxdrive.reports.notes import AgentNotes
from fluxdrive.synthesis import Finding, Synthesis

GENERATOR_MARK = '<meta name="generator" content="fluxdrive'  # how write.py knows the file is ours
MAX_EXCERPTS = 400  # findings shown with their code (the rest with their places only)
MAX_PLACES = 6


# --- what the page reads besides the synthesis --------------------------------------------------------------


def project_root(result: Synthesis) -> Path | None:
    """Where excerpts may be read: the reviewed project when the review itself synthesized (its output
    directory may lie elsewhere: ``--output-dir``, ``fleet --output-root``), else the output directory's
    project root (run.json read from disk may only narrow it)."""
    if result.project_root is not None and result.project_root.is_dir():
        return result.project_root.resolve()
    try:
        root = find_project_root(result.output_dir)
    except OSError:
        return None
    manifest = _manifest(result, root)
    claimed = manifest.input.project_root if manifest is not None and manifest.input is not None else ""
    if claimed and is_inside(Path(claimed), root) and Path(claimed).is_dir():
        return Path(claimed).resolve()
    return root


def _manifest(result: Synthesis, root: Path) -> RunManifest | None:
    """The run record synthesis was built from (a review's, in memory), else run.json beside the reports."""
    if result.manifest is not None:
        return result.manifest
    run_file = result.output_dir / RUN_FILE
    try:
        if not (is_inside(run_file, root) and stat.S_ISREG(run_file.stat().st_mode)):
            return None
        return load_manifest(result.output_dir)
    except (OSError, ValueError):
        return None


def agent_seconds(result: Synthesis) -> dict[str, float]:
    """Each agent's wall time from run.json, where recorded."""
    try:
        manifest = _manifest(result, find_project_root(result.output_dir))
    except OSError:
        return {}
    if manifest is None:
        return {}
    return {name: record.usage.wall_s for name, record in manifest.agents.items() if record.usage.wall_s > 0}


# --- the sections -------------------------------------------------------------------------------------------


def _counts_line(result: Synthesis) -> str:
    shown = ", ".join(f"{n} {s}" for s, n in result.counts().items() if n)
    return shown or "no findings"


def _head(result: Synthesis) -> str:
    title = f"fluxdrive review: {result.input} — {result.verdict.upper()}"
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        f'{GENERATOR_MARK} {text(__version__)}">'
        f'<meta http-equiv="Content-Security-Policy" content="{CONTENT_SECURITY_POLICY}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<meta name="referrer" content="no-referrer">'
        f"<title>{text(title)}</title><style>{STYLE}</style></head>\n<body><main>\n"
    )


def _masthead(result: Synthesis) -> str:
    when = [f"reviewed {text(result.reviewed)}"] if result.reviewed else []
    when += [f"{text(result.input_type)} input", f"synthesized {text(result.synthesis_timestamp)}"]
    return (
        '<header class="top"><div><div class="brand">fluxdrive review</div>'
        f'<h1 id="input">{text(result.input)}</h1></div>'
        f'<div class="meta">{" · ".join(when)}</div></header>\n'
    )


def _callouts(result: Synthesis) -> str:
    out = []
    if result.incomplete:
        items = "".join(f"<li>{text(r)}</li>" for r in result.incomplete)
        out.append(
            f'<div class="callout bad"><b>Incomplete:</b> the verdict covers less than the input.<ul>{items}</ul></div>'
        )
    notes = []
    if result.early_stop:
        notes.append(
            f"Early stop: Stage 2 not launched ({len(result.skipped_agents)} agent(s) skipped); "
            "convergence counts Stage 1 only"
        )
    if result.content_routing_active:
        notes.append("Content routing was active: convergence counts only agents that received each finding's content")
    notes += [*result.notes, *result.info]
    if notes:
        out.append(f'<div class="callout"><b>Notes</b><ul>{"".join(f"<li>{text(n)}</li>" for n in notes)}</ul></div>')
    if result.skipped_files:
        everyone = set(result.agents_launched)
        items = "".join(
            f"<li><code>{text(s.path)}</code>: {text(s.reason)}" + _skipped_by(s.agents, everyone) + "</li>"
            for s in result.skipped_files
        )
        out.append(
            f'<div class="callout"><b>Not reviewed ({len(result.skipped_files)} file(s))</b><ul>{items}</ul></div>'
        )
    return "".join(out)


def _skipped_by(agents: list[str], everyone: set[str]) -> str:
    """Who skipped a file, said once: every reviewer (a PNG nobody reads) is not seven names on every row."""
    if not agents:
        return " — left out before dispatch"
    if len(agents) > 1 and set(agents) >= everyone:
        return f" — skipped by every reviewer ({len(agents)})"
    return f" — skipped by {text(', '.join(agents))}"


def _verdict(result: Synthesis) -> str:
    counts = result.counts()
    boxes = "".join(
        f'<div class="count sev-{s}{"" if counts[s] else " zero"}"><b>{counts[s]}</b>'
        f"<span>{s} {SEVERITY_NAMES[s]}</span></div>"
        for s in SEVERITIES
    )
    done = len(result.agents_completed)
    total = len(result.outputs)
    ideas = f" · {len(result.improvements)} improvement idea(s)" if result.improvements else ""
    verdict = result.verdict.lower()
    incomplete = " — incomplete" if result.incomplete and verdict != "incomplete" else ""
    return (
        f'<section class="card verdict v-{text(verdict)}" id="verdict" aria-label="Verdict">'
        f'<div><div class="word" id="verdict-word">{text(verdict.upper())}{incomplete}</div>'
        f'<div class="sub">{len(result.findings)} finding(s): {text(_counts_line(result))}{ideas}</div>'
        f'<div class="sub">{done} of {total} reviewers completed · {text(result.validation_line)}</div></div>'
        f'<div class="counts">{boxes}</div></section>\n{_callouts(result)}'
    )


def _reviewers(result: Synthesis, seconds: Mapping[str, float]) -> str:
    credited: dict[str, Counter[str]] = {}
    ideas: Counter[str] = Counter()
    for finding in result.findings:
        for agent in finding.agents:
            credited.setdefault(agent, Counter())[finding.severity] += 1
    for improvement in result.improvements:
        ideas.update(improvement.agents)
    rows = []
    for name, output in sorted(result.outputs.items()):
        counts = credited.get(name, Counter())
        state = "failed" if output.failed else "partial" if output.partial else output.status.value
        why = f'<div class="small">{text(output.reason[:160])}</div>' if state != "valid" and output.reason else ""
        model = output.provenance.model_id
        model_note = f'<div class="small">{text(model)}</div>' if model and model != "unknown" else ""
        cells = "".join(f'<td class="num{"" if counts[s] else " zero"}">{counts[s]}</td>' for s in SEVERITIES)
        took = f"{seconds[name]:.1f} s" if name in seconds else "—"
        rows.append(
            f'<tr class="agent-row"><td><b>{text(name)}</b>{model_note}</td>'
            f'<td><span class="status"><span class="dot {state}"></span>{text(state)}</span>{why}</td>'
            f'{cells}<td class="num">{ideas[name]}</td><td class="num">{took}</td></tr>'
        )
    head = "".join(f'<th class="num">{s}</th>' for s in SEVERITIES)
    return (
        '<section class="card" id="reviewers"><h2>Reviewers</h2>'
        f'<table><thead><tr><th>Agent</th><th>Status</th>{head}<th class="num">Ideas</th>'
        f'<th class="num">Time</th></tr></thead><tbody>{"".join(rows)}</tbody></table>'
        '<p class="small">Counts are of the final, merged findings each agent reported.</p></section>\n'
    )


def _timeline(result: Synthesis) -> str:
    line = result.timeline
    head = '<section class="card chart" id="timeline"><h2>Peer findings timeline</h2>'
    if not line.entries:
        return f'{head}<p class="meta">No findings were shared on the peer channel.</p></section>\n'
    legend = "".join(f'<span class="sev-{s}">{s}</span>' for s in SEVERITIES)
    adjustments, contradictions = line.of_kind("adjustment"), line.of_kind("contradiction")
    disagreements = line.of_kind("disagreement")
    facts = (
        f"{len(line.entries)} finding(s) shared while the agents worked · {len(adjustments)} acknowledgement(s) "
        f"by other agents · {len(contradictions)} unresolved contradiction(s)"
        + (f" · {len(disagreements)} acknowledged disagreement(s)" if disagreements else "")
    )
    rows = "".join(
        f'<tr><td class="nowrap mono" title="{text(e.timestamp)}">{text(clock(e))}</td>'
        f'<td class="nowrap">{text(e.agent)}</td><td>{text(e.severity)}</td>'
        f"<td>{text(e.category)}</td><td>{text(e.summary)}</td></tr>"
        for e in line.entries
    )
    return (
        f'{head}<p class="meta">{facts}</p>{timeline_svg(line.entries, result.findings)}'
        f'<div class="legend">{legend}<span class="hollow">notable (ring) · blocking (filled)</span></div>'
        f"<details open><summary>Shared findings ({len(line.entries)})</summary><table><thead><tr><th>Time</th>"
        f"<th>Agent</th><th>Channel</th><th>Category</th><th>Summary</th></tr></thead><tbody>{rows}</tbody>"
        "</table></details></section>\n"
    )


def _filters(result: Synthesis, numbers: Mapping[str, str]) -> str:
    counts = result.counts()
    severity = "".join(
        f'<label><input type="checkbox" name="severity" value="{s}" checked> {s} ({counts[s]})</label>'
        for s in SEVERITIES
        if counts[s]
    )
    per_agent = Counter(a for f in result.findings for a in f.agents)
    agents = "".join(
        f'<label><input type="checkbox" name="agent" value="{numbers[a]}" checked> {text(a)} ({per_agent[a]})</label>'
        for a in sorted(per_agent)
    )
    return (
        '<div class="filters" id="filters" hidden>'
        f"<fieldset><legend>Severity</legend>{severity}</fieldset>"
        f"<fieldset><legend>Agent</legend>{agents}</fieldset>"
        '<button type="button" id="show-all">Show all</button><span id="shown"></span></div>'
        '<noscript><p class="small">Filters need JavaScript: every finding is shown below.</p></noscript>'
    )


def _notes(notes: AgentNotes, finding: Finding) -> tuple[str, str]:
    """The (explanation, fix) the first agent that wrote one gave for this finding (as SARIF's help does).

    The member whose wording the finding shows comes first: merged duplicates
    of one agent keep only one of its ids in ``source_ids``.
    """
    chosen = [(m.agent, m.local_id) for m in finding.members if m.title == finding.title]
    return notes.first([*chosen, *finding.source_ids.items()])


def _excerpt(excerpt: Excerpt) -> str:
    last = excerpt.first + len(excerpt.lines) - 1
    rows = "".join(
        f'<span class="row{" hit" if n == excerpt.line else ""}"><span class="ln">{n}</span>{text(line)}</span>'
        for n, line in enumerate(excerpt.lines, start=excerpt.first)
    )
    return (
        f'<div class="excerpt-name">{text(excerpt.path)}, lines {excerpt.first}–{last}</div>'
        f'<pre class="excerpt"><code>{rows}</code></pre>'
    )


_CHIP_WORDING = {"partial": "partial report", "from prose": "read from prose"}


def _chips(finding: Finding) -> str:
    chips = cautions(finding, _CHIP_WORDING)
    if finding.severity_conflict:
        chips.append("severity disputed: " + ", ".join(f"{a} {s}" for a, s in finding.severity_conflict.items()))
    return "".join(f'<span class="chip">{text(c)}</span>' for c in chips)


def _meta(finding: Finding) -> str:
    parts = []
    if finding.locations:
        shown = " ".join(f"<code>{text(p)}</code>" for p in finding.locations[:MAX_PLACES])
        more = len(finding.locations) - MAX_PLACES
        parts.append(f"<span>at {shown}{f' and {more} more' if more > 0 else ''}</span>")
    elif finding.section:
        parts.append(f"<span>in <b>{text(finding.section)}</b></span>")
    parts.append(f'<span>by <b class="agents">{text(", ".join(finding.agents))}</b></span>')
    parts.append(
        f"<span>convergence <b>{text(finding.convergence_label)}</b> agents · confidence {text(finding.confidence)}"
        "</span>"
    )
    tags = [*finding.cwe, *(f"rule {r}" for r in finding.rules)]
    if tags:
        parts.append(f"<span>{text(' · '.join(tags))}</span>")
    related = [
        *(f"same place as {i}" for i in finding.co_located_with),
        *(f"see {i}" for i in finding.cross_references),
    ]
    if related:
        parts.append(f"<span>{text('; '.join(related))}</span>")
    if finding.discovered_by:
        parts.append(f"<span>first shared by {text(finding.discovered_by)}</span>")
    return f'<div class="f-meta">{"".join(parts)}{_chips(finding)}</div>'


def _finding(finding: Finding, why: str, fix: str, excerpt: Excerpt | None, numbers: Mapping[str, str]) -> str:
    body = []
    if why:
        body.append(f"<p>{text(why)}</p>")
    if fix:
        body.append(f'<p><span class="label">Fix:</span> {text(fix)}</p>')
    if finding.recommendations:
        items = "".join(f"<li><b>{text(a)}</b>: {text(t)}</li>" for a, t in finding.recommendations.items())
        body.append(f'<p class="label">The agents suggest different fixes:</p><ul class="plain">{items}</ul>')
    if len(finding.descriptions) > 1:
        items = "".join(f"<li><b>{text(a)}</b>: {text(t)}</li>" for a, t in finding.descriptions.items())
        body.append(f'<details><summary>As each agent reported it</summary><ul class="plain">{items}</ul></details>')
    if excerpt is not None:
        body.append(_excerpt(excerpt))
    agents = " ".join(numbers[a] for a in finding.agents)
    return (
        f'<article class="finding sev-{finding.severity}" id="{text(finding.id)}" data-sev="{finding.severity}" '
        f'data-agents="{agents}"><div class="f-head"><span class="badge">{text(finding.id)}</span>'
        f'<div class="f-title">{text(finding.title)}</div></div>{_meta(finding)}'
        f'<div class="f-body">{"".join(body)}</div></article>\n'
    )


def _findings(result: Synthesis, numbers: Mapping[str, str]) -> str:
    head = '<section class="card" id="findings"><h2>Findings</h2>'
    if not result.findings:
        return f'{head}<p class="meta">No findings.</p></section>\n'
    reader = ExcerptReader(project_root(result))
    notes = AgentNotes(result)
    groups = []
    excerpts = 0
    for severity in SEVERITIES:
        members = [f for f in result.findings if f.severity == severity]
        if not members:
            continue
        items = []
        for finding in members:
            why, fix = _notes(notes, finding)
            excerpt = reader.excerpt(finding.location) if excerpts < MAX_EXCERPTS else None
            excerpts += excerpt is not None
            items.append(_finding(finding, why, fix, excerpt, numbers))
        groups.append(
            [
                f'<section class="group sev-{severity}" data-group="{severity}"><div class="group-head">'
                f"<h2>{severity} · {SEVERITY_NAMES[severity]}</h2>"
                f'<span class="what">{len(members)} finding(s)</span></div>',
                *items,
                "</section>\n",
            ]
        )
    return f"{head}{_filters(result, numbers)}{''.join(''.join(g) for g in groups)}</section>\n"


def _improvements(result: Synthesis) -> str:
    if not result.improvements:
        return ""
    items = "".join(
        f"<li><b>{text(i.id)}</b> {text(i.title)}"
        + (f" — <code>{text(i.location)}</code>" if i.location else "")
        + f' <span class="small">({text(", ".join(i.agents))})</span></li>'
        for i in result.improvements
    )
    return f'<section class="card" id="improvements"><h2>Improvements</h2><ul class="plain">{items}</ul></section>\n'


def _conflicts(result: Synthesis) -> str:
    if not result.conflicts:
        return ""
    items = "".join(f"<li><b>{text(c.kind)}</b>: {text(c.text)}</li>" for c in result.conflicts)
    return f'<section class="card" id="conflicts"><h2>Conflicts</h2><ul class="plain">{items}</ul></section>\n'


def render_html(result: Synthesis) -> str:
    """The whole ``summary.html`` text (self-contained; every text from the review escaped and scrubbed)."""
    agents = sorted({*result.outputs, *(a for f in [*result.findings, *result.improvements] for a in f.agents)})
    numbers = {agent: f"a{n}" for n, agent in enumerate(agents)}
    files = f'<section class="card" id="heatmap"><h2>Files by findings</h2>{heat_map(result.findings)}</section>\n'
    parts = [
        _head(result),
        _masthead(result),
        _verdict(result),
        f'<div class="grid">{_reviewers(result, agent_seconds(result))}{files}</div>\n',
        _timeline(result),
        _findings(result, numbers),
        _improvements(result),
        _conflicts(result),
        f"<footer>fluxdrive {text(__version__)} · one self-contained file: no external resources · "
        "details per agent in the &lt;agent&gt;.md reports next to this file</footer>\n",
        f"</main><script>{SCRIPT}</script></body></html>\n",
    ]
    return "".join(parts)
