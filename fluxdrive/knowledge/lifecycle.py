"""After a review: refresh what agents re-discovered on their own, decay what they only saw, add what converged.

PROTOCOL.md section 9, applied once per review after synthesis:

- **Independent re-discovery.** A finding describes an entry when their
  titles are the same issue (the synthesis dedup rule) and the finding sits
  in a file the entry's evidence names. If an agent reported it *without*
  having had the entry in its prompt, the entry is confirmed today
  (``lastConfirmed``, provenance ``independent``, decay count reset). An
  agent whose runtime does not read prompts (the static analyzers) can never
  be primed, so its re-discoveries are always independent.
- **Primed confirmation** - only agents that were shown the entry reported
  it - never refreshes anything.
- **Decay.** Every review an entry was injected into without an independent
  confirmation adds one to ``reviewsUnconfirmed``; at ``knowledge.decay_reviews``
  (10) it moves to ``archive/`` - restorable, never deleted.
- **Compounding.** A finding with convergence >= ``knowledge.compound_min_convergence``
  (2) that looks durable (not an improvement, not partial, not prose-only, with
  a location inside the project) and matches no entry, active or archived,
  becomes a new entry (provenance independent, confirmed today), its text
  sanitized: nothing foreign, nothing that could steer a later agent.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date

from fluxdrive.knowledge.entries import Entry, location_file, slug
from fluxdrive.knowledge.sanitize import for_entry
from fluxdrive.knowledge.store import Store
from fluxdrive.synthesis.dedup import Similarity, compatible_paths, title_key
from fluxdrive.synthesis.model import Finding


@dataclass
class Outcome:
    """What one review did to the store (run.json's ``knowledge`` record)."""

    refreshed: list[str] = field(default_factory=list)
    primed: list[str] = field(default_factory=list)
    decaying: list[str] = field(default_factory=list)
    archived: list[str] = field(default_factory=list)
    added: list[str] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        """True when the review touched the store at all."""
        return any((self.refreshed, self.primed, self.decaying, self.archived, self.added))

    def line(self) -> str:
        """One line for the review's notes."""
        return (
            f"Knowledge: {len(self.refreshed)} confirmed independently, {len(self.primed)} primed only, "
            f"{len(self.archived)} archived, {len(self.added)} added"
        )

    def record(self) -> dict[str, list[str]]:
        """The run.json record."""
        return {
            "refreshed": sorted(self.refreshed),
            "primed": sorted(self.primed),
            "decaying": sorted(self.decaying),
            "archived": sorted(self.archived),
            "added": sorted(self.added),
        }


def describes(entry: Entry, finding: Finding, similar: Similarity) -> bool:
    """True when ``finding`` is the issue ``entry`` records, in a place its evidence names."""
    if not similar.same(title_key(entry.title), title_key(finding.title)):
        return False
    places = [location_file(e) for e in entry.evidence]
    return any(compatible_paths(location_file(loc), place) for loc in finding.locations for place in places)


def update_after_review(
    store: Store,
    findings: Sequence[Finding],
    injected: Mapping[str, Sequence[str]],
    reads_prompt: Mapping[str, bool],
    *,
    today: date,
    decay_reviews: int,
    similar: Similarity | None = None,
) -> Outcome:
    """Refresh, count and archive the store's active entries after one review."""
    similar = similar or Similarity()
    outcome = Outcome()
    shown = {entry_id: {a for a, ids in injected.items() if entry_id in ids} for entry_id in store.active}
    for entry_id, entry in sorted(store.active.items()):
        matching = [f for f in findings if not f.improvement and describes(entry, f, similar)]
        reporters = {agent for f in matching for agent in f.agents}
        independent = {a for a in reporters if not (a in shown[entry_id] and reads_prompt.get(a, True))}
        if independent:
            store.save(entry.confirmed(today))
            outcome.refreshed.append(entry_id)
            continue
        if reporters:
            outcome.primed.append(entry_id)
        if not shown[entry_id]:
            continue
        counted = entry.injected_unconfirmed()
        if counted.reviews_unconfirmed >= decay_reviews:
            store.save(counted)
            store.archive(entry_id)
            outcome.archived.append(entry_id)
        else:
            store.save(counted)
            outcome.decaying.append(entry_id)
    return outcome


def _durable(finding: Finding, min_convergence: int) -> bool:
    inside = [loc for loc in finding.locations if not loc.startswith(("/", "~", ".."))]
    return (
        finding.convergence >= min_convergence
        and not finding.improvement
        and not finding.partial
        and not finding.from_prose
        and bool(inside)
    )


def compound(
    store: Store,
    findings: Sequence[Finding],
    *,
    today: date,
    min_convergence: int,
    limit: int,
    similar: Similarity | None = None,
) -> list[str]:
    """Write new entries for durable, converged findings that no entry records yet; their ids."""
    similar = similar or Similarity()
    known = [title_key(e.title) for e in (*store.active.values(), *store.archived.values())]
    added: list[str] = []
    for finding in findings:
        if len(added) >= limit or not _durable(finding, min_convergence):
            continue
        title = for_entry(finding.title, cap=160)
        if any(similar.same(title_key(title), k) for k in known):
            continue
        described = [for_entry(text) for _agent, text in sorted(finding.descriptions.items()) if text.strip()]
        heuristic = next((d for d in described if d and d != title), title)
        evidence = tuple(for_entry(loc, cap=120) for loc in finding.locations if not loc.startswith(("/", "~", "..")))
        entry = Entry(
            id=slug(title, set(store.active) | set(store.archived)),
            title=title,
            heuristic=heuristic,
            evidence=evidence[:5],
            verify=(f"Open {evidence[0]} and check whether this still holds: {title}",),
            last_confirmed=today,
            provenance="independent",
            agents=tuple(sorted(finding.agents)),
            created=today,
        )
        store.save(entry)
        known.append(title_key(title))
        added.append(entry.id)
    return added
