"""Knowledge-base maintenance (PROTOCOL.md section 12): four stages that meet only through files.

1. :func:`remember` queues an item and returns; :func:`process_queue` takes
   the queue one item at a time (duplicate, conflict review, or added).
2. :func:`analyze` checks every item against the code with a bounded swarm of
   inquisitors, once per git HEAD, and writes reviews (auto-fixes included).
3. :class:`~fluxdrive.kb.tui.ReviewApp` lets a person answer the reviews.
4. :func:`apply_reviews` carries out answered and automatic reviews.

Modules, each importing only those before it: model, files, queue,
processor, inquisitor, reviews, analysis, apply, tui.
"""

from fluxdrive.kb.analysis import Analysis, analyze
from fluxdrive.kb.apply import Applied, apply_reviews
from fluxdrive.kb.model import CATEGORIES, Item, Review
from fluxdrive.kb.processor import Processed, process_queue
from fluxdrive.kb.queue import queued, remember
from fluxdrive.kb.reviews import ReviewSession, load_reviews

__all__ = [
    "CATEGORIES",
    "Analysis",
    "Applied",
    "Item",
    "Processed",
    "Review",
    "ReviewSession",
    "analyze",
    "apply_reviews",
    "load_reviews",
    "process_queue",
    "queued",
    "remember",
]
