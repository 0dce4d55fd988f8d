"""Agent scoring, selection and stages (PROTOCOL.md section 3). Pure functions over data.

    raw   = base_score + domain_boost + project_bonus + domain_agent_bonus
    final = raw * trust_multiplier        (at most scoring.max_score; 0 when base is 0)

**base_score** is deterministic: the larger of two readings of the input.

- *Share* (PROTOCOL.md's rule): the share of the input's units - a
  document's sections, a directory's files, a diff's hunks, a file's chunks -
  that match the agent, weighted by lines. Share 0 -> 0; below
  ``adjacent_share`` -> 1; up to ``core_share`` -> 2; above -> 3.
- *Evidence* (our decision, because a share dilutes: one ``auth/session.py``
  with a hard-coded token in a 3,000-line diff is 2% of it and scored 1): an
  absolute count of units carrying the agent's *direct* signals - its path
  globs, its routing keywords in code or a diff hunk, its section keywords.
  One unit -> 1, two -> 2, three or more -> 3, and a unit showing two kinds
  at once (an ``auth/`` file whose hunk holds ``token``) -> 3.

A unit matches for the share when its text contains one of the agent's
``concerns`` (whole words) or any direct signal. A cross-cutting agent
(architecture, quality) is never irrelevant to source code: with code in
the input its base is at least 1. A diff that touches one of an agent's
``critical_globs`` makes it core (3). An agent made for some domains
(fd-game-design) scores at most 1 where none of them was detected: an
``inventory/`` directory in a Flask service is not a game.

Pre-filtered agents have base 0, which no bonus lifts.

**Stages** exist to save money on paid runtimes, never to hide findings.
Launch decides (``launch/plan.py``) whether the whole roster fits the
budget; when it does - always offline - :func:`assign` runs unstaged:
every agent with base >= 1 is Stage 1. Staged selection takes every agent
scoring >= 3 up to the slot ceiling, then >= 2 while slots remain, then
>= 1 only when it covers a thin section. Stage 1 is the top
``stage1_ratio`` of the ceiling (rounded up, within stage1_min..stage1_max,
leaving at least one agent for Stage 2). Equal scores are ranked by the
agent's ``reach`` - the severity its lane can produce: safety and
correctness (P0) before performance and architecture (P1) before quality
and product (P2) - then project agents before built-in ones, and only
then by name. Agents a detected domain marks as stage 1, agents touching
a critical path, and P0-reach agents scoring >= 3 on direct evidence are
always Stage 1. Any non-empty input gets at least ``selection.min_agents``
reviewers. Unselected agents scoring >= 2 form the expansion pool.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from fluxdrive.agents import AgentDefinition
from fluxdrive.config.model import Config
from fluxdrive.core.match import Finder, Text, glob_match, keyword_pattern, word_pattern
from fluxdrive.triage.profile import InputProfile, Unit
from fluxdrive.triage.profiles import best_profile_for, load_profiles
from fluxdrive.workspace import DOCUMENT_SUFFIXES

CATEGORY_RANK = {"project": 0, "builtin": 1, "cross-model": 2}


@dataclass
class AgentScore:
    """One agent's triage record (one row of triage.json)."""

    name: str
    category: str
    prefiltered: bool = False
    base_score: int = 0
    share: float = 0.0
    domain_boost: int = 0
    boost_domain: str | None = None
    project_bonus: int = 0
    domain_agent_bonus: int = 0
    trust_multiplier: float = 1.0
    final_score: float = 0.0
    stage: int | str | None = None
    rationale: str = ""
    thin_sections: list[str] = field(default_factory=list)
    forced_stage1: bool = False
    matched: list[str] = field(default_factory=list)
    reach: int = 2
    evidence: list[str] = field(default_factory=list)  # direct signals found (paths, routing keywords), a few
    evidence_units: int = 0
    minimum: bool = False  # lifted to base 1 so the input has its minimum of reviewers

    @property
    def raw_score(self) -> int:
        return self.base_score + self.domain_boost + self.project_bonus + self.domain_agent_bonus


