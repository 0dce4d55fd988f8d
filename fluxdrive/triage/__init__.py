"""Triage (PROTOCOL.md sections 1-3 and 8): everything that happens before any agent runs.

``triage_target(target, config)`` profiles the input, detects domains (with
the cache), reads trust from the feedback store and scores every review
agent; the result goes through the approval gate and then to launch.
"""

from __future__ import annotations

from pathlib import Path

from fluxdrive.config.model import Config
from fluxdrive.triage.engine import Triage, render_table, triage, write_outputs
from fluxdrive.workspace import Target

__all__ = ["Triage", "render_table", "triage", "triage_target", "write_outputs"]


def triage_target(target: Target, config: Config, *, use_cache: bool = True, history: Path | None = None) -> Triage:
    """Phase 1 for a classified input: profile, domains, trust, scores, stages."""
    from fluxdrive.agents import load_roster
    from fluxdrive.runs.history import HistoryUnavailableError, trust_for
    from fluxdrive.triage.domains import detect, detect_cached, own_project
    from fluxdrive.triage.profile import build_profile

    root = Path(target.root)
    roster = load_roster(root, trusted=config.trust.project_config, revision=target.settings_revision)
    profile = build_profile(target, max_file_bytes=config.static.max_file_bytes)
    own = own_project(target)
    detection = (
        detect(own, config.domains) if own is not None else detect_cached(root, config.domains, use_cache=use_cache)
    )
    unavailable = None
    try:
        trust = trust_for(str(root.resolve()), config.scoring, history)
    except HistoryUnavailableError as exc:  # history is auxiliary: every agent keeps full trust
        trust, unavailable = {}, exc.one_line()
    result = triage(target, profile, detection, roster, config, trust)
    unapplied = [f"{unavailable}; trust multipliers not applied"] if unavailable else []
    return result.with_notes([*unapplied, *roster.notes])
