"""Project knowledge (PROTOCOL.md section 9): entries, the store, retrieval into prompts, and the lifecycle.

Modules, each importing only those before it: entries (the file format),
sanitize (what may go into an entry or a prompt), store (files on disk),
retrieval (which entries an agent sees), lifecycle (confirmation, decay,
archive and compounding after a review).
"""

from fluxdrive.knowledge.entries import Entry, parse_entry, render_entry, slug
from fluxdrive.knowledge.lifecycle import Outcome, compound, describes, update_after_review
from fluxdrive.knowledge.retrieval import render_for_prompt, retrieve
from fluxdrive.knowledge.store import Store

__all__ = [
    "Entry",
    "Outcome",
    "Store",
    "compound",
    "describes",
    "parse_entry",
    "render_entry",
    "render_for_prompt",
    "retrieve",
    "slug",
    "update_after_review",
]
