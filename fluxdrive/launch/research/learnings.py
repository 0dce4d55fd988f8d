"""The ``learnings`` research agent, answered from the project's knowledge store.

"Has the project met this problem before?" is a question the store can
answer without a model: entries whose title is the same issue as the
finding, or whose evidence names the flagged file, are the project's recorded
lessons about it. Active entries first, then archived ones (an archived
lesson is still history, marked as such); at most five. No match is a
completed answer too - "nothing recorded" is what the question asked.
"""

from __future__ import annotations

from pathlib import Path

from fluxdrive.knowledge import Entry, Store
from fluxdrive.knowledge.entries import location_file
from fluxdrive.launch.research.model import Point, ResearchAnswer, ResearchExecutor, ResearchRequest
from fluxdrive.synthesis.dedup import Similarity, compatible_paths, title_key

MAX_LESSONS = 5


def _matches(entry: Entry, title: str, files: list[str], similar: Similarity) -> bool:
    if title and similar.same(title_key(entry.title), title_key(title)):
        return True
    return any(compatible_paths(location_file(e), f) for e in entry.evidence for f in files)


def learnings_executor(store: Store) -> ResearchExecutor:
    """An executor that answers from ``store`` (loaded once per review)."""

    def execute(request: ResearchRequest) -> ResearchAnswer:
        trigger = request.trigger
        files = [location_file(loc) for loc in (trigger.locations or ((trigger.location,) if trigger.location else ()))]
        similar = Similarity()
        found = [
            (entry, archived)
            for archived, pool in ((False, store.active), (True, store.archived))
            for _id, entry in sorted(pool.items())
            if _matches(entry, trigger.title, files, similar)
        ][:MAX_LESSONS]
        root = Path(request.root)
        sources = []
        for entry, archived in found:
            path = store.path(entry.id, archived=archived)
            sources.append(str(path.relative_to(root)) if path.is_relative_to(root) else path.name)
        points = tuple(
            Point(
                f"{entry.title}{' (archived)' if archived else ''}: {entry.heuristic}",
                (
                    f"Evidence: {'; '.join(entry.evidence)}",
                    f"Last confirmed {entry.last_confirmed.isoformat()} ({entry.provenance})",
                ),
            )
            for entry, archived in found
        )
        if not found:
            return ResearchAnswer(
                sources=(str(store.directory.relative_to(root)) if store.directory.is_relative_to(root) else "",),
                points=(Point("No recorded lesson in the knowledge store matches this finding or its file."),),
                confidence="medium",
                confidence_note=f"searched {len(store.active)} active and {len(store.archived)} archived entries",
                gaps=("lessons never recorded as entries (commit messages, chats) are not searched here",),
                how="answered from the project's knowledge store",
            )
        return ResearchAnswer(
            sources=tuple(sources),
            points=points,
            confidence="high" if any(not archived for _e, archived in found) else "medium",
            confidence_note="recorded lessons of this project, each with evidence and a last confirmation",
            gaps=("entries are checked against the code only when a review re-discovers them",),
            how="answered from the project's knowledge store",
        )

    return execute
