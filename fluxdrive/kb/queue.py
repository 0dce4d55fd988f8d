"""``remember()``: put a piece of knowledge in the queue and return at once (stage 1's front door).

The caller - a person, an agent through MCP - never waits for duplicate and
conflict checks; the processor takes the queue later, one file at a time, in
name order (names start with a UTC timestamp, so that is arrival order).
What is queued is masked first (credential shapes, and the project's secret
values when the caller opened a :func:`~fluxdrive.core.masking.known_secrets`
scope, as ``fluxdrive kb remember`` does): the knowledge base is committed.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from pydantic import ValidationError

from fluxdrive.core.atomic import atomic_write_text
from fluxdrive.core.clock import utc_timestamp
from fluxdrive.core.masking import scrub
from fluxdrive.errors import UsageError
from fluxdrive.kb.files import QUEUE_DIR
from fluxdrive.kb.model import CATEGORIES, Item, QueuedItem
from fluxdrive.knowledge.entries import slug


def remember(
    kb_dir: Path, title: str, content: str, category: str, refs: list[str] | None = None, *, source: str = "remember"
) -> Path:
    """Queue one item; returns the queue file. Bad input is a UsageError saying which field and why."""
    if category not in CATEGORIES:
        raise UsageError(f"unknown category {category!r}", hint=f"use one of {', '.join(CATEGORIES)}")
    # a store outlives the run: what a person or an agent pastes is masked before it is kept
    title, content, refs = scrub(title), scrub(content), [scrub(ref) for ref in refs or []]
    try:
        item = Item(id=slug(title), category=category, title=title, content=content, refs=refs)
    except ValidationError as exc:
        problem = exc.errors()[0]
        raise UsageError(f"{'.'.join(str(p) for p in problem['loc'])}: {problem['msg']}") from None
    queued = QueuedItem(item=item, source=source, queued_at=utc_timestamp())
    name = f"{time.time_ns():020d}-{os.getpid()}-{item.id}.json"
    path = Path(kb_dir) / QUEUE_DIR / name
    atomic_write_text(path, queued.dumps())
    return path


def queued(kb_dir: Path) -> list[Path]:
    """Queue files in arrival order."""
    folder = Path(kb_dir) / QUEUE_DIR
    return sorted(folder.glob("*.json")) if folder.is_dir() else []
