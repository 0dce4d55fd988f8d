"""The explanation and fix an agent wrote under one of its findings.

Why: SARIF's rule help and report.html's finding cards both show the first
(explanation, fix) an agent wrote for a merged finding; only the order in
which they ask the agents differs. Each agent's report is parsed once.
"""

from __future__ import annotations

from collections.abc import Iterable

from fluxdrive.synthesis import Synthesis
from fluxdrive.synthesis.prose import issue_notes


class AgentNotes:
    """Reads agents' (explanation, fix) notes of one synthesis, each report at most once."""

    def __init__(self, result: Synthesis) -> None:
        self._outputs = result.outputs
        self._read: dict[str, dict[str, tuple[str, str]]] = {}

    def first(self, asked: Iterable[tuple[str, str]]) -> tuple[str, str]:
        """The first non-empty (explanation, fix) among ``asked`` (agent, the finding's id in its report)."""
        for agent, local in asked:
            output = self._outputs.get(agent)
            if output is None:
                continue
            if agent not in self._read:
                self._read[agent] = issue_notes(output.text)
            why, fix = self._read[agent].get(local, ("", ""))
            if why or fix:
                return why, fix
        return "", ""
