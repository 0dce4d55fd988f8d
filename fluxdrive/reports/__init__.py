"""Renderers of a synthesis: findings.json, summary.md and .html, SARIF, GitLab Code Quality and the console report."""

from fluxdrive.reports.codeclimate import build_codeclimate, render_codeclimate
from fluxdrive.reports.console import render_console
from fluxdrive.reports.findings_json import build_document, json_schema, render_json
from fluxdrive.reports.html import render_html
from fluxdrive.reports.sarif import build_sarif, render_sarif
from fluxdrive.reports.summary_md import render_summary
from fluxdrive.reports.write import OUTPUT_FILES, write_reports

__all__ = [
    "OUTPUT_FILES",
    "build_codeclimate",
    "build_document",
    "build_sarif",
    "json_schema",
    "render_codeclimate",
    "render_console",
    "render_html",
    "render_json",
    "render_sarif",
    "render_summary",
    "write_reports",
]
