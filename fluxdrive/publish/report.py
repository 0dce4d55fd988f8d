"""What a run says, read back from its output directory for publishing.

``findings.json`` gives the verdict, the counts, the agents and the findings
(severity, title, ``locations`` as ``path:line`` or ``path:start-end``,
agents, rules, CWE). The explanation and the fix are not in it: they are
read from the reporting agent's own report (``<agent>.md``, its Issues Found
prose) the way the SARIF help texts are. Each finding's fingerprint is
:func:`fluxdrive.reports.sarif.fingerprint` - the file and the normalized
title, not the line - so a comment posted for a finding is recognized on the
next run even when lines moved.
"""

from __future__ import annotations

import contextlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fluxdrive.errors import InputError
from fluxdrive.reports.sarif import fingerprint
from fluxdrive.synthesis.model import Finding
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


def _notes(directory: Path, item: dict[str, Any], cache: dict[str, dict[str, tuple[str, str]]]) -> tuple[str, str]:
    """(explanation, fix) from the first reporting agent whose report explains this finding."""
    for agent, local in (item.get("source_ids") or {}).items():
        if agent not in cache:
            report = directory / f"{agent}.md"
            try:
                cache[agent] = issue_notes(report.read_text(encoding="utf-8")) if report.is_file() else {}
            except (OSError, UnicodeDecodeError):
                cache[agent] = {}
        why, fix = cache[agent].get(str(local), ("", ""))
        if why or fix:
            return why, fix
    return "", ""


def _finding(directory: Path, item: dict[str, Any], root: Path | None, cache: dict[str, Any]) -> PublishedFinding:
    locations = [str(x) for x in item.get("locations") or ([item["location"]] if item.get("location") else [])]
    model = Finding(
        id=str(item["id"]),
        severity=str(item["severity"]),
        agents=[str(a) for a in item.get("agents") or []],
        section=str(item.get("section") or ""),
        title=str(item["title"]),
        locations=locations,
    )
    why, fix = _notes(directory, item, cache)
    return PublishedFinding(
        id=model.id,
        severity=model.severity,
        title=model.title,
        agents=tuple(model.agents),
        places=tuple(parse_place(x, root) for x in locations),
        fingerprint=fingerprint(model),
        rules=tuple(str(r) for r in item.get("rules") or ()),
        cwe=tuple(str(c) for c in item.get("cwe") or ()),
        confidence=str(item.get("confidence") or ""),
        convergence=str(item.get("convergence_ratio") or ""),
        why=why,
        fix=fix,
    )


def load_run(directory: Path, root: Path | None = None) -> RunReport:
    """Read ``directory/findings.json`` (and the agents' reports beside it)."""
    path = Path(directory) / "findings.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError(
            f"no findings.json in {directory}", hint="publish a review's output directory (fluxdrive review ...)"
        ) from None
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise InputError(f"cannot read {path}: {exc}") from None
    if not isinstance(data, dict) or "verdict" not in data or not isinstance(data.get("findings"), list):
        raise InputError(f"{path} is not a fluxdrive findings.json", hint="fluxdrive schema findings shows its shape")
    cache: dict[str, Any] = {}
    try:
        findings = [_finding(Path(directory), item, root, cache) for item in data["findings"]]
    except (KeyError, TypeError) as exc:
        raise InputError(f"{path}: a finding lacks {exc}") from None
    agents = [
        AgentOutcome(str(a.get("name")), str(a.get("status")), str(a.get("reason") or ""))
        for a in data.get("agents") or []
        if isinstance(a, dict)
    ]
    complete = bool(data.get("complete", True))
    verdict = str(data["verdict"])
    if verdict == "safe" and not complete:  # a findings.json of schema 1 said "safe" for an incomplete review
        verdict = "incomplete"
    return RunReport(
        directory=Path(directory),
        verdict=verdict,
        counts={str(k): int(v) for k, v in (data.get("counts") or {}).items()},
        complete=complete,
        incomplete_reasons=[str(r) for r in data.get("incomplete_reasons") or []],
        input=str(data.get("input") or ""),
        findings=findings,
        agents=agents,
        improvements=len(data.get("improvements") or []),
        validation=str(data.get("validation") or ""),
        notes=[str(n) for n in data.get("notes") or []],
    )
