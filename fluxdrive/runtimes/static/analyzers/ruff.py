"""Ruff, run once over every Python source for all agents.

One ``ruff check`` subprocess reads every Python file (and the Python code
blocks of documents, written to a temporary directory) with the union of
the rule prefixes the agents ask for, minus the codes another analyzer
reports better (``data/rules/ruff.yml``). Severities come from the same
file's longest-prefix table.

An undefined name (F821) is dropped where Python never evaluates it: inside
a string annotation, in any annotation under ``from __future__ import
annotations``, in a local variable's annotation (PEP 526: never evaluated),
and under ``if TYPE_CHECKING:``. Such a name cannot raise NameError; only a
type checker reads it.
"""

from __future__ import annotations

import ast
import functools
import json
import os
import re
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from fluxdrive.runtimes.static.analyzers.base import Analyzer, AnalyzerContext, AnalyzerOutput, hit_at, where
from fluxdrive.runtimes.static.analyzers.complexity import over
from fluxdrive.runtimes.static.hits import Claim, Hit
from fluxdrive.runtimes.static.source import Source

TIMEOUT_S = 300
THRESHOLD_FIGURES = re.compile(r"\((\d+) > (\d+)\)")


@functools.lru_cache(maxsize=1)
def ruff_table() -> dict[str, Any]:
    """``data/rules/ruff.yml``: superseded, ignored, default and codes."""
    path = resources.files("fluxdrive") / "data" / "rules" / "ruff.yml"
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def severity_for(code: str, message: str = "") -> tuple[str, str]:
    """(severity, why) for a ruff code: the longest matching prefix wins.

    An entry marked ``threshold: true`` (C901, PLR0912, ...) takes its
    severity from the figures in ruff's message, ``(21 > 10)``: P3 just over
    the limit, P2 from twice it (never P1; see ``complexity.over``).
    """
    table = ruff_table()
    best = None
    for prefix, entry in table["codes"].items():
        if code.startswith(prefix) and (best is None or len(prefix) > len(best[0])):
            best = (prefix, entry)
    entry = best[1] if best else table["default"]
    severity = str(entry["severity"])
    if entry.get("threshold"):
        figures = THRESHOLD_FIGURES.search(message)
        severity = over(int(figures.group(1)), int(figures.group(2))) if figures else "P3"
    return severity, str(entry["why"])


def ruff_executable() -> str | None:
    """The ruff binary shipped with the ruff package, else one on PATH."""
    try:
        from ruff.__main__ import find_ruff_bin

        return str(find_ruff_bin())
    except (ImportError, FileNotFoundError):
        return shutil.which("ruff")


def _materialize(sources: list[Source], directory: Path) -> dict[str, Source]:
    """Write code blocks to ``directory``; map every analyzed path to its source."""
    mapping: dict[str, Source] = {}
    for number, source in enumerate(sources):
        if source.block_of is None:
            continue
        path = directory / f"block{number}.py"
        path.write_text(source.text, encoding="utf-8")
        mapping[str(path)] = source
    return mapping


def _hit(context: AnalyzerContext, source: Source, item: dict[str, Any]) -> Hit:
    code = str(item.get("code") or "ruff")
    line = int(item["location"]["row"])
    message = " ".join(str(item.get("message", "")).split()).rstrip(".")
    severity, why = severity_for(code, message)
    place = where(context, source, line)
    fix = (item.get("fix") or {}).get("message") or f"See {item.get('url') or 'the ruff documentation'}."
    return hit_at(
        source,
        line,
        source.text.splitlines(),
        rule=f"ruff:{code}",
        claim=Claim("ruff", code),
        severity=severity,
        title=f"{message} {place}".strip() + f" [{code}]",
        why=why,
        fix=str(fix),
        category=str(item.get("name") or code.lower()),
    )


Span = tuple[tuple[int, int], tuple[int, int]]


def _span(node: ast.AST) -> Span:
    start = (getattr(node, "lineno", 0), getattr(node, "col_offset", 0))
    end = (getattr(node, "end_lineno", None) or start[0], getattr(node, "end_col_offset", None) or start[1])
    return start, end


