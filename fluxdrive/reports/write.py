"""Write every report of a synthesis into OUTPUT_DIR, atomically."""

from __future__ import annotations

from pathlib import Path

from fluxdrive import verdicts
from fluxdrive._atomic import atomic_write_text
from fluxdrive.reports.findings_json import render_json
from fluxdrive.reports.sarif import render_sarif
from fluxdrive.reports.summary_md import render_summary
from fluxdrive.synthesis import Synthesis

OUTPUT_FILES = ("findings.json", "summary.md", "findings.sarif")
SYNTHESIS_AGENT = "synthesis"


def write_reports(result: Synthesis) -> list[Path]:
    """findings.json, summary.md, findings.sarif and the synthesis verdict record."""
    directory = result.output_dir
    renderers = (render_json, render_summary, render_sarif)
    paths = []
    for name, render in zip(OUTPUT_FILES, renderers, strict=True):
        path = directory / name
        atomic_write_text(path, render(result))
        paths.append(path)
    counts = ", ".join(f"{n} {s}" for s, n in result.counts().items() if n) or "no findings"
    verdicts.write_verdict(
        directory,
        SYNTHESIS_AGENT,
        verdicts.STATUS_FOR_VERDICT[result.verdict],
        f"{result.verdict}: {counts} ({result.validation_line})",
        detail_path="summary.md",
    )
    paths.append(verdicts.verdicts_dir(directory))
    return paths
