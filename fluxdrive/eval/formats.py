"""``fluxdrive eval report``: a recorded run (its ``--json``) as markdown, JSON, one self-contained HTML page,
or the per-lane summary the README shows (generated from ``evals/baseline.json`` by ``make docs``)."""

from __future__ import annotations

import html
import json
from collections.abc import Callable
from typing import Any

COLUMNS = (
    ("recall", "recall"),
    ("recall_p0p1", "P0/P1 recall"),
    ("precision", "precision"),
    ("f1", "F1"),
    ("severity_within_one", "severity ±1"),
    ("location_exact", "on the line"),
    ("decoys_flagged", "decoys hit"),
)


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value * 100:.0f}%"


def _rows(run: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    rows = [(f["fixture_id"], f["metrics"]) for f in run["fixtures"]]
    rows += [(f"lane {lane}", part["metrics"]) for lane, part in run.get("lanes", {}).items()]
    rows.append(("overall", run["overall"]["metrics"]))
    return rows


def to_markdown(run: dict[str, Any]) -> str:
    """Tables: per fixture, lane and overall; then each fixture's misses and decoys hit."""
    settings = run.get("settings", {})
    lines = [
        f"# Eval run: runtime {settings.get('runtime', '?')}"
        + (f", model {settings['model']}" if settings.get("model") else ""),
        "",
        "| fixture | " + " | ".join(label for _key, label in COLUMNS) + " |",
        "|---" * (len(COLUMNS) + 1) + "|",
    ]
    lines += [f"| {name} | " + " | ".join(_pct(m.get(k)) for k, _l in COLUMNS) + " |" for name, m in _rows(run)]
    gate = run.get("gate")
    if gate:
        lines += ["", "Gate: " + ("PASS" if gate["passed"] else "FAIL"), *[f"- {r}" for r in gate["reasons"]]]
    for fixture in run["fixtures"]:
        misses, decoys = fixture.get("missed", []), fixture.get("decoys_flagged", [])
        if not misses and not decoys:
            continue
        lines += ["", f"## {fixture['fixture_id']}"]
        lines += [f"- missed {m['severity']} {m['location']}: {m['description']}" for m in misses]
        lines += [f"- decoy hit {d['decoy']['location']}: {d['produced']}" for d in decoys]
    return "\n".join(lines) + "\n"


def to_html(run: dict[str, Any]) -> str:
    """One page, no scripts, no external resources."""
    head = "".join(f"<th>{html.escape(label)}</th>" for _key, label in COLUMNS)
    body = "".join(
        f"<tr><td>{html.escape(name)}</td>" + "".join(f"<td>{_pct(m.get(k))}</td>" for k, _l in COLUMNS) + "</tr>"
        for name, m in _rows(run)
    )
    misses = "".join(
        f"<li><b>{html.escape(f['fixture_id'])}</b>: missed {html.escape(m['severity'])} "
        f"{html.escape(m['location'])} - {html.escape(m['description'])}</li>"
        for f in run["fixtures"]
        for m in f.get("missed", [])
    )
    gate = run.get("gate") or {}
    verdict = "" if not gate else f"<p>Gate: <b>{'PASS' if gate.get('passed') else 'FAIL'}</b></p>"
    return (
        "<!doctype html><html><head><meta charset='utf-8'><title>fluxdrive eval</title>"
        "<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}"
        "td,th{border:1px solid #ccc;padding:4px 8px;text-align:right}td:first-child{text-align:left}</style>"
        f"</head><body><h1>fluxdrive eval</h1>{verdict}<table><tr><th>fixture</th>{head}</tr>{body}</table>"
        f"<h2>Missed</h2><ul>{misses or '<li>nothing</li>'}</ul></body></html>\n"
    )


Cell = Callable[[dict[str, Any], dict[str, Any]], str]  # (counts, metrics) -> the cell's text
SUMMARY: tuple[tuple[str, Cell], ...] = (
    ("found / expected", lambda c, m: f"{c['found']}/{c['expected']}"),
    ("recall", lambda c, m: _pct(m.get("recall"))),
    ("P0/P1 recall", lambda c, m: _pct(m.get("recall_p0p1"))),
    ("precision", lambda c, m: _pct(m.get("precision"))),
    ("F1", lambda c, m: _pct(m.get("f1"))),
    ("decoys hit", lambda c, m: f"{c['decoys_flagged']}/{c['decoys']}" if c["decoys"] else "-"),
)


def _gate_summary(gate: dict[str, Any] | None) -> str:
    if not gate:
        return "gate: not recorded"
    if gate["passed"]:
        return "gate: PASS"
    missed = sum(r.startswith("P0 missed") for r in gate["reasons"])
    others = [r for r in gate["reasons"] if not r.startswith("P0 missed")]
    return "gate: FAIL (" + "; ".join(([f"{missed} P0 missed"] if missed else []) + others) + ")"


def to_summary(run: dict[str, Any]) -> str:
    """What the README shows: how many fixtures of which input, one aligned markdown row per lane and overall,
    and the gate. Counts come straight from the run, so a README block generated from it cannot drift."""
    kinds: dict[str, int] = {}
    for fixture in run["fixtures"]:
        kinds[fixture["input"]] = kinds.get(fixture["input"], 0) + 1
    settings, seconds = run.get("settings", {}), run.get("usage", {}).get("seconds", 0.0)
    head = (
        f"{len(run['fixtures'])} fixture{'s' if len(run['fixtures']) != 1 else ''} ("
        + ", ".join(f"{n} {kind}{'s' if n != 1 else ''}" for kind, n in sorted(kinds.items()))
        + f"), runtime {settings.get('runtime', '?')}, reviewed in {seconds:.0f} s"
    )
    rows = [[lane, *(cell(part["counts"], part["metrics"]) for _l, cell in SUMMARY)]
            for lane, part in run.get("lanes", {}).items()]  # fmt: skip
    overall = run["overall"]
    rows.append(["overall", *(cell(overall["counts"], overall["metrics"]) for _l, cell in SUMMARY)])
    header = ["lane (fixtures' agent_type)", *(label for label, _c in SUMMARY)]
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]

    def line(cells: list[str]) -> str:
        return "| " + " | ".join(cell.ljust(width) for cell, width in zip(cells, widths, strict=True)) + " |"

    table = [line(header), "|" + "|".join("-" * (w + 2) for w in widths) + "|", *(line(r) for r in rows)]
    return "\n".join([head, "", *table, "", _gate_summary(run.get("gate"))]) + "\n"


def _json(run: dict[str, Any]) -> str:
    return json.dumps(run, indent=2, sort_keys=True) + "\n"


RENDERERS: dict[str, Callable[[dict[str, Any]], str]] = {
    "md": to_markdown,
    "html": to_html,
    "json": _json,
    "summary": to_summary,
}


def render(run: dict[str, Any], fmt: str) -> str:
    """``run`` in ``fmt`` (one of :data:`RENDERERS`)."""
    return RENDERERS[fmt](run)
