"""Confidence from measurement: a finding's confidence from how often its rule (or agent and model) was right.

Convergence says how many agents agree; it says nothing about whether the
rule that fired is usually right. ``fluxdrive eval run`` (each reported
finding matched to ground truth or not) and ``fluxdrive feedback
accept|discard`` judge findings; :mod:`fluxdrive.runs.precision` adds those
verdicts up in the history database per rule and per agent-model pair.

Why a snapshot file and not the database: synthesis must give the same
result for the same run directory. The review writes the measured table
it starts with into ``measured-precision.json`` beside the reports (read
once, at synthesis), and every later synthesis of that run (``fluxdrive
synthesize``) reads the same file, whatever feedback came since. A run
without the file gets no measured confidence.

How a finding is judged (:func:`assess`), when its key rests on at least
``synthesis.measured_min_judged`` judged findings:

- the key: its rules first (the one with the most judged findings, then by
  name), else its agents' ``agent@provider:model`` pairs (the same order);
- confidence: precision >= 0.8 high, >= 0.5 medium, else low (:data:`BANDS`);
- demotion: a P0/P1 whose *rule* precision is under
  ``synthesis.demote_below_precision`` drops one level (0 disables it). An
  agent-model pair never demotes: a model that is often wrong on some
  rules is not wrong on this finding by that alone.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from fluxdrive.core.confine import is_inside

FILE_NAME = "measured-precision.json"
SCHEMA_VERSION = 1
RULE, AGENT_MODEL = "rule", "agent-model"
# (lowest precision, confidence), highest first.
BANDS = ((0.8, "high"), (0.5, "medium"), (0.0, "low"))
_LOWER = {"P0": "P1", "P1": "P2"}


@dataclass(frozen=True, slots=True)
class Tally:
    """Judged findings of one key: ``right`` (accepted, or matched to ground truth) and ``wrong``."""

    right: int
    wrong: int

    @property
    def judged(self) -> int:
        return self.right + self.wrong

    @property
    def precision(self) -> float:
        return self.right / self.judged if self.judged else 0.0


@dataclass(frozen=True, slots=True)
class Measured:
    """What measurement said about a finding: its key, precision, how many judged findings, any demotion."""

    kind: str
    key: str
    right: int
    judged: int
    precision: float
    confidence: str
    demoted_from: str | None = None

    @property
    def sentence(self) -> str:
        """The sentence "confidence high: 18 of 20 judged findings of this rule were right"."""
        of = "this rule" if self.kind == RULE else "this agent and model"
        lowered = f" (demoted from {self.demoted_from})" if self.demoted_from else ""
        right = f"{self.right} of {self.judged} judged findings of {of} were right"
        return f"confidence {self.confidence}: {right}{lowered}"


Table = Mapping[tuple[str, str], Tally]


class _Model(Protocol):
    """Who produced a finding: a synthesis ProvenanceRecord, or findings.json's ProvenanceOut."""

    @property
    def provider(self) -> str: ...

    @property
    def model_id(self) -> str: ...


def agent_model_key(agent: str, provenance: _Model | None) -> str:
    """``agent@provider:model_id`` (``agent`` alone when the model is not known)."""
    if provenance is None or provenance.model_id in ("", "unknown"):
        return agent
    return f"{agent}@{provenance.provider}:{provenance.model_id}"


def keys_of(rules: list[str], agents: list[str], provenance: Mapping[str, _Model]) -> list[tuple[str, str]]:
    """Every key a finding is judged under: each rule, each agent-model pair (credited alike, as feedback is)."""
    return [(RULE, r) for r in sorted(set(rules))] + [
        (AGENT_MODEL, agent_model_key(a, provenance.get(a))) for a in sorted(set(agents))
    ]


def confidence_of(precision: float) -> str:
    return next(name for floor, name in BANDS if precision >= floor)


def assess(
    table: Table,
    severity: str,
    keys: list[tuple[str, str]],
    *,
    min_judged: int,
    demote_below: float,
) -> Measured | None:
    """The finding's measured confidence (None: no key rests on ``min_judged`` judged findings)."""
    for kind in (RULE, AGENT_MODEL):
        enough = [(k, table[(kind, k)]) for kind_, k in keys if kind_ == kind and (kind, k) in table]
        enough = [(k, t) for k, t in enough if t.judged >= max(min_judged, 1)]
        if not enough:
            continue
        key, tally = min(enough, key=lambda item: (-item[1].judged, item[0]))
        precision = round(tally.precision, 4)
        demote = kind == RULE and severity in _LOWER and precision < demote_below
        return Measured(
            kind, key, tally.right, tally.judged, precision, confidence_of(precision), severity if demote else None
        )
    return None


def lowered(severity: str) -> str:
    """One level down (P0 -> P1, P1 -> P2)."""
    return _LOWER.get(severity, severity)


def document(table: Table, taken_at: str) -> dict[str, Any]:
    """The snapshot file's content, sorted (the same table writes the same bytes)."""
    entries = [
        {"kind": kind, "key": key, "right": t.right, "wrong": t.wrong} for (kind, key), t in sorted(table.items())
    ]
    return {"schema_version": SCHEMA_VERSION, "taken_at": taken_at, "entries": entries}


def read(output_dir: Path, root: Path) -> tuple[dict[tuple[str, str], Tally], list[str]]:
    """The run's measured table ({} when it has none) and notes on what could not be read (confined to ``root``)."""
    path = Path(output_dir) / FILE_NAME
    if not path.exists():
        return {}, []
    if not is_inside(path, root) or not path.is_file():
        return {}, [f"{FILE_NAME} ignored: it is not a regular file inside the project root"]
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        table = {
            (str(e["kind"]), str(e["key"])): Tally(_count(e["right"]), _count(e["wrong"])) for e in data["entries"]
        }
    except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError) as exc:
        return {}, [f"{FILE_NAME} ignored: {type(exc).__name__}: {exc}"]
    return table, []


def _count(value: Any) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise ValueError(f"a count must be a whole number >= 0, not {value!r}")
    return value
