"""What a run says, read back from its output directory for publishing.

``findings.json`` gives the verdict, the counts, the agents and the findings
(severity, title, ``locations`` as ``path:line`` or ``path:start-end``,
agents, rules, CWE). The explanation and the fix are not in it: they are
read from the reporting agent's own report (``<agent>.md``, its Issues Found
prose) the way the SARIF help texts are. Both are read through
:class:`fluxdrive.runs.RunDirectory` (validated, confined), and a finding is
its findings.json model (:class:`~fluxdrive.reports.findings_json.FindingOut`);
:class:`PublishedFinding` is the view comments need on top of it: places
parsed into line ranges, the explanation and fix, the marker.

A finding's marker (``fingerprint``) hashes the file and the normalized
title, not the line, so a comment posted for a finding is recognized on the
next run even when lines moved. It is not the baseline/SARIF fingerprint on
purpose: markers already posted on open pull requests must keep matching,
or every comment would be posted again and every old thread resolved.
"""

from __future__ import annotations

import contextlib
import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path

from fluxdrive.errors import FluxdriveError
from fluxdrive.reports.findings_json import FindingOut, SuggestionOut
from fluxdrive.runs.directory import RunDirectory
from fluxdrive.synthesis.dedup import normalize_title
from fluxdrive.synthesis.measured import Measured
from fluxdrive.synthesis.model import Support
from fluxdrive.synthesis.prose import issue_notes

# path:12, path:12-14, path:L12-L14, path:12:5 (a column is dropped)
_PLACE = re.compile(r"^(?P<path>.+?):L?(?P<start>\d+)(?:-L?(?P<end>\d+)|:\d+)?$")


@dataclass(frozen=True)
class Place:
    """A file and a line range in it (``start == end`` for one line; line 0 when none was given)."""

    path: str
    start: int
    end: int

    def __str__(self) -> str:
        if not self.start:
            return self.path
        return f"{self.path}:{self.start}" if self.start == self.end else f"{self.path}:{self.start}-{self.end}"


@dataclass(frozen=True)
class PublishedFinding:
    """One merged finding, as comments and annotations show it."""

    id: str
    severity: str
    title: str
    agents: tuple[str, ...]
    places: tuple[Place, ...]
    fingerprint: str
    rules: tuple[str, ...] = ()
    cwe: tuple[str, ...] = ()
    confidence: str = ""
    convergence: str = ""
    why: str = ""
    fix: str = ""
    suggestions: tuple[SuggestionOut, ...] = ()  # mechanical fixes, one per place that has one
    not_grounded: str = ""  # why its places or quoted code are not in the reviewed input (synthesis/grounding.py)
    not_confirmed: str = ""  # why a checker model of another family rejected it (synthesis/validation.py)
    measured: str = ""  # where its confidence comes from, when measured (synthesis/measured.py)
    support: str = (
        ""  # analyzers and models behind it, when models were given analyzer evidence (synthesis/evidence.py)
    )

    @property
    def place(self) -> Place | None:
        """The primary place."""
        return self.places[0] if self.places else None


@dataclass(frozen=True)
class AgentOutcome:
    """How one agent's report came out."""

    name: str
    status: str
    reason: str


@dataclass
class RunReport:
    """The parts of a run that are published."""

    directory: Path
    verdict: str
    counts: dict[str, int]
    complete: bool
    incomplete_reasons: list[str]
    input: str
    findings: list[PublishedFinding]
    agents: list[AgentOutcome]
    improvements: int = 0
    validation: str = ""
    notes: list[str] = field(default_factory=list)
    line_filter: tuple[str, int] | None = None  # the review's --filter and how many findings it left out


def parse_place(location: str, root: Path | None = None) -> Place:
    """``path:line`` / ``path:a-b`` -> a repository-relative :class:`Place` (an absolute path under
    ``root`` made relative to it)."""
    match = _PLACE.match(location.strip())
    if match:
        path, start = match["path"], int(match["start"])
        end = int(match["end"]) if match["end"] else start
    else:
        path, start, end = location.strip(), 0, 0
    return Place(repo_path(path, root), min(start, end), max(start, end))


