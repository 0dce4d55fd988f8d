"""An eval run as a table (per fixture, per lane, overall) and as JSON (every pair and miss)."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from fluxdrive.eval.match import Pair
from fluxdrive.eval.runner import EvalRun, FixtureResult
from fluxdrive.eval.score import Counts


def _pct(value: float | None) -> str:
    return "   -" if value is None else f"{value * 100:3.0f}%"


def _row(name: str, counts: Counts, extra: str = "") -> str:
    m = counts.metrics()
    return (
        f"{name[:34]:<34} {counts.found:>3}/{counts.expected:<3} {_pct(m['recall'])} {_pct(m['recall_p0p1'])} "
        f"{_pct(m['precision'])} {_pct(m['f1'])} {_pct(m['severity_within_one'])} {_pct(m['location_exact'])} "
        f"{counts.decoys_flagged:>2}/{counts.decoys:<2}{extra}"
    )


HEADER = f"{'fixture':<34} {'found':>7} {'rec':>4} {'P0/1':>4} {'prec':>4} {'F1':>4} {'sev1':>4} {'line':>4} decoys"


def render_table(run: EvalRun) -> str:
    """The run as text: a row per fixture, per lane and overall."""
    lines = [HEADER]
    for result in run.results:
        note = f"  {result.error}" if result.error else f"  {result.seconds:4.1f}s"
        lines.append(_row(result.fixture.id, result.counts, note))
    lines.append("")
    for lane, counts in run.lanes().items():
        lines.append(_row(f"lane {lane}", counts))
    for language, counts in run.languages().items():
        lines.append(_row(f"language {language}", counts))
    lines.append(_row("overall", run.overall()))
    found = run.categories()
    if found:
        cells = [f"{category} {hit}/{total}" for category, (hit, total) in found.items()]
        lines.append("by category (found/expected): " + ", ".join(cells))
    clean = clean_changes(run)
    if clean["cases"]:
        lines.append(
            f"clean changes (no ground truth): {clean['cases']}, false alarms {clean['false_alarms']} "
            f"({clean['per_case']:.2f} per clean change; {clean['flagged']} with any)"
        )
    use = usage_totals(run)
    lines.append(
        f"tokens {use['tokens_in'] + use['tokens_out']:,.0f}, cost ${use['cost_usd']:.4f}, "
        f"latency {use['seconds']:.1f} s, format compliance {_pct(use['format_compliance'])}"
    )
    lines.append(
        "(rec: recall of all ground truth, P0/1: of its P0/P1; prec: precision of everything reported; "
        "sev1: matched severity within one level; line: on the expected line; decoys: must_not_flag entries hit)"
    )
    return "\n".join(lines)


def _fixture_json(result: FixtureResult) -> dict[str, Any]:
    truth = result.fixture.truth
    return {
        "fixture_id": truth.fixture_id,
        "agent_type": truth.agent_type,
        "input": result.fixture.kind,
        "verdict": result.verdict,
        "error": result.error,
        "seconds": round(result.seconds, 2),
        "usage": result.usage,
        "metrics": result.counts.metrics(),
        "counts": _counts(result.counts),
        "pairs": [_pair_json(result, p) for p in result.matching.pairs],
        "missed": [truth.findings[i].model_dump(exclude_none=True) for i in result.matching.missed],
        "decoys_flagged": [
            {"decoy": truth.must_not_flag[d].model_dump(), "produced": result.produced[j].title}
            for d, j in result.matching.decoys_flagged
        ],
        "extra": len(result.matching.extra),
    }


def _pair_json(result: FixtureResult, pair: Pair) -> dict[str, Any]:
    produced = result.produced[pair.produced]
    return {
        "expected": result.fixture.truth.findings[pair.expected].model_dump(exclude_none=True),
        "produced": {"id": produced.id, "severity": produced.severity, "title": produced.title,
                     "locations": list(produced.locations)},
        "score": pair.score, "place": pair.place, "kind": pair.kind, "text": pair.text,
    }  # fmt: skip


def _counts(counts: Counts) -> dict[str, int]:
    return asdict(counts)


def usage_totals(run: EvalRun) -> dict[str, Any]:
    """Tokens, cost and wall time over the run, and the share of agent reports with a valid Findings Index."""
    totals = {key: sum(r.usage.get(key, 0.0) for r in run.results) for key in ("tokens_in", "tokens_out", "cost_usd")}
    reports = sum(r.usage.get("reports", 0.0) for r in run.results)
    valid = sum(r.usage.get("reports_valid", 0.0) for r in run.results)
    return {
        **totals,
        "seconds": round(sum(r.seconds for r in run.results), 2),
        "format_compliance": round(valid / reports, 4) if reports else None,
    }


def clean_changes(run: EvalRun) -> dict[str, Any]:
    """The cases with empty ground truth (clean changes from ``eval mine`` or an import) that ran: every finding
    on one is a false alarm, so false alarms per clean change are counted, not guessed."""
    clean = [r for r in run.results if not r.error and not r.counts.expected]
    alarms = sum(r.counts.produced for r in clean)
    return {
        "cases": len(clean),
        "false_alarms": alarms,
        "per_case": round(alarms / len(clean), 4) if clean else 0.0,
        "flagged": sum(r.counts.produced > 0 for r in clean),
    }


def render_json(run: EvalRun) -> dict[str, Any]:
    """The run as a JSON-ready document."""
    return {
        "settings": run.settings,
        "usage": usage_totals(run),
        "overall": {"metrics": run.overall().metrics(), "counts": _counts(run.overall())},
        "lanes": {lane: {"metrics": c.metrics(), "counts": _counts(c)} for lane, c in run.lanes().items()},
        "languages": {name: {"metrics": c.metrics(), "counts": _counts(c)} for name, c in run.languages().items()},
        "categories": {
            category: {"found": hit, "expected": total, "recall": round(hit / total, 4)}
            for category, (hit, total) in run.categories().items()
        },
        "clean_changes": clean_changes(run),
        "fixtures": [_fixture_json(r) for r in run.results],
    }
