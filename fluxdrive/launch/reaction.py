"""The reaction round (the reference's Phase 2.5): after the last stage, agents answer their peers' findings.

Why: each reviewer works alone, so a finding only one of them saw is a model's word; a second look
by a peer who reads the code either grounds it (CONFIRM with a citation of its own), refutes it
(DISPUTE with evidence) or adds to it (EXTEND). Synthesis weighs the answers
(fluxdrive.synthesis.reactions): agreement without evidence is hearsay and counts nothing.

The round, in order:

1. who can react: launched agents that completed, on a runtime whose ``reacts`` capability is true
   (the static runtime never reacts, so an offline review skips the round with one decision record);
2. the gate (fluxdrive.launch.reaction_gate) - recorded as ``reaction-gate`` whatever it says;
3. each agent's view of its peers (topology, sanitising, caps: fluxdrive.launch.reaction_view);
4. the budget cap: at most ``reaction.budget_share`` of the run's token budget, estimated per agent
   as ``reaction.agent_tokens`` plus its view's characters / 4; over it the lowest-scoring agents are
   dropped first - recorded as ``reaction-budget``;
5. one call per agent (:meth:`~fluxdrive.runtimes.base.Runtime.react`), at most
   ``dispatch.max_concurrency`` at once, each bounded by the runtime's timeout. A failed call is a
   note, never a failed review;
6. the answers: ``reactions/<agent>.md`` (the reply as given) and ``reactions.jsonl`` (the parsed
   lines, what synthesis reads), both written atomically.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from fluxdrive.agents import AgentDefinition
from fluxdrive.config.model import Config
from fluxdrive.core.atomic import atomic_write_text
from fluxdrive.core.masking import scrub
from fluxdrive.launch.reaction_gate import fit_budget, gate
from fluxdrive.launch.reaction_view import PeerView, parse, prompt, view
from fluxdrive.runs.decisions import DecisionLog
from fluxdrive.runtimes import AgentTask, Runtime
from fluxdrive.synthesis.model import Finding
from fluxdrive.synthesis.reactions import FILE_NAME

DIRECTORY = "reactions"


@dataclass(frozen=True, slots=True)
class ReactionPhase:
    """What the round did: whether it ran and why, who reacted, who the budget dropped, how long it took."""

    ran: bool
    reason: str
    agents: tuple[str, ...] = ()
    dropped: tuple[str, ...] = ()
    answers: int = 0
    seconds: float = 0.0
    notes: tuple[str, ...] = ()
    model_calls: tuple[dict[str, object], ...] = ()  # run.json's model_calls: one per reaction that answered


@dataclass(frozen=True, slots=True)
class RoundInputs:
    """What the round reads from the launch (the launcher builds it; see stages.Launcher._react)."""

    findings: Callable[[], Sequence[Finding]]  # the synthesis of every report after the last stage (on demand)
    completed: Mapping[str, AgentDefinition]  # launched agents that completed, by name
    runtime_of: Callable[[AgentDefinition], Runtime]
    task_for: Callable[[AgentDefinition, str, Runtime], AgentTask]  # (agent, reaction prompt, its runtime)
    scores: Mapping[str, float]  # triage final_score per agent
    budget_tokens: int  # the run's token budget (budget.per_input of the input's kind)
    label: str  # what was reviewed, for the prompt


async def reaction_round(
    inputs: RoundInputs,
    config: Config,
    output_dir: Path,
    decisions: DecisionLog | None,
    say: Callable[[str], None],
) -> ReactionPhase:
    """Run the round (or skip it) and write its answers; see the module docstring."""
    started = time.monotonic()
    stale = output_dir / FILE_NAME
    if stale.is_file() and not stale.is_symlink():  # a reused directory's answers are not this run's
        stale.unlink()
    settings = config.reaction
    runtimes = {n: inputs.runtime_of(a) for n, a in sorted(inputs.completed.items())}
    reacting = [n for n, r in runtimes.items() if r.reacts]
    # The reports are synthesized only when a round could run: an offline review pays nothing for the gate.
    could_run = settings.enabled and len(reacting) >= 2
    findings = [f for f in inputs.findings() if not f.improvement] if could_run else []
    decided = gate(settings.enabled, reacting, findings, settings.min_value)
    _record(decisions, "reaction-gate", {"run": decided.run, "reason": decided.reason, "value": decided.value}, {
        "reacting": reacting,
        "findings": len(findings),
        "severe_share": decided.severe_share,
        "overlap_share": decided.overlap_share,
        "min_value": settings.min_value,
        "enabled": settings.enabled,
    })  # fmt: skip
    if not decided.run:
        if reacting:  # an offline review has no one to ask: no line for that
            say(f"Reaction round: skipped ({decided.reason})")
        return ReactionPhase(False, decided.reason)
    adjacent = {n: tuple(a.adjacent) for n, a in inputs.completed.items()}
    views = {n: view(n, findings, adjacent, settings) for n in reacting}
    views = {n: v for n, v in views.items() if v.ids}
    costs = {n: settings.agent_tokens + len(v.text) // 4 for n, v in views.items()}
    cap = int(inputs.budget_tokens * settings.budget_share)
    kept, dropped = fit_budget(costs, inputs.scores, cap)
    _record(
        decisions,
        "reaction-budget",
        {"kept": kept, "dropped": dropped, "why": "lowest triage score first until the estimate fits"},
        {"cap": cap, "budget_share": settings.budget_share, "budget": inputs.budget_tokens, "estimates": costs,
         "scores": {n: inputs.scores.get(n, 0.0) for n in costs}},
    )  # fmt: skip
    if not kept:
        reason = "no agent has a peer finding to react to" if not views else "no agent fits the reaction budget"
        say(f"Reaction round: skipped ({reason})")
        return ReactionPhase(False, reason, dropped=tuple(dropped))
    shown = ", ".join(f"{n} ({views[n].full} full, {views[n].summarised} summarised)" for n in kept)
    say(f"Reaction round: {shown}" + (f"; over budget, dropped {', '.join(dropped)}" if dropped else ""))
    limit = asyncio.Semaphore(max(1, config.dispatch.max_concurrency))
    replies = await asyncio.gather(*(_react(inputs, n, views[n], runtimes[n], limit) for n in kept))
    lines, calls = [], []
    notes = [f"reaction round: {n} dropped (over the reaction budget)" for n in dropped]
    by_id = {f.id: f for f in findings}
    (output_dir / DIRECTORY).mkdir(exist_ok=True)
    for name, (reply, failure, call) in zip(kept, replies, strict=True):
        if failure is not None:
            notes.append(f"reaction round: {name} did not answer ({failure})")
            continue
        calls.append({**call, "name": f"reaction {name}"})
        atomic_write_text(output_dir / DIRECTORY / f"{name}.md", scrub(reply if reply.endswith("\n") else reply + "\n"))
        for answer in parse(reply, views[name].ids, settings.max_chars_per_finding):
            finding = by_id[answer.finding]
            lines.append(json.dumps({
                "agent": name,
                "verdict": answer.verdict,
                "finding": answer.finding,
                "targets": sorted(finding.source_ids.items()),
                "evidence": list(answer.evidence),
                "original": finding.locations,
                "text": scrub(answer.text),
            }, ensure_ascii=False, sort_keys=True))  # fmt: skip
    atomic_write_text(output_dir / FILE_NAME, "".join(f"{line}\n" for line in lines))
    seconds = round(time.monotonic() - started, 3)
    return ReactionPhase(
        True, decided.reason, tuple(kept), tuple(dropped), len(lines), seconds, tuple(notes), tuple(calls)
    )


async def _react(
    inputs: RoundInputs, name: str, peers: PeerView, runtime: Runtime, limit: asyncio.Semaphore
) -> tuple[str, str | None, dict[str, object]]:
    """One agent's reply, why it failed (None: it did not), and the call's run.json record."""
    agent = inputs.completed[name]
    task = inputs.task_for(agent, scrub(prompt(name, inputs.label, peers)), runtime)
    async with limit:
        try:
            reply = await asyncio.wait_for(runtime.react(task), timeout=task.deadline_s)
        except TimeoutError:
            return "", f"timed out after {task.deadline_s:g} s", {}
        except Exception as exc:  # a reaction is extra evidence: its failure is a note, never the review's
            return "", " ".join(f"{type(exc).__name__}: {exc}".split())[:300], {}
    call: dict[str, object] = {
        "outcome": "completed",
        "provenance": reply.provenance.record(),
        "usage": reply.usage.record(),
    }
    return reply.text, None, call


def _record(
    decisions: DecisionLog | None, kind: str, decided: Mapping[str, object], inputs: Mapping[str, object]
) -> None:
    if decisions is not None:
        decisions.record(kind, decided, inputs)
