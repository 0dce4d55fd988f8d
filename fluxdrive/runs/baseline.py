"""Baselines: record today's findings, so later reviews report only the new ones.

    fluxdrive baseline write [OUTPUT_DIR] [-o FILE]     (default FILE: .fluxdrive/baseline.json)
    fluxdrive review ... --baseline FILE                (suppresses what FILE holds)

A baseline is one JSON document::

    {"kind": "fluxdrive-baseline", "schema_version": 1, "fingerprint_version": 1,
     "created_at": "...", "tool_version": "...", "source": "docs/research/flux-drive/src-1a2b",
     "findings": [{"fingerprint": "9f0c...", "rule": "ruff:S608", "severity": "P1",
                   "path": "app/db.py", "title": "SQL built by ...", "first_seen": "..."}]}

``kind`` is the marker: a file without it is never overwritten and never
read as a baseline. Titles and paths are masked (credentials, terminal
escapes) before they are stored; line numbers are not stored at all.

Fingerprints: :mod:`fluxdrive.reports.fingerprint` (the same ones SARIF's
``partialFingerprints`` carry): file, rule or normalized title, the flagged
line's text and an occurrence number - never the line number - so lines
inserted above a finding keep it suppressed and two identical hits in one
file stay two. Existing baselines keep matching: the material and
``FINGERPRINT_VERSION`` did not change when the function moved there.

``since_last`` / ``remember_reviewed`` keep the commit each branch was last
reviewed at (the history database records runs per project, not per branch
or commit) for ``review --since-last``: in ``PROJECT_ROOT/.git/fluxdrive/
last-review.json``, state of this clone that must never be committed, or
``PROJECT_ROOT/.fluxdrive/last-review.json`` where ``.git`` is not a
directory inside the project (a linked worktree: nothing outside the root
is written).
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from fluxdrive.contracts import derive_verdict
from fluxdrive.core import git as _git
from fluxdrive.core.atomic import atomic_write_json
from fluxdrive.core.clock import utc_timestamp
from fluxdrive.core.confine import OutsideRootError
from fluxdrive.core.masking import scrub
from fluxdrive.core.paths import read_regular
from fluxdrive.core.project import project_file
from fluxdrive.core.version import __version__
from fluxdrive.errors import InputError
from fluxdrive.reports.findings_json import FindingOut
from fluxdrive.reports.fingerprint import FINGERPRINT_VERSION, MORE_PLACES, Fingerprinted, fingerprints, split_location
from fluxdrive.runs.directory import RunDirectory
from fluxdrive.synthesis import Conflict, Finding, Synthesis

KIND_KEY = "kind"
KIND = "fluxdrive-baseline"
SCHEMA_VERSION = 1
DEFAULT_BASELINE = Path(".fluxdrive") / "baseline.json"
LAST_REVIEW = Path(".fluxdrive") / "last-review.json"
LAST_REVIEW_KIND = "fluxdrive-last-review"
MAX_BASELINE_BYTES = 64 * 1024 * 1024
MAX_TITLE = 300
SEVERITIES = ("P0", "P1", "P2", "P3")
_COMMIT = re.compile(r"^[0-9a-f]{7,64}$")


class BaselineError(InputError):
    """A baseline file is missing, corrupt, foreign or too new; or would overwrite a file that is not one (exit 2)."""


@dataclass(frozen=True, slots=True)
class BaselineEntry:
    """One recorded finding: its fingerprint and what a person needs to recognize it (no line number)."""

    fingerprint: str
    severity: str
    path: str
    title: str
    first_seen: str
    rule: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "fingerprint": self.fingerprint,
            "rule": self.rule,
            "severity": self.severity,
            "path": self.path,
            "title": self.title,
            "first_seen": self.first_seen,
        }


@dataclass(frozen=True, slots=True)
class Baseline:
    """A loaded (or just written) baseline file."""

    path: Path
    entries: tuple[BaselineEntry, ...]
    created_at: str = ""
    tool_version: str = ""
    source: str = ""
    schema_version: int = SCHEMA_VERSION

    @property
    def fingerprints(self) -> frozenset[str]:
        return frozenset(e.fingerprint for e in self.entries)


@dataclass(frozen=True, slots=True)
class BaselineOutcome:
    """What applying a baseline did: the new synthesis, what it hid, what is gone."""

    synthesis: Synthesis  # only the findings not in the baseline; verdict re-derived
    suppressed: list[Finding] = field(default_factory=list)  # found again: in the baseline
    fixed: list[BaselineEntry] = field(default_factory=list)  # in the baseline, not found by this review

    @property
    def suppressed_count(self) -> int:
        return len(self.suppressed)

    @property
    def fixed_count(self) -> int:
        return len(self.fixed)


# --------------------------------------------------------------------------
# reading and writing


def shown_path(path: Path, root: Path | None = None) -> str:
    """``path`` relative to ``root`` when it lies inside it (POSIX), else as given."""
    if root is not None:
        try:  # the parent resolved, the name kept: a run's output path is a link to its latest directory
            return (Path(path).parent.resolve() / Path(path).name).relative_to(Path(root).resolve()).as_posix()
        except (OSError, ValueError):
            pass
    return str(path)


def _entry(raw: Any, number: int, path: Path) -> BaselineEntry:
    if not isinstance(raw, dict) or not isinstance(raw.get("fingerprint"), str) or not raw["fingerprint"]:
        raise BaselineError(
            f"baseline {path}: finding {number} is malformed (no fingerprint)",
            hint="rewrite it: fluxdrive baseline write",
        )

    def text(key: str) -> str:
        value = raw.get(key)
        return value if isinstance(value, str) else ""

    rule = raw.get("rule")
    return BaselineEntry(
        fingerprint=raw["fingerprint"],
        severity=text("severity"),
        path=text("path"),
        title=text("title"),
        first_seen=text("first_seen"),
        rule=rule if isinstance(rule, str) and rule else None,
    )


def load_baseline(path: Path) -> Baseline:
    """Read a baseline file; one :class:`BaselineError` line when it is missing, corrupt, foreign or too new."""
    path = Path(path)
    if not path.exists() and not path.is_symlink():
        raise BaselineError(
            f"baseline {path} does not exist", hint="write one from a review: fluxdrive baseline write [OUTPUT_DIR]"
        )
    try:
        data = read_regular(path, "baseline", limit=MAX_BASELINE_BYTES)
    except InputError as exc:
        raise BaselineError(exc.message, hint=exc.hint) from None
    try:
        document = json.loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise BaselineError(f"baseline {path} is not UTF-8 text", hint="rewrite it: fluxdrive baseline write") from None
    except json.JSONDecodeError as exc:
        raise BaselineError(
            f"baseline {path} is not valid JSON (line {exc.lineno}: {exc.msg})",
            hint="rewrite it: fluxdrive baseline write",
        ) from None
    if not isinstance(document, dict) or document.get(KIND_KEY) != KIND:
        raise BaselineError(
            f'{path} is not a fluxdrive baseline (no "{KIND_KEY}": "{KIND}")',
            hint="pass a file written by fluxdrive baseline write",
        )
    version = document.get("schema_version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise BaselineError(f"baseline {path} has no valid schema_version", hint="rewrite it: fluxdrive baseline write")
    if version > SCHEMA_VERSION:
        raise BaselineError(
            f"baseline {path} has schema_version {version}; this fluxdrive reads up to {SCHEMA_VERSION}",
            hint="upgrade fluxdrive, or rewrite the baseline with this version",
        )
    if document.get("fingerprint_version", FINGERPRINT_VERSION) != FINGERPRINT_VERSION:
        raise BaselineError(
            f"baseline {path} uses fingerprint version {document.get('fingerprint_version')!r}, "
            f"this fluxdrive computes version {FINGERPRINT_VERSION}",
            hint="rewrite it from a fresh review: fluxdrive baseline write",
        )
    findings = document.get("findings")
    if not isinstance(findings, list):
        raise BaselineError(f"baseline {path} has no findings list", hint="rewrite it: fluxdrive baseline write")

    def text(key: str) -> str:
        value = document.get(key)
        return value if isinstance(value, str) else ""

    return Baseline(
        path=path,
        entries=tuple(_entry(raw, n, path) for n, raw in enumerate(findings, start=1)),
        created_at=text("created_at"),
        tool_version=text("tool_version"),
        source=text("source"),
        schema_version=version,
    )


def fingerprints_in(path: Path) -> frozenset[str]:
    """The fingerprints of the baseline at ``path`` (empty when there is none or it cannot be read)."""
    try:
        return load_baseline(path).fingerprints
    except BaselineError:
        return frozenset()


def _previous(path: Path) -> Baseline | None:
    """The baseline ``path`` holds (None when absent); refuses to go on over any other file."""
    if not path.exists() and not path.is_symlink():
        return None
    if path.is_symlink() or not path.is_file():
        raise BaselineError(
            f"{path} is not a fluxdrive baseline (a {'symlink' if path.is_symlink() else 'directory or device'}); "
            "refusing to overwrite it",
            hint="choose another file with -o FILE",
        )
    try:
        return load_baseline(path)
    except BaselineError:
        raise BaselineError(
            f"{path} is not a fluxdrive baseline; refusing to overwrite it",
            hint="choose another file with -o FILE, or move that file aside",
        ) from None


class Recordable(Fingerprinted, Protocol):
    """A finding as a baseline records it: a merged finding or one read back from findings.json."""

    @property
    def severity(self) -> str: ...


def write_baseline(
    path: Path,
    findings: Sequence[Recordable],
    root: Path,
    *,
    seen_at: str | None = None,
    source: str = "",
    now: str | None = None,
) -> Baseline:
    """Record ``findings`` in ``path`` atomically, by fingerprint; never over a file that is not a baseline.

    A finding already in the file keeps its ``first_seen``; a new one gets
    ``seen_at`` (the review's time; default: now). Findings the file held
    but ``findings`` lack are dropped: the baseline is today's findings.
    """
    path = Path(path)
    previous = _previous(path)
    created = now or utc_timestamp()
    first = {e.fingerprint: e.first_seen for e in previous.entries} if previous else {}
    entries = []
    for finding, fingerprint in zip(findings, fingerprints(findings, root), strict=True):
        file, _line = split_location(finding.location, root)
        title = " ".join(scrub(MORE_PLACES.sub("", finding.title)).split())
        entries.append(
            BaselineEntry(
                fingerprint=fingerprint,
                severity=finding.severity,
                path=scrub(file),
                title=title if len(title) <= MAX_TITLE else title[: MAX_TITLE - 1].rstrip() + "\u2026",
                first_seen=first.get(fingerprint) or seen_at or created,
                rule=scrub(finding.rules[0]) if finding.rules else None,
            )
        )
    entries.sort(key=lambda e: (e.path, e.severity, e.title, e.fingerprint))
    baseline = Baseline(
        path=path,
        entries=tuple(entries),
        created_at=created,
        tool_version=__version__,
        source=scrub(source),
    )
    atomic_write_json(
        path,
        {
            KIND_KEY: KIND,
            "schema_version": SCHEMA_VERSION,
            "fingerprint_version": FINGERPRINT_VERSION,
            "created_at": baseline.created_at,
            "tool_version": baseline.tool_version,
            "source": baseline.source,
            "count": len(entries),
            "findings": [e.as_dict() for e in entries],
        },
    )
    return baseline


@dataclass(frozen=True, slots=True)
class RunFindings:
    """The findings a finished review wrote to ``OUTPUT_DIR/findings.json``."""

    directory: Path
    findings: list[FindingOut]
    reviewed: str
    project_root: str


def read_run(output_dir: Path) -> RunFindings:
    """The findings of a review's output directory (its findings.json), as the findings.json model has them."""
    run = RunDirectory.open(Path(output_dir), limit=MAX_BASELINE_BYTES)
    document = run.findings()
    project_root = ""
    try:
        manifest = run.manifest()
        project_root = manifest.input.project_root if manifest.input is not None else ""
    except InputError:  # a broken run.json: the project is found from the directory instead
        pass
    return RunFindings(run.path, document.findings, document.reviewed, project_root or "")


# --------------------------------------------------------------------------
# applying


def apply_baseline(synthesis: Synthesis, baseline: Baseline, root: Path) -> BaselineOutcome:
    """A new synthesis holding only the findings ``baseline`` does not know, its verdict re-derived.

    The input synthesis is not changed. The verdict stays ``error`` when it
    was (no agent completed); otherwise it is derived from the remaining
    findings as synthesis derives it. The findings left are numbered again
    (``P0-1``, ``P0-2``, ... among themselves), and ``info`` lines say how many
    known findings are not shown and how many baseline findings this review
    did not find again (fixed - or outside what this review covered).
    Improvements are left as they are: they never count toward the verdict.
    """
    known = baseline.fingerprints
    kept: list[Finding] = []
    suppressed: list[Finding] = []
    found = fingerprints(synthesis.findings, root)
    for finding, fingerprint in zip(synthesis.findings, found, strict=True):
        (suppressed if fingerprint in known else kept).append(finding)
    present = set(found)
    fixed = [e for e in baseline.entries if e.fingerprint not in present]
    was = synthesis.findings_verdict
    verdict = was if was == "error" else derive_verdict(f.severity for f in kept)
    shown = shown_path(baseline.path, root)
    info = list(synthesis.info)
    if suppressed:  # what the user asked for, so information, not a warning
        new = f"the {len(kept)} new one(s) numbered among themselves" if kept else "no new finding"
        info.append(f"{len(suppressed)} finding(s) already in the baseline {shown} not shown; {new}")
    if fixed:
        info.append(
            f"{len(fixed)} finding(s) of the baseline {shown} were not found again "
            "(fixed, or outside what this review covered)"
        )
    hidden = {f.id for f in suppressed}
    kept, renamed = _renumbered(kept, hidden)
    conflicts = [_renamed(c, renamed) for c in synthesis.conflicts if c.finding is None or c.finding not in hidden]
    result = dataclasses.replace(synthesis, findings=kept, findings_verdict=verdict, info=info, conflicts=conflicts)
    return BaselineOutcome(synthesis=result, suppressed=suppressed, fixed=fixed)


def _renumbered(kept: Sequence[Finding], hidden: set[str]) -> tuple[list[Finding], dict[str, str]]:
    """Copies of ``kept`` numbered ``P0-1, P0-2, ...`` again in their order, and old id -> new id.

    Why: synthesis numbered every finding, the known ones too, so a run whose
    P0-1 was in the baseline listed an orphan ``P0-2`` and nothing said where
    P0-1 went. References to a hidden finding are dropped with it.
    """
    counters: dict[str, int] = {}
    renamed: dict[str, str] = {}
    for finding in kept:
        prefix = finding.id.rsplit("-", 1)[0] if "-" in finding.id else finding.severity
        counters[prefix] = counters.get(prefix, 0) + 1
        renamed[finding.id] = f"{prefix}-{counters[prefix]}"

    def ids(old: Sequence[str]) -> list[str]:
        return [renamed.get(i, i) for i in old if i not in hidden]

    copies = [
        dataclasses.replace(
            f, id=renamed[f.id], co_located_with=ids(f.co_located_with), cross_references=ids(f.cross_references)
        )
        for f in kept
    ]
    return copies, renamed


def _renamed(conflict: Conflict, renamed: Mapping[str, str]) -> Conflict:
    """``conflict`` naming its finding by the new id (its text starts with the id when it names one)."""
    old = conflict.finding
    if old is None or old not in renamed:
        return conflict
    new = renamed[old]
    text = new + conflict.text[len(old) :] if conflict.text.startswith(old + " ") else conflict.text
    return dataclasses.replace(conflict, finding=new, text=text)


# --------------------------------------------------------------------------
# review --since-last


def _last_reviews(path: Path) -> dict[str, Any] | None:
    """The branches of ``.fluxdrive/last-review.json`` ({} when absent, None when it is not ours)."""
    if not path.exists() and not path.is_symlink():
        return {}
    try:
        document = json.loads(read_regular(path, "last-review file", limit=1024 * 1024).decode("utf-8"))
    except (InputError, UnicodeDecodeError, json.JSONDecodeError):
        return None
    if not isinstance(document, dict) or document.get(KIND_KEY) != LAST_REVIEW_KIND:
        return None
    branches = document.get("branches")
    return dict(branches) if isinstance(branches, dict) else None


def last_review_path(root: Path) -> Path:
    """Where this clone's last-review record lives: inside ``.git`` when it is the project's own directory."""
    git_dir = Path(root) / ".git"
    if git_dir.is_dir() and not git_dir.is_symlink():
        return git_dir / "fluxdrive" / "last-review.json"
    return Path(root) / LAST_REVIEW


def since_last(root: Path, branch: str) -> str | None:
    """The commit ``branch`` was last reviewed at (see :func:`remember_reviewed`), or None when unknown.

    None too when the file is missing or unreadable, or git no longer knows
    the commit (a rebase dropped it): the caller then reviews as usual.
    """
    branches = _last_reviews(last_review_path(root))
    record = (branches or {}).get(branch)
    commit = record.get("commit") if isinstance(record, Mapping) else None
    if not isinstance(commit, str) or not _COMMIT.match(commit):
        return None
    proc = _git._git(Path(root), "rev-parse", "--verify", "--quiet", f"{commit}^{{commit}}")
    if proc is None or proc.returncode != 0:
        return None
    return commit


def remember_reviewed(root: Path, branch: str, commit: str, *, now: str | None = None) -> Path:
    """Record that ``branch`` was reviewed at ``commit`` (in :func:`last_review_path`).

    Other branches' records are kept. A file at that path that is not
    fluxdrive's (or is corrupt) is not overwritten: :class:`BaselineError`,
    which a review should turn into a warning.
    """
    path = last_review_path(root)
    try:
        project_file(root, path.relative_to(root), "the last-review record")
    except OutsideRootError as exc:
        raise BaselineError(exc.message, hint="remove the link: fluxdrive writes only inside the project") from None
    branches = _last_reviews(path)
    if branches is None or (path.exists() and not path.is_file()) or path.is_symlink():
        raise BaselineError(
            f"{path} is not fluxdrive's last-review record; not updating it",
            hint="move it aside: fluxdrive writes a new one after the next review",
        )
    if not _COMMIT.match(commit):
        raise BaselineError(f"not a commit id: {commit!r}", hint="pass the full hash of the reviewed commit")
    branches[branch] = {"commit": commit, "reviewed_at": now or utc_timestamp()}
    atomic_write_json(
        path,
        {KIND_KEY: LAST_REVIEW_KIND, "schema_version": 1, "branches": dict(sorted(branches.items()))},
    )
    return path


def current_branch(root: Path) -> str | None:
    """The branch HEAD is on (None outside a repository or on a detached HEAD)."""
    proc = _git._git(Path(root), "symbolic-ref", "--quiet", "--short", "HEAD")
    if proc is None or proc.returncode != 0:
        return None
    return proc.stdout.decode("utf-8", "replace").strip() or None
