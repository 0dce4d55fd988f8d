"""The knowledge base on disk: one markdown file per category and two maps, all rewritten atomically.

Layout under ``PROJECT_ROOT/.fluxdrive/kb/``::

    architecture.md patterns.md dependencies.md workflows.md gotchas.md
    KNOWLEDGE_MAP.md          for people: every item by category, with its file
    KNOWLEDGE_MAP_CLAUDE.md   for agents: one dense line per item (id, category, title, refs)
    remember-queue/*.json     waiting for the processor
    pending-review/*.json     questions for a person (or auto-fixes)

A category file is a list of ``## Title`` sections, each opened by an
``<!-- kb:<id> -->`` marker and closed by an optional ``Refs:`` line, so
people can edit the prose and the pipeline still finds every item.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

from fluxdrive.core.atomic import atomic_write_text
from fluxdrive.kb.model import CATEGORIES, Item

QUEUE_DIR = "remember-queue"
REVIEW_DIR = "pending-review"
MAP = "KNOWLEDGE_MAP.md"
AGENT_MAP = "KNOWLEDGE_MAP_CLAUDE.md"
_MARKER = re.compile(r"^<!-- kb:([a-z0-9][a-z0-9-]*) -->\s*$", re.MULTILINE)
_REFS = re.compile(r"^Refs:\s*(.*)$", re.MULTILINE)


def category_path(kb_dir: Path, category: str) -> Path:
    """``<kb>/<category>.md``."""
    return Path(kb_dir) / f"{category}.md"


def parse_category(category: str, text: str) -> list[Item]:
    """The items of one category file, in file order."""
    items = []
    chunks = _MARKER.split(text)
    for index in range(1, len(chunks) - 1, 2):
        item_id, body = chunks[index], chunks[index + 1]
        lines = body.strip().splitlines()
        if not lines or not lines[0].startswith("## "):
            continue
        title = lines[0][3:].strip()
        rest = "\n".join(lines[1:])
        refs_match = _REFS.search(rest)
        refs = [r.strip() for r in refs_match.group(1).split(",") if r.strip()] if refs_match else []
        content = _REFS.sub("", rest).strip()
        if title and content:
            items.append(Item(id=item_id, category=category, title=title, content=content, refs=refs))
    return items


def render_category(category: str, items: Iterable[Item]) -> str:
    """A category file's text."""
    parts = [f"# {category.capitalize()}\n"]
    for item in items:
        refs = f"\nRefs: {', '.join(item.refs)}\n" if item.refs else ""
        parts.append(f"\n<!-- kb:{item.id} -->\n## {item.title}\n\n{item.content}\n{refs}")
    return "".join(parts)


def load_items(kb_dir: Path) -> dict[str, list[Item]]:
    """Every category's items (an absent file is an empty category)."""
    found: dict[str, list[Item]] = {}
    for category in CATEGORIES:
        path = category_path(kb_dir, category)
        found[category] = parse_category(category, path.read_text(encoding="utf-8")) if path.is_file() else []
    return found


def save_category(kb_dir: Path, category: str, items: list[Item]) -> None:
    """Rewrite one category file."""
    atomic_write_text(category_path(kb_dir, category), render_category(category, items))


def write_maps(kb_dir: Path, items: dict[str, list[Item]]) -> None:
    """Rewrite both maps from the items (people's and agents')."""
    human = ["# Knowledge map", ""]
    dense = ["# Knowledge map (agents): id | category | title | refs", ""]
    for category in CATEGORIES:
        listed = sorted(items.get(category, []), key=lambda i: i.title.lower())
        if not listed:
            continue
        human += [f"## {category.capitalize()} ({category}.md)", ""]
        human += [f"- {item.title}" + (f" ({', '.join(item.refs)})" if item.refs else "") for item in listed]
        human.append("")
        dense += [f"{item.id} | {category} | {item.title} | {','.join(item.refs)}" for item in listed]
    atomic_write_text(Path(kb_dir) / MAP, "\n".join(human).rstrip() + "\n")
    atomic_write_text(Path(kb_dir) / AGENT_MAP, "\n".join(dense).rstrip() + "\n")


def find_item(items: dict[str, list[Item]], item_id: str) -> Item | None:
    """The item with ``item_id`` in any category."""
    return next((i for listed in items.values() for i in listed if i.id == item_id), None)
