"""Data flow over JavaScript/TypeScript and Go sources: a sink is always judged, its origin sets the severity."""

from __future__ import annotations

import time

from fluxdrive.runtimes.static.analyzers.base import AnalyzerContext, AnalyzerOutput
from fluxdrive.runtimes.static.bounds import over_bound
from fluxdrive.runtimes.static.flows import FLOW_LANGUAGES, FlowHit, PollutionHit, analyse
from fluxdrive.runtimes.static.hits import Claim, Hit, evidence_for

PREFIX = {"javascript": "js", "go": "go"}


def rule_id(hit: FlowHit | PollutionHit, language: str) -> str:
    """``flow:js-command-injection``: the language family and the sink class's rule."""
    return f"flow:{PREFIX[FLOW_LANGUAGES[language]]}-{hit.rule}"


def run(context: AnalyzerContext) -> AnalyzerOutput:
    """Every JavaScript/TypeScript and Go file of the review, as one project per language family."""
    started = time.monotonic()
    sources = [s for s in context.sources if s.language in FLOW_LANGUAGES]  # code blocks of documents too
    if not sources:
        return AnalyzerOutput("flows", seconds=time.monotonic() - started)
    notes: list[str] = []
    files = []
    for source in sources:
        bound = over_bound(source.text)
        if bound is not None:
            notes.append(f"data flow skipped {source.name}: {bound}")
            continue
        files.append((source.name, source.language or "", source.text))
    result = analyse(files, context.root)
    notes.extend(result.notes)
    by_name = {s.name: s for s in sources}
    hits: list[Hit] = []
    for hit in result.hits:
        source = by_name[hit.path]
        path, line, also = source.location(hit.line)
        hits.append(
            Hit(
                rule=rule_id(hit, source.language or ""),
                claim=Claim("rules", "security"),
                severity=hit.severity,
                path=path,
                line=line,
                title=hit.title,
                why=hit.why,
                fix=hit.fix,
                evidence=evidence_for(source.text.splitlines(), hit.line),
                also=also,
                category=hit.rule,
                evidence_level=hit.evidence_level,
            )
        )
    return AnalyzerOutput("flows", tuple(hits), tuple(notes), time.monotonic() - started)
