"""The data synthesis works on and produces.

Raw findings come from one agent each (its index, or the prose fallback);
merged findings are what reports show. Everything here is plain data so that
each synthesis step is a pure function and the result renders the same way
every time.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from fluxdrive.contracts import OutputStatus
from fluxdrive.contracts.run_manifest import ProvenanceRecord
from fluxdrive.synthesis.measured import Measured

SEVERITY_ORDER = {"P0": 0, "P1": 1, "P2": 2, "P3": 3}
UNKNOWN_PROVENANCE = ProvenanceRecord(provider="unknown", model_family="unknown", model_id="unknown")


@dataclass(frozen=True, slots=True)
class RawFinding:
    """One finding as one agent reported it."""

    agent: str
    severity: str
    local_id: str
    section: str
    title: str
    location: str | None = None
    improvement: bool = False
    from_prose: bool = False
    partial: bool = False
    rule: str | None = None
    cwe: tuple[str, ...] = ()
    also: tuple[str, ...] = ()  # the other places of a finding that stands for several (index field also:)
    evidence: str | None = None  # an analyzer's own measure of its proof (index field evidence:)

    @property
    def file(self) -> str | None:
        """The file part of the location."""
        return self.location.rsplit(":", 1)[0] if self.location else None


@dataclass(frozen=True, slots=True)
class AgentOutput:
    """One agent's report after validation, with what was collected from it."""

    agent: str
    path: Path | None
    status: OutputStatus
    reason: str
    partial: bool
    findings: tuple[RawFinding, ...]
    text: str = ""
    provenance: ProvenanceRecord = UNKNOWN_PROVENANCE
    category: str = "builtin"
    stage: int | None = None
    finished_at: datetime | None = None
    notes: tuple[str, ...] = ()  # for the synthesis notes: what collecting this report left out

    @property
    def completed(self) -> bool:
        """Counts toward M: produced a usable report and was not cut off."""
        return self.status in (OutputStatus.VALID, OutputStatus.MALFORMED) and not self.partial

    @property
    def failed(self) -> bool:
        """Produced nothing usable (error stub, missing or empty)."""
        return self.status in (OutputStatus.ERROR, OutputStatus.MISSING)


@dataclass(frozen=True, slots=True)
class Suggestion:
    """A mechanical fix of a finding: ``lines`` replace lines ``start``..``end`` of ``path`` (1-based, inclusive).

    Why here: reports, the forges' suggestion blocks and ``fluxdrive fix`` all read it from the finding.
    ``source`` names where it came from (``ruff:F401``, ``fluxdrive:py-unsafe-deserialization``),
    ``applicability`` is ruff's word (``safe``: applied by default), ``digest`` the sha256 of the
    replaced lines when the review read them, so a fix never lands on lines that changed since.
    """

    path: str
    start: int
    end: int
    lines: tuple[str, ...]
    source: str
    applicability: str
    digest: str


@dataclass(frozen=True, slots=True)
class Grounding:
    """Whether a finding's places and quoted code exist in the reviewed input (fluxdrive.synthesis.grounding).

    ``reason`` says what is missing when ``grounded`` is false; ``demoted_from`` is the severity the
    agents gave an ungrounded P0/P1 before synthesis lowered it to P2 (None: not demoted).
    """

    grounded: bool
    reason: str = ""
    demoted_from: str | None = None


@dataclass(frozen=True, slots=True)
class Reactions:
    """What peers answered about a finding in the reaction round (fluxdrive.synthesis.reactions).

    ``confirmed_by``: agents that confirmed it citing code of their own (counted in convergence);
    ``hearsay``: agents that confirmed it without (recorded, not counted); ``disputed_by``: agents that
    disputed it with a citation that grounds; ``demoted_from``: the severity before two or more such
    disputes lowered a finding only one agent reported (None: not lowered).
    """

    confirmed_by: tuple[str, ...] = ()
    hearsay: tuple[str, ...] = ()
    disputed_by: tuple[str, ...] = ()
    extended_by: tuple[str, ...] = ()
    demoted_from: str | None = None


