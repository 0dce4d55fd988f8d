"""Analyzer evidence in synthesis: one ranked list saying which analyzers and which models support each finding.

A model agent was given the offline analyzers' candidates of its own lane
(``OUTPUT_DIR/evidence/<agent>.json``, written by fluxdrive.launch.evidence)
and answered each in its report's ``### Analyzer Evidence`` section, one line
per candidate: ``- AE-001 | confirmed | reason`` or ``- AE-001 | refuted | reason``.
Here every candidate becomes a finding of that agent's (so deduplication
merges it with the model's own report of the same place and issue), and each
finding gets its :class:`~fluxdrive.synthesis.model.Support`:

- a confirmed candidate is supported by its analyzer and the model;
- a refuted one keeps its analyzer, carries the model's reason, loses a step
  of confidence and ranks below the unrefuted findings of its severity -
  kept, never dropped, because a model saying "false positive" is a claim too;
- a candidate nobody answered keeps analyzer-only support;
- a model's own finding has model-only support (both, when merged with a candidate).

Why a separate ranking key: with evidence, "two independent tools agree"
is the strongest signal a reader has; without evidence (:func:`rank_key` of a
finding with no support is neutral) the order is what it always was.
Pure apart from :func:`read_given`, the edge that reads the evidence files.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fluxdrive.contracts.run_manifest import ProvenanceRecord
from fluxdrive.core.confine import is_inside
from fluxdrive.synthesis.model import SEVERITY_ORDER, Finding, RawFinding, Support

SECTION = "### Analyzer Evidence"
EVIDENCE_DIR = "evidence"
SCHEMA_VERSION = 1
ID_PREFIX = "AE"
VERDICTS = ("confirmed", "refuted")
CONFIDENCE_ORDER = {"high": 0, "medium": 1, "low": 2}
LOWER = {"high": "medium", "medium": "low", "low": "low"}
MAX_EVIDENCE_BYTES = 4 * 1024 * 1024
_ANSWER = re.compile(r"^\s*[-*]\s*(?P<id>AE-\d{3,})\s*\|\s*(?P<verdict>[A-Za-z]+)\s*\|\s*(?P<reason>.*?)\s*$")
_HEADING = re.compile(r"^#{1,3}\s")


@dataclass(frozen=True, slots=True)
class Candidate:
    """One analyzer finding offered to a model agent: what, where, which rule, and the data flow when known.

    ``flow`` is the data-flow path (the places the value travels, the sink last) and ``flow_evidence`` the
    analyzer's own measure of it (high: from outside proven, medium: a parameter, low: unknown origin).
    """

    id: str
    severity: str
    rule: str
    place: str
    title: str
    flow: tuple[str, ...] = ()
    flow_evidence: str = ""

    def record(self) -> dict[str, Any]:
        """The candidate as JSON data (evidence/<agent>.json)."""
        data: dict[str, Any] = {
            "id": self.id,
            "severity": self.severity,
            "rule": self.rule,
            "place": self.place,
            "title": self.title,
        }
        if self.flow or self.flow_evidence:
            data["flow"] = {"path": list(self.flow), "evidence": self.flow_evidence}
        return data

    @classmethod
    def from_record(cls, data: object) -> Candidate | None:
        """A candidate read back (None when the record is not one)."""
        if not isinstance(data, Mapping):
            return None
        fields = [data.get(k) for k in ("id", "severity", "rule", "place", "title")]
        if not all(isinstance(v, str) and v for v in fields) or data["severity"] not in SEVERITY_ORDER:
            return None
        flow = data.get("flow")
        flow = flow if isinstance(flow, Mapping) else {}
        path = flow.get("path")
        level = flow.get("evidence")
        return cls(
            str(data["id"]),
            str(data["severity"]),
            str(data["rule"]),
            str(data["place"]),
            str(data["title"]),
            flow=tuple(str(p) for p in path) if isinstance(path, list) else (),
            flow_evidence=level if isinstance(level, str) else "",
        )

    def line(self) -> str:
        """One line for a prompt: id, severity, rule, place, title, and the flow when there is one."""
        text = f"- {self.id} | {self.severity} | {self.rule} | {self.place} | {self.title}"
        if self.flow:
            level = f" ({self.flow_evidence} evidence)" if self.flow_evidence else ""
            text += f" | flow{level}: {' -> '.join(self.flow)}"
        return text


@dataclass(frozen=True, slots=True)
class Given:
    """What one model agent was given: its model (``provider:model``) and its lane's candidates."""

    agent: str
    model: str
    candidates: tuple[Candidate, ...] = ()

    def record(self) -> dict[str, Any]:
        return {
            "schema_version": SCHEMA_VERSION,
            "agent": self.agent,
            "model": self.model,
            "candidates": [c.record() for c in self.candidates],
        }


@dataclass(frozen=True, slots=True)
class Answer:
    """A model's word on one candidate."""

    id: str
    verdict: str  # "confirmed" | "refuted"
    reason: str


def rank(candidates: Iterable[Candidate], limit: int) -> list[Candidate]:
    """The ``limit`` most severe candidates, numbered ``AE-001``... in a deterministic order."""
    ordered = sorted(candidates, key=lambda c: (SEVERITY_ORDER[c.severity], _place_key(c.place), c.rule, c.title))
    return [_numbered(c, n) for n, c in enumerate(ordered[: max(limit, 0)], start=1)]


def _numbered(candidate: Candidate, number: int) -> Candidate:
    return Candidate(
        f"{ID_PREFIX}-{number:03d}",
        candidate.severity,
        candidate.rule,
        candidate.place,
        candidate.title,
        candidate.flow,
        candidate.flow_evidence,
    )


