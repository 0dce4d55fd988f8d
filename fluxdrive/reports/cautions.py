"""The cautions a merged finding carries, named once for every report that shows them.

Why: summary.md and report.html both warn when a finding stands on one agent,
wants verification, came from a partial report or was read from prose; the
rules are one idea, only the words each report prints differ.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from fluxdrive.synthesis import Finding

# (name, whether the finding carries it), in the order the reports list them.
CAUTIONS: tuple[tuple[str, Callable[[Finding], bool]], ...] = (
    ("single agent", lambda f: f.convergence <= 1 and f.severity in ("P0", "P1")),
    ("verification recommended", lambda f: f.verification_recommended),
    ("partial", lambda f: f.partial),
    ("from prose", lambda f: f.from_prose),
)


def cautions(finding: Finding, wording: Mapping[str, str] | None = None) -> list[str]:
    """The cautions ``finding`` carries, each named as ``wording`` says (its own name otherwise)."""
    words = wording or {}
    return [words.get(name, name) for name, applies in CAUTIONS if applies(finding)]
