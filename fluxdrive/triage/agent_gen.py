"""``fluxdrive agents new``: a project reviewer specialised in one detected domain (the reference's flux-gen).

A domain profile already says what goes wrong in, say, a web API (its P0/P1/P2
table and the checks each built-in reviewer is given there); the index says
how the domain shows itself (directories, files, frameworks, keywords). A
generated agent turns both into one definition: concerns and routing from the
signals, instructions from the criteria, the shared output contract and peer
checkpoint. It is a project agent of that domain, so triage gives it the
project and domain-agent bonuses when the domain is detected. It needs a
model (``needs_model: true``): an offline review skips it with a note.

Pure text generation: the caller decides where the file goes.
"""

from __future__ import annotations

import re
from importlib import resources

import yaml

from fluxdrive.agents import Roster
from fluxdrive.errors import UsageError
from fluxdrive.triage.domains import load_index
from fluxdrive.triage.profiles import load_profiles

NOT_GENERATED = ("general",)
MAX_CHECKS = 12


def agent_name(domain: str) -> str:
    """``fd-<domain>``."""
    return f"fd-{domain}"


def _prefix(domain: str, taken: set[str]) -> str:
    words = [w for w in re.split(r"[^a-z0-9]+", domain.lower()) if w]
    initials = "".join(w[0] for w in words).upper()[:3]
    candidates = [initials, (initials + words[-1][1:2].upper())[:3], domain[:2].upper(), domain[:3].upper()]
    candidates += [f"{initials[:1]}{chr(c)}" for c in range(ord("A"), ord("Z") + 1)]
    for candidate in candidates:
        if re.fullmatch(r"[A-Z]{2,3}", candidate) and candidate not in taken:
            return candidate
    raise UsageError(f"no free 2-3 letter id prefix for {domain}")


def _intro(domain: str) -> str:
    text = (resources.files("fluxdrive") / "data" / "domains" / f"{domain}.md").read_text(encoding="utf-8")
    body = re.split(r"^## ", text.split("\n# ", 1)[-1], flags=re.MULTILINE)[0]
    paragraphs = [p.strip() for p in body.split("\n\n")[1:] if p.strip()]
    return paragraphs[0] if paragraphs else ""


def generate_agent(domain: str, roster: Roster) -> tuple[str, str]:
    """The agent's name and file text for ``domain`` (a UsageError for an unknown or generic domain)."""
    profiles, index = load_profiles(), load_index()
    if domain not in profiles or domain not in index or domain in NOT_GENERATED:
        known = ", ".join(sorted(d for d in profiles if d in index and d not in NOT_GENERATED))
        raise UsageError(f"no domain profile {domain!r} to generate an agent from", hint=f"domains: {known}")
    profile, signals = profiles[domain], index[domain].signals
    name = agent_name(domain)
    taken = {a.prefix for a in roster.agents.values() if a.name != name}
    keywords = [k.replace("_", " ") for k in signals.get("keywords", ())]
    meta = {
        "name": name,
        "kind": "review",
        "category": "project",
        "prefix": _prefix(domain, taken),
        "description": f"Project agent - {profile.title} specialist: the defects this kind of project keeps having.",
        "domains": [domain],
        "concerns": sorted({*keywords, *signals.get("frameworks", ()), domain.replace("-", " ")}),
        "routing": {
            "priority_globs": [f"**/{d}/**" for d in signals.get("directories", ())]
            + [f"**/{f}" for f in signals.get("files", ())],
            "hunk_keywords": keywords,
        },
        "adjacent": list(profile.stage1_agents),
        "needs_model": True,
        "tier": "balanced",
    }
    severity = [f"- **{sev}**: {text}" for sev, text in sorted(profile.review_criteria.items())]
    checks = list(dict.fromkeys(c for agent in sorted(profile.criteria) for c in profile.criteria[agent]))
    body = [
        f"# {{{{name}}}}: {profile.title} specialist",
        "",
        "You review this project as someone who has shipped and operated many projects of its kind.",
        _intro(domain),
        "",
        "## What to flag, by severity",
        "",
        *severity,
        "",
        "## Where to look",
        "",
        *(f"- {c}" for c in checks[:MAX_CHECKS]),
        "",
        "## What not to flag",
        "",
        "- Style, naming and formatting that linters settle; general code quality outside this domain.",
        "- Issues the built-in reviewers own (security, correctness, performance in general) unless the domain",
        "  makes them worse here: then say why the domain matters.",
        "",
        "{{> output-contract}}",
        "",
        "{{> peer-checkpoint}}",
    ]
    head = yaml.safe_dump(meta, sort_keys=False, allow_unicode=True, width=1000).strip()
    return name, f"---\n{head}\n---\n" + "\n".join(body).strip() + "\n"
