"""The pictures of ``summary.html``: the peer-findings timeline (inline SVG) and the file heat map (bars).

Both take their text from agents and files, so every string is escaped with
:func:`text` (scrubbed, then HTML-escaped); numbers are computed here.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Sequence
from datetime import datetime
from html import escape

from fluxdrive.core.masking import scrub
from fluxdrive.exchange.channel import PeerFinding
from fluxdrive.reports.html_excerpt import split_location
from fluxdrive.synthesis import Finding
from fluxdrive.synthesis.model import SEVERITY_ORDER

SEVERITIES = tuple(SEVERITY_ORDER)
HEAT_ROWS = 25
# the timeline's geometry (SVG user units; the SVG scales to the page's width)
WIDTH, LABELS, RIGHT, TOP, ROW, AXIS, RADIUS = 1000, 190, 28, 14, 34, 40, 7
GAP = 2 * RADIUS + 3  # markers of one row never overlap: nudged right, then the row is squeezed back to fit


def text(value: object) -> str:
    """Any text from a review, safe for HTML text and attribute values: scrubbed, then escaped.

    Each piece is scrubbed on its own, before escaping: ``&quot;`` would hide
    ``password="..."`` from the masking, and a masked value must never run on
    into the markup after it (so write_reports does not scrub the page again).
    """
    return escape(scrub(str(value)), quote=True)


# --- heat map -------------------------------------------------------------------------------------------------


def heat_map(findings: Sequence[Finding]) -> str:
    """Files by number and severity of findings: a table with a stacked bar per file."""
    per_file: dict[str, Counter[str]] = {}
    for finding in findings:
        files = dict.fromkeys(split_location(place)[0] for place in finding.locations) or {"": None}
        for file in files:
            per_file.setdefault(file, Counter())[finding.severity] += 1
    if not per_file:
        return '<p class="meta">No findings, so no files to rank.</p>'

    def rank(item: tuple[str, Counter[str]]) -> tuple[object, ...]:
        file, counts = item
        return (file == "", *(-counts[s] for s in SEVERITIES), file)

    ranked = sorted(per_file.items(), key=rank)
    widest = max(sum(c.values()) for c in per_file.values())
    rows = []
    for file, counts in ranked[:HEAT_ROWS]:
        total = sum(counts.values())
        bar = "".join(
            f'<i class="sev-{s}" style="width:{100 * counts[s] / widest:.1f}%" title="{counts[s]} {s}"></i>'
            for s in SEVERITIES
            if counts[s]
        )
        cells = "".join(f'<td class="num{"" if counts[s] else " zero"}">{counts[s]}</td>' for s in SEVERITIES)
        name = f"<code>{_path_breaks(file)}</code>" if file else '<span class="small">(no location)</span>'
        rows.append(
            f'<tr><td class="file">{name}</td>{cells}<td class="num"><b>{total}</b></td>'
            f'<td style="width:26%"><div class="bar">{bar}</div></td></tr>'
        )
    more = len(ranked) - HEAT_ROWS
    note = f'<p class="small">and {more} more file(s) with fewer findings</p>' if more > 0 else ""
    head = "".join(f'<th class="num">{s}</th>' for s in SEVERITIES)
    return (
        f'<table class="heat"><thead><tr><th>File</th>{head}<th class="num">All</th><th></th></tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table>{note}"
    )


# --- timeline -------------------------------------------------------------------------------------------------


def _by_place(findings: Sequence[Finding]) -> dict[str, Finding]:
    places: dict[str, Finding] = {}
    for finding in findings:  # ordered by severity: the most severe finding of a place wins
        for place in finding.locations:
            places.setdefault(place.strip("`"), finding)
    return places


def entry_finding(entry: PeerFinding, places: dict[str, Finding]) -> Finding | None:
    """The merged finding a channel entry is about (a shared file:line), if any."""
    return next((places[ref.strip("`")] for ref in entry.file_refs if ref.strip("`") in places), None)


def entry_severity(entry: PeerFinding, finding: Finding | None) -> str:
    """The marker's colour: the matched finding's severity, else blocking as P1 and notable as P2."""
    if finding is not None:
        return finding.severity
    return "P1" if entry.severity == "blocking" else "P2"


def _moments(entries: Sequence[PeerFinding]) -> list[datetime | None]:
    out: list[datetime | None] = []
    for entry in entries:
        try:
            out.append(entry.moment)
        except (ValueError, TypeError):
            out.append(None)
    return out


def _xs(entries: Sequence[PeerFinding], rows: dict[str, int]) -> tuple[list[float], float]:
    """x of every marker (by time; by order when the times are equal or unreadable), and the span in seconds."""
    plot = WIDTH - LABELS - RIGHT - 2 * RADIUS
    moments = _moments(entries)
    known = [m for m in moments if m is not None]
    span = (max(known) - min(known)).total_seconds() if len(known) == len(moments) and known else 0.0
    if span > 0:
        start = min(known)
        xs = [plot * ((m - start).total_seconds() / span) if m else 0.0 for m in moments]
    else:
        step = plot / max(1, len(entries) - 1)
        xs = [step * n for n in range(len(entries))]
    by_row: dict[int, list[int]] = {}
    for index, entry in enumerate(entries):
        by_row.setdefault(rows[entry.agent], []).append(index)
    for indexes in by_row.values():
        indexes.sort(key=lambda i: xs[i])
        for before, after in itertools.pairwise(indexes):
            xs[after] = max(xs[after], xs[before] + GAP)
        furthest = xs[indexes[-1]]
        if furthest > plot:  # nudged past the end: squeeze the row back
            low = xs[indexes[0]]
            for i in indexes:
                xs[i] = low + (xs[i] - low) * (plot - low) / max(furthest - low, 1e-9)
    return [LABELS + RADIUS + x for x in xs], span


def _duration(seconds: float, span: float) -> str:
    """A tick's offset in the unit the whole span reads best in."""
    if span < 2:
        return f"{seconds * 1000:.0f} ms" if span >= 0.02 else f"{seconds * 1000:.1f} ms"
    if span < 600:
        return f"{seconds:.1f} s" if span < 20 else f"{seconds:.0f} s"
    return f"{seconds / 60:.1f} min" if span < 3600 else f"{seconds / 3600:.1f} h"


