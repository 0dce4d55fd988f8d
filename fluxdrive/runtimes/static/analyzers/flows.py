"""Data flow over JavaScript/TypeScript and Go sources: a sink is always judged, its origin sets the severity."""

from __future__ import annotations

import time
from collections.abc import Callable

from fluxdrive.errors import FluxdriveError
from fluxdrive.runtimes.static.analyzers.base import Analyzer, AnalyzerContext, AnalyzerOutput
from fluxdrive.runtimes.static.bounds import over_bound
from fluxdrive.runtimes.static.flows import FLOW_LANGUAGES, FlowHit, PollutionHit, ViewHit, analyse
from fluxdrive.runtimes.static.hits import Claim, Hit, evidence_for
from fluxdrive.runtimes.static.project_modules import project_files

PREFIX = {"javascript": "js", "go": "go"}


def rule_id(hit: FlowHit | PollutionHit | ViewHit, language: str) -> str:
    """``flow:js-command-injection``: the language family and the sink class's rule."""
    return f"flow:{PREFIX[FLOW_LANGUAGES[language]]}-{hit.rule}"


def template_reader(context: AnalyzerContext) -> Callable[[str], str | None]:
    """Views by project-relative path (:func:`project_files`); a view refused is a view not read."""
    files = project_files(context.sources, context.root, context.settings.max_file_bytes, "template")

    def read(relative: str) -> str | None:
        try:
            return files(relative)
        except (FluxdriveError, OSError):
            return None  # a link out of the project, a device: not read

    return read


def run(context: AnalyzerContext) -> AnalyzerOutput:
    """Every JavaScript/TypeScript and Go file of the review, as one project per language family."""
    started = time.monotonic()
    sources = [s for s in context.sources if s.language in FLOW_LANGUAGES]  # code blocks of documents too
    if not sources:
        return AnalyzerOutput("flows", seconds=time.monotonic() - started)
    notes: list[str] = []
    files = []
    for code in sources:
        bound = over_bound(code.text)
        if bound is not None:
            notes.append(f"data flow skipped {code.name}: {bound}")
            continue
        files.append((code.name, code.language or "", code.text))
    result = analyse(files, context.flow_declarations, template_reader(context))
    notes.extend(result.notes)
    by_name = {s.name: s for s in sources}
    hits: list[Hit] = []
    for hit in result.hits:
        source = by_name.get(hit.path)
        if source is None:  # a view the handler renders: reported at the template's line
            path, line, also = hit.path, hit.line, None
            language, evidence = "javascript", getattr(hit, "evidence", "")
        else:
            path, line, also = source.location(hit.line)
            language, evidence = source.language or "", evidence_for(source.text.splitlines(), hit.line)
        hits.append(
            Hit(
                rule=rule_id(hit, language),
                claim=Claim("rules", "security"),
                severity=hit.severity,
                path=path,
                line=line,
                title=hit.title,
                why=hit.why,
                fix=hit.fix,
                evidence=evidence,
                also=also,
                category=hit.rule,
                evidence_level=hit.evidence_level,
            )
        )
    return AnalyzerOutput("flows", tuple(hits), tuple(notes), time.monotonic() - started)


ANALYZER = Analyzer("flows", run)
