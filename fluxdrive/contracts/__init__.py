"""The file contracts agents and the orchestrator share (PROTOCOL.md 6 and 7).

This package sits at the bottom of the layer stack: it imports only the
standard library, PyYAML and the package's leaf helpers (``_atomic``), so any
other code - ours or another orchestrator's - can depend on it.
"""

from fluxdrive.contracts.completion import (
    PARTIAL_MARKER,
    SENTINEL,
    AgentOutputWriter,
    Completion,
    CompletionState,
    freeze_report,
    frozen_path,
    has_sentinel,
    inspect,
    is_partial_recovery,
    output_path,
    partial_path,
    settle,
    write_agent_output,
    write_error_stub,
)
from fluxdrive.contracts.fields import LineFields, also_field, cwe_field, normalize_cwe, read_fields, rule_field
from fluxdrive.contracts.findings_index import (
    INDEX_HEADING,
    SEVERITIES,
    VERDICTS,
    IndexEntry,
    ParsedIndex,
    Severity,
    Verdict,
    clean_field,
    derive_verdict,
    parse_index,
    render_error_stub,
    render_index,
)
from fluxdrive.contracts.outputs import (
    OutputClassification,
    OutputStatus,
    classify_output,
    classify_text,
)
from fluxdrive.contracts.report import IssueDetail, Report, render_report

__all__ = [
    "INDEX_HEADING",
    "PARTIAL_MARKER",
    "SENTINEL",
    "SEVERITIES",
    "VERDICTS",
    "AgentOutputWriter",
    "Completion",
    "CompletionState",
    "IndexEntry",
    "IssueDetail",
    "LineFields",
    "OutputClassification",
    "OutputStatus",
    "ParsedIndex",
    "Report",
    "Severity",
    "Verdict",
    "also_field",
    "classify_output",
    "classify_text",
    "clean_field",
    "cwe_field",
    "derive_verdict",
    "freeze_report",
    "frozen_path",
    "has_sentinel",
    "inspect",
    "is_partial_recovery",
    "normalize_cwe",
    "output_path",
    "parse_index",
    "partial_path",
    "read_fields",
    "render_error_stub",
    "render_index",
    "render_report",
    "rule_field",
    "settle",
    "write_agent_output",
    "write_error_stub",
]
