"""Write every report of a synthesis into OUTPUT_DIR, atomically, scrubbed, never over a stranger's file.

``fluxdrive synthesize DIR`` also works on reports another system wrote, so
the directory may not be one fluxdrive created: there, a ``summary.md`` (or
findings.json, findings.sarif, summary.html) that fluxdrive did not write is refused rather
than replaced. Every text is scrubbed on the way out (credentials, configured
keys, terminal escapes), whatever the reports it came from held.
"""

from __future__ import annotations

from pathlib import Path

from fluxdrive.core.atomic import atomic_write_text
from fluxdrive.core.masking import scrub
from fluxdrive.errors import UsageError
from fluxdrive.exchange import verdicts
from fluxdrive.reports.findings_json import render_json
from fluxdrive.reports.html import GENERATOR_MARK, render_html
from fluxdrive.reports.sarif import render_sarif
from fluxdrive.reports.summary_md import render_summary
from fluxdrive.synthesis import Synthesis

OUTPUT_FILES = ("findings.json", "summary.md", "findings.sarif", "summary.html")
SYNTHESIS_AGENT = "synthesis"
RUN_MARKER = ".fluxdrive-run"  # workspace.RUN_MARKER (reports may not import the workspace)
# How each report starts when fluxdrive wrote it.
_OURS = {
    "findings.json": ('"synthesis_protocol_version"',),
    "summary.md": ("# fluxdrive review:",),
    "findings.sarif": ('"name": "fluxdrive"',),
    "summary.html": (GENERATOR_MARK,),
}


def _ours(path: Path) -> bool:
    """True when ``path`` is absent, or is a report fluxdrive wrote (a stranger's file is never replaced)."""
    if not path.exists() and not path.is_symlink():
        return True
    if path.is_symlink() or not path.is_file():
        return False
    try:
        with path.open("rb") as handle:
            head = handle.read(4096).decode("utf-8", errors="replace")
    except OSError:
        return False
    return any(mark in head for mark in _OURS[path.name])


def write_reports(result: Synthesis) -> list[Path]:
    """findings.json, summary.md, findings.sarif, summary.html and the synthesis verdict record."""
    directory = result.output_dir
    if not (directory / RUN_MARKER).is_file():
        foreign = [name for name in OUTPUT_FILES if not _ours(directory / name)]
        if foreign:
            raise UsageError(
                f"{directory} holds {', '.join(foreign)} that fluxdrive did not write; refusing to replace it",
                hint="synthesize a copy of the reports in a new directory",
            )
    renderers = (render_json, render_summary, render_sarif, render_html)
    paths = []
    for name, render in zip(OUTPUT_FILES, renderers, strict=True):
        path = directory / name
        text = render(result)  # the JSON and HTML renderers scrub their own strings (escapes, markup)
        atomic_write_text(path, text if name.endswith((".json", ".sarif", ".html")) else scrub(text))
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
