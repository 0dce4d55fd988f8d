"""fluxdrive's own Python and document checks over every source."""

from __future__ import annotations

import posixpath
import time

from fluxdrive.runtimes.static.analyzers.base import Analyzer, AnalyzerContext, AnalyzerOutput
from fluxdrive.runtimes.static.bounds import TimeBoundError
from fluxdrive.runtimes.static.checks.engine.document import DocModule
from fluxdrive.runtimes.static.checks.engine.registry import registered_checks
from fluxdrive.runtimes.static.checks.engine.runner import RanCheck, run_document_checks, run_python_checks
from fluxdrive.runtimes.static.hits import Claim, Hit, evidence_for
from fluxdrive.runtimes.static.project_modules import project_summaries, template_reader
from fluxdrive.runtimes.static.source import Source


def _hit(source: Source, ran: RanCheck, lines: list[str], section: str | None = None) -> Hit:
    path, line, also = source.location(ran.hit.line)
    evidence = evidence_for(lines, ran.hit.line)
    if ran.hit.place is not None:  # reported where it is fixed (a template line), found from this file
        found_at = f"{path}:{line}"  # the view that passes the data: a diff touching it still reports this
        path, line, text = ran.hit.place
        also, evidence = found_at, evidence_for([text], 1)
    spec = ran.spec
    return Hit(
        rule=spec.rule_id,
        claim=Claim("fluxdrive", spec.name),
        severity=ran.hit.severity or spec.severity,
        path=path,
        line=line,
        title=ran.hit.title,
        why=ran.hit.why,
        fix=ran.hit.fix,
        evidence=evidence,
        also=also,
        section=section,
        category=spec.name.removeprefix("py-").removeprefix("doc-"),
        evidence_level=ran.hit.evidence,
    )


def run(context: AnalyzerContext) -> AnalyzerOutput:
    """Python checks on Python sources, document checks on markdown documents."""
    started = time.monotonic()
    hits: list[Hit] = []
    notes: list[str] = []
    root = context.root
    project, bad_declarations = project_summaries(root, context.settings.max_file_bytes, context.declarations)
    project.templates = template_reader(context.sources, root, context.settings.max_file_bytes)
    if bad_declarations:
        notes.append(bad_declarations)
    configured = context.settings.checks
    options = {name: settings.options for name, settings in configured.items() if settings.options}
    off = {name for name, settings in configured.items() if not settings.enabled}
    names = [name for name in registered_checks() if name not in off] if off else None  # None: every check

    for source in context.sources:
        lines = source.text.splitlines()
        if source.language == "python":
            tree = context.python_tree(source)
            if tree is None:
                notes.append(f"{source.name}: not valid Python; Python checks skipped")
                continue
            seconds = context.settings.max_file_seconds
            try:
                ran_checks = run_python_checks(
                    source.name,
                    source.text,
                    names,
                    notes,
                    tree,
                    project,
                    time.monotonic() + seconds,
                    options,
                    context.loaded.reviewed,
                )
            except TimeBoundError:  # listed as not reviewed (bounds.skip_of); none of its partial hits is kept
                notes.append(f"checks skipped {source.name}: over the {seconds:g} s bound, static.max_file_seconds")
                continue
            hits.extend(_hit(source, ran, lines) for ran in ran_checks)
        elif source.language == "markdown" and source.block_of is None:
            base = posixpath.dirname(source.path)

            def exists(target: str, base: str = base) -> bool:
                relative = posixpath.normpath(posixpath.join(base, target))
                return not relative.startswith("..") and (root / relative).exists()

            outline = DocModule(source.path, source.text)
            ran_checks = run_document_checks(source.path, source.text, names, notes, exists, options)
            hits.extend(_hit(source, ran, lines, outline.section_of(ran.hit.line)) for ran in ran_checks)
    return AnalyzerOutput("checks", tuple(hits), tuple(notes), time.monotonic() - started)


ANALYZER = Analyzer("checks", run, per_file=True)
