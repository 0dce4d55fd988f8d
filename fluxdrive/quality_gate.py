"""The quality gate before shipping: which reviewers a change needs, and whether it may ship.

Clavain's quality-gates command (mistakeknot/Clavain ``commands/quality-gates.md``)
reviews the working change before it ships. Its rules, kept here:

- **The change**: what is staged, else the working tree against HEAD
  (staged and unstaged), else the branch against its merge-base with the
  default branch. Nothing changed passes.
- **Small-change shortcut**: a diff under :data:`SMALL_LINES` changed lines
  in a single file runs fd-quality alone, plus every agent the changed
  paths force (an agent whose ``critical_globs`` match: fd-safety for
  ship-class paths).
- **Ship class**: a change to plugin manifests, MCP configs, hook scripts,
  interlock/authorization/capability files, signing keys or shell-out
  paths (fd-safety's ``critical_globs``, the reference's list) must be
  reviewed by fd-safety in this run. If fd-safety did not complete, the
  gate fails closed; ``--skip-safety REASON`` lets it pass and records the
  bypass (gate.json and a verdict record), as ``CLAVAIN_SKIP_SECURITY`` does.
- **Fail closed**: an incomplete review (an agent failed or timed out) or
  no verdict fails the gate. P1 findings block shipping (``needs-changes``
  fails by default, unlike ``review``'s ``risky``).

:func:`plan_gate` is pure; the CLI runs the review and :func:`decide`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from fluxdrive._match import glob_match
from fluxdrive.agents import AgentDefinition

SMALL_LINES = 20  # the reference: DIFF_LINES < 20 and CHANGED_FILES == 1
SAFETY = "fd-safety"
QUALITY = "fd-quality"
VERDICT_RANK = {"safe": 0, "incomplete": 0, "needs-changes": 1, "risky": 2}  # incomplete fails on its own

_FILE_HEADER = re.compile(r"^\+\+\+ (?:b/)?(.+?)\s*$|^--- (?:a/)?(.+?)\s*$")


@dataclass(frozen=True, slots=True)
class DiffSize:
    """Changed lines and files of a unified diff."""

    lines: int
    paths: tuple[str, ...]


def diff_size(text: str) -> DiffSize:
    """Added plus removed lines, and the changed paths (old and new names of a rename)."""
    lines = 0
    paths: dict[str, None] = {}
    for line in text.splitlines():
        header = _FILE_HEADER.match(line)
        if header:
            name = header.group(1) or header.group(2)
            if name and name != "/dev/null":
                paths.setdefault(name, None)
            continue
        if line.startswith(("+", "-")) and not line.startswith(("+++", "---")):
            lines += 1
    return DiffSize(lines, tuple(paths))


@dataclass(frozen=True, slots=True)
class GatePlan:
    """Who must review the change, and why."""

    small: bool
    ship_class: tuple[str, ...]  # changed paths that make fd-safety mandatory
    forced: tuple[str, ...]  # agents the paths force (critical globs)
    agents: tuple[str, ...] | None  # exactly these (the small-change shortcut), or None: full triage
    reasons: tuple[str, ...]


def plan_gate(size: DiffSize, roster: Iterable[AgentDefinition]) -> GatePlan:
    """The small-change shortcut and the ship-class rule for a change of ``size``."""
    forced: dict[str, None] = {}
    ship_class: list[str] = []
    for agent in roster:
        hits = [p for p in size.paths if agent.routing.critical_globs and glob_match(p, agent.routing.critical_globs)]
        if hits:
            forced.setdefault(agent.name, None)
            if agent.name == SAFETY:
                ship_class = hits
    small = size.lines < SMALL_LINES and len(size.paths) == 1
    reasons = []
    if small:
        reasons.append(f"small change ({size.lines} line(s) in 1 file): {QUALITY} plus what its paths force")
    if ship_class:
        reasons.append(f"ship-class path(s) {', '.join(ship_class[:3])}: {SAFETY} is mandatory")
    agents = tuple(dict.fromkeys([QUALITY, *forced])) if small else None
    return GatePlan(small, tuple(ship_class), tuple(forced), agents, tuple(reasons))


@dataclass
class GateDecision:
    """PASS or FAIL, with every reason; ``gate.json``."""

    passed: bool
    verdict: str
    fail_on: str
    reasons: list[str] = field(default_factory=list)
    plan: GatePlan | None = None
    safety: str = "not required"  # ran / not required / skipped: REASON / missing
    counts: dict[str, int] = field(default_factory=dict)

    def record(self) -> dict[str, Any]:
        data = asdict(self)
        data["decision"] = "PASS" if self.passed else "FAIL"
        return {"schema_version": 1, **data}


def decide(
    plan: GatePlan,
    *,
    verdict: str,
    incomplete: Sequence[str],
    completed: Sequence[str],
    counts: dict[str, int],
    fail_on: str,
    skip_safety: str | None = None,
) -> GateDecision:
    """Whether the change may ship: verdict below ``fail_on``, review complete, fd-safety ran where required."""
    decision = GateDecision(True, verdict, fail_on, plan=plan, counts=dict(counts))
    if verdict == "error":
        decision.passed = False
        decision.reasons.append("no verdict was possible: the gate fails closed")
    elif fail_on != "never" and VERDICT_RANK.get(verdict, 2) >= VERDICT_RANK[fail_on]:
        decision.passed = False
        decision.reasons.append(f"verdict {verdict} is at or above --fail-on {fail_on}")
    if incomplete:
        decision.passed = False
        decision.reasons.append(f"incomplete review ({', '.join(incomplete)}): the gate fails closed")
    if plan.ship_class:
        if SAFETY in completed:
            decision.safety = "ran"
        elif skip_safety:
            decision.safety = f"skipped: {skip_safety}"
            decision.reasons.append(f"{SAFETY} skipped on a ship-class change by request ({skip_safety}); recorded")
        else:
            decision.safety = "missing"
            decision.passed = False
            decision.reasons.append(f"ship-class change and {SAFETY} did not complete: the gate fails closed")
    if decision.passed and not decision.reasons:
        decision.reasons.append(f"verdict {verdict}, below --fail-on {fail_on}; every reviewer completed")
    return decision