@dataclass(frozen=True, slots=True)
class Ceiling:
    """The dynamic slot ceiling: base + scope + domains, capped."""

    base: int
    scope: int
    domains: int
    total: int


@dataclass(frozen=True)
class Overrides:
    """What a person (or ``--agents``) changed about the plan: a value, each edit a new one."""

    promoted: frozenset[str] = frozenset()
    demoted: frozenset[str] = frozenset()
    removed: frozenset[str] = frozenset()
    added: Mapping[str, float] = field(default_factory=dict)

    def promote(self, name: str, *, add: bool = False) -> Overrides:
        """Into Stage 1 (``add``: and onto the plan with score 1 when nothing matched its lane)."""
        added = {**self.added, name: self.added.get(name, 1.0)} if add else self.added
        return Overrides(self.promoted | {name}, self.demoted - {name}, self.removed - {name}, added)

    def demote(self, name: str) -> Overrides:
        """Into Stage 2."""
        return Overrides(self.promoted - {name}, self.demoted | {name}, self.removed, self.added)

    def remove(self, name: str, *more: str) -> Overrides:
        """Off the plan."""
        gone = {name, *more}
        return Overrides(self.promoted - gone, self.demoted, self.removed | gone, self.added)

    def add(self, name: str, score: float) -> Overrides:
        """Onto the plan with ``score``."""
        return Overrides(self.promoted, self.demoted, self.removed - {name}, {**self.added, name: score})


@dataclass(frozen=True)
class _Matcher:
    """What makes a unit relevant to one agent (the same patterns content routing uses)."""

    concerns: Finder | None
    hunks: Finder | None
    sections: Finder | None
    globs: tuple[str, ...]
    cross_cutting: bool

    @classmethod
    def of(cls, agent: AgentDefinition) -> _Matcher:
        routing = agent.routing
        return cls(
            Finder.build(agent.concerns, word_pattern),
            Finder.build(routing.hunk_keywords, keyword_pattern),
            Finder.build(routing.section_keywords, keyword_pattern),
            tuple(routing.priority_globs),
            routing.cross_cutting,
        )

    def matches(self, unit: Unit, kind: str) -> str | None:
        """Why the unit matches (a short reason), or None."""
        direct = self.direct(unit, kind)
        if direct:
            return direct[0]
        if self.concerns is not None:
            found = self.concerns.first(Text.of(unit.text))
            if found:
                return found.lower()
        return None

    def direct(self, unit: Unit, kind: str) -> list[str]:
        """The agent's direct signals in the unit, one per kind: its path, a routing keyword, a section keyword."""
        found: list[str] = []
        if unit.file and self.globs and glob_match(unit.file, self.globs):
            found.append(f"path {unit.file}")
        if (kind == "diff" or unit.code) and self.hunks is not None:
            word = self.hunks.first(Text.of(unit.text))
            if word:
                found.append(word.lower())
        if unit.section and self.sections is not None:
            word = self.sections.first(Text.of(unit.section))
            if word:
                found.append(word.lower())
        return found


def base_score(share: float, config: Config) -> int:
    """0..3 from the matching share (section 3's thresholds)."""
    if share <= 0:
        return 0
    if share < config.scoring.adjacent_share:
        return 1
    if share <= config.scoring.core_share:
        return 2
    return 3


def evidence_score(units: int, strongest: int) -> int:
    """0..3 from how many units carry direct signals, and the most kinds one unit shows."""
    if units <= 0:
        return 0
    if units >= 3 or strongest >= 2:
        return 3
    return units


