"""The findings timeline (PROTOCOL.md 10, seeds 000/001): who found what first, who adjusted.

From ``peer-findings.jsonl`` and the agents' reports:

* ``discovered_by`` - a merged finding matching channel entries is credited to
  the earliest one's agent (matching = a shared file:line, or the same file
  and three shared meaningful words).
* adjustments - a report finished after a blocking entry that acknowledges
  it (names the agent, the category or a file reference, or shares three
  meaningful words with its summary, in an acknowledgement section).
* disagreements - an acknowledgement that says the blocking finding is wrong.
* unresolved contradictions - a report that does *not* acknowledge a
  blocking entry but says the same place is fine, or rates it P2/P3.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from fluxdrive.exchange.channel import PeerFinding
from fluxdrive.synthesis.dedup import compatible_paths, meaningful_words
from fluxdrive.synthesis.model import AgentOutput, Finding, TimelineEvent

_ACK_HEADING = re.compile(
    r"^#{2,4}\s*.*(acknowledg|peer finding|peer-finding|from other (agents|reviewers))", re.I | re.M
)
_HEADING = re.compile(r"^#{1,4}\s", re.M)
_DISAGREE = re.compile(
    r"\b(disagree|do not agree|don't agree|false positive|not exploitable|not an issue|incorrect|overstated|"
    r"not a (real )?(problem|vulnerability|bug))\b",
    re.I,
)
_SAFE = re.compile(
    r"\b(is safe|are safe|false positive|not exploitable|no issue|not vulnerable|properly (parameteri[sz]ed|escaped)|"
    r"already (parameteri[sz]ed|escaped|validated)|is fine|correctly (handled|escaped|parameteri[sz]ed))\b",
    re.I,
)


_CORROBORATE = re.compile(
    r"\b(corroborat\w*|confirm\w*|agree[sd]?|also (found|report\w*|see\w*)|same (issue|finding|line|problem))\b", re.I
)


def corroborates(text: str) -> bool:
    """True when an acknowledgement confirms the finding rather than just noting it."""
    return bool(_CORROBORATE.search(text)) and not _DISAGREE.search(text)


@dataclass
class Timeline:
    """The channel entries in time order and what the reports did with them."""

    entries: tuple[PeerFinding, ...] = ()
    skipped: int = 0
    events: list[TimelineEvent] = field(default_factory=list)

    def of_kind(self, kind: str) -> list[TimelineEvent]:
        """Events of one kind: adjustment, disagreement or contradiction."""
        return [e for e in self.events if e.kind == kind]


def _refs(entry: PeerFinding) -> list[tuple[str, str | None]]:
    out = []
    for ref in entry.file_refs:
        path, _sep, line = ref.partition(":")
        out.append((path.strip("`"), line.split(":")[0] or None))
    return out


def matches(entry: PeerFinding, finding: Finding) -> bool:
    """Whether a channel entry and a merged finding are about the same thing."""
    words = meaningful_words(entry.summary)
    for location in finding.locations:
        path, line = location.rsplit(":", 1)
        for ref_path, ref_line in _refs(entry):
            if not compatible_paths(path, ref_path):
                continue
            if ref_line == line or len(words & meaningful_words(finding.title)) >= 3:
                return True
    return False


def credit_discovery(entries: Sequence[PeerFinding], findings: Iterable[Finding]) -> None:
    """Set ``discovered_by`` from the earliest matching channel entry."""
    for finding in findings:
        first = next((e for e in entries if matches(e, finding)), None)
        if first is not None:
            finding.discovered_by = first.agent


def _ack_section(text: str) -> str:
    match = _ACK_HEADING.search(text)
    if not match:
        return ""
    following = _HEADING.search(text, match.end())
    return text[match.start() : following.start() if following else len(text)]


_ITEM_START = re.compile(r"^(?:[-*+]|\d{1,3}[.)])\s+")


def _items(block: str) -> list[str]:
    """The bullet items of an acknowledgement section, continuation lines joined."""
    items: list[str] = []
    for line in block.splitlines()[1:]:
        if _ITEM_START.match(line):
            items.append(line.strip())
        elif items and line.strip() and line[:1] in (" ", "\t"):
            items[-1] += " " + line.strip()
        elif line.strip() and not line.lstrip().startswith("<!--"):
            items.append(line.strip())
    return items


def _mentions(block: str, entry: PeerFinding) -> list[str]:
    """Items of ``block`` that acknowledge this entry specifically.

    Naming the agent is required, together with the category, an exact
    file:line reference or three shared meaningful words; or, without the
    agent's name, the category together with an exact reference.
    """
    words = meaningful_words(entry.summary)
    exact = [ref for ref in entry.file_refs if ":" in ref]
    hits = []
    for item in _items(block):
        lowered = item.lower()
        named = entry.agent.lower() in lowered
        category = entry.category in lowered
        located = any(ref.lower() in lowered for ref in exact)
        shared = len(words & meaningful_words(item)) >= 3
        if (named and (category or located or shared)) or (category and located):
            hits.append(item)
    return hits


def _contradiction(output: AgentOutput, entry: PeerFinding) -> str | None:
    """A report's claim that the blocking finding's place is fine, or a low rating of it."""
    for finding in output.findings:
        if finding.location is None or finding.improvement:
            continue
        path, line = finding.location.rsplit(":", 1)
        for ref_path, ref_line in _refs(entry):
            same_place = compatible_paths(path, ref_path) and (ref_line is None or ref_line == line)
            if same_place and (finding.severity in ("P2", "P3") or _SAFE.search(finding.title)):
                return f"rates {finding.location} {finding.severity}: {finding.title}"
    for raw in output.text.splitlines():
        if _SAFE.search(raw) and any(
            path and path.rsplit("/", 1)[-1] in raw and (line is None or line in raw) for path, line in _refs(entry)
        ):
            return raw.strip()[:160]
    return None


def build(entries: Sequence[PeerFinding], skipped: int, outputs: Mapping[str, AgentOutput]) -> Timeline:
    """Relate every blocking entry to every other completed report."""
    timeline = Timeline(tuple(entries), skipped)
    for entry in entries:
        if entry.severity != "blocking":
            continue
        location = entry.file_refs[0] if entry.file_refs else None
        for agent, output in sorted(outputs.items()):
            if agent == entry.agent or not output.completed:
                continue
            if output.finished_at is not None and output.finished_at < entry.moment:
                continue  # finished before the finding existed: nothing to acknowledge
            mentions = _mentions(_ack_section(output.text), entry)
            if mentions:
                kind = "disagreement" if any(_DISAGREE.search(m) for m in mentions) else "adjustment"
                event = TimelineEvent(kind, agent, entry.agent, entry.summary, location, mentions[0][:160])
                timeline.events.append(event)
                continue
            claim = _contradiction(output, entry)
            if claim:
                timeline.events.append(
                    TimelineEvent("contradiction", agent, entry.agent, entry.summary, location, claim)
                )
    return timeline
