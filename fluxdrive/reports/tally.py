"""The ``N/M`` beside a finding in a report a person reads: one M for the whole report.

Why: synthesis measures each finding's M as the reviewers that could have
found it (with slicing, only those that received its file or section), so one
console report showed ``1/9``, ``1/4`` and ``1/12`` side by side under "All 12
reviewers reported" - a reader cannot compare them and takes the differences
for errors. A report a person reads uses one M: the reviewers that reported
(plus the tools whose results ``--import-sarif`` merged in, which synthesis
counts as reporters too). The per-finding M stays in findings.json
(``population``) and SARIF, for whoever wants the finer measure.
"""

from __future__ import annotations

from fluxdrive.synthesis import Finding, Synthesis


def reporters(result: Synthesis) -> int:
    """M: the reviewers that reported; never below any finding's own M (imported tools add to it)."""
    return max([len(result.agents_completed), *(f.population for f in result.findings)])


def ratio(finding: Finding, of: int) -> str:
    """``N/M`` with the report's one M."""
    return f"{finding.convergence}/{max(of, finding.convergence)}"
