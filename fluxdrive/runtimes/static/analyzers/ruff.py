"""Ruff, run once over every Python source for all agents.

One ``ruff check`` subprocess reads every Python file (and the Python code
blocks of documents, written to a temporary directory) with the union of
the rule prefixes the agents ask for, minus the codes another analyzer
reports better (``data/rules/ruff.yml``). Severities come from the same
file's longest-prefix table.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
import tempfile
import time
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from fluxdrive.runtimes.static.analyzers.base import AnalyzerContext, AnalyzerOutput, where
from fluxdrive.runtimes.static.hits import Claim, Hit, evidence_for
from fluxdrive.runtimes.static.source import Source

TIMEOUT_S = 300


@functools.lru_cache(maxsize=1)
def ruff_table() -> dict[str, Any]:
    """``data/rules/ruff.yml``: superseded, ignored, default and codes."""
    path = resources.files("fluxdrive") / "data" / "rules" / "ruff.yml"
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def severity_for(code: str) -> tuple[str, str]:
    """(severity, why) for a ruff code: the longest matching prefix wins."""
    table = ruff_table()
    best = None
    for prefix, entry in table["codes"].items():
        if code.startswith(prefix) and (best is None or len(prefix) > len(best[0])):
            best = (prefix, entry)
    entry = best[1] if best else table["default"]
    return str(entry["severity"]), str(entry["why"])


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
    severity, why = severity_for(code)
    path, reported, also = source.location(line)
    place = where(context, source, line)
    message = " ".join(str(item.get("message", "")).split()).rstrip(".")
    fix = (item.get("fix") or {}).get("message") or f"See {item.get('url') or 'the ruff documentation'}."
    return Hit(
        rule=f"ruff:{code}",
        claim=Claim("ruff", code),
        severity=severity,
        path=path,
        line=reported,
        title=f"{message} {place}".strip() + f" [{code}]",
        why=why,
        fix=str(fix),
        evidence=evidence_for(source.text.splitlines(), line),
        also=also,
        category=str(item.get("name") or code.lower()),
    )


def run(context: AnalyzerContext) -> AnalyzerOutput:
    """Run ruff once; return hits for every selected code."""
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
    hits = []
    for item in items:
        source = mapping.get(str(item.get("filename")))
        if source is not None and item.get("location"):
            hits.append(_hit(context, source, item))
    return AnalyzerOutput("ruff", tuple(hits), seconds=time.monotonic() - started)
