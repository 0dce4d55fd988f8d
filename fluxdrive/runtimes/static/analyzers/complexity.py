"""Lizard: cyclomatic complexity, function length and parameter count, many languages.

Python files are measured from the tree the checks already parsed
(:mod:`python_metrics`, lizard's definitions); lizard reads the other languages,
within :mod:`~fluxdrive.runtimes.static.bounds` (its memory doubles with each
level of nested functions, so a deeply nested or single-line file is skipped
and listed).

Threshold findings are P3 just over the threshold and P2 well over it
(:func:`over`); never P1.
"""

from __future__ import annotations

import time
from pathlib import PurePosixPath
from typing import Any

from fluxdrive.config.model import StaticConfig
from fluxdrive.runtimes.static.analyzers.base import Analyzer, AnalyzerContext, AnalyzerOutput, hit_at
from fluxdrive.runtimes.static.analyzers.python_metrics import python_functions
from fluxdrive.runtimes.static.bounds import LIZARD_MAX_NESTING, over_bound
from fluxdrive.runtimes.static.hits import Claim, Hit
from fluxdrive.runtimes.static.source import Source

# Extensions lizard understands (it picks the reader from the file name).
SUPPORTED = {
    ".py", ".js", ".mjs", ".cjs", ".jsx", ".ts", ".tsx", ".go", ".java", ".rb", ".php",
    ".c", ".h", ".cc", ".cpp", ".hpp", ".cs", ".rs", ".swift", ".kt", ".scala", ".lua",
}  # fmt: skip


ADVICE = {
    "complexity": (
        "Many independent paths through one function: each needs a test, and changes interact in ways readers miss.",
        "Split the function along its branches (guard clauses, a dispatch table, or helper functions per case).",
    ),
    "length": (
        "A function this long does several jobs; readers must hold all of it in mind to change any part safely.",
        "Extract the steps into named helper functions, each doing one job.",
    ),
    "parameters": (
        "Long parameter lists are easy to call in the wrong order and usually mean the function does too much.",
        "Group related parameters into a small data object, or split the function.",
    ),
}


def over(value: int, threshold: int, doubled: int | None = None) -> str:
    """The severity of a measure over its threshold: P3 just over it, P2 from ``doubled`` (default 2x) on.

    Size and complexity are maintenance costs, never exploitable or
    data-losing by themselves, so a threshold rule is never P0 or P1.
    """
    return "P2" if value >= (doubled if doubled is not None else 2 * threshold) else "P3"


def _measures(function: Any, settings: StaticConfig) -> list[tuple[str, str, str]]:
    """(kind, severity, title) for each threshold the function exceeds.

    ``complexity_p2`` and ``function_lines_p2`` are the thresholds reported;
    above ``complexity_p1`` / ``function_lines_p1`` (by default 2x and 2.5x
    the threshold) the finding is P2, below it P3.
    """
    name, found = str(function.name), []
    ccn, nloc = int(function.cyclomatic_complexity), int(function.nloc)
    if ccn > settings.complexity_p2:
        severity = over(ccn, settings.complexity_p2, settings.complexity_p1 + 1)
        found.append(
            ("complexity", severity, f"{name}() has cyclomatic complexity {ccn} (threshold {settings.complexity_p2})")
        )
    if nloc > settings.function_lines_p2:
        severity = over(nloc, settings.function_lines_p2, settings.function_lines_p1 + 1)
        title = f"{name}() is {nloc} lines of code long (threshold {settings.function_lines_p2})"
        found.append(("length", severity, title))
    parameters = len(getattr(function, "parameters", ()) or ())
    if parameters > settings.max_parameters:
        title = f"{name}() takes {parameters} parameters (threshold {settings.max_parameters})"
        found.append(("parameters", over(parameters, settings.max_parameters), title))
    return found


def _function_hits(context: AnalyzerContext, function: Any, source: Source, lines: list[str]) -> list[Hit]:
    start = int(function.start_line)
    hits = []
    for kind, severity, title in _measures(function, context.settings):
        why, fix = ADVICE[kind]
        hits.append(
            hit_at(
                source,
                start,
                lines,
                rule=f"lizard:{kind}",
                claim=Claim("lizard", kind),
                severity=severity,
                title=title,
                why=why,
                fix=fix,
                category=f"function-{kind}",
            )
        )
    return hits


def run(context: AnalyzerContext) -> AnalyzerOutput:
    """Measure every function of every supported source."""
    started = time.monotonic()
    hits: list[Hit] = []
    notes: list[str] = []
    for source in context.sources:
        tree = context.python_tree(source) if source.language == "python" else None
        if tree is not None:  # the checks' parse, measured the way lizard measures
            functions: list[Any] = list(python_functions(source.text, tree))
        elif PurePosixPath(source.name).suffix.lower() not in SUPPORTED:
            continue
        elif (bound := over_bound(source.text, max_nesting=LIZARD_MAX_NESTING)) is not None:
            notes.append(f"lizard skipped {source.name}: {bound}")  # listed as not reviewed (bounds.skip_of)
            continue
        else:
            try:
                from lizard import analyze_file  # only for other languages (an import each worker would pay)
            except ImportError:
                return AnalyzerOutput("lizard", error="lizard is not installed (pip install lizard)")
            try:
                functions = list(analyze_file.analyze_source_code(source.name, source.text).function_list)
            except Exception as exc:  # lizard's readers can choke on odd syntax
                notes.append(f"lizard skipped {source.name}: {type(exc).__name__}")
                continue
        lines = source.text.splitlines()
        for function in functions:
            hits.extend(_function_hits(context, function, source, lines))
    return AnalyzerOutput("lizard", tuple(hits), tuple(notes), time.monotonic() - started)


ANALYZER = Analyzer("lizard", run, per_file=True)