def _place_key(place: str) -> tuple[str, int]:
    """``path:line`` ordered by path, then line as a number."""
    path, _, line = place.rpartition(":")
    return (path, int(line)) if line.isdigit() else (place, 0)


def parse_answers(text: str, known: Iterable[str]) -> dict[str, Answer]:
    """The answers in ``text``'s ``### Analyzer Evidence`` section, by candidate id.

    Lines that are not ``- AE-nnn | confirmed|refuted | reason``, ids the agent was not given, and
    repeated answers (the first stands) are ignored: a model's junk must not invent a verdict.
    """
    wanted, answers = set(known), {}
    inside = False
    for raw in text.splitlines():
        if _HEADING.match(raw):
            inside = raw.strip().lower() == SECTION.lower()
            continue
        if not inside:
            continue
        match = _ANSWER.match(raw)
        if match is None:
            continue
        ident, verdict = match.group("id"), match.group("verdict").lower()
        if ident in wanted and verdict in VERDICTS and ident not in answers:
            answers[ident] = Answer(ident, verdict, match.group("reason")[:500])
    return answers


def candidate_findings(given: Mapping[str, Given]) -> list[RawFinding]:
    """Every candidate as a finding of the agent it was given to (it joins deduplication like any other)."""
    return [
        RawFinding(
            agent=agent,
            severity=c.severity,
            local_id=c.id,
            section=c.place.rpartition(":")[0] or c.place,
            title=c.title,
            location=c.place,
            rule=c.rule,
            evidence=c.flow_evidence or None,
        )
        for agent, one in sorted(given.items())
        for c in one.candidates
    ]


def analyzer_label(agent: str, rule: str) -> str:
    """``fd-safety:py-sql-injection`` (fluxdrive's own checks), ``fd-safety:ruff:S608`` (other analyzers)."""
    return f"{agent}:{rule.removeprefix('fluxdrive:')}"


@dataclass
class Backing:
    """Everything support is judged from: who was given what, what they answered, who the other agents are."""

    given: Mapping[str, Given]
    answers: Mapping[str, Mapping[str, Answer]]
    provenance: Mapping[str, ProvenanceRecord] = field(default_factory=dict)

    def apply(self, finding: Finding) -> None:
        """Set ``finding.support`` (and lower the confidence of a refuted one); nothing when no evidence was given."""
        if not self.given:
            return
        analyzers: set[str] = set()
        models: set[str] = set()
        refuted: dict[str, str] = {}
        for member in finding.members:
            one = self.given.get(member.agent)
            candidate = _candidate_of(one, member)
            if one is not None and candidate is not None:
                analyzers.add(analyzer_label(member.agent, candidate.rule))
                answer = self.answers.get(member.agent, {}).get(candidate.id)
                if answer is not None and answer.verdict == "confirmed":
                    models.add(one.model)
                elif answer is not None:
                    refuted.setdefault(one.model, answer.reason)
            elif one is not None:
                models.add(one.model)
            elif member.rule:  # an agent given no evidence that cites a rule: an analyzer (a static agent)
                analyzers.add(analyzer_label(member.agent, member.rule))
            else:
                record = self.provenance.get(member.agent)
                models.add(f"{record.provider}:{record.model_id}" if record else member.agent)
        for model in models:
            refuted.pop(model, None)  # a model that reported the issue itself has not refuted it
        finding.support = Support(tuple(sorted(analyzers)), tuple(sorted(models)), tuple(sorted(refuted.items())))
        if refuted and not models:
            finding.confidence = LOWER.get(finding.confidence, finding.confidence)


def _candidate_of(one: Given | None, member: RawFinding) -> Candidate | None:
    if one is None or not member.local_id.startswith(f"{ID_PREFIX}-"):
        return None
    return next(
        (c for c in one.candidates if c.id == member.local_id and c.place == member.location and c.rule == member.rule),
        None,
    )


def rank_key(finding: Finding) -> tuple[int, int, int]:
    """After severity: unrefuted first, then more independent supporters, then higher confidence.

    Neutral (all zero) for a finding with no support, so a run without evidence keeps its order.
    """
    support = finding.support
    if support is None:
        return (0, 0, 0)
    refuted = 1 if support.refuted and not support.models else 0
    return (refuted, -support.supporters, CONFIDENCE_ORDER.get(finding.confidence, 3))


def read_given(output_dir: Path, root: Path, agents: Iterable[str]) -> tuple[dict[str, Given], list[str]]:
    """What each of ``agents`` was given (``evidence/<agent>.json``), and notes on files that could not be read.

    The edge of this module: files outside the project root or over the size bound are not read.
    """
    given: dict[str, Given] = {}
    notes: list[str] = []
    folder = Path(output_dir) / EVIDENCE_DIR
    if not folder.is_dir():
        return given, notes
    for agent in sorted(agents):
        path = folder / f"{agent}.json"
        if not path.is_file():
            continue
        try:
            if not is_inside(path, root) or path.stat().st_size > MAX_EVIDENCE_BYTES:
                raise ValueError("outside the project root or too large")
            data = json.loads(path.read_text(encoding="utf-8"))
            model = data["model"]
            items = data["candidates"]
            if not isinstance(model, str) or not isinstance(items, list):
                raise ValueError("not an evidence record")
        except (OSError, ValueError, KeyError, TypeError) as exc:
            notes.append(f"{EVIDENCE_DIR}/{agent}.json ignored: {exc}")
            continue
        candidates = [c for c in (Candidate.from_record(item) for item in items) if c is not None]
        given[agent] = Given(agent, model, tuple(candidates))
    return given, notes