def prefilter(agent: AgentDefinition, profile: InputProfile, domains: Sequence[str], text: str) -> str | None:
    """Why the agent is filtered out before scoring (None when it passes)."""
    rule = agent.prefilter
    if rule.documents_only:
        reason = not_prose(profile)
        if reason is not None:
            return reason
    if rule.always:
        return None
    if profile.kind == "diff":
        matcher = _Matcher.of(agent)
        if any(matcher.matches(u, "diff") for u in profile.units):
            return None
        if profile.diff is not None and any(glob_match(p, agent.routing.critical_globs) for p in profile.diff.paths):
            return None
        return "no changed file or hunk matches its routing patterns"
    if profile.document_type and profile.document_type in rule.document_types:
        return None
    # Source code speaks in calls, not prose: its routing keywords (``execute(``, ``subprocess``,
    # ``lock``) let an agent in just as they do for a diff's hunks.
    routing = agent.routing
    code_signals = Finder.build(routing.hunk_keywords, keyword_pattern)
    for unit in profile.units:
        if not unit.code:
            continue
        if unit.file and glob_match(unit.file, [*routing.priority_globs, *routing.critical_globs]):
            return None
        if code_signals is not None and code_signals.found_in(Text.of(unit.text)):
            return None
    if any(d in rule.domains for d in domains):
        return None
    finder = Finder.build(rule.keywords, word_pattern)
    if finder is not None and finder.found_in(Text.of(text)):
        return None
    shown = ", ".join(rule.keywords[:5])
    return f"the input never mentions {shown}, ..." if shown else "no pre-filter rule lets it pass"


def _is_document(path: str | None) -> bool:
    return bool(path) and PurePosixPath(str(path)).suffix.lower() in DOCUMENT_SUFFIXES


def not_prose(profile: InputProfile) -> str | None:
    """Why an input is not for a reviewer of prose (None when it is).

    A document passes; a diff when it changes a document; a directory when
    documents hold most of its lines (an RFC folder, docs/), not a code
    repository that happens to have a README.
    """
    if profile.kind == "document":
        return None
    if profile.kind == "diff":
        paths = profile.diff.paths if profile.diff else []
        return None if any(_is_document(p) for p in paths) else "it reviews documents; the diff changes none"
    if profile.kind == "directory":
        total = sum(u.weight for u in profile.units)
        prose = sum(u.weight for u in profile.units if _is_document(u.file) and not u.code)
        return None if total and prose * 2 >= total else "it reviews documents; this directory is mostly code"
    return None if _is_document(profile.path) else "it reviews documents; the input is code"


def ceiling(profile: InputProfile, domain_count: int, config: Config) -> Ceiling:
    """4 + scope + domains, capped at ceiling.max."""
    settings = config.ceiling
    if profile.kind == "directory":
        scope = settings.scope_directory
    elif profile.kind == "diff":
        changed = profile.diff.changed if profile.diff else 0
        scope = settings.scope_diff_large if changed >= settings.diff_large_lines else settings.scope_diff_small
    else:
        scope = settings.scope_file
    bonus = 0 if domain_count == 0 else settings.domains_one if domain_count == 1 else settings.domains_many
    return Ceiling(settings.base, scope, bonus, min(settings.base + scope + bonus, settings.max))


def _covers_thin(matcher: _Matcher, profile: InputProfile) -> list[str]:
    thin = {s.title for s in profile.thin_sections()}
    return sorted(u.section for u in profile.units if u.section in thin and matcher.matches(u, profile.kind))


