"""Stage 1: take the remember queue one entry at a time into the knowledge base.

For each queued item, in arrival order:

- **duplicate** - an item about the same subject (the same meaningful title
  words, or a title a few letters apart) already says the same thing:
  dropped, with a note;
- **conflict** - an item with the same title says something else: a pending
  review asks a person which one holds (keep, replace, keep both);
- otherwise it is **added** to its category file and both maps are rewritten.

The queue file is deleted only after what it caused was written; if writing
fails it stays, and the next run takes it again.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from fluxdrive.core.atomic import atomic_write_text
from fluxdrive.core.clock import utc_timestamp
from fluxdrive.kb.files import REVIEW_DIR, category_path, load_items, save_category, write_maps
from fluxdrive.kb.model import Action, Item, QueuedItem, Review, notes_text
from fluxdrive.kb.queue import queued
from fluxdrive.knowledge.entries import slug
from fluxdrive.synthesis.dedup import Similarity, meaningful_words, title_key

SAME_CONTENT_SHARE = 0.8  # share of the new text's words already in the old one: nothing new to say
SAME_SUBJECT = Similarity(max_distance=0.15, min_shared_words=99)  # titles name a subject: near-identical only


@dataclass
class Processed:
    """What one processor run did."""

    added: list[str] = field(default_factory=list)
    duplicates: list[str] = field(default_factory=list)
    conflicts: list[str] = field(default_factory=list)
    invalid: list[str] = field(default_factory=list)

    def line(self) -> str:
        """One line for the console."""
        return (
            f"{len(self.added)} added, {len(self.duplicates)} duplicate(s) dropped, "
            f"{len(self.conflicts)} conflict(s) for review, {len(self.invalid)} invalid"
        )


def _same_text(old: str, new: str) -> bool:
    words = meaningful_words(new)
    return not words or len(words & meaningful_words(old)) / len(words) >= SAME_CONTENT_SHARE


def _conflict_review(existing: Item, new: Item, kb_dir: Path) -> Review:
    why = f"a new item about {existing.title!r} disagrees with the one in {existing.category}.md"
    added = new.model_copy(update={"id": slug(new.id + "-new")})
    actions = {
        "keep the existing text": Action(kind="keep"),
        "replace it with the new text": Action(kind="update", content=new.content, refs=new.refs or existing.refs),
        "keep both": Action(kind="add", item=added),
    }
    return Review(
        id=slug(f"conflict-{existing.id}-{utc_timestamp()}"),
        subject=existing.title,
        type="conflict",
        question=f"Which is right about {existing.title!r}?\n\nNow: {existing.content}\n\nNew: {new.content}",
        options=list(actions),
        knowledge_file=category_path(kb_dir, existing.category).name,
        item_id=existing.id,
        agent_notes=notes_text(why, actions),
        created_at=utc_timestamp(),
    )


def _same_subject(a: str, b: str) -> bool:
    words_a, words_b = meaningful_words(a), meaningful_words(b)
    return (bool(words_a) and words_a == words_b) or SAME_SUBJECT.same(title_key(a), title_key(b))


def process_queue(kb_dir: Path) -> Processed:
    """Process every queued item, one at a time."""
    done = Processed()
    items = load_items(kb_dir)  # read once; every change below is written and kept in step here
    for path in queued(kb_dir):
        try:
            entry = QueuedItem.model_validate(json.loads(path.read_text(encoding="utf-8")))
        except (ValueError, ValidationError, OSError, RecursionError):
            done.invalid.append(path.name)
            path.rename(path.with_suffix(".invalid"))  # kept for a person, out of the queue
            continue
        new = entry.item
        same = [i for listed in items.values() for i in listed if _same_subject(i.title, new.title)]
        if same and any(_same_text(old.content, new.content) for old in same):
            done.duplicates.append(new.title)
        elif same:
            review = _conflict_review(same[0], new, kb_dir)
            atomic_write_text(Path(kb_dir) / REVIEW_DIR / f"{review.id}.json", review.dumps())
            done.conflicts.append(new.title)
        else:
            taken = {i.id for listed in items.values() for i in listed}
            item = new.model_copy(update={"id": slug(new.id, taken)})
            items[item.category].append(item)
            save_category(kb_dir, item.category, items[item.category])
            write_maps(kb_dir, items)
            done.added.append(item.id)
        path.unlink()  # only now: what the entry caused is on disk
    return done
