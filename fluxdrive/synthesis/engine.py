"""Synthesis, PROTOCOL.md section 5: from a directory of agent reports to one result.

Validate and collect every report (index first, prose fallback), deduplicate
(rules 1-5), ground every finding in the reviewed input (an ungrounded P0/P1 is
demoted to P2, see grounding.py), measure convergence, relate the peer channel's timeline, derive
the verdict, and number the findings deterministically: ``P0-1``, ``P0-2``,
``P1-1``... ordered by severity, convergence (descending), title. The same
inputs always give the same result, byte for byte apart from timestamps.
"""

from __future__ import annotations

import contextlib
import gc
import stat
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from fluxdrive.config.model import Config
from fluxdrive.contracts import OutputStatus, derive_verdict
from fluxdrive.contracts.run_manifest import RUN_FILE, ManifestError, RunManifest, SkippedFile, load_manifest
from fluxdrive.core.clock import utc_timestamp
from fluxdrive.core.confine import is_inside
from fluxdrive.core.paths import require_directory
from fluxdrive.core.project import find_project_root
from fluxdrive.errors import FluxdriveError, InputError, ReviewError
from fluxdrive.exchange import channel
from fluxdrive.synthesis import convergence, evidence, grounding, measured, reactions, timeline, validation
from fluxdrive.synthesis.collect import collect_agent, discover, frozen_report
from fluxdrive.synthesis.dedup import Cluster, Similarity, deduplicate, normalize_title
from fluxdrive.synthesis.model import SEVERITY_ORDER, AgentOutput, Conflict, Finding, Grounding, RawFinding
from fluxdrive.synthesis.prose import recommendations

PROTOCOL_VERSION = "1.0"
INCOMPLETE = "incomplete"
# What a whole review can conclude. "incomplete" stands where "safe" would: a
# review that did not cover its input has not shown it safe (see Synthesis.verdict).
REVIEW_VERDICTS = ("safe", "needs-changes", "risky", INCOMPLETE, "error")
# Where an ungrounded P0/P1 lands: still shown and counted, but it no longer blocks on a model's word alone.
DEMOTED_TO = "P2"