def _future_annotations(tree: ast.Module) -> bool:
    imports = [node for node in tree.body if isinstance(node, ast.ImportFrom) and node.module == "__future__"]
    return any(alias.name == "annotations" for node in imports for alias in node.names)


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _annotations(node: ast.AST) -> list[ast.expr]:
    """The annotations a definition or an annotated assignment carries."""
    if isinstance(node, ast.AnnAssign):
        return [node.annotation]
    if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
        return []
    arguments = node.args
    every = [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs, arguments.vararg, arguments.kwarg]
    found = [a.annotation for a in every if a is not None and a.annotation is not None]
    return [*found, *([node.returns] if node.returns is not None else [])]


def unevaluated_spans(tree: ast.Module) -> list[Span]:
    """Where names are never evaluated at runtime (see the module docstring), as AST spans."""
    lazy = _future_annotations(tree)
    spans: list[Span] = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for annotation in _annotations(node):
            if lazy or (isinstance(node, ast.AnnAssign) and in_function):
                spans.append(_span(annotation))
            else:
                strings = [n for n in ast.walk(annotation) if isinstance(n, ast.Constant) and isinstance(n.value, str)]
                spans.extend(_span(n) for n in strings)
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            spans.extend(_span(child) for child in node.body)
        inside = in_function or isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
        for child in ast.iter_child_nodes(node):
            visit(child, inside and not isinstance(child, ast.ClassDef))

    visit(tree, False)
    return spans


def _never_evaluated(
    context: AnalyzerContext, source: Source, item: dict[str, Any], cache: dict[str, list[Span]]
) -> bool:
    """True when ruff's F821 points into code Python never evaluates (an annotation-only name)."""
    if source.name not in cache:
        tree = context.python_tree(source)
        cache[source.name] = unevaluated_spans(tree) if tree is not None else []
    row, column = int(item["location"]["row"]), int(item["location"].get("column") or 1)
    lines = source.text.splitlines()
    text = lines[row - 1] if 0 < row <= len(lines) else ""
    where = (row, len(text[: column - 1].encode("utf-8")))  # ruff counts characters from 1, ast bytes from 0
    return any(start <= where < end for start, end in cache[source.name])


@dataclass(frozen=True, slots=True)
class Collected:
    """ruff's JSON items, with the source each reported file name stands for."""

    items: list[dict[str, Any]]
    mapping: dict[str, Source]
    seconds: float


def run(context: AnalyzerContext) -> AnalyzerOutput:
    """Run ruff once; return hits for every selected code."""
    collected = collect(context)
    return collected if isinstance(collected, AnalyzerOutput) else finish(context, collected)


def collect(context: AnalyzerContext) -> Collected | AnalyzerOutput:
    """Run the ruff subprocess (it overlaps the per-file pass); an output when nothing is left to do."""
    started = time.monotonic()
    sources = context.python_sources()
    if not sources or not context.ruff_select:
        return AnalyzerOutput("ruff", seconds=time.monotonic() - started)
    executable = ruff_executable()
    if executable is None:
        return AnalyzerOutput("ruff", error="ruff is not installed (pip install ruff)")
    table = ruff_table()
    excluded = sorted({*table["superseded"], *table["ignored"]})
    with tempfile.TemporaryDirectory(prefix="fluxdrive-ruff-") as tmp:
        mapping = _materialize(sources, Path(tmp))
        files = [str(context.root / s.path) for s in sources if s.block_of is None]
        mapping.update({str(context.root / s.path): s for s in sources if s.block_of is None})
        command = [
            executable, "check", "--isolated", "--no-cache", "--exit-zero",
            "--output-format", "json", "--target-version", "py311",
            "--select", ",".join(context.ruff_select), "--ignore", ",".join(excluded),
            *files, *[p for p in mapping if p.startswith(tmp)],
        ]  # fmt: skip
        try:
            proc = subprocess.run(
                command, capture_output=True, text=True, timeout=TIMEOUT_S, check=False,
                env={**os.environ, "NO_COLOR": "1"},
            )  # fmt: skip
        except (OSError, subprocess.TimeoutExpired) as exc:
            return AnalyzerOutput("ruff", error=f"ruff could not run: {exc}")
        if proc.returncode != 0:
            return AnalyzerOutput("ruff", error=f"ruff failed: {proc.stderr.strip()[:300]}")
        try:
            items = json.loads(proc.stdout or "[]")
        except ValueError:
            return AnalyzerOutput("ruff", error="ruff printed output that is not JSON")
    return Collected(items, mapping, time.monotonic() - started)


