"""``findings.json``: the machine-readable result of a review (PROTOCOL.md 5.7).

The document is a pydantic model, so its JSON Schema is generated from the
same code that writes it (``fluxdrive schema findings`` prints it) and every
produced file can be validated against it. Field order is fixed and every
list is sorted: the same synthesis renders byte for byte the same, apart
from ``reviewed`` and ``synthesis_timestamp``.
"""

from __future__ import annotations

import json
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from fluxdrive.core.masking import scrub_json
from fluxdrive.synthesis import PROTOCOL_VERSION, Finding, Synthesis

# 2: "incomplete" joined the verdicts (an incomplete review never says "safe"), and
# findings_verdict keeps what the findings alone say.
SCHEMA_VERSION = 2
Severity = Literal["P0", "P1", "P2", "P3"]


class _Out(BaseModel):
    model_config = ConfigDict(extra="forbid")


_M = TypeVar("_M", bound=_Out)


class ProvenanceOut(_Out):
    """Who produced an agent's findings."""

    provider: str
    model_family: str
    model_id: str


class ImportedOut(_Out):
    """One other analyzer's rule that reported a finding (imported from its SARIF)."""

    tool: str
    rule: str


class SuggestionOut(_Out):
    """A mechanical fix: ``lines`` replace ``path`` lines ``start``..``end`` (``fluxdrive fix`` applies it)."""

    path: str
    start: int = Field(ge=1)
    end: int = Field(ge=1)
    lines: list[str]
    source: str = Field(description="where the fix came from: ruff:F401, fluxdrive:py-unsafe-deserialization")
    applicability: Literal["safe", "unsafe", "display-only"]
    digest: str = Field(description="sha256 of the replaced lines as the review read them")


class LineFilterOut(_Out):
    """A diff review's ``--filter`` (reviewdog's modes) and how many findings it left out."""

    mode: Literal["added", "diff_context", "file", "nofilter"]
    left_out: int = Field(ge=0)


class GroundingOut(_Out):
    """Whether a finding's places and quoted code exist in the reviewed input (synthesis/grounding.py)."""

    grounded: bool
    reason: str = Field("", description="what is missing: a file, a line, a heading or the quoted code")
    demoted_from: Severity | None = Field(None, description="the severity agents gave before it was lowered to P2")


class ValidationOut(_Out):
    """What a checker model of another family said about a model's P0/P1 (synthesis/validation.py)."""

    status: Literal["confirmed", "not-confirmed", "unclear", "unvalidated"]
    checker: str | None = Field(description="provider:model of the checker; null when none was configured")
    reason: str = Field("", description="the checker's reason, or why there was no clear answer")
    demoted_from: Severity | None = Field(None, description="the severity before a rejection lowered it to P2")
    producer: str = Field("", description="provider:model of the model(s) that wrote the finding")


class SupportOut(_Out):
    """Which analyzers and which models support a finding (synthesis/evidence.py, analyzer evidence)."""

    analyzers: list[str] = Field(description="agent:rule of each analyzer candidate it stands for")
    models: list[str] = Field(description="provider:model of each model that reported or confirmed it")
    refuted: dict[str, str] = Field(description="provider:model -> the reason a model gave for refuting it")


class ReactionsOut(_Out):
    """What peers answered about a finding in the reaction round (synthesis/reactions.py)."""

    confirmed_by: list[str] = Field(description="confirmed it citing code of their own (counted in convergence)")
    hearsay: list[str] = Field(description="confirmed it without independent evidence (not counted)")
    disputed_by: list[str] = Field(description="disputed it with a citation that grounds (confidence lowered)")
    extended_by: list[str] = Field(description="added to it")
    demoted_from: Severity | None = Field(None, description="the severity before two or more disputes lowered it")


class MeasuredOut(_Out):
    """The measured precision a finding's confidence comes from (synthesis/measured.py)."""

    kind: Literal["rule", "agent-model"] = Field(description="what was measured: its rule, or its agent and model")
    key: str = Field(description="the rule (ruff:S108) or agent@provider:model")
    precision: float = Field(ge=0, le=1, description="right / judged, over eval runs and feedback")
    judged: int = Field(ge=1, description="judged findings the precision rests on")
    right: int = Field(ge=0, description="of them, accepted or matched to ground truth")
    demoted_from: Severity | None = Field(None, description="the severity before a low precision lowered it a level")