@dataclass
class Synthesis:
    """Everything synthesis concluded, ready to render."""

    output_dir: Path
    input: str
    input_type: str
    outputs: dict[str, AgentOutput]
    findings: list[Finding]
    improvements: list[Finding]
    findings_verdict: str  # what the findings say (safe, needs-changes, risky), or error
    early_stop: bool = False
    skipped_agents: list[str] = field(default_factory=list)
    content_routing_active: bool = False
    timeline: timeline.Timeline = field(default_factory=timeline.Timeline)
    conflicts: list[Conflict] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # warnings: something the reader must know about the verdict
    info: list[str] = field(default_factory=list)  # what the run also did (the knowledge lifecycle): not a warning
    reviewed: str = ""
    synthesis_timestamp: str = ""
    skipped_files: list[SkippedFile] = field(default_factory=list)
    files_reviewed: int | None = None
    interrupted: bool = False
    line_filter: tuple[str, int] | None = None  # a diff review's --filter and how many findings it left out
    manifest: RunManifest | None = field(default=None, repr=False)  # the run record it was built from, if any
    # The reviewed project, as the review that synthesized in memory knows it (None when read back from disk,
    # where run.json may only narrow the output directory's own project: a foreign run must not widen it).
    project_root: Path | None = field(default=None, repr=False)

    @property
    def verdict(self) -> str:
        """The review's verdict: never ``safe`` when the review is incomplete.

        Why: CI gates, check runs and scripts read one word (``.verdict ==
        "safe"``), not the ``complete`` flag beside it, so a review whose
        fd-safety crashed must not say ``safe`` anywhere. Findings that are
        already risky or needs-changes keep their word (a gate reading
        ``== "risky"`` still blocks); what would have been ``safe`` becomes
        ``incomplete``.
        """
        if self.findings_verdict == "safe" and self.incomplete:
            return INCOMPLETE
        return self.findings_verdict

    @property
    def incomplete(self) -> list[str]:
        """Why this review does not cover what it was asked to (empty: it does).

        An agent that failed, was cut off, or wrote a report nothing could be
        read from, an interruption, or an input none of whose files could be
        read: each means the verdict speaks for less than the input, so it
        must never pass as a clean one (exit codes treat it as failing unless
        ``--allow-incomplete``).
        """
        reasons = []
        for name, output in sorted(self.outputs.items()):
            if output.failed:
                reasons.append(f"{name} failed ({output.reason})")
            elif output.partial:
                reasons.append(f"{name} was cut off (partial report)")
            elif output.status is OutputStatus.MALFORMED and not output.findings:
                reasons.append(f"{name}'s report could not be read ({output.reason})")
        if self.interrupted:
            reasons.append("the review was interrupted")
        if self.skipped_files and self.files_reviewed is not None:
            unread = {s.path for s in self.skipped_files if s.agents}
            if self.files_reviewed - len(unread) <= 0:
                reasons.append(f"none of the input's files could be reviewed ({len(self.skipped_files)} skipped)")
        return reasons

    @property
    def agents_launched(self) -> list[str]:
        return sorted(self.outputs)

    @property
    def agents_completed(self) -> list[str]:
        return sorted(a for a, o in self.outputs.items() if o.completed)

    @property
    def agents_failed(self) -> list[str]:
        return sorted(a for a, o in self.outputs.items() if o.failed)

    @property
    def agents_partial(self) -> list[str]:
        return sorted(a for a, o in self.outputs.items() if o.partial and not o.failed)

    @property
    def validation_line(self) -> str:
        """ "5/6 agents returned a valid Findings Index, 1 failed" (plus malformed and partial)."""
        total = len(self.outputs)
        valid = sum(1 for o in self.outputs.values() if o.status is OutputStatus.VALID and not o.partial)
        parts = [f"{valid}/{total} agents returned a valid Findings Index"]
        malformed = sum(1 for o in self.outputs.values() if o.status is OutputStatus.MALFORMED and not o.partial)
        if malformed:
            parts.append(f"{malformed} malformed (read with the prose fallback)")
        if self.agents_partial:
            parts.append(f"{len(self.agents_partial)} partial (cut off at the timeout)")
        if self.agents_failed:
            parts.append(f"{len(self.agents_failed)} failed")
        return ", ".join(parts)

    def counts(self) -> dict[str, int]:
        """Findings per severity."""
        return {s: sum(1 for f in self.findings if f.severity == s) for s in SEVERITY_ORDER}


def _preferred(cluster: Cluster, outputs: Mapping[str, AgentOutput]) -> int:
    """Index of the member whose wording wins: a project agent's, then the longest."""

    def rank(index: int) -> tuple[int, int, str, str]:
        member = cluster.members[index]
        project = outputs[member.agent].category == "project" if member.agent in outputs else False
        return (0 if project else 1, -len(member.title), member.agent, member.title)

    return min(range(len(cluster.members)), key=rank)


def _cwe_number(cwe: str) -> tuple[int, str]:
    number = cwe.rsplit("-", 1)[-1]
    return (int(number), cwe) if number.isdigit() else (0, cwe)


def _places(cluster: Cluster) -> list[str]:
    """The places the agents reported (sorted), then every other place a member stands for (``also:``)."""
    places = dict.fromkeys(cluster.locations)
    for member in cluster.members:
        places.update(dict.fromkeys(member.also))
    return list(places)


def _finding(cluster: Cluster, outputs: Mapping[str, AgentOutput]) -> Finding:
    chosen = cluster.members[_preferred(cluster, outputs)]
    descriptions: dict[str, str] = {}
    for member in cluster.members:
        previous = descriptions.get(member.agent)
        descriptions[member.agent] = (
            member.title if previous is None or previous == member.title else f"{previous} / {member.title}"
        )
    rated = cluster.severity_by_agent()
    return Finding(
        id="",
        severity=cluster.severity,
        agents=cluster.agents,
        section=chosen.section,
        title=chosen.title,
        locations=_places(cluster),
        improvement=chosen.improvement,
        provenance={a: outputs[a].provenance for a in cluster.agents if a in outputs},
        severity_conflict=rated if len(set(rated.values())) > 1 else None,
        from_prose=all(m.from_prose for m in cluster.members),
        descriptions=dict(sorted(descriptions.items())),
        source_ids={m.agent: m.local_id for m in sorted(cluster.members, key=lambda m: (m.agent, m.local_id))},
        rules=sorted({m.rule for m in cluster.members if m.rule}),
        cwe=sorted({c for m in cluster.members for c in m.cwe}, key=_cwe_number),
        members=list(cluster.members),
    )


