"""Pending reviews on disk: load them, answer one, and the review session the UI drives.

Answers are written back into the review's own file (atomically) the moment
they are given, so quitting the UI half-way loses nothing. Auto-apply
reviews are never shown to a person: the apply step takes them as they are.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from fluxdrive.core.atomic import atomic_write_text
from fluxdrive.kb.files import REVIEW_DIR, find_item, load_items
from fluxdrive.kb.model import Item, Notes, Review


def load_reviews(kb_dir: Path) -> list[Review]:
    """Every readable review, by id (an unreadable file is skipped; the apply step reports it)."""
    folder = Path(kb_dir) / REVIEW_DIR
    reviews = []
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        try:
            reviews.append(Review.model_validate(json.loads(path.read_text(encoding="utf-8"))))
        except (ValueError, ValidationError, OSError, RecursionError):
            continue
    return sorted(reviews, key=lambda r: r.id)


def save_review(kb_dir: Path, review: Review) -> None:
    """Write one review back to its file."""
    atomic_write_text(Path(kb_dir) / REVIEW_DIR / f"{review.id}.json", review.dumps())


@dataclass
class ReviewSession:
    """The questions a person answers, one at a time (the UI is a view of this)."""

    kb_dir: Path
    reviews: list[Review] = field(default_factory=list)
    position: int = 0
    skipped: list[str] = field(default_factory=list)
    history: list[tuple[int, Review | None]] = field(default_factory=list)  # (position, review before) for undo

    @classmethod
    def open(cls, kb_dir: Path) -> ReviewSession:
        """The unanswered reviews that need a person (auto-apply ones are skipped)."""
        waiting = [r for r in load_reviews(kb_dir) if not r.auto_apply and r.answer is None]
        return cls(Path(kb_dir), waiting)

    @property
    def current(self) -> Review | None:
        """The review being asked, or None when all are done."""
        return self.reviews[self.position] if self.position < len(self.reviews) else None

    @property
    def done(self) -> bool:
        """True when every review was answered or skipped."""
        return self.current is None

    def answer(self, choice: str) -> Review:
        """Record ``choice`` for the current review (saved at once) and move on."""
        review = self.current
        if review is None:
            raise ValueError("no review is waiting")
        answered = review.answered(choice)
        save_review(self.kb_dir, answered)
        self.history.append((self.position, review))
        self.reviews[self.position] = answered
        self.position += 1
        return answered

    def skip(self) -> None:
        """Leave the current review for later (it stays pending on disk and is counted as skipped)."""
        if self.current is not None:
            self.skipped.append(self.current.id)
            self.history.append((self.position, None))
            self.position += 1

    def undo(self) -> Review | None:
        """Take back the last answer or skip: the review is pending again (on disk too) and asked again."""
        if not self.history:
            return None
        position, before = self.history.pop()
        self.position = position
        review = self.reviews[position]
        if before is None:
            self.skipped.remove(review.id)
            return review
        save_review(self.kb_dir, before)
        self.reviews[position] = before
        return before

    @property
    def answered_count(self) -> int:
        return sum(1 for r in self.reviews if r.answer is not None)

    def item(self, review: Review) -> Item | None:
        """The knowledge item a review is about (its text and references), if it still exists."""
        return find_item(load_items(self.kb_dir), review.item_id)


def is_destructive(review: Review, choice: str) -> bool:
    """True when answering ``choice`` deletes the item (it then needs a confirmation)."""
    try:
        action = Notes.model_validate_json(review.agent_notes).actions.get(choice)
    except ValueError:
        action = None
    if action is not None:
        return action.kind == "delete"
    return choice.lower().startswith(("delete", "remove", "drop"))