@dataclass(frozen=True, slots=True)
class Support:
    """Who supports a finding, when model agents were given analyzer evidence (fluxdrive.synthesis.evidence).

    ``analyzers``: ``agent:rule`` of each analyzer candidate it stands for; ``models``: ``provider:model`` of
    each model that reported or confirmed it; ``refuted``: ``provider:model`` -> the reason a model gave
    for refuting it (kept and ranked lower, never dropped).
    """

    analyzers: tuple[str, ...] = ()
    models: tuple[str, ...] = ()
    refuted: tuple[tuple[str, str], ...] = ()

    @property
    def supporters(self) -> int:
        """Independent supporters: each analyzer rule and each model counts once."""
        return len(self.analyzers) + len(self.models)

    def named(self, most: int = 3) -> str:
        """``fd-safety:py-sql-injection + openai:gpt-4o``: the first ``most`` supporters, then "+ N more"."""
        names = [*self.analyzers, *self.models]
        return " + ".join(names[:most]) + (f" + {len(names) - most} more" if len(names) > most else "")

    @property
    def sentence(self) -> str:
        """Who supports it and, when no model does, the first model's refutation: the plain sentence PR comments
        show ("supported by X + Y", "supported by X; refuted by M: reason")."""
        said = f"supported by {self.named() or 'nobody'}"
        if self.refuted and not self.models:
            model, reason = self.refuted[0]
            said += f"; refuted by {model}: {reason}"
        return said


@dataclass(frozen=True, slots=True)
class Validation:
    """What a checker model of another family said about a model's P0/P1 (fluxdrive.synthesis.validation).

    ``status``: confirmed, not-confirmed (the checker rejected it), unclear (no clear answer, or the call
    failed) or unvalidated (no checker of another family configured); ``demoted_from`` is the severity a
    rejected P0/P1 had before synthesis lowered it to P2 (None: not demoted).
    """

    status: str
    checker: str | None
    reason: str = ""
    demoted_from: str | None = None
    producer: str = ""


@dataclass
class Finding:
    """A merged finding, as the reports show it."""

    id: str
    severity: str
    agents: list[str]
    section: str
    title: str
    locations: list[str]  # the place agents reported first, then the other places a finding stands for
    improvement: bool = False
    convergence: int = 0
    population: int = 0
    confidence: str = "low"
    cross_family_convergence: int = 1
    weighted_convergence: float = 0.0
    provenance: dict[str, ProvenanceRecord] = field(default_factory=dict)
    co_located: bool = False
    co_located_with: list[str] = field(default_factory=list)
    cross_references: list[str] = field(default_factory=list)
    severity_conflict: dict[str, str] | None = None
    recommendations: dict[str, str] | None = None
    verification_recommended: bool = False
    partial: bool = False
    from_prose: bool = False
    beyond_slice: list[str] = field(default_factory=list)
    descriptions: dict[str, str] = field(default_factory=dict)
    source_ids: dict[str, str] = field(default_factory=dict)
    rules: list[str] = field(default_factory=list)
    cwe: list[str] = field(default_factory=list)
    discovered_by: str | None = None
    acknowledged_by: list[str] = field(default_factory=list)
    imported_from: list[tuple[str, str]] = field(default_factory=list)  # (tool, rule) merged in by --import-sarif
    suggestions: list[Suggestion] = field(default_factory=list)  # mechanical fixes (fluxdrive.fixes), by place
    grounding: Grounding | None = None  # None: not judged (no file place, or the reviewed project is unknown)
    validation: Validation | None = None  # None: not checked (not a model's P0/P1, or validation is off)
    support: Support | None = None  # None: no analyzer evidence was given in this run
    reactions: Reactions | None = None  # None: no peer reacted to it (or no reaction round ran)
    measured: Measured | None = None  # None: no measured precision rests on enough judged findings
    members: list[RawFinding] = field(default_factory=list, repr=False)

    @property
    def location(self) -> str | None:
        """The first location, if any."""
        return self.locations[0] if self.locations else None

    @property
    def not_grounded(self) -> str:
        """Why it is not grounded in the reviewed input ("" when it is, or was not judged), with any demotion."""
        if self.grounding is None or self.grounding.grounded:
            return ""
        was = self.grounding.demoted_from
        return f"{self.grounding.reason} (demoted from {was})" if was else self.grounding.reason

    @property
    def not_confirmed(self) -> str:
        """Why the checker model rejected it ("" unless it did), with any demotion."""
        if self.validation is None or self.validation.status != "not-confirmed":
            return ""
        was = self.validation.demoted_from
        said = f"{self.validation.checker}: {self.validation.reason}"
        return f"{said} (demoted from {was})" if was else said

    @property
    def convergence_label(self) -> str:
        """``N/M``."""
        return f"{self.convergence}/{self.population}"


@dataclass(frozen=True, slots=True)
class TimelineEvent:
    """A relation between a blocking channel finding and a later report."""

    kind: str  # "adjustment" | "contradiction" | "disagreement"
    agent: str
    blocking_agent: str
    summary: str
    location: str | None
    detail: str = ""


@dataclass(frozen=True, slots=True)
class Conflict:
    """Something agents disagree on, for the Conflicts section."""

    kind: str  # "severity" | "recommendation" | "contradiction" | "disagreement"
    finding: str | None
    text: str
