"""Domain criteria for one agent's prompt (PROTOCOL.md section 4.2).

A review of a project in several domains should hold the agent to every
domain's standards, not just the primary one's: the review-criteria tables of
the detected domains (at most ``domains.max_injected``, primary first) are
merged, and the agent's own injection criteria from each of them are
listed. Identical lines appear once.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from fluxdrive.triage.profiles import load_profiles


@dataclass(frozen=True, slots=True)
class DomainCriteria:
    """What the detected domains ask of one agent."""

    domains: tuple[str, ...]
    review: tuple[tuple[str, str, str], ...]  # (severity, domain title, what it means there)
    agent: tuple[tuple[str, str], ...]  # (domain title, criterion)

    @property
    def empty(self) -> bool:
        """True when no detected domain says anything."""
        return not self.review and not self.agent


def merged_criteria(agent: str, domains: Sequence[str], limit: int) -> DomainCriteria:
    """The union of the first ``limit`` detected domains' criteria, for ``agent``."""
    profiles = load_profiles()
    chosen = tuple(d for d in domains if d in profiles)[:limit]
    review: list[tuple[str, str, str]] = []
    mine: list[tuple[str, str]] = []
    seen: set[str] = set()
    for name in chosen:
        profile = profiles[name]
        for severity, text in sorted(profile.review_criteria.items()):
            review.append((severity, profile.title, text))
        for criterion in profile.criteria_for(agent):
            if criterion not in seen:
                seen.add(criterion)
                mine.append((profile.title, criterion))
    review.sort(key=lambda row: row[0])  # stable: P0 rows of every domain first, primary domain first within
    return DomainCriteria(chosen, tuple(review), tuple(mine))


def render_criteria(criteria: DomainCriteria) -> str:
    """Markdown for the prompt's domain section."""
    if criteria.empty:
        return "No domain was detected for this project; apply your general review criteria."
    lines = [f"Detected domains: {', '.join(criteria.domains)}.", ""]
    if criteria.review:
        lines += ["What each severity means here:", ""]
        lines += [f"- {severity} ({domain}): {text}" for severity, domain, text in criteria.review]
        lines.append("")
    if criteria.agent:
        lines += ["Check in particular:", ""]
        lines += [f"- [{domain}] {text}" for domain, text in criteria.agent]
    return "\n".join(lines).rstrip() + "\n"
