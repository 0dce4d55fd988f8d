"""A review's use of the project knowledge store: entries into prompts, then the lifecycle after synthesis.

Loaded once per review from ``PROJECT_ROOT/<knowledge.directory>``; an absent
store means no knowledge section and nothing to update (compounding still
creates the store when a finding earns an entry). Which entries each agent
was shown is recorded, because that decides whether a later re-discovery is
independent (refreshes the entry) or primed (does not). Switched off with
``knowledge.enabled = false``; an interrupted review updates nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import date
from pathlib import Path
from typing import Any

from fluxdrive.agents import AgentDefinition
from fluxdrive.config.model import Config
from fluxdrive.core.project import project_directory
from fluxdrive.errors import FluxdriveError
from fluxdrive.knowledge import Outcome, Store, compound, render_for_prompt, retrieve, update_after_review
from fluxdrive.synthesis.model import Finding
from fluxdrive.triage.profile import InputProfile

MAX_INPUT_TERMS = 200


class ReviewKnowledge:
    """The store as one review sees it."""

    def __init__(
        self,
        root: Path,
        config: Config,
        profile: InputProfile,
        domains: Sequence[str] = (),
        today: date | None = None,
    ) -> None:
        self.settings = config.knowledge
        self.today = today or date.today()
        self.problems: list[str] = []
        self.store: Store | None = None
        if self.settings.enabled:
            try:
                self.store = Store.load(project_directory(Path(root), self.settings.directory, "knowledge.directory"))
            except FluxdriveError as exc:  # a store linked out of the project is not read; the review goes on
                self.problems.append(f"knowledge store not used: {exc.one_line()}")
        self.injected: dict[str, list[str]] = {}
        self.outcome: Outcome | None = None
        files = sorted({u.file for u in profile.units if u.file})
        self.input_files = files
        # the query: the detected domains and the input's summary (label, headings, files); the agent adds its lane
        summary = [profile.label, *(s.title for s in profile.sections), *files]
        self.input_terms = [*(d.replace("-", " ") for d in domains), *summary][:MAX_INPUT_TERMS]

    @property
    def notes(self) -> list[str]:
        """Entries that could not be read (left alone, reported)."""
        skipped = [f"knowledge entry skipped: {p}" for p in self.store.problems] if self.store else []
        return [*self.problems, *skipped]

    def for_agent(self, agent: AgentDefinition) -> str:
        """The prompt's knowledge section for ``agent`` (empty when there is nothing relevant)."""
        if self.store is None or not self.store.active or self.settings.max_per_agent == 0:
            return ""
        chosen = retrieve(
            self.store.active.values(), agent, self.input_terms, self.input_files, limit=self.settings.max_per_agent
        )
        if chosen:
            self.injected[agent.name] = [e.id for e in chosen]
        return render_for_prompt(chosen)

    def after_review(self, findings: Sequence[Finding], reads_prompt: Mapping[str, bool]) -> Outcome | None:
        """Confirm, decay, archive and compound once synthesis is done."""
        if self.store is None:
            return None
        outcome = update_after_review(
            self.store,
            findings,
            self.injected,
            reads_prompt,
            today=self.today,
            decay_reviews=self.settings.decay_reviews,
        )
        outcome.added = compound(
            self.store,
            findings,
            today=self.today,
            min_convergence=self.settings.compound_min_convergence,
            limit=self.settings.max_new_per_review,
        )
        self.outcome = outcome
        return outcome

    def record(self) -> dict[str, Any] | None:
        """run.json's ``knowledge``: who was shown what, and what the review changed."""
        if self.store is None:
            return None
        data: dict[str, Any] = {"injected": {a: ids for a, ids in sorted(self.injected.items())}}
        if self.outcome is not None:
            data.update(self.outcome.record())
        return data