def _recommendations(
    finding: Finding, fixes: Mapping[str, Mapping[str, str]], similar: Similarity
) -> dict[str, str] | None:
    """Rule 5: every agent's fix when they disagree (None when they agree or are silent)."""
    if len(finding.agents) < 2:
        return None
    found: dict[str, str] = {}
    for member in finding.members:
        if member.from_prose or member.agent in found:
            continue
        text = fixes.get(member.agent, {}).get(member.local_id)
        if text:
            found[member.agent] = text
    keys: list[tuple[str, frozenset[str]]] = [(normalize_title(t), frozenset()) for t in found.values()]
    if len(found) < 2 or all(similar.same(keys[0], k) for k in keys[1:]):
        return None
    return dict(sorted(found.items()))


def _number(findings: list[Finding], improvements: bool) -> list[Finding]:
    ordered = sorted(
        findings,
        key=lambda f: (
            SEVERITY_ORDER[f.severity],
            *evidence.rank_key(f),
            -f.convergence,
            f.title.lower(),
            f.locations,
            f.agents,
        ),
    )
    counters: dict[str, int] = {}
    for finding in ordered:
        prefix = "IMP" if improvements else finding.severity
        counters[prefix] = counters.get(prefix, 0) + 1
        finding.id = f"{prefix}-{counters[prefix]}"
    return ordered


def _assemble(
    clusters: list[Cluster],
    outputs: Mapping[str, AgentOutput],
    manifest: RunManifest | None,
    config: Config,
    improvements: bool,
    ground: Callable[[Finding], Grounding | None],
    weigh: Callable[[Finding], None] | None = None,
    checked: Callable[[Finding], None] | None = None,
    supported: Callable[[Finding], None] | None = None,
    measure: Callable[[Finding], None] | None = None,
) -> list[Finding]:
    findings = [_finding(c, outputs) for c in clusters]
    for finding in findings:
        _ground(finding, ground(finding))
        if checked is not None:  # the checker models' answers: a rejected P0/P1 drops (synthesis/validation.py)
            checked(finding)
        if weigh is not None:  # the reaction round's answers (synthesis/reactions.py)
            weigh(finding)
        measured = convergence.measure(
            finding.members, finding.severity, outputs, manifest, config.synthesis, reactions=finding.reactions
        )
        finding.convergence, finding.population = measured.convergence, measured.population
        finding.confidence, finding.cross_family_convergence = measured.confidence, measured.families
        finding.weighted_convergence = measured.weighted
        finding.verification_recommended = measured.verification_recommended and not improvements
        finding.partial, finding.beyond_slice = measured.partial, list(measured.beyond_slice)
        if supported is not None:  # which analyzers and models support it (synthesis/evidence.py)
            supported(finding)
        if measure is not None:  # how often its rule was right (synthesis/measured.py): confidence, demotion
            measure(finding)
    ordered = _number(findings, improvements)
    position = {id(f): n for n, f in enumerate(ordered)}
    for index, cluster in enumerate(clusters):
        target = findings[index]
        target.co_located = bool(cluster.co_located)
        target.co_located_with = [ordered[n].id for n in sorted(position[id(findings[j])] for j in cluster.co_located)]
        target.cross_references = [
            ordered[n].id for n in sorted(position[id(findings[j])] for j in cluster.cross_references)
        ]
    return ordered


def _ground(finding: Finding, judged: Grounding | None) -> None:
    """Record the grounding; an ungrounded P0/P1 drops to P2 (the severity the agents gave is kept on it)."""
    if judged is not None and not judged.grounded and SEVERITY_ORDER[finding.severity] < SEVERITY_ORDER[DEMOTED_TO]:
        judged = Grounding(False, judged.reason, demoted_from=finding.severity)
        finding.severity = DEMOTED_TO
    finding.grounding = judged


