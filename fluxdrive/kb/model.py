"""The knowledge base's records: queued items, stored items, pending reviews (PROTOCOL.md section 12).

Every stage of the maintenance pipeline reads and writes these as files
under ``PROJECT_ROOT/.fluxdrive/kb/`` - no stage calls another - so the
schemas are the pipeline's only contract. A review always carries
``agent_notes``: what the apply step needs to act on the answer (the
reference system dropped them for reviews needing a person, so answered
reviews could not be applied; here the model refuses a review without them).
"""

from __future__ import annotations

import json
import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

SCHEMA_VERSION = 1
CATEGORIES = ("architecture", "patterns", "dependencies", "workflows", "gotchas")
Category = Literal["architecture", "patterns", "dependencies", "workflows", "gotchas"]
ReviewType = Literal["conflict", "stale", "conflicting", "outdated", "auto_fix"]
ID = re.compile(r"^[a-z0-9][a-z0-9-]{0,79}$")


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    schema_version: int = SCHEMA_VERSION

    def dumps(self) -> str:
        """The record's file text (sorted keys, newline-terminated)."""
        return json.dumps(self.model_dump(mode="json"), indent=2, sort_keys=True) + "\n"


class Item(_Record):
    """One piece of project knowledge: a section of a category file."""

    id: str = Field(pattern=ID.pattern)
    category: Category
    title: str = Field(min_length=1, max_length=200)
    content: str = Field(min_length=1)
    refs: list[str] = Field(default_factory=list, description="files and symbols it talks about: path, path:symbol")

    @field_validator("title", "content")
    @classmethod
    def _stripped(cls, value: str) -> str:
        value = value.strip()
        if not value:
            raise ValueError("must not be blank")
        return value


class QueuedItem(_Record):
    """What ``remember()`` put in the queue, waiting for the processor."""

    item: Item
    source: str = "remember"
    queued_at: str


class Review(_Record):
    """A question about one item, for a person (or, with ``auto_apply``, for the apply step alone)."""

    id: str = Field(pattern=ID.pattern)
    subject: str
    type: ReviewType
    question: str
    options: list[str] = Field(default_factory=list)
    knowledge_file: str
    item_id: str
    agent_notes: str = Field(min_length=1, description="how to apply each answer (never shown to the person)")
    auto_apply: bool = False
    answer: str | None = None
    created_at: str

    def answered(self, choice: str) -> Review:
        """This review with ``choice`` recorded (one of its options)."""
        if choice not in self.options:
            raise ValueError(f"{choice!r} is not one of {self.options}")
        return self.model_copy(update={"answer": choice})

    @property
    def ready(self) -> bool:
        """True when the apply step may act: answered, or automatic."""
        return self.auto_apply or self.answer is not None


class Action(_Record):
    """What the apply step does to the item for one answer."""

    kind: Literal["delete", "keep", "update", "add"]
    content: str | None = None
    refs: list[str] | None = None
    item: Item | None = None  # for "add": the new item


class Notes(_Record):
    """A review's ``agent_notes``: why it was raised, and the action for each possible answer."""

    why: str
    actions: dict[str, Action]


AUTO = "apply"  # the one "answer" of an auto-fix review


def notes_text(why: str, actions: dict[str, Action]) -> str:
    """``agent_notes`` for a review."""
    return Notes(why=why, actions=actions).dumps()


def action_for(review: Review) -> Action:
    """The action a ready review asks for (``keep`` when its notes do not name one)."""
    notes = Notes.model_validate_json(review.agent_notes)
    choice = AUTO if review.auto_apply else review.answer
    return notes.actions.get(choice or "", Action(kind="keep"))
