"""The static runtime's findings of one lane as candidates for a model agent (analyzer evidence).

The same selection the static agent's report makes (filters, suppressions,
folding: :func:`~fluxdrive.runtimes.static.compose.select_hits`), so a model is
asked about exactly what the offline review would report; titles come from
:func:`~fluxdrive.runtimes.static.compose.build_entries`, masked the same way.
The data-flow path is what the hit carries: the line it was found from (a
view passing request data, for a template's line) and the sink, with the
analyzer's own measure of the flow (``evidence_level``).
"""

from __future__ import annotations

from collections.abc import Sequence

from fluxdrive.contracts import IndexEntry
from fluxdrive.runtimes.static.compose import Finding
from fluxdrive.synthesis.evidence import Candidate


def candidates(findings: Sequence[Finding], entries: Sequence[IndexEntry]) -> list[Candidate]:
    """One unnumbered candidate per finding (``entries`` are ``build_entries``'s, in the same order)."""
    out = []
    for finding, entry in zip(findings, entries, strict=True):
        hit = finding.hit
        flow: tuple[str, ...] = ()
        if hit.evidence_level or hit.also:
            flow = tuple(dict.fromkeys([*([hit.also] if hit.also else []), hit.location]))
        out.append(
            Candidate(
                id="",
                severity=hit.severity,
                rule=hit.rule,
                place=hit.location,
                title=entry.title,
                flow=flow,
                flow_evidence=hit.evidence_level,
            )
        )
    return out