class FindingOut(_Out):
    """One merged finding."""

    id: str = Field(pattern=r"^P[0-3]-\d+$")
    severity: Severity
    agents: list[str]
    section: str
    title: str
    location: str | None = Field(description="the primary place, file:line (locations[0])")
    locations: list[str] = Field(
        description="every place: those the agents reported, then the other places a grouped finding stands for"
    )
    convergence: int = Field(ge=0, description="N: completed agents that reported it")
    population: int = Field(ge=0, description="M: completed agents that received its content")
    convergence_ratio: str = Field(description="N/M")
    confidence: Literal["low", "medium", "high"]
    cross_family_convergence: int = Field(ge=1)
    weighted_convergence: float
    provenance: dict[str, ProvenanceOut]
    co_located: bool
    co_located_with: list[str]
    cross_references: list[str]
    severity_conflict: dict[str, Severity] | None
    recommendations: dict[str, str] | None
    verification_recommended: bool
    partial: bool
    from_prose: bool
    beyond_slice: list[str]
    descriptions: dict[str, str]
    source_ids: dict[str, str]
    rules: list[str]
    cwe: list[str] = Field(description="CWE ids of the weakness (CWE-89), empty when it is not a security weakness")
    discovered_by: str | None
    acknowledged_by: list[str]
    imported_from: list[ImportedOut] = Field(
        default_factory=list,
        description="other analyzers' results (review --import-sarif) this finding stands for: tool and rule",
    )
    suggestions: list[SuggestionOut] = Field(
        default_factory=list, description="mechanical fixes, one per place that has one (fluxdrive fix RUN)"
    )
    grounding: GroundingOut | None = Field(
        default=None, description="null: not judged (no file place, or the reviewed project is unknown)"
    )
    reactions: ReactionsOut | None = Field(default=None, description="null: no peer reacted to it")
    validation: ValidationOut | None = Field(
        default=None, description="null: not checked (not a model's P0/P1, or validation is off)"
    )
    support: SupportOut | None = Field(
        default=None, description="null: no analyzer evidence was given to a model agent in this run"
    )
    measured: MeasuredOut | None = Field(
        default=None, description="null: confidence from convergence (no measured precision rests on enough findings)"
    )


class ImprovementOut(_Out):
    """A P2/P3 suggestion that is not a defect."""

    id: str = Field(pattern=r"^IMP-\d+$")
    severity: Severity
    agents: list[str]
    section: str
    title: str
    location: str | None
    descriptions: dict[str, str]


class AgentOut(_Out):
    """How one agent's report validated."""

    name: str
    status: Literal["valid", "error", "malformed", "missing"]
    reason: str
    partial: bool
    findings: int
    provenance: ProvenanceOut


class TimelineEntryOut(_Out):
    """One line of the peer-findings channel."""

    timestamp: str
    agent: str
    severity: Literal["blocking", "notable"]
    category: str
    summary: str
    file_refs: list[str]


class TimelineEventOut(_Out):
    """How a later report related to a blocking finding."""

    kind: Literal["adjustment", "disagreement", "contradiction"]
    agent: str
    blocking_agent: str
    summary: str
    location: str | None
    detail: str


class TimelineOut(_Out):
    """The channel in time order and the counts summary.md reports."""

    entries: list[TimelineEntryOut]
    adjustments: int
    disagreements: int
    unresolved_contradictions: int
    events: list[TimelineEventOut]


class ConflictOut(_Out):
    """Something the agents disagree on."""

    kind: Literal["severity", "recommendation", "contradiction", "disagreement"]
    finding: str | None
    text: str


class SkippedFileOut(_Out):
    """A file the review did not cover (agents empty: left out before dispatch)."""

    path: str
    reason: str
    agents: list[str]


class FindingsDocument(_Out):
    """The whole of findings.json."""

    schema_version: int = SCHEMA_VERSION
    synthesis_protocol_version: str = PROTOCOL_VERSION
    reviewed: str
    input: str
    input_type: str
    verdict: Literal["safe", "needs-changes", "risky", "incomplete", "error"] = Field(
        description='never "safe" when complete is false: "incomplete" stands where "safe" would'
    )
    findings_verdict: Literal["safe", "needs-changes", "risky", "error"] = Field(
        description="what the findings alone say, whether or not every agent completed"
    )
    complete: bool = Field(description="false: an agent failed or was cut off, or input could not be read")
    incomplete_reasons: list[str]
    counts: dict[Severity, int]
    validation: str
    agents_launched: list[str]
    agents_completed: list[str]
    agents_failed: list[str]
    agents_partial: list[str]
    agents: list[AgentOut]
    findings: list[FindingOut]
    improvements: list[ImprovementOut]
    early_stop: bool
    skipped_agents: list[str]
    content_routing_active: bool
    timeline: TimelineOut
    conflicts: list[ConflictOut]
    skipped_files: list[SkippedFileOut]
    notes: list[str]
    synthesis_timestamp: str
    line_filter: LineFilterOut | None = Field(
        default=None, description="a diff review's --filter; findings outside it are not in this file"
    )