def score_agent(
    agent: AgentDefinition,
    profile: InputProfile,
    domains: Sequence[str],
    trust: Mapping[str, float],
    config: Config,
    text: str,
) -> AgentScore:
    """Every component of one agent's score, with its rationale."""
    record = AgentScore(agent.name, agent.category, reach=agent.reach)
    reason = prefilter(agent, profile, domains, text)
    if reason is not None:
        record.prefiltered = True
        record.rationale = f"filtered: {reason}"
        return record
    matcher = _Matcher.of(agent)
    total = sum(u.weight for u in profile.units) or 1
    matched: dict[str, int] = {}
    direct: dict[str, int] = {}
    weight = strongest = 0
    for unit in profile.units:
        signals = matcher.direct(unit, profile.kind)
        why = signals[0] if signals else matcher.matches(unit, profile.kind)
        if why is not None:
            weight += unit.weight
            matched[why] = matched.get(why, 0) + 1
        if signals:
            record.evidence_units += 1
            strongest = max(strongest, len(signals))
            for signal in signals:
                direct[signal] = direct.get(signal, 0) + 1
    record.share = round(weight / total, 4)
    record.base_score = max(base_score(record.share, config), evidence_score(record.evidence_units, strongest))
    record.matched = _top(matched)
    record.evidence = _top(direct)
    if record.base_score == 0 and matcher.cross_cutting and any(u.code for u in profile.units):
        record.base_score = 1
        record.matched = ["source code"]
    critical = profile.diff is not None and any(glob_match(p, agent.routing.critical_globs) for p in profile.diff.paths)
    if critical:
        record.base_score = 3
    outside = bool(agent.domains) and agent.category != "project" and not set(agent.domains) & set(domains)
    if outside and not critical:
        record.base_score = min(record.base_score, 1)
    if record.base_score == 0:
        record.rationale = "base 0: nothing in the input matches its concerns"
        return record
    best = best_profile_for(agent.name, domains)
    if best is not None:
        record.domain_boost = config.scoring.domain_boost
        record.boost_domain = best.name
    if agent.category == "project" or profile.project.has_project_docs:
        record.project_bonus = config.scoring.project_bonus
    if agent.category == "project" and any(d in domains for d in agent.domains):
        record.domain_agent_bonus = config.scoring.domain_agent_bonus
    record.trust_multiplier = trust.get(agent.name, 1.0)
    record.final_score = round(min(record.raw_score * record.trust_multiplier, config.scoring.max_score), 2)
    record.thin_sections = _covers_thin(matcher, profile)
    stage1 = {a for d in domains if d in load_profiles() for a in load_profiles()[d].stage1_agents}
    sensitive = agent.reach >= 3 and record.evidence_units > 0 and record.final_score >= 3
    record.forced_stage1 = agent.name in stage1 or critical or sensitive
    record.rationale = _rationale(record, critical=critical, outside=outside)
    return record


def _top(counts: Mapping[str, int]) -> list[str]:
    """The five most frequent reasons, most frequent first."""
    return [w for w, _n in sorted(counts.items(), key=lambda i: (-i[1], i[0]))[:5]]


def _rationale(record: AgentScore, *, critical: bool, outside: bool) -> str:
    """One line saying where every point of the score came from."""
    parts = [f"base {record.base_score} ({record.share:.0%} of the input: {', '.join(record.matched) or '-'})"]
    if record.evidence_units:
        parts.append(f"evidence in {record.evidence_units} unit(s): {', '.join(record.evidence)}")
    if critical:
        parts.append("touches a security-critical path")
    if outside:
        parts.append("at most 1 outside its domains")
    if record.domain_boost:
        parts.append(f"+{record.domain_boost} {record.boost_domain} criteria")
    if record.project_bonus:
        parts.append(f"+{record.project_bonus} project " + ("agent" if record.category == "project" else "docs"))
    if record.domain_agent_bonus:
        parts.append(f"+{record.domain_agent_bonus} domain agent")
    if record.trust_multiplier != 1.0:
        parts.append(f"x{record.trust_multiplier:.2f} trust")
    return "; ".join(parts)


def _order(record: AgentScore) -> tuple[float, int, int, str]:
    """Score, then the severity its lane can reach, then project before built-in; the name only last."""
    return (-record.final_score, -record.reach, CATEGORY_RANK.get(record.category, 3), record.name)


def stage1_size(limit: Ceiling, selected: int, config: Config) -> int:
    """40% of the ceiling, rounded up, within 2..5, leaving Stage 2 at least one agent."""
    settings = config.selection
    size = min(max(math.ceil(settings.stage1_ratio * limit.total), settings.stage1_min), settings.stage1_max)
    if selected <= settings.stage1_min:
        return selected
    return max(settings.stage1_min, min(size, selected - 1))


