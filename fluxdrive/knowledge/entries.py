"""One knowledge entry: a durable lesson about this project, with evidence and a way to check it.

PROTOCOL.md section 9. An entry is a markdown file with YAML front matter::

    ---
    title: SQL built by string formatting reaches execute()
    lastConfirmed: 2026-11-22
    provenance: independent
    agents: [fd-safety]
    reviewsUnconfirmed: 0
    created: 2026-11-22
    ---
    Queries in the data layer are built with % formatting; user input reaches them.

    Evidence:
    - shop/db.py:15

    Verify:
    - Open shop/db.py:15 and check that the query is parameterized.

The body holds the heuristic (1-3 sentences, generalized), evidence anchors
(paths, symbols, lines) and 1-3 verification steps; an entry without evidence
or without a verification step is not an entry. ``lastConfirmed`` moves only
on an *independent* re-discovery (the agent did not have the entry in its
prompt); ``reviewsUnconfirmed`` counts the reviews it was injected into since,
and at ``knowledge.decay_reviews`` (10) the entry is archived, never deleted.
The file name (without ``.md``) is the entry's id.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from datetime import date
from typing import Literal

import yaml

from fluxdrive.core.structured import TooDeepError, load_yaml
from fluxdrive.errors import InputError

Provenance = Literal["independent", "primed"]
ID_PATTERN = re.compile(r"^[a-z0-9][a-z0-9-]{0,79}$")
MAX_VERIFY = 3
_FRONT_MATTER = re.compile(r"\A---\n(.*?)\n---\n?(.*)\Z", re.DOTALL)
_HEADING = re.compile(r"^(Evidence|Verify):\s*$", re.MULTILINE)


@dataclass(frozen=True, slots=True)
class Entry:
    """A parsed knowledge entry."""

    id: str
    title: str
    heuristic: str
    evidence: tuple[str, ...]
    verify: tuple[str, ...]
    last_confirmed: date
    provenance: Provenance = "independent"
    agents: tuple[str, ...] = ()
    reviews_unconfirmed: int = 0
    created: date | None = None

    def confirmed(self, today: date) -> Entry:
        """Independently re-discovered today: the date moves and the decay count starts again."""
        return dataclasses.replace(self, last_confirmed=today, provenance="independent", reviews_unconfirmed=0)

    def injected_unconfirmed(self) -> Entry:
        """Shown to agents in one more review without an independent confirmation."""
        return dataclasses.replace(self, reviews_unconfirmed=self.reviews_unconfirmed + 1)


def location_file(location: str) -> str:
    """The file part of an anchor: ``shop/db.py`` from ``shop/db.py:15`` or ``shop/db.py (find_user)``."""
    return location.split(":", 1)[0].split(" ", 1)[0]


def slug(text: str, taken: set[str] | frozenset[str] = frozenset()) -> str:
    """A kebab-case id from a title, unique among ``taken`` (``-2``, ``-3`` ... on a clash)."""
    base = "-".join(re.findall(r"[a-z0-9]+", text.lower()))[:60].strip("-") or "entry"
    candidate, number = base, 2
    while candidate in taken:
        candidate, number = f"{base}-{number}", number + 1
    return candidate


def _date(value: object, key: str, where: str) -> date:
    if isinstance(value, date):
        return value
    try:
        return date.fromisoformat(str(value))
    except ValueError:
        raise InputError(f"{where}: {key} must be a date (YYYY-MM-DD), not {value!r}") from None


def _items(block: str) -> tuple[str, ...]:
    return tuple(line.strip()[2:].strip() for line in block.splitlines() if line.strip().startswith("- "))


def parse_entry(entry_id: str, text: str, where: str = "") -> Entry:
    """Parse one entry file; a malformed one is an InputError naming what is wrong."""
    where = where or entry_id
    if not ID_PATTERN.match(entry_id):
        raise InputError(f"{where}: {entry_id!r} is not a valid entry id (lowercase letters, digits, dashes)")
    match = _FRONT_MATTER.match(text.replace("\r\n", "\n"))
    if match is None:
        raise InputError(f"{where}: no front matter (the file must start with ---)")
    try:
        meta = load_yaml(match.group(1), "front matter") or {}
    except TooDeepError as exc:
        raise InputError(f"{where}: {exc}") from None
    except yaml.YAMLError as exc:
        raise InputError(f"{where}: front matter is not YAML ({exc.__class__.__name__})") from None
    if not isinstance(meta, dict):
        raise InputError(f"{where}: front matter must be a mapping")
    parts = _HEADING.split(match.group(2))
    heuristic = " ".join(parts[0].split())
    sections = {parts[i]: parts[i + 1] for i in range(1, len(parts) - 1, 2)}
    evidence, verify = _items(sections.get("Evidence", "")), _items(sections.get("Verify", ""))
    if not heuristic:
        raise InputError(f"{where}: the entry has no heuristic (the text before Evidence:)")
    if not evidence:
        raise InputError(f"{where}: the entry has no evidence (an 'Evidence:' list of paths or symbols)")
    if not 1 <= len(verify) <= MAX_VERIFY:
        raise InputError(f"{where}: the entry needs 1-{MAX_VERIFY} verification steps under 'Verify:'")
    provenance = meta.get("provenance", "independent")
    if provenance not in ("independent", "primed"):
        raise InputError(f"{where}: provenance must be independent or primed, not {provenance!r}")
    agents = meta.get("agents") or []
    unconfirmed = meta.get("reviewsUnconfirmed", 0)
    if not isinstance(agents, list) or not isinstance(unconfirmed, int) or unconfirmed < 0:
        raise InputError(f"{where}: agents must be a list and reviewsUnconfirmed a count")
    return Entry(
        id=entry_id,
        title=str(meta.get("title") or heuristic[:80]),
        heuristic=heuristic,
        evidence=evidence,
        verify=verify,
        last_confirmed=_date(meta.get("lastConfirmed"), "lastConfirmed", where),
        provenance=provenance,
        agents=tuple(sorted(str(a) for a in agents)),
        reviews_unconfirmed=unconfirmed,
        created=_date(meta["created"], "created", where) if meta.get("created") else None,
    )


class _PlainDumper(yaml.SafeDumper):
    """No ``&id001`` anchors when two fields hold the same date: entries are for people to read."""

    def ignore_aliases(self, data: object) -> bool:
        return True


def render_entry(entry: Entry) -> str:
    """The file text of ``entry`` (parse_entry(render_entry(e)) == e)."""
    meta: dict[str, object] = {
        "title": entry.title,
        "lastConfirmed": entry.last_confirmed,
        "provenance": entry.provenance,
        "agents": list(entry.agents),
        "reviewsUnconfirmed": entry.reviews_unconfirmed,
    }
    if entry.created is not None:
        meta["created"] = entry.created
    head = yaml.dump(meta, Dumper=_PlainDumper, sort_keys=False, allow_unicode=True, width=1000).strip()
    evidence = "\n".join(f"- {e}" for e in entry.evidence)
    verify = "\n".join(f"- {v}" for v in entry.verify)
    return f"---\n{head}\n---\n{entry.heuristic}\n\nEvidence:\n{evidence}\n\nVerify:\n{verify}\n"