def _grounding_judge(
    root: Path | None, manifest: RunManifest | None, raws: Sequence[RawFinding], config: Config
) -> Callable[[Finding], Grounding | None]:
    """How each finding is grounded against the reviewed project (not at all when it is unknown).

    The project is the one the review in memory reviewed, or the one run.json names when it lies
    inside the output directory's own project (a foreign run.json must not widen what is read).
    Document sections are looked up in the markdown files the findings cite, and the input itself.
    A diff is not judged: its added lines need not be in the working tree (a saved or piped diff of a
    branch that is not checked out), and judging them there would demote true findings.
    With ``synthesis.grounding`` off nothing is judged (to measure what grounding changes).
    """
    off = not config.synthesis.grounding
    if off or root is None or (manifest is not None and manifest.input is not None and manifest.input.type == "diff"):
        return lambda finding: None
    read = grounding.project_reader(root, config.static.max_file_bytes)
    cited = {grounding.place(p)[0] for r in raws for p in (r.location, *r.also) if p}
    label = manifest.input.path if manifest and manifest.input else ""
    documents = sorted(p for p in {*cited, label} if p.lower().endswith((".md", ".markdown")))
    return lambda finding: grounding.judge(finding.locations, finding.title, read, documents)


def _reactions(
    output_dir: Path, root: Path, project: Path | None, manifest: RunManifest | None, config: Config, notes: list[str]
) -> tuple[list[reactions.Reaction], Callable[[Finding], None]]:
    """The reaction round's answers and how they weigh on a finding; evidence is looked up in the reviewed
    project (not in a diff's working tree, which need not hold the change: a citation is then taken as given)."""
    found, unread = reactions.load(output_dir, root)
    notes.extend(unread)
    diff = manifest is not None and manifest.input is not None and manifest.input.type == "diff"
    read = grounding.project_reader(project, config.static.max_file_bytes) if project and not diff else None
    return found, reactions.weigher(found, read)


def _validation(output_dir: Path, root: Path, notes: list[str]) -> Callable[[Finding], None]:
    """The checker models' answers (validation.jsonl) and how they apply to a finding."""
    checks, unread = validation.read(output_dir, root)
    notes.extend(unread)
    found = validation.index(checks)
    return lambda finding: validation.apply(finding, found)


def _evidence(output_dir: Path, root: Path, outputs: Mapping[str, AgentOutput], notes: list[str]) -> evidence.Backing:
    """The analyzer candidates model agents were given, and their answers (none: no evidence in this run)."""
    given, unread = evidence.read_given(output_dir, root, outputs)
    notes.extend(unread)
    answers = {a: evidence.parse_answers(outputs[a].text, [c.id for c in g.candidates]) for a, g in given.items()}
    return evidence.Backing(given, answers, {a: o.provenance for a, o in outputs.items()})


def _measure(output_dir: Path, root: Path, config: Config, notes: list[str]) -> Callable[[Finding], None]:
    """How the run's measured table (measured-precision.json) sets a finding's confidence and demotes it."""
    table, unread = measured.read(output_dir, root)
    notes.extend(unread)
    settings = config.synthesis

    def apply(finding: Finding) -> None:
        keys = measured.keys_of(finding.rules, finding.agents, finding.provenance)
        found = measured.assess(
            table,
            finding.severity,
            keys,
            min_judged=settings.measured_min_judged,
            demote_below=settings.demote_below_precision,
        )
        if found is None:
            return
        finding.measured, finding.confidence = found, found.confidence
        if found.demoted_from:
            finding.severity = measured.lowered(finding.severity)

    return apply


def _grounding_root(given: RunManifest | None, manifest: RunManifest | None, root: Path) -> Path | None:
    if given is not None:
        return _reviewed_root(given)
    claimed = manifest.input.project_root if manifest is not None and manifest.input is not None else ""
    return Path(claimed) if claimed and is_inside(Path(claimed), root) else None


