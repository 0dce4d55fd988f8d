"""The shipped pattern rules (ast-grep and line rules) over non-Python sources."""

from __future__ import annotations

import time

from fluxdrive.runtimes.static.analyzers.base import Analyzer, AnalyzerContext, AnalyzerOutput, hit_at
from fluxdrive.runtimes.static.bounds import over_bound
from fluxdrive.runtimes.static.hits import Claim, Hit
from fluxdrive.runtimes.static.rules import RuleError, load_rules, scan_text


def run(context: AnalyzerContext) -> AnalyzerOutput:
    """Scan every source a rule applies to, parsing each file once per language."""
    started = time.monotonic()
    sources = [s for s in context.sources if s.language not in ("python", "markdown")]
    if not sources:  # nothing to scan: do not pay for loading the rule packs (a worker's start-up)
        return AnalyzerOutput("patterns", seconds=time.monotonic() - started)
    try:
        rules = load_rules()
    except RuleError as exc:
        return AnalyzerOutput("patterns", error=f"rules could not load: {exc}")
    try:
        import ast_grep_py  # noqa: F401  (native module; report clearly if missing)
    except ImportError:
        return AnalyzerOutput("patterns", error="ast-grep-py is not installed (pip install ast-grep-py)")
    hits: list[Hit] = []
    notes: list[str] = []
    for source in sources:
        bound = over_bound(source.text)  # line rules on a 5 MB line ran for minutes
        if bound is not None:
            notes.append(f"pattern rules skipped {source.name}: {bound}")  # listed as not reviewed
            continue
        lines = source.text.splitlines()
        try:
            matches = scan_text(source.text, source.name, rules, source.language)
        except Exception as exc:  # a parser panic on one file must not stop the others
            notes.append(f"pattern rules skipped {source.name}: {type(exc).__name__}")
            continue
        for match in matches:
            spec = match.rule
            hits.append(
                hit_at(
                    source,
                    match.line,
                    lines,
                    rule=spec.rule_id,
                    claim=Claim("rules", spec.owner_tag),
                    severity=spec.severity,
                    title=match.title,
                    why=spec.why,
                    fix=spec.fix,
                    category=spec.id.split("-", 1)[1] if "-" in spec.id else spec.id,
                )
            )
    return AnalyzerOutput("patterns", tuple(hits), tuple(notes), time.monotonic() - started)


ANALYZER = Analyzer("patterns", run, per_file=True)
