"""Two eval runs side by side (``fluxdrive eval compare``), and a run held to a baseline.

Runs are compared from their JSON (``eval run --json``): every overall and
per-lane metric with its delta, then the fixtures whose recall, P0/P1 recall
or precision moved. A baseline is such a JSON: ``eval run --fail-below
BASELINE`` fails when an overall metric drops below the baseline's (a
regression), so CI can hold the suite's numbers.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from fluxdrive.errors import UsageError

HELD = ("recall", "recall_p0p1", "precision", "f1", "severity_within_one")
WATCHED = ("recall", "recall_p0p1", "precision")
TOLERANCE = 1e-9


BASELINE = "baseline.json"


def load_run(path: Path) -> dict[str, Any]:
    """An eval run's JSON, or a suite directory's ``baseline.json`` (one readable line when it is not one)."""
    if path.is_dir():
        path = path / BASELINE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise UsageError(f"{path}: not an eval run's JSON ({error})") from None
    if not isinstance(data, dict) or not isinstance(data.get("overall"), dict) or "fixtures" not in data:
        raise UsageError(f"{path}: not an eval run's JSON (no overall / fixtures: write one with eval run --json)")
    return data


def _fmt(value: float | None) -> str:
    return "    -" if value is None else f"{value * 100:5.1f}"


def _delta(a: float | None, b: float | None) -> str:
    if a is None or b is None:
        return "     "
    return f"{(b - a) * 100:+5.1f}"


def compare(a: dict[str, Any], b: dict[str, Any]) -> str:
    """The comparison of run ``a`` (before) and run ``b`` (after) as text."""
    lines = [f"{'metric':<28} {'A':>5} {'B':>5} {'B-A':>5}"]
    scopes = [("overall", a["overall"], b["overall"])]
    lanes = sorted(set(a.get("lanes", {})) | set(b.get("lanes", {})))
    scopes += [(f"lane {lane}", a.get("lanes", {}).get(lane, {}), b.get("lanes", {}).get(lane, {})) for lane in lanes]
    for scope, left, right in scopes:
        lm, rm = left.get("metrics", {}), right.get("metrics", {})
        lines.extend(
            f"{scope + ' ' + name:<28} {_fmt(lm.get(name))} {_fmt(rm.get(name))} {_delta(lm.get(name), rm.get(name))}"
            for name in HELD
        )
    before = {f["fixture_id"]: f["metrics"] for f in a["fixtures"]}
    after = {f["fixture_id"]: f["metrics"] for f in b["fixtures"]}
    changed = [
        (fid, name, before[fid].get(name), after[fid].get(name))
        for fid in sorted(set(before) & set(after))
        for name in WATCHED
        if before[fid].get(name) != after[fid].get(name)
    ]
    lines.append("")
    lines.append(f"fixtures that changed: {len({c[0] for c in changed})}")
    lines += [f"  {fid:<34} {name:<12} {_fmt(x)} -> {_fmt(y)}" for fid, name, x, y in changed]
    for fid in sorted(set(before) ^ set(after)):
        lines.append(f"  {fid:<34} only in {'A' if fid in before else 'B'}")
    return "\n".join(lines)


def regressions(run: dict[str, Any], baseline: dict[str, Any]) -> list[str]:
    """Overall metrics of ``run`` below the baseline's, as readable lines (empty: none)."""
    now, then = run["overall"].get("metrics", {}), baseline["overall"].get("metrics", {})
    return [
        f"{name} {now[name] * 100:.1f}% < baseline {then[name] * 100:.1f}%"
        for name in HELD
        if now.get(name) is not None and then.get(name) is not None and now[name] + TOLERANCE < then[name]
    ]