def _apply_timeline(
    line: timeline.Timeline,
    findings: Sequence[Finding],
    outputs: Mapping[str, AgentOutput],
    manifest: RunManifest | None,
    config: Config,
) -> None:
    """Discovery credit, and stronger confidence where a peer corroborated a finding."""
    timeline.credit_discovery(line.entries, findings)
    for event in line.of_kind("adjustment"):
        if not timeline.corroborates(event.detail):
            continue
        entry = next((e for e in line.entries if e.agent == event.blocking_agent and e.summary == event.summary), None)
        for finding in findings:
            if entry is not None and timeline.matches(entry, finding) and event.agent not in finding.acknowledged_by:
                finding.acknowledged_by.append(event.agent)
    for finding in findings:
        if finding.acknowledged_by:
            finding.acknowledged_by.sort()
            raised = convergence.measure(
                finding.members,
                finding.severity,
                outputs,
                manifest,
                config.synthesis,
                acknowledged=True,
                reactions=finding.reactions,
            )
            finding.confidence = finding.measured.confidence if finding.measured else raised.confidence


# The timeline events that are conflicts too, and how the Conflicts section words each (in this order).
_EVENT_CONFLICTS = {
    "contradiction": "{agent} contradicts {blocking}'s blocking finding{where} without acknowledging it: {detail}",
    "disagreement": "{agent} acknowledges but disputes {blocking}'s blocking finding{where}: {detail}",
}


def _conflicts(findings: Sequence[Finding], line: timeline.Timeline) -> list[Conflict]:
    out = []
    for finding in findings:
        if finding.severity_conflict:
            ratings = ", ".join(f"{a} {s}" for a, s in finding.severity_conflict.items())
            out.append(
                Conflict(
                    "severity", finding.id, f"{finding.id} {finding.title}: rated {ratings}; {finding.severity} kept"
                )
            )
        if finding.recommendations:
            fixes = "; ".join(f"{a}: {t}" for a, t in finding.recommendations.items())
            out.append(Conflict("recommendation", finding.id, f"{finding.id} {finding.title}: {fixes}"))
    for kind, wording in _EVENT_CONFLICTS.items():
        for event in line.of_kind(kind):
            where = f" at {event.location}" if event.location else ""
            text = wording.format(agent=event.agent, blocking=event.blocking_agent, where=where, detail=event.detail)
            out.append(Conflict(kind, None, text))
    return out


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector while synthesis builds its data.

    Synthesis allocates hundreds of thousands of small, acyclic objects; the
    collector's full passes over a growing heap made the cost superlinear
    (20k findings took 2.3x the 10k time, 1.9x with the collector paused).
    Reference counting still frees everything; the collector resumes after.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def synthesize(
    output_dir: Path,
    config: Config | None = None,
    *,
    now: datetime | None = None,
    manifest: RunManifest | None = None,
) -> Synthesis:
    """Synthesize the agent reports in ``output_dir`` (PROTOCOL.md section 5). ``manifest``: the run's record
    as the review holds it (a review synthesizes before its final run.json is written); else run.json."""
    with _collector_paused():
        return _synthesize(Path(output_dir), config or Config(), now, manifest)


def _reviewed_root(given: RunManifest | None) -> Path | None:
    """The project a review in progress says it reviewed (its own record, never one read from disk)."""
    claimed = given.input.project_root if given is not None and given.input is not None else ""
    return Path(claimed) if claimed else None


def _read_manifest(output_dir: Path, root: Path, notes: list[str]) -> RunManifest | None:
    """run.json, or None with a note when it cannot be trusted."""
    try:
        run_file = output_dir / RUN_FILE
        if run_file.exists() and not (is_inside(run_file, root) and stat.S_ISREG(run_file.stat().st_mode)):
            raise ManifestError(f"{run_file} is not a regular file inside the project root")
        return load_manifest(output_dir)
    except ManifestError as exc:
        notes.append(f"run.json ignored: {exc}")
        return None