def lift_to_minimum(records: list[AgentScore], wanted: int, removed: set[str]) -> None:
    """Give a non-empty input its minimum of reviewers (interflux keeps two), in place.

    The best-placed agents with base 0 are lifted to base 1: ones no
    pre-filter excluded first, built-in (broad lanes) before project agents
    (narrow ones, whose concerns did not match), then by reach, then by name.
    """
    live = [r for r in records if r.base_score >= 1 and r.name not in removed]
    spare = sorted(
        (r for r in records if r.base_score == 0 and r.name not in removed),
        key=lambda r: (r.prefiltered, r.category != "builtin", -r.reach, r.name),
    )
    for record in spare[: max(0, wanted - len(live))]:
        record.base_score, record.prefiltered, record.minimum = 1, False, True
        record.final_score = max(record.final_score, round(record.trust_multiplier, 2))
        record.rationale = f"lifted to base 1: every input gets at least {wanted} reviewers ({record.rationale})"


def _select(candidates: list[AgentScore], forced: list[AgentScore], limit: Ceiling, config: Config) -> list[AgentScore]:
    """Staged selection: forced ones, >= 3 then >= 2 up to the ceiling, thin-section cover, the minimum."""
    selected: list[AgentScore] = list(forced)
    for threshold in (3.0, 2.0):
        for record in candidates:
            if record not in selected and record.final_score >= threshold and len(selected) < limit.total:
                selected.append(record)
    for record in candidates:
        if record not in selected and record.final_score >= 1 and record.thin_sections and len(selected) < limit.total:
            selected.append(record)
    for record in candidates:  # the minimum of reviewers holds when staged too
        if len(selected) >= config.selection.min_agents:
            break
        if record not in selected:
            selected.append(record)
    return selected


def assign(
    records: list[AgentScore],
    limit: Ceiling,
    config: Config,
    overrides: Overrides | None = None,
    overlaps: Mapping[str, Sequence[str]] | None = None,
    *,
    staged: bool = True,
    free: Collection[str] = (),
) -> None:
    """Selection, stages and the expansion pool, in place (section 3's rules in order).

    Unstaged (the whole roster fits the budget), every candidate is Stage 1 but the ones a person demoted,
    and so is every ``free`` agent (one that costs nothing to run: offline, its own checks decide what applies).
    """
    overrides = overrides or Overrides()
    for record in records:
        record.stage = None
        if record.name in overrides.added:
            record.final_score = overrides.added[record.name]
            record.base_score = max(record.base_score, 1)
            record.prefiltered = False
    candidates = sorted((r for r in records if r.base_score >= 1 and r.name not in overrides.removed), key=_order)
    if not staged:  # a person who demoted an agent at the gate still gets a Stage 2 for it
        costless = [r for r in records if r.name in free and r not in candidates and r.name not in overrides.removed]
        for record in [*candidates, *costless]:
            record.stage = 2 if record.name in overrides.demoted else 1
        records.sort(key=lambda r: (-r.final_score, r.name))
        return
    forced = [
        r for r in candidates if (r.forced_stage1 or r.name in overrides.promoted) and r.name not in overrides.demoted
    ]
    selected = _select(candidates, forced, limit, config)
    overlapped = {
        name
        for project, names in (overlaps or {}).items()
        if any(s.name == project for s in selected)
        for name in names
    }
    size = stage1_size(limit, len(selected), config)
    ranked = sorted(
        selected,
        key=lambda r: (
            r not in forced,
            r.name in overrides.demoted,
            r.name in overlapped,
            *_order(r),
        ),
    )
    stage1 = ranked[: max(size, len(forced))]
    for record in selected:
        record.stage = 1 if record in stage1 else 2
    for record in candidates:
        if record.stage is None and record.final_score >= config.selection.expansion_pool_min_score:
            record.stage = "pool"
    # Reported order (triage.json, the table): final score, then name.
    records.sort(key=lambda r: (-r.final_score, r.name))
