"""The reaction round's answers, applied in synthesis: evidence counts, agreement alone does not.

Why: after the last stage each agent that can react answers its peers' findings with CONFIRM,
DISPUTE or EXTEND (fluxdrive.launch.reaction writes them to ``reactions.jsonl``). Models agree
easily; a "+1" that only repeats the peer's words is hearsay and must not make a finding look
more certain than it is. So:

- a CONFIRM counts toward the finding's convergence only when it cites a place of its own
  (``path:line``) that grounds in the reviewed input (fluxdrive.synthesis.grounding) and is not
  a citation the finding already has; otherwise it is recorded as ``hearsay`` and counts nothing;
- a DISPUTE whose citation grounds lowers the finding's confidence by one level
  (fluxdrive.synthesis.convergence reads :class:`~fluxdrive.synthesis.model.Reactions`), and when
  two or more agents dispute with evidence a P0/P1 that only one agent reported, its severity
  drops one level (the original kept as ``demoted_from``);
- when two or more agents confirmed, at least 80% of all confirmations were hearsay and nobody
  disputed anything, the run gets a ``sycophancy`` note naming them.

Without a reader (the reviewed project is unknown, or the input is a diff whose lines need not be
in the working tree) a citation cannot be looked up: a well-formed ``path:line`` that is not the
finding's own still counts, so a diff review's evidence is not thrown away. Pure apart from
:func:`load`, which reads the one file (confined to the project root, a torn line skipped).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from fluxdrive.core.confine import read_confined
from fluxdrive.errors import FluxdriveError
from fluxdrive.synthesis.grounding import Reader, judge, place
from fluxdrive.synthesis.model import Finding, Reactions

FILE_NAME = "reactions.jsonl"
VERDICTS = ("confirm", "dispute", "extend")
SYCOPHANCY_SHARE = 0.8
_LOWER = {"P0": "P1", "P1": "P2"}


@dataclass(frozen=True, slots=True)
class Reaction:
    """One answer of one agent about one peer finding (a line of ``reactions.jsonl``)."""

    agent: str
    verdict: str  # confirm | dispute | extend
    finding: str  # the id the reacting agent was shown
    targets: tuple[tuple[str, str], ...]  # (agent, that agent's id): the finding's members when it was shown
    evidence: tuple[str, ...] = ()  # the places the reacting agent cited
    original: tuple[str, ...] = ()  # the places the finding had when it was shown


def load(output_dir: Path, root: Path) -> tuple[list[Reaction], list[str]]:
    """The run's reactions ([] when there are none) and notes on what could not be read."""
    path = Path(output_dir) / FILE_NAME
    if not path.exists():
        return [], []
    try:
        text = read_confined(path, root, FILE_NAME).decode("utf-8", errors="replace")
    except FluxdriveError as exc:
        return [], [f"{FILE_NAME} ignored: {exc.one_line()}"]
    found, skipped = [], 0
    for line in text.splitlines():
        if not line.strip():
            continue
        try:
            found.append(_parse(json.loads(line)))
        except (ValueError, TypeError, KeyError):
            skipped += 1
    return found, [f"skipped {skipped} incomplete or invalid line(s) of {FILE_NAME}"] if skipped else []


def _parse(data: dict[str, object]) -> Reaction:
    verdict = str(data["verdict"]).lower()
    if verdict not in VERDICTS:
        raise ValueError(verdict)
    targets = tuple((str(a), str(i)) for a, i in data["targets"])  # type: ignore[attr-defined]
    evidence = tuple(str(e) for e in data.get("evidence", ()))  # type: ignore[attr-defined]
    original = tuple(str(o) for o in data.get("original", ()))  # type: ignore[attr-defined]
    return Reaction(str(data["agent"]), verdict, str(data["finding"]), targets, evidence, original)


def _key(citation: str) -> tuple[str, int, int]:
    return place(citation)


def grounds(citation: str, read: Reader | None) -> bool:
    """A ``path:line`` citation whose file and lines exist (any well-formed one when nothing can be read)."""
    path, start, _end = place(citation)
    if not path or start <= 0:
        return False
    if read is None:
        return True
    judged = judge([citation], "", read)
    return judged is not None and judged.grounded


def independent(reaction: Reaction, places: Iterable[str], read: Reader | None) -> bool:
    """The reaction cites a grounded place of its own, not one of the finding's places repeated."""
    known = {_key(p) for p in (*places, *reaction.original)}
    return any(_key(e) not in known and grounds(e, read) for e in reaction.evidence)


def about(finding: Finding, reactions: Sequence[Reaction]) -> list[Reaction]:
    """The reactions to ``finding`` by agents that did not report it themselves."""
    members = set(finding.source_ids.items())
    return [r for r in reactions if r.agent not in finding.agents and members.intersection(r.targets)]


def weigher(reactions: Sequence[Reaction], read: Reader | None) -> Callable[[Finding], None]:
    """Sets each finding's :class:`Reactions` and lowers a P0/P1 disputed with evidence by two or more agents."""

    def weigh(finding: Finding) -> None:
        mine = about(finding, reactions)
        if not mine:
            return
        confirmed: set[str] = set()
        hearsay: set[str] = set()
        disputed: set[str] = set()
        extended: set[str] = set()
        for reaction in mine:
            if reaction.verdict == "confirm":
                (confirmed if independent(reaction, finding.locations, read) else hearsay).add(reaction.agent)
            elif reaction.verdict == "dispute" and any(grounds(e, read) for e in reaction.evidence):
                disputed.add(reaction.agent)
            elif reaction.verdict == "extend":
                extended.add(reaction.agent)
        result = Reactions(
            tuple(sorted(confirmed)),
            tuple(sorted(hearsay - confirmed)),
            tuple(sorted(disputed)),
            tuple(sorted(extended)),
        )
        lowered = _LOWER.get(finding.severity)
        if lowered and len(disputed) >= 2 and len(finding.agents) == 1:
            result = replace(result, demoted_from=finding.severity)
            finding.severity = lowered
        finding.reactions = result

    return weigh


def sycophancy(findings: Iterable[Finding], reactions: Sequence[Reaction]) -> str | None:
    """The run note when agreement came without evidence (see the module docstring), else None."""
    confirmations: dict[str, int] = {}
    hearsay: dict[str, int] = {}
    for finding in findings:
        if finding.reactions is None:
            continue
        for agent in finding.reactions.confirmed_by:
            confirmations[agent] = confirmations.get(agent, 0) + 1
        for agent in finding.reactions.hearsay:
            confirmations[agent] = confirmations.get(agent, 0) + 1
            hearsay[agent] = hearsay.get(agent, 0) + 1
    total, unsupported = sum(confirmations.values()), sum(hearsay.values())
    if len(confirmations) < 2 or not total or any(r.verdict == "dispute" for r in reactions):
        return None
    if unsupported / total < SYCOPHANCY_SHARE:
        return None
    names = ", ".join(sorted(hearsay))
    return (
        f"sycophancy: {names} confirmed {unsupported} finding(s) without independent evidence; "
        "their agreement was not counted"
    )