def repo_path(path: str, root: Path | None = None) -> str:
    """A path as GitHub names it: forward slashes, relative to the repository, no ``./``."""
    path = path.replace("\\", "/")
    if root is not None and path.startswith("/"):
        with contextlib.suppress(ValueError):  # outside the repository: kept as it is
            path = Path(path).resolve().relative_to(Path(root).resolve()).as_posix()
    while path.startswith("./"):
        path = path[2:]
    return path.lstrip("/")


def marker(finding: FindingOut) -> str:
    """The comment marker of a finding: a hash of its file and normalized title (see the module docstring)."""
    file = finding.location.rsplit(":", 1)[0] if finding.location else ""
    return hashlib.sha256(f"{file}\0{normalize_title(finding.title)}".encode()).hexdigest()[:32]


def _notes(run: RunDirectory, item: FindingOut, cache: dict[str, dict[str, tuple[str, str]]]) -> tuple[str, str]:
    """(explanation, fix) from the first reporting agent whose report explains this finding."""
    for agent, local in item.source_ids.items():
        if agent not in cache:
            try:
                cache[agent] = issue_notes(run.report(agent)) if run.report_file(agent) else {}
            except (FluxdriveError, OSError):  # no report, a link out of the project, not an agent name
                cache[agent] = {}
        why, fix = cache[agent].get(local, ("", ""))
        if why or fix:
            return why, fix
    return "", ""


def _finding(
    run: RunDirectory, item: FindingOut, root: Path | None, cache: dict[str, dict[str, tuple[str, str]]]
) -> PublishedFinding:
    why, fix = _notes(run, item, cache)
    return PublishedFinding(
        id=item.id,
        severity=item.severity,
        title=item.title,
        agents=tuple(item.agents),
        places=tuple(parse_place(x, root) for x in item.locations),
        fingerprint=marker(item),
        rules=tuple(item.rules),
        cwe=tuple(item.cwe),
        confidence=item.confidence,
        convergence=item.convergence_ratio,
        why=why,
        fix=fix,
        suggestions=tuple(item.suggestions),
        not_grounded=item.grounding.reason if item.grounding is not None and not item.grounding.grounded else "",
        not_confirmed=_not_confirmed(item),
        measured=_measured(item),
        support=_support(item),
    )


def _support(item: FindingOut) -> str:
    """ "supported by fd-safety:py-sql-injection + openai:gpt-4o" ("" without analyzer evidence)."""
    found = item.support
    if found is None:
        return ""
    return Support(tuple(found.analyzers), tuple(found.models), tuple(found.refuted.items())).sentence


def _measured(item: FindingOut) -> str:
    """The sentence "confidence high: 18 of 20 judged findings of this rule were right" ("" when not measured)."""
    found = item.measured
    if found is None:
        return ""
    return Measured(
        found.kind, found.key, found.right, found.judged, found.precision, item.confidence, found.demoted_from
    ).sentence


def _not_confirmed(item: FindingOut) -> str:
    """The checker's word on a finding it rejected, with the severity it had ("" unless rejected)."""
    checked = item.validation
    if checked is None or checked.status != "not-confirmed":
        return ""
    said = f"{checked.checker}: {checked.reason}"
    return f"{said} (demoted from {checked.demoted_from})" if checked.demoted_from else said


def load_run(directory: Path, root: Path | None = None) -> RunReport:
    """Read ``directory/findings.json`` (and the agents' reports beside it)."""
    run = RunDirectory(Path(directory))
    document = run.findings()
    cache: dict[str, dict[str, tuple[str, str]]] = {}
    return RunReport(
        directory=Path(directory),
        verdict=document.verdict,
        counts={str(k): v for k, v in document.counts.items()},
        complete=document.complete,
        incomplete_reasons=list(document.incomplete_reasons),
        input=document.input,
        findings=[_finding(run, item, root, cache) for item in document.findings],
        agents=[AgentOutcome(a.name, a.status, a.reason) for a in document.agents],
        improvements=len(document.improvements),
        validation=document.validation,
        notes=list(document.notes),
        line_filter=(document.line_filter.mode, document.line_filter.left_out) if document.line_filter else None,
    )
