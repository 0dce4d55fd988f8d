"""Stage 2: check every knowledge item against the current code with a bounded swarm of inquisitors.

Plain code that spawns agents, not an agent: it runs once per git HEAD
(``.last-analysis`` debounces; ``force`` overrides), under the kb directory's
lock (a dead owner's lock is taken over, a live one refuses), and hands every
item to an inquisitor through a rolling pool of ``kb.swarm_concurrency`` (5)
workers - the next item starts when any worker is free, not when a batch
ends. Outdated items become auto-fix reviews (``auto_apply: true``, applied
without asking); stale and conflicting ones become reviews with a question
and options. Pending reviews from earlier runs are checked again and removed
when they no longer apply (the item is gone, or now valid).

The swarm is a multi-agent dispatch, so it writes write-behind verdicts as a
review does (PROTOCOL.md section 11): the knowledge base has no run
directory, so each analysis's is ``<kb>/analysis/`` - one report per
inquisitor (``inquisitor-<item id>.md``) and one record in
``analysis/verdicts/``, written by the same writer; ``fluxdrive verdicts
.fluxdrive/kb/analysis`` lists them. An analysis replaces the previous one's
files there (a debounced run leaves them).
"""

from __future__ import annotations

import contextlib
import json
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from fluxdrive.core import git as _git
from fluxdrive.core.atomic import atomic_write_text
from fluxdrive.core.clock import utc_timestamp
from fluxdrive.core.masking import scrub
from fluxdrive.core.project import cache_file
from fluxdrive.errors import FluxdriveError
from fluxdrive.exchange.verdicts import verdicts_dir, write_verdict
from fluxdrive.kb.files import REVIEW_DIR, category_path, load_items
from fluxdrive.kb.inquisitor import Inquisitor, Investigation, static_inquisitor
from fluxdrive.kb.model import AUTO, Action, Item, Review, notes_text
from fluxdrive.kb.reviews import load_reviews
from fluxdrive.knowledge.entries import slug
from fluxdrive.workspace import run_lock

LAST_ANALYSIS = ".last-analysis"
ANALYSIS_DIR = "analysis"  # the analysis's output directory under the kb: reports and verdict records
ANALYSIS_TYPES = ("stale", "conflicting", "outdated", "auto_fix")


@dataclass
class Analysis:
    """What one analysis did."""

    skipped: str | None = None
    investigations: list[Investigation] = field(default_factory=list)
    written: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)

    def line(self) -> str:
        """One line for the console."""
        if self.skipped:
            return f"Analysis skipped: {self.skipped}"
        counts: dict[str, int] = {}
        for found in self.investigations:
            counts[found.outcome] = counts.get(found.outcome, 0) + 1
        shown = ", ".join(f"{n} {o}" for o, n in sorted(counts.items())) or "no items"
        reviews = f"{len(self.written)} review(s) written, {len(self.removed)} moot review(s) removed"
        tokens = sum(f.tokens for f in self.investigations)
        spent = f"; {tokens:,} model tokens" if tokens else ""
        return f"{len(self.investigations)} item(s) investigated ({shown}); {reviews}{spent}"


def _review_for(item: Item, found: Investigation, kb_dir: Path) -> Review:
    file = category_path(kb_dir, item.category).name
    base = {"subject": item.title, "knowledge_file": file, "item_id": item.id, "created_at": utc_timestamp()}
    if found.fix is not None:
        return Review(
            id=slug(f"auto-fix-{item.id}"),
            type="auto_fix",
            question=f"Update the references of {item.title!r}: {found.detail}",
            agent_notes=notes_text(found.detail, {AUTO: found.fix}),
            auto_apply=True,
            **base,
        )
    actions = {**dict(found.moves), "delete it": Action(kind="delete"), "keep it as it is": Action(kind="keep")}
    suggested = ""
    if found.suggestion is not None:
        actions = {"apply the suggested update": found.suggestion, **actions}
        if found.suggestion.content:
            suggested = f"\n\nSuggested text: {found.suggestion.content}"
    return Review(
        id=slug(f"{found.outcome}-{item.id}"),
        type=found.outcome,
        question=f"{item.title!r} may no longer hold: {found.detail}. What should happen to it?{suggested}",
        options=list(actions),
        agent_notes=notes_text(found.detail, actions),
        **base,
    )


def inquisitor_name(item_id: str) -> str:
    """The agent name an item's inquisitor reports under (a file name: at most 100 characters)."""
    return f"inquisitor-{item_id}"[:100]


