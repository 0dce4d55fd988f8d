"""Domain profiles: what each detected domain asks of each reviewer.

``data/domains/<name>.md`` (front matter: name, title, stage1_agents; then
"## Review criteria" as a P0/P1/P2 table, "## Injection criteria" with one
``### fd-agent`` list per agent, and "## Research directives"). Triage uses
the injection criteria for the domain boost and the stage-1 markings; launch
injects the criteria (and the review table) into prompts.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from importlib import resources

import yaml

_FRONT = re.compile(r"\A---\n(.*?)\n---\n", re.S)
_H2 = re.compile(r"^## (.+)$", re.M)
_H3 = re.compile(r"^### (\S+)\s*$", re.M)
_ROW = re.compile(r"^\|\s*(P[0-3])\s*\|\s*(.+?)\s*\|\s*$", re.M)


@dataclass(frozen=True)
class DomainProfile:
    """One domain's review criteria and per-agent injection criteria."""

    name: str
    title: str
    stage1_agents: tuple[str, ...] = ()
    review_criteria: dict[str, str] = field(default_factory=dict)
    criteria: dict[str, tuple[str, ...]] = field(default_factory=dict)
    research: dict[str, tuple[str, ...]] = field(default_factory=dict)

    def criteria_for(self, agent: str) -> tuple[str, ...]:
        """Injection criteria for ``agent`` (empty when the domain has none)."""
        return self.criteria.get(agent, ())


def _sections(text: str) -> dict[str, str]:
    parts = _H2.split(text)
    return {parts[i].strip().lower(): parts[i + 1] for i in range(1, len(parts) - 1, 2)}


def _lists(text: str) -> dict[str, tuple[str, ...]]:
    parts = _H3.split(text)
    out = {}
    for i in range(1, len(parts) - 1, 2):
        items = tuple(line[2:].strip() for line in parts[i + 1].splitlines() if line.startswith("- "))
        out[parts[i].strip()] = items
    return out


def parse_profile(name: str, text: str) -> DomainProfile:
    """Parse one profile's markdown."""
    match = _FRONT.match(text)
    meta = yaml.safe_load(match.group(1)) if match else {}
    sections = _sections(text[match.end() :] if match else text)
    return DomainProfile(
        name=name,
        title=str(meta.get("title", name)),
        stage1_agents=tuple(meta.get("stage1_agents") or ()),
        review_criteria={sev: desc for sev, desc in _ROW.findall(sections.get("review criteria", ""))},
        criteria=_lists(sections.get("injection criteria", "")),
        research=_lists(sections.get("research directives", "")),
    )


@functools.lru_cache(maxsize=1)
def load_profiles() -> dict[str, DomainProfile]:
    """Every shipped domain profile by name (``general`` included)."""
    folder = resources.files("fluxdrive") / "data" / "domains"
    profiles = {}
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".md"):
            name = entry.name[: -len(".md")]
            profiles[name] = parse_profile(name, entry.read_text(encoding="utf-8"))
    return profiles


def best_profile_for(agent: str, domains: Iterable[str]) -> DomainProfile | None:
    """Among detected domains, the profile with the most criteria for ``agent`` (section 3)."""
    profiles = load_profiles()
    candidates = [profiles[d] for d in domains if d in profiles and profiles[d].criteria_for(agent)]
    if not candidates:
        return None
    return max(candidates, key=lambda p: (len(p.criteria_for(agent)), -list(domains).index(p.name)))
