"""Which entries an agent sees: at most ``knowledge.max_per_agent`` (5), ranked lexically, deterministic.

The query is the agent's own lane (its name, concerns and routing keywords)
plus what is being reviewed (the input's label, files and headings). An
entry scores by the query words it shares, plus a bonus when it was written
from this agent's findings and when its evidence names a file under review.
Entries that share nothing are never shown; ties break on the id. Lexical on
purpose: no model and no index to go stale, and the same input always gets
the same entries.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from fluxdrive.agents import AgentDefinition
from fluxdrive.knowledge.entries import Entry, location_file
from fluxdrive.knowledge.sanitize import for_prompt
from fluxdrive.synthesis.dedup import meaningful_words

AGENT_BONUS = 3
FILE_BONUS = 2

INSTRUCTION = (
    "These lessons were recorded from earlier reviews of this project. Check each against the current code; "
    "do not assume it still holds. When you report a finding that one of them describes, say in its text "
    "'primed confirmation of <id>' (you saw it here first); say 'independently confirmed <id>' only if you "
    "found it before reading this section."
)


def _entry_words(entry: Entry) -> frozenset[str]:
    return meaningful_words(" ".join((entry.title, entry.heuristic, *entry.evidence)))


def query_words(agent: AgentDefinition, input_terms: Iterable[str]) -> frozenset[str]:
    """The words an agent's retrieval looks for."""
    lane = [agent.name.removeprefix("fd-"), agent.description, *agent.concerns, *agent.routing.hunk_keywords]
    return meaningful_words(" ".join([*lane, *input_terms]))


def retrieve(
    entries: Iterable[Entry],
    agent: AgentDefinition,
    input_terms: Sequence[str],
    input_files: Iterable[str],
    *,
    limit: int,
) -> list[Entry]:
    """The best ``limit`` entries for ``agent`` on this input, best first."""
    wanted = query_words(agent, input_terms)
    files = set(input_files)
    ranked = []
    for entry in entries:
        shared = len(_entry_words(entry) & wanted)
        if shared == 0:
            continue
        score = shared + (AGENT_BONUS if agent.name in entry.agents else 0)
        if any(location_file(e) in files for e in entry.evidence):
            score += FILE_BONUS
        ranked.append((-score, entry.id, entry))
    return [entry for _score, _id, entry in sorted(ranked)[:limit]]


def render_for_prompt(entries: Sequence[Entry]) -> str:
    """The prompt's "Project knowledge" section: each entry's finding, evidence and last confirmation."""
    if not entries:
        return ""
    blocks = [INSTRUCTION, ""]
    for entry in entries:
        block = "\n".join(
            [
                f"- **{entry.id}**: {entry.title}",
                f"  Finding: {entry.heuristic}",
                f"  Evidence: {'; '.join(entry.evidence)}",
                f"  Last confirmed: {entry.last_confirmed.isoformat()} ({entry.provenance})",
            ]
        )
        blocks.append(for_prompt(block))  # entries are untrusted text: each one sanitized and capped
    return "\n".join(blocks)