def _write_verdicts(
    root: Path, kb_dir: Path, items: dict[str, Item], found: list[Investigation], reviews: dict[str, str]
) -> None:
    """One report and one verdict record per inquisitor in ``<kb>/analysis``; the previous analysis's go.

    The directory is this clone's state, like the domain cache: listed in the knowledge base's own
    ``.gitignore`` (fluxdrive's, :func:`~fluxdrive.core.project.cache_file`), so an analysis never leaves
    ``?? analysis/`` in ``git status`` while the knowledge items people commit stay visible."""
    with contextlib.suppress(OSError, FluxdriveError):  # unlisted, the records are still written
        cache_file(Path(root), (kb_dir / ANALYSIS_DIR).resolve().relative_to(Path(root).resolve()), "kb analysis")
    output = kb_dir / ANALYSIS_DIR
    names = {inquisitor_name(f.item_id) for f in found}
    for stale in [*output.glob("*.md"), *verdicts_dir(output).glob("*.json")] if output.is_dir() else []:
        if stale.stem not in names:
            stale.unlink(missing_ok=True)
    for investigation in found:
        item, name = items[investigation.item_id], inquisitor_name(investigation.item_id)
        kind = "auto-fix" if investigation.severity == "auto_fix" else investigation.outcome
        review = reviews.get(investigation.item_id)
        report = [
            f"# {name}",
            "",
            f"Item: {item.title} ({item.id}, {item.category})",
            f"Refs: {', '.join(item.refs) or 'none'}",
            f"Outcome: {kind}",
            f"Detail: {investigation.detail}",
        ]
        if review:
            report.append(f"Review: {REVIEW_DIR}/{review}.json")
        atomic_write_text(output / f"{name}.md", scrub("\n".join(report)) + "\n")  # as the record's summary is
        status = "CLEAN" if investigation.outcome == "valid" else "NEEDS_ATTENTION"
        summary = f"{kind}: {item.title}: {investigation.detail}"
        write_verdict(output, name, status, summary, detail_path=f"{name}.md", tokens=investigation.tokens)


def analyze(
    root: Path,
    kb_dir: Path,
    *,
    concurrency: int = 5,
    force: bool = False,
    inquisitor: Inquisitor = static_inquisitor,
) -> Analysis:
    """Investigate every item (once per HEAD unless ``force``); write and prune reviews."""
    kb_dir = Path(kb_dir)
    head = _git.head(Path(root))  # outside git, or before the first commit: no debounce
    marker = kb_dir / LAST_ANALYSIS
    last = json.loads(marker.read_text(encoding="utf-8") or "{}").get("head") if marker.is_file() else None
    if not force and head is not None and last == head:
        return Analysis(skipped=f"already analyzed at {head[:12]} (pass --force to run again)")
    renamed = _git.renames(Path(root), last) if last and head else {}
    kb_dir.mkdir(parents=True, exist_ok=True)
    with run_lock(kb_dir, command="kb analyze"):
        items = sorted((i for listed in load_items(kb_dir).values() for i in listed), key=lambda i: i.id)
        with ThreadPoolExecutor(max_workers=max(1, concurrency), thread_name_prefix="fluxdrive-inquisitor") as pool:
            found = list(pool.map(lambda item: inquisitor(item, Path(root), renamed), items))
        result = Analysis(investigations=found)
        by_id = {i.id: i for i in items}
        outcome = {f.item_id: f for f in found}
        pending = load_reviews(kb_dir)
        for review in pending:
            current = outcome.get(review.item_id)
            moot = review.item_id not in by_id or (
                review.type in ANALYSIS_TYPES and current and current.outcome == "valid"
            )
            if moot:
                (kb_dir / REVIEW_DIR / f"{review.id}.json").unlink(missing_ok=True)
                result.removed.append(review.id)
        open_items = {r.item_id: r.id for r in pending if r.id not in result.removed}
        reviews = dict(open_items)
        for investigation in found:
            if investigation.outcome == "valid" or investigation.item_id in open_items:
                continue
            review = _review_for(by_id[investigation.item_id], investigation, kb_dir)
            atomic_write_text(kb_dir / REVIEW_DIR / f"{review.id}.json", review.dumps())
            result.written.append(review.id)
            reviews[investigation.item_id] = review.id
        _write_verdicts(root, kb_dir, by_id, found, reviews)
        atomic_write_text(marker, json.dumps({"head": head, "at": utc_timestamp()}) + "\n")
    return result
