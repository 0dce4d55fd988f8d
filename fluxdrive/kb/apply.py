"""Stage 4: carry out every answered (or auto-apply) review, then delete it.

One review at a time: read the item the review is about, perform the action
its ``agent_notes`` give for the answer (delete the section, update its
content or references, add a second item, or keep it), rewrite the category
file and both maps, and only then delete the review file. A review whose
item is gone is dropped with a note; an unanswered one is left for the UI.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from fluxdrive.kb.files import REVIEW_DIR, find_item, load_items, save_category, write_maps
from fluxdrive.kb.model import Item, Review, action_for
from fluxdrive.kb.reviews import load_reviews
from fluxdrive.knowledge.entries import slug


@dataclass
class Applied:
    """What one apply run did, one line per review."""

    lines: list[str] = field(default_factory=list)
    waiting: int = 0


def _apply_one(kb_dir: Path, items: dict[str, list[Item]], review: Review) -> str:
    """Carry out one review on ``items`` (kept in step with the files it rewrites)."""
    item = find_item(items, review.item_id)
    if item is None:
        return f"{review.id}: {review.item_id} no longer exists; nothing to do"
    action = action_for(review)
    listed = items[item.category]
    position = next(i for i, candidate in enumerate(listed) if candidate.id == item.id)
    if action.kind == "keep":
        return f"{review.id}: kept {item.id}"
    if action.kind == "delete":
        del listed[position]
        done = f"deleted {item.id} from {item.category}.md"
    elif action.kind == "update":
        changes: dict[str, object] = {}
        if action.content is not None:
            changes["content"] = action.content
        if action.refs is not None:
            changes["refs"] = action.refs
        listed[position] = item.model_copy(update=changes)
        done = f"updated {item.id} ({', '.join(sorted(changes)) or 'nothing'})"
    else:
        if action.item is None:
            return f"{review.id}: nothing to add"
        taken = {i.id for group in items.values() for i in group}
        added = action.item.model_copy(update={"id": slug(action.item.id, taken)})
        items[added.category].append(added)
        save_category(kb_dir, added.category, items[added.category])
        done = f"added {added.id} next to {item.id}"
    save_category(kb_dir, item.category, listed)
    write_maps(kb_dir, items)
    return f"{review.id}: {done}"


def apply_reviews(kb_dir: Path) -> Applied:
    """Apply every ready review, in id order; each review file is deleted after its change is written."""
    kb_dir = Path(kb_dir)
    result = Applied()
    items = load_items(kb_dir)
    for review in load_reviews(kb_dir):
        if not review.ready:
            result.waiting += 1
            continue
        result.lines.append(_apply_one(kb_dir, items, review))
        (kb_dir / REVIEW_DIR / f"{review.id}.json").unlink(missing_ok=True)
    return result