def finish(context: AnalyzerContext, collected: Collected) -> AnalyzerOutput:
    """Hits from ruff's items; run after the per-file pass, whose outlines name each hit's function without a parse."""
    started = time.monotonic()
    hits = []
    spans: dict[str, list[Span]] = {}
    for item in collected.items:
        source = collected.mapping.get(str(item.get("filename")))
        if source is None or not item.get("location"):
            continue
        if item.get("code") == "F821" and _never_evaluated(context, source, item, spans):
            continue
        hits.append(_hit(context, source, item))
    return AnalyzerOutput("ruff", tuple(hits), seconds=collected.seconds + time.monotonic() - started)


ANALYZER = Analyzer("ruff", run)


# --- ruff's own fixes: what ``fluxdrive.fixes`` suggests for a ruff finding ----------------------------


def fix_items(root: Path, files: list[str], codes: list[str]) -> list[dict[str, Any]]:
    """ruff's JSON items (their ``fix`` objects included) for ``codes`` in the project ``files`` (relative,
    already confined by the caller); [] when ruff is missing, fails or prints something else.

    Why a second, narrow run: a finding reaches findings.json through the agents' reports, which carry
    prose, not edits; the fixes are asked of ruff again for just the files and codes that were reported."""
    executable = ruff_executable()
    if executable is None or not files or not codes:
        return []
    command = [
        executable, "check", "--isolated", "--no-cache", "--exit-zero", "--output-format", "json",
        "--target-version", "py311", "--select", ",".join(sorted(set(codes))), *files,
    ]  # fmt: skip
    try:
        proc = subprocess.run(
            command, cwd=root, capture_output=True, text=True, timeout=TIMEOUT_S, check=False,
            env={**os.environ, "NO_COLOR": "1"},
        )  # fmt: skip
        items = json.loads(proc.stdout or "[]") if proc.returncode == 0 else []
    except (OSError, subprocess.TimeoutExpired, ValueError):
        return []
    return [item for item in items if isinstance(item, dict)] if isinstance(items, list) else []


def fix_lines(item: dict[str, Any], lines: list[str]) -> tuple[int, int, tuple[str, ...], str] | None:
    """ruff's ``fix`` of ``item`` as whole lines: (first line, last line, their replacement, applicability),
    or None when it has none. ``lines`` are the file's lines with their line ends.

    ruff's edits are (row, column) ranges, 1-based, columns in characters, the end exclusive; an edit that
    ends at column 1 of the next line ends with the line before. Every edit is applied to the text of the
    lines they span, back to front."""
    fix = item.get("fix")
    edits = fix.get("edits") if isinstance(fix, dict) else None
    if not edits:
        return None
    try:
        spans = [
            (int(e["location"]["row"]), int(e["location"]["column"]), int(e["end_location"]["row"]),
             int(e["end_location"]["column"]), str(e.get("content") or ""))
            for e in edits
        ]  # fmt: skip
    except (KeyError, TypeError, ValueError):
        return None
    first = min(s[0] for s in spans)
    last = max(s[2] if s[3] > 1 or s[2] == s[0] else s[2] - 1 for s in spans)
    if first < 1 or last > len(lines) or last < first:
        return None
    starts = [0]
    for line in lines[first - 1 : last]:
        starts.append(starts[-1] + len(line))
    segment = "".join(lines[first - 1 : last])

    def offset(row: int, column: int) -> int:
        return starts[row - first] + column - 1 if row - first < len(starts) - 1 else len(segment)

    for row, column, end_row, end_column, content in sorted(spans, reverse=True):
        segment = segment[: offset(row, column)] + content + segment[offset(end_row, end_column) :]
    replacement = tuple(segment.splitlines())
    applicability = fix.get("applicability") if isinstance(fix, dict) else None
    return first, last, replacement, APPLICABILITY.get(str(applicability).lower(), "unsafe")


# ruff's words for how far a fix can be trusted, as its JSON spells them (``displayonly``) and its docs do.
APPLICABILITY = {"safe": "safe", "unsafe": "unsafe", "displayonly": "display-only", "display-only": "display-only"}