def clock(entry: PeerFinding) -> str:
    """``15:04:46.333`` (the raw timestamp when it cannot be read)."""
    try:
        return f"{entry.moment:%H:%M:%S.%f}"[:-3]
    except (ValueError, TypeError):
        return entry.timestamp


def _ticks(entries: Sequence[PeerFinding], span: float, height: int) -> list[str]:
    plot = WIDTH - LABELS - RIGHT - 2 * RADIUS
    moments = [m for m in _moments(entries) if m is not None]
    out = []
    if span > 0 and moments:
        start = min(moments)
        for n in range(5):
            x = LABELS + RADIUS + plot * n / 4
            seconds = span * n / 4
            label = f"{start:%H:%M:%S} UTC" if n == 0 else f"+{_duration(seconds, span)}"
            out.append(f'<line x1="{x:.1f}" y1="{TOP}" x2="{x:.1f}" y2="{height - AXIS + 4}" class="grid"/>')
            anchor = "start" if n == 0 else "end" if n == 4 else "middle"
            out.append(f'<text x="{x:.1f}" y="{height - AXIS + 22}" text-anchor="{anchor}" class="tick">{label}</text>')
    else:
        when = f" (all at {min(moments):%H:%M:%S} UTC)" if moments else ""
        out.append(
            f'<text x="{LABELS + RADIUS}" y="{height - AXIS + 22}" class="tick">in the order shared{text(when)}</text>'
        )
    return out


def timeline_svg(entries: Sequence[PeerFinding], findings: Sequence[Finding]) -> str:
    """Time on x, agents as rows, one marker per shared finding (filled: blocking, ring: notable)."""
    agents = list(dict.fromkeys(e.agent for e in entries))
    rows = {agent: n for n, agent in enumerate(agents)}
    height = TOP + ROW * len(agents) + AXIS
    xs, span = _xs(entries, rows)
    places = _by_place(findings)
    parts = [
        f'<svg viewBox="0 0 {WIDTH} {height}" role="img" '
        f'aria-label="Peer findings timeline: {len(entries)} finding(s) shared by {len(agents)} agent(s)">'
    ]
    for agent, n in rows.items():
        y = TOP + ROW * n
        if n % 2 == 0:
            parts.append(f'<rect x="0" y="{y}" width="{WIDTH}" height="{ROW}" class="lane"/>')
        label = agent if len(agent) <= 24 else agent[:23] + "…"
        parts.append(f'<text x="10" y="{y + ROW / 2 + 4.5:.1f}" class="agent">{text(label)}</text>')
    parts += _ticks(entries, span, height)
    for entry, x in zip(entries, xs, strict=True):
        finding = entry_finding(entry, places)
        severity = entry_severity(entry, finding)
        middle = TOP + ROW * rows[entry.agent] + ROW / 2
        about = f" → {finding.id}" if finding is not None else ""
        tip = f"{entry.timestamp} · {entry.agent} · {entry.severity} · {entry.category}: {entry.summary}{about}"
        ring = "" if entry.severity == "blocking" else " ring"
        parts.append(
            f'<circle cx="{x:.1f}" cy="{middle:.1f}" r="{RADIUS}" class="mk{ring} sev-{severity}">'
            f"<title>{text(tip)}</title></circle>"
        )
    parts.append("</svg>")
    return "".join(parts)


def _path_breaks(path: str) -> str:
    """A file name that wraps only after its ``/`` (escaped; ``<wbr>`` marks the places), never mid-word."""
    return "/<wbr>".join(text(part) for part in path.split("/"))
