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
- **Dangerous sinks**: a change whose added lines reach a sink where outside
  data does harm (a shell, ``eval``, deserialization, SQL execution, HTML
  injection, certificate checks turned off; :data:`_SINK`) gets fd-safety
  however small, and it is mandatory as for a ship-class path: a 12-line
  change adding ``check_output("ls " + cmd, shell=True)`` once passed with
  fd-quality alone.
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

from fluxdrive.agents import AgentDefinition
from fluxdrive.core.match import glob_match

SMALL_LINES = 20  # the reference: DIFF_LINES < 20 and CHANGED_FILES == 1
SAFETY = "fd-safety"
QUALITY = "fd-quality"
VERDICT_RANK = {"safe": 0, "incomplete": 0, "needs-changes": 1, "risky": 2}  # incomplete fails on its own

_FILE_HEADER = re.compile(r"^\+\+\+ (?:b/)?(.+?)\s*$|^--- (?:a/)?(.+?)\s*$")
# Where outside data does harm, in the languages fluxdrive reviews: what an added line must not reach
# without fd-safety looking. Deliberately wide (any .execute( is SQL enough): the cost is one more reviewer.
_SINK = re.compile(
    r"shell\s*=\s*True|\bos\.(?:system|popen|exec\w*|spawn\w*)\s*\(|\bsubprocess\.|\b(?:check_output|Popen)\s*\("
    r"|(?<![\w.])(?:eval|exec)\s*\(|\b(?:pickle|marshal|dill|cloudpickle)\.loads?\s*\(|\byaml\.(?:unsafe_)?load\s*\("
    r"|\.execute(?:many|script)?\s*\(|\.raw\s*\(|\bcursor\b|\bmark_safe\s*\(|\|\s*safe\b|autoescape\s*(?:=\s*)?(?:False|false)"
    r"|child_process|\bexec(?:Sync|File)?\s*\(|\bspawn(?:Sync)?\s*\(|new\s+Function\s*\(|\bvm\.run"
    r"|innerHTML|dangerouslySetInnerHTML|document\.write\s*\(|exec\.Command(?:Context)?\s*\(|Runtime\.getRuntime\(\)"
    r"|verify\s*=\s*False|InsecureSkipVerify|rejectUnauthorized\s*:\s*false"
)


@dataclass(frozen=True, slots=True)
class DiffSize:
    """Changed lines and files of a unified diff, and the added lines that reach a dangerous sink."""

    lines: int
    paths: tuple[str, ...]
    sinks: tuple[str, ...] = ()  # "path: the added line", in diff order


def diff_size(text: str) -> DiffSize:
    """Added plus removed lines, and the changed paths (old and new names of a rename)."""
    lines = 0
    paths: dict[str, None] = {}
    sinks: list[str] = []
    current = ""
    for line in text.splitlines():
        header = _FILE_HEADER.match(line)
        if header:
            name = header.group(1) or header.group(2)
            if name and name != "/dev/null":
                paths.setdefault(name, None)
                current = name
            continue
        if line.startswith(("+", "-")) and not line.startswith(("+++", "---")):
            lines += 1
            if line.startswith("+") and _SINK.search(line):
                sinks.append(f"{current}: {' '.join(line[1:].split())[:120]}")
    return DiffSize(lines, tuple(paths), tuple(sinks))


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
    if size.sinks:  # what the change does, not only where: a sink makes fd-safety mandatory too
        forced.setdefault(SAFETY, None)
        ship_class = list(dict.fromkeys([*ship_class, *(s.partition(": ")[0] for s in size.sinks)]))
    small = size.lines < SMALL_LINES and len(size.paths) == 1
    reasons = []
    if small:
        reasons.append(f"small change ({size.lines} line(s) in 1 file): {QUALITY} plus what the change forces")
    if size.sinks:
        reasons.append(f"the change reaches a dangerous sink ({size.sinks[0]}): {SAFETY} is mandatory")
    elif ship_class:
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