def _synthesize(output_dir: Path, config: Config, now: datetime | None, given: RunManifest | None) -> Synthesis:
    require_directory(output_dir, "output directory")
    notes: list[str] = []
    root = find_project_root(output_dir)
    manifest = given if given is not None else _read_manifest(output_dir, root, notes)
    discovered = discover(output_dir, manifest)
    notes.extend(discovered.notes)
    agents = manifest.launched if manifest and manifest.launched else sorted(discovered.files)
    if not agents:
        raise ReviewError(
            f"no agent reports in {output_dir}", hint="point at a run's output directory (it holds <agent>.md files)"
        )
    run_id = manifest.run_id if manifest else ""
    for agent in agents:
        _copy, changed = frozen_report(output_dir, agent, manifest.agents.get(agent) if manifest else None, root)
        if changed:
            notes.append(changed)
    outputs = {a: collect_agent(output_dir, a, discovered.files.get(a), manifest, run_id, root) for a in agents}
    notes.extend(note for output in outputs.values() for note in output.notes)
    try:
        channel_path = output_dir / channel.CHANNEL_FILE
        if channel_path.exists() and not is_inside(channel_path, root):
            raise InputError(f"{channel_path} resolves outside the project root")
        read = channel.read(channel_path)
    except FluxdriveError as exc:
        notes.append(f"peer-findings.jsonl ignored: {exc.one_line()}")
        read = channel.ChannelRead(())
    if read.skipped:
        notes.append(f"skipped {read.skipped} incomplete or invalid line(s) of peer-findings.jsonl")
    similar = Similarity(config.synthesis.dedup_max_distance, config.synthesis.dedup_min_shared_words)
    raws = [f for output in outputs.values() for f in output.findings]
    backing = _evidence(output_dir, root, outputs, notes)
    raws.extend(evidence.candidate_findings(backing.given))

    def title_of(cluster: Cluster) -> str:
        return cluster.members[_preferred(cluster, outputs)].title

    ground = _grounding_judge(_grounding_root(given, manifest, root), manifest, raws, config)
    reacted, weigh = _reactions(output_dir, root, _grounding_root(given, manifest, root), manifest, config, notes)
    findings = _assemble(
        deduplicate([r for r in raws if not r.improvement], similar, title_of),
        outputs,
        manifest,
        config,
        False,
        ground,
        weigh,
        _validation(output_dir, root, notes),
        backing.apply,
        _measure(output_dir, root, config, notes),
    )
    improvements = _assemble(
        deduplicate([r for r in raws if r.improvement], similar, title_of), outputs, manifest, config, True, ground
    )
    merged_agents = {a for f in findings if len(f.agents) > 1 for a in f.agents}
    fixes = {a: recommendations(outputs[a].text) for a in sorted(merged_agents)}
    for finding in findings:
        finding.recommendations = _recommendations(finding, fixes, similar)
    line = timeline.build(channel.timeline(read.findings), read.skipped, outputs)
    _apply_timeline(line, findings, outputs, manifest, config)
    flattery = reactions.sycophancy(findings, reacted)
    notes.extend([flattery] if flattery else [])
    completed = [o for o in outputs.values() if o.completed]
    verdict = derive_verdict(f.severity for f in findings) if completed else "error"
    stamp = utc_timestamp(now)
    return Synthesis(
        output_dir=output_dir,
        input=manifest.input.path if manifest and manifest.input else output_dir.name,
        input_type=manifest.input.type if manifest and manifest.input else "unknown",
        outputs=dict(sorted(outputs.items())),
        findings=findings,
        improvements=improvements,
        findings_verdict=verdict,
        early_stop=manifest.early_stop if manifest else False,
        skipped_agents=manifest.skipped if manifest else [],
        content_routing_active=manifest.content_routing_active if manifest else False,
        timeline=line,
        conflicts=_conflicts(findings, line),
        notes=notes,
        reviewed=(manifest.started_at if manifest and manifest.started_at else stamp),
        synthesis_timestamp=stamp,
        skipped_files=list(manifest.files.skipped) if manifest else [],
        files_reviewed=manifest.files.reviewed if manifest and "files" in manifest.model_fields_set else None,
        interrupted=manifest.interrupted if manifest else False,
        manifest=manifest,
        project_root=_reviewed_root(given),
    )