def _mirror(model: type[_M], source: Any, **computed: Any) -> _M:
    """``model`` filled from ``source``'s attributes of the same names, ``computed`` standing for the rest.

    Why: most output models repeat a synthesis dataclass field for field; naming only
    the fields that differ keeps the two from drifting apart one copied line at a time.
    """
    copied = {name: getattr(source, name) for name in model.model_fields if name not in computed}
    return model(**copied, **computed)


def _provenance(record: Any) -> ProvenanceOut:
    return _mirror(ProvenanceOut, record)


def _finding(finding: Finding) -> FindingOut:
    return _mirror(
        FindingOut,
        finding,
        convergence_ratio=finding.convergence_label,
        weighted_convergence=round(finding.weighted_convergence, 3),
        provenance={a: _provenance(p) for a, p in sorted(finding.provenance.items())},
        imported_from=[ImportedOut(tool=tool, rule=rule) for tool, rule in finding.imported_from],
        suggestions=[_mirror(SuggestionOut, s, lines=list(s.lines)) for s in finding.suggestions],
        grounding=_mirror(GroundingOut, finding.grounding) if finding.grounding is not None else None,
        reactions=_reactions(finding),
        validation=_mirror(ValidationOut, finding.validation) if finding.validation is not None else None,
        support=_support(finding),
        measured=_mirror(MeasuredOut, finding.measured) if finding.measured is not None else None,
    )


def _support(finding: Finding) -> SupportOut | None:
    support = finding.support
    if support is None:
        return None
    return SupportOut(analyzers=list(support.analyzers), models=list(support.models), refuted=dict(support.refuted))


def _reactions(finding: Finding) -> ReactionsOut | None:
    found = finding.reactions
    if found is None:
        return None
    lists = {name: list(getattr(found, name)) for name in ("confirmed_by", "hearsay", "disputed_by", "extended_by")}
    return ReactionsOut(**lists, demoted_from=found.demoted_from)


def build_document(result: Synthesis) -> FindingsDocument:
    """The findings.json model of a synthesis."""
    line = result.timeline
    return _mirror(
        FindingsDocument,
        result,
        schema_version=SCHEMA_VERSION,
        synthesis_protocol_version=PROTOCOL_VERSION,
        complete=not result.incomplete,
        incomplete_reasons=result.incomplete,
        counts=result.counts(),
        validation=result.validation_line,
        agents=[
            _mirror(
                AgentOut,
                output,
                name=name,
                status=output.status.value,
                findings=len(output.findings),
                provenance=_provenance(output.provenance),
            )
            for name, output in result.outputs.items()
        ],
        findings=[_finding(f) for f in result.findings],
        improvements=[_mirror(ImprovementOut, f) for f in result.improvements],
        timeline=TimelineOut(
            entries=[_mirror(TimelineEntryOut, e, file_refs=list(e.file_refs)) for e in line.entries],
            adjustments=len(line.of_kind("adjustment")),
            disagreements=len(line.of_kind("disagreement")),
            unresolved_contradictions=len(line.of_kind("contradiction")),
            events=[_mirror(TimelineEventOut, e) for e in line.events],
        ),
        conflicts=[_mirror(ConflictOut, c) for c in result.conflicts],
        skipped_files=[_mirror(SkippedFileOut, f) for f in result.skipped_files],
        line_filter=LineFilterOut(mode=result.line_filter[0], left_out=result.line_filter[1])
        if result.line_filter
        else None,
    )


def render_json(result: Synthesis) -> str:
    """findings.json text (indented, newline-terminated)."""
    return scrub_json(json.dumps(build_document(result).model_dump(mode="json"), indent=2, ensure_ascii=False)) + "\n"


