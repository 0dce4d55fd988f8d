"""``fluxdrive eval report``: a recorded run (its ``--json``) as markdown, JSON or one self-contained HTML page."""

from __future__ import annotations

import html
import json
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


def render(run: dict[str, Any], fmt: str) -> str:
    if fmt == "md":
        return to_markdown(run)
    if fmt == "html":
        return to_html(run)
    return json.dumps(run, indent=2, sort_keys=True) + "\n"
