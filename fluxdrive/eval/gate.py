"""Pass or fail an eval run against ``eval.thresholds`` (a P0 miss fails, as in the reference's qualification)."""

from __future__ import annotations

from typing import Any

from fluxdrive.config.model import EvalThresholds


def gate(document: dict[str, Any], thresholds: EvalThresholds) -> list[str]:
    """Why the run fails (empty: it passes), one readable reason per line."""
    reasons: list[str] = []
    if thresholds.fail_on_p0_miss:
        reasons += [
            f"P0 missed in {fixture['fixture_id']}: {miss['location']} {miss['description'][:80]}"
            for fixture in document["fixtures"]
            for miss in fixture["missed"]
            if miss.get("severity") == "P0"
        ]
    metrics = document["overall"]["metrics"]
    for name in ("recall_p0p1", "recall", "precision_p0p1"):
        wanted, got = getattr(thresholds, name), metrics.get(name)
        if got is not None and got < wanted:
            reasons.append(f"{name} {got * 100:.1f}% < {wanted * 100:.0f}%")
    flagged = metrics.get("decoys_flagged")
    if flagged is not None and flagged > thresholds.decoys_flagged:
        reasons.append(f"decoys flagged {flagged * 100:.1f}% > {thresholds.decoys_flagged * 100:.0f}%")
    return reasons