# Read back, a field the file lacks takes the value an empty synthesis would write. Why: findings.json of
# schema 1 (no findings_verdict, "safe" for an incomplete review) and trimmed files people keep still read;
# a field that is there must have its type, and an unknown one is refused (extra="forbid").
_PROVENANCE = {"provider": "", "model_family": "", "model_id": ""}
_DOCUMENT_DEFAULTS: dict[str, Any] = {
    "schema_version": 1,
    "synthesis_protocol_version": "",
    "reviewed": "",
    "input": "",
    "input_type": "",
    "verdict": "error",
    "complete": True,
    "incomplete_reasons": [],
    "counts": {},
    "validation": "",
    "agents_launched": [],
    "agents_completed": [],
    "agents_failed": [],
    "agents_partial": [],
    "agents": [],
    "findings": [],
    "improvements": [],
    "early_stop": False,
    "skipped_agents": [],
    "content_routing_active": False,
    "timeline": {},
    "conflicts": [],
    "skipped_files": [],
    "notes": [],
    "synthesis_timestamp": "",
}
_FINDING_DEFAULTS: dict[str, Any] = {
    "agents": [],
    "section": "",
    "title": "",
    "location": None,
    "convergence": 0,
    "population": 0,
    "convergence_ratio": "",
    "confidence": "low",
    "cross_family_convergence": 1,
    "weighted_convergence": 0.0,
    "provenance": {},
    "co_located": False,
    "co_located_with": [],
    "cross_references": [],
    "severity_conflict": None,
    "recommendations": None,
    "verification_recommended": False,
    "partial": False,
    "from_prose": False,
    "beyond_slice": [],
    "descriptions": {},
    "source_ids": {},
    "rules": [],
    "cwe": [],
    "discovered_by": None,
    "acknowledged_by": [],
}
_IMPROVEMENT_DEFAULTS: dict[str, Any] = {"agents": [], "section": "", "title": "", "location": None, "descriptions": {}}
_AGENT_DEFAULTS: dict[str, Any] = {"reason": "", "partial": False, "findings": 0, "provenance": _PROVENANCE}
_TIMELINE_DEFAULTS: dict[str, Any] = {
    "entries": [],
    "adjustments": 0,
    "disagreements": 0,
    "unresolved_contradictions": 0,
    "events": [],
}


def _filled(item: Any, defaults: dict[str, Any]) -> Any:
    return {**defaults, **item} if isinstance(item, dict) else item


def _finding_in(item: Any) -> Any:
    item = _filled(item, _FINDING_DEFAULTS)
    if isinstance(item, dict):
        if "locations" not in item:
            item["locations"] = [item["location"]] if isinstance(item["location"], str) and item["location"] else []
        if item["location"] is None and isinstance(item["locations"], list) and item["locations"]:
            item["location"] = item["locations"][0]
        found = str(item.get("id", ""))
        if "severity" not in item and found[:1] == "P" and found[2:3] == "-":
            item["severity"] = found[:2]  # a finding's id names its severity (P1-3 is a P1)
    return item


def read_document(data: Any) -> FindingsDocument:
    """The findings.json model of ``data`` read back from a file; pydantic's ValidationError when it is not one.

    A missing field takes its empty value (see ``_DOCUMENT_DEFAULTS``); a
    schema-1 document gets ``findings_verdict`` from its ``verdict``, and its
    ``safe`` for an incomplete review reads as ``incomplete``, as schema 2
    writes it.
    """
    if not isinstance(data, dict):
        return FindingsDocument.model_validate(data)
    document = {**_DOCUMENT_DEFAULTS, **data}
    lists = ("findings", "improvements", "agents")
    if all(isinstance(document[key], list) for key in lists):
        document["findings"] = [_finding_in(f) for f in document["findings"]]
        document["improvements"] = [_filled(f, _IMPROVEMENT_DEFAULTS) for f in document["improvements"]]
        document["agents"] = [_filled(a, _AGENT_DEFAULTS) for a in document["agents"]]
    document["timeline"] = _filled(document["timeline"], _TIMELINE_DEFAULTS)
    verdict = document["verdict"]
    if "findings_verdict" not in document:
        document["findings_verdict"] = "safe" if verdict == "incomplete" else verdict
    if verdict == "safe" and document["complete"] is False:
        document["verdict"] = "incomplete"  # schema 1 said "safe" for an incomplete review
    return FindingsDocument.model_validate(document)


def json_schema() -> dict[str, Any]:
    """The published JSON Schema of findings.json."""
    schema = FindingsDocument.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "fluxdrive findings.json"
    return schema
