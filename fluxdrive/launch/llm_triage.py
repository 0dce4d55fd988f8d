"""``--llm-triage``: let a model refine the deterministic base scores, never the rule that 0 excludes.

PROTOCOL.md section 3: base scores are computed deterministically; an LLM may
refine them when asked. The model sees a bounded summary of the input (kind,
languages, the first headings or changed files) and the candidate agents with
their deterministic base, and answers a JSON object of base scores 0-3. An
agent whose deterministic base is 0 is never offered (0 is absolute); a model
answer of 0 removes an agent. Any failure - no model, no key, a dead
endpoint, an answer that does not validate - keeps the deterministic scores
and says why.
"""

from __future__ import annotations

import asyncio
import dataclasses
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, Field

from fluxdrive.triage import Triage

INSTRUCTIONS = (
    "You assign review agents to an input. For each agent, rate how much of the input falls in its lane: "
    "0 irrelevant, 1 tangential (under 10% of the content), 2 adjacent (10-30%), 3 core (over 30%). "
    "Answer only with the scores."
)
MAX_LISTED = 40


class BaseScores(BaseModel):
    """The model's answer: agent name -> base score."""

    scores: dict[str, int] = Field(description="agent name -> base score 0..3")


def _question(result: Triage, offered: list[str]) -> str:
    profile = result.profile
    lines = [f"Input: {profile.kind} {profile.label!r}, {profile.total_lines} lines, languages {profile.languages}."]
    if profile.sections:
        lines.append("Headings: " + "; ".join(s.title for s in profile.sections[:MAX_LISTED]))
    if profile.diff is not None:
        lines.append("Changed files: " + ", ".join(profile.diff.paths[:MAX_LISTED]))
    elif profile.kind == "directory":
        files = sorted({u.file for u in profile.units if u.file})
        lines.append("Files: " + ", ".join(files[:MAX_LISTED]))
    lines.append(f"Domains: {', '.join(result.domains) or 'none'}.")
    lines.append("Agents (deterministic base score in brackets):")
    for name in offered:
        record = next(a for a in result.agents if a.name == name)
        lines.append(f"- {name} [{record.base_score}]: {result.roster.agents[name].description}")
    return "\n".join(lines)


@dataclass(frozen=True, slots=True)
class Refinement:
    """What ``--llm-triage`` did: the note to show, and the model call to account for (None when none was made)."""

    note: str
    triage: Triage  # the plan with the model's scores (the same plan when it changed nothing)
    call: dict[str, Any] | None = None


def refine(result: Triage, model_name: str | None) -> Refinement:
    """``result`` with the model's base scores (the plan recomputed); what happened and what it cost."""
    if not model_name:
        return Refinement("--llm-triage: no model (pass --model or set llm.model); deterministic scores kept", result)
    offered = [a.name for a in result.agents if a.base_score > 0 and not a.prefiltered]
    if not offered:
        return Refinement("--llm-triage: no agent to refine; deterministic scores kept", result)
    try:
        from fluxdrive.runtimes.llm.oneshot import ask

        answer, spec, usage = asyncio.run(
            ask(model_name, INSTRUCTIONS, _question(result, offered), BaseScores, result.config)
        )
    except Exception as exc:  # the model is an optional refinement: any failure keeps the rule's scores
        reason = f"{type(exc).__name__}: {' '.join(str(exc).split())[:200]}"
        return Refinement(f"--llm-triage failed ({reason}); deterministic scores kept", result)
    changed = []
    records = [dataclasses.replace(a) for a in result.agents]
    for record in records:
        given = answer.scores.get(record.name)
        if record.name not in offered or given is None or not 0 <= given <= 3 or given == record.base_score:
            continue
        changed.append(f"{record.name} {record.base_score}->{given}")
        record.rationale = f"base {given} from {spec.label} (rule said {record.base_score}); " + record.rationale
        record.base_score = given
        if given == 0:
            record.domain_boost = record.project_bonus = record.domain_agent_bonus = 0
        record.final_score = round(min(record.raw_score * record.trust_multiplier, result.config.scoring.max_score), 2)
    shown = ", ".join(changed) or "no change"
    call = {"name": "llm-triage", "provenance": spec.provenance.record(), "usage": usage.record()}
    note = f"--llm-triage: {spec.label} refined base scores ({shown}; {usage.tokens} tokens)"
    return Refinement(note, result.with_scores(records), call)
