"""Research between review stages: answer a serious finding's outside question before Stage 2.

PROTOCOL.md section 4 item 7. After Stage 1, a P0/P1 finding whose text
refers outward (a best practice, a framework or version, documentation, a
regression, "usually", two approaches compared without a decision) becomes a
:class:`Trigger` for one research agent. At most two run, one after another,
each bounded by a timeout; a timeout or a crash is recorded as the outcome and
never stops the review.

The answers go into Stage 2 prompts and synthesis, never into expansion
scoring: research explains a finding that already exists, it is not another
reviewer's opinion. Scoring it would count one Stage 1 finding twice and make
the launch decision depend on which questions happened to be asked.

Offline, two agents do real work from the repository: ``git-history`` (the
file's recent commits, churn, fix and revert commits, main authors, and blame
around the flagged line) and ``repo-research`` (the enclosing function or
class, the tests that cover it, its callers, related files). ``framework-docs``
and ``best-practices`` need the web or a model: offline they are skipped and
repo-research answers their question from the repository when it is free.
``learnings`` waits for the knowledge store. LLM runtimes plug in through the
executor table (:data:`EXECUTORS`, or ``run_research(executors=...)``): one
function per agent name, taking a :class:`ResearchRequest` and returning a
:class:`ResearchAnswer`.

Each answer is written to ``OUTPUT_DIR/research/<agent>.md`` atomically in the
research-contract shape (Sources, Findings, Confidence, Gaps; under 60 lines),
with credential-shaped text masked; the file exists exactly when the outcome
is ``completed``. Nothing is read outside the project root.
"""

from __future__ import annotations

import ast
import concurrent.futures
import contextlib
import dataclasses
import os
import re
import shutil
import subprocess
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import lru_cache
from pathlib import Path
from typing import Literal

from fluxdrive._atomic import atomic_write_text
from fluxdrive._match import word_pattern
from fluxdrive.agents import AgentDefinition, Roster
from fluxdrive.agents.definition import NAME_PATTERN
from fluxdrive.errors import FluxdriveError
from fluxdrive.runtimes.static.hits import mask_text
from fluxdrive.synthesis.model import SEVERITY_ORDER, Finding
from fluxdrive.workspace import review_files

__all__ = [
    "COMPARISON_PHRASES",
    "EXECUTORS",
    "OUTWARD_PHRASES",
    "RESEARCH_DIR",
    "RESEARCH_TIMEOUT_S",
    "Point",
    "ResearchAnswer",
    "ResearchExecutor",
    "ResearchOutcome",
    "ResearchRequest",
    "ResearchStatus",
    "ResearchTimeout",
    "Trigger",
    "find_triggers",
    "git_history",
    "render_answer",
    "repo_research",
    "run_research",
]

RESEARCH_DIR = "research"
RESEARCH_TIMEOUT_S = 60.0
MAX_LINES = 59  # the contract says "under 60 lines"
MAX_FILES_SCANNED = 2_000
MAX_FILE_BYTES = 2_000_000
LOG_SCAN = 200  # commits read per file; enough for churn, fixes and authors
RECENT_COMMITS = 10
BLAME_CONTEXT = 5
CHURN_DAYS = 90

# A finding "refers outward" when its text uses one of these, as whole words
# or phrases (plurals included), case-insensitively. The brief of PROTOCOL.md:
# outside knowledge, what is normal elsewhere, and history.
OUTWARD_PHRASES: tuple[str, ...] = (
    "best practice", "framework", "library", "version", "documentation", "docs", "standard",
    "convention", "idiomatic", "recommended", "deprecated",
    "typically", "usually", "commonly",
    "regression", "used to", "previously", "originally",
)  # fmt: skip
# Two approaches compared without a decision. A bare "or" is too common to
# count; "either" stands for "either X or Y".
COMPARISON_PHRASES: tuple[str, ...] = (
    "vs", "versus", "instead of", "rather than", "either", "compared to", "compared with", "whether to",
)  # fmt: skip

# Equal concern scores go to the first of these; project research agents follow, by name.
PREFERENCE: tuple[str, ...] = ("git-history", "repo-research", "framework-docs", "best-practices", "learnings")
FALLBACK_AGENT = "repo-research"
STAND_IN_FOR: frozenset[str] = frozenset({"framework-docs", "best-practices"})
NEEDS_STORE: frozenset[str] = frozenset({"learnings"})

OFFLINE_NOTE = "needs the web or a model; not run offline"
STORE_NOTE = "the knowledge store is not available yet"
RUNTIME_NOTE = "LLM research runs through the runtime"

_ASK = {
    "git-history": "what does the repository's history say about how this code came to be?",
    "repo-research": "what do its callers, tests and related code in the repository say?",
    "framework-docs": "what does the documentation of the version in use say?",
    "best-practices": "what does current, widely accepted practice say?",
    "learnings": "has the project met this problem before?",
}
_ASK_DEFAULT = "what does outside knowledge say about it?"

ResearchStatus = Literal["completed", "timeout", "skipped", "error"]


# --------------------------------------------------------------------------
# triggers


@dataclass(frozen=True, slots=True)
class Trigger:
    """One Stage 1 finding that needs outside knowledge, routed to one research agent."""

    finding_id: str
    severity: str
    agents: tuple[str, ...]
    location: str | None
    matched: str
    research_agent: str
    question: str
    title: str = ""
    locations: tuple[str, ...] = ()


@lru_cache(maxsize=1024)
def _phrase(phrase: str) -> re.Pattern[str]:
    pattern = word_pattern([phrase])
    if pattern is None:
        raise ValueError("empty phrase")
    return pattern


def _finding_text(finding: Finding) -> str:
    parts = [finding.title, *(finding.descriptions[k] for k in sorted(finding.descriptions)), finding.section]
    return "\n".join(p for p in parts if p)


def _outward(text: str) -> str | None:
    """The phrase that makes the text refer outward: the earliest in the text (longest on a tie)."""
    best: tuple[tuple[int, int], str] | None = None
    for phrase in (*OUTWARD_PHRASES, *COMPARISON_PHRASES):
        match = _phrase(phrase).search(text)
        if match is not None and (best is None or (match.start(), -len(phrase)) < best[0]):
            best = ((match.start(), -len(phrase)), phrase)
    return best[1] if best else None


def _score(agent: AgentDefinition, text: str) -> int:
    return sum(1 for concern in agent.concerns if _phrase(concern).search(text))


def _preference(agent: AgentDefinition) -> tuple[int, str]:
    rank = PREFERENCE.index(agent.name) if agent.name in PREFERENCE else len(PREFERENCE)
    return rank, agent.name


def _route(text: str, agents: Sequence[AgentDefinition], used: set[str]) -> str | None:
    """The best-matching unused agent; repo-research when none matches; None when all are taken."""
    ranked = sorted(((_score(a, text), a) for a in agents), key=lambda s: (-s[0], _preference(s[1])))
    for score, agent in ranked:
        if score > 0 and agent.name not in used:
            return agent.name
    names = sorted(agents, key=_preference)
    if any(a.name == FALLBACK_AGENT for a in names):
        return FALLBACK_AGENT if FALLBACK_AGENT not in used else None
    return next((a.name for a in names if a.name not in used), None)


def _one_line(text: str, limit: int = 160) -> str:
    text = " ".join(text.split()).rstrip(".")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _question(finding: Finding, agent: str) -> str:
    who = ", ".join(finding.agents) or "a reviewer"
    where = f"at {finding.location}" if finding.location else "(no location)"
    ask = _ASK.get(agent, _ASK_DEFAULT)
    return mask_text(f"{who} {finding.severity.upper()} {where}: {_one_line(finding.title)} — {ask}")


def find_triggers(findings: Sequence[Finding], roster: Roster, *, limit: int = 2) -> list[Trigger]:
    """The findings research should look at, highest severity first, each routed to one research agent.

    A finding qualifies when it is P0 or P1, not an improvement, and its
    title, descriptions or section use an :data:`OUTWARD_PHRASES` or
    :data:`COMPARISON_PHRASES` entry. P0 comes before P1, then the order
    given; at most ``limit`` triggers and at most one per research agent.
    The agent is the one whose ``concerns`` match the text most (ties:
    :data:`PREFERENCE`); when none matches, repo-research. A finding whose
    agent is already taken goes to the next one that matches, else to
    repo-research if it is free, else it is left out.
    """
    agents = roster.of_kind("research")
    if limit <= 0 or not agents:
        return []
    eligible: list[tuple[int, int, Finding, str, str]] = []
    for index, finding in enumerate(findings):
        severity = finding.severity.upper()
        if severity not in ("P0", "P1") or finding.improvement:
            continue
        text = _finding_text(finding)
        matched = _outward(text)
        if matched is not None:
            eligible.append((SEVERITY_ORDER[severity], index, finding, text, matched))
    eligible.sort(key=lambda e: (e[0], e[1]))
    triggers: list[Trigger] = []
    used: set[str] = set()
    for _, _, finding, text, matched in eligible:
        if len(triggers) >= limit:
            break
        agent = _route(text, agents, used)
        if agent is None:
            continue
        used.add(agent)
        triggers.append(
            Trigger(
                finding_id=finding.id,
                severity=finding.severity.upper(),
                agents=tuple(finding.agents),
                location=finding.location,
                matched=matched,
                research_agent=agent,
                question=_question(finding, agent),
                title=finding.title,
                locations=tuple(finding.locations),
            )
        )
    return triggers


# --------------------------------------------------------------------------
# answers and the executor seam


class ResearchTimeout(Exception):  # noqa: N818 - it is the outcome's name, "timeout"
    """Raised inside an executor when its deadline has passed."""


@dataclass(frozen=True, slots=True)
class Point:
    """One numbered answer under Findings, with detail lines under it."""

    text: str
    details: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class ResearchAnswer:
    """What an executor found, before it is rendered in the research-contract shape."""

    sources: tuple[str, ...]
    points: tuple[Point, ...]
    confidence: Literal["high", "medium", "low"]
    confidence_note: str
    gaps: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class ResearchRequest:
    """What an executor gets: the trigger, the resolved project root and a monotonic deadline."""

    trigger: Trigger
    root: Path
    deadline: float
    stand_in_for: str | None = None

    def remaining(self) -> float:
        """Seconds left before the deadline (negative once it has passed)."""
        return self.deadline - time.monotonic()

    def check(self) -> None:
        """Raise :class:`ResearchTimeout` once the deadline has passed."""
        if self.remaining() <= 0:
            raise ResearchTimeout(f"{self.trigger.research_agent}: deadline passed")


ResearchExecutor = Callable[[ResearchRequest], ResearchAnswer]


@dataclass(frozen=True, slots=True)
class ResearchOutcome:
    """How one research agent ended; ``output`` is relative to OUTPUT_DIR."""

    agent: str
    question: str
    output: str | None
    status: ResearchStatus
    note: str
    seconds: float
    finding_id: str = ""

    def record(self) -> dict[str, str | float | None]:
        """The ``research`` entry of run.json."""
        return {
            "agent": self.agent,
            "question": self.question,
            "output": self.output,
            "status": self.status,
            "note": self.note,
            "seconds": self.seconds,
            "finding_id": self.finding_id,
        }


# --------------------------------------------------------------------------
# paths inside the root

_LOCATION = re.compile(r"^(?:\./)?(?P<path>.+?)(?::(?P<line>\d+)(?:[-:,]\d+)*)?$")


@dataclass(frozen=True, slots=True)
class _Place:
    relative: str
    path: Path
    line: int | None


def _inside(root: Path, candidate: Path) -> Path | None:
    """``candidate`` resolved (symlinks followed) when it stays inside ``root``."""
    try:
        resolved = candidate.resolve()
    except (OSError, RuntimeError):
        return None
    return resolved if resolved == root or resolved.is_relative_to(root) else None


def _place(root: Path, location: str) -> _Place | str:
    """The file and line a location names, or why it cannot be used."""
    match = _LOCATION.match(location.strip().strip("`'\"()[]"))
    if match is None:
        return f"`{location}` is not a file:line location"
    resolved = _inside(root, root / match.group("path"))
    if resolved is None:
        return f"`{location}` is outside the project root; not read"
    if not resolved.is_file():
        return f"`{location}` is not a file in the project"
    line = int(match.group("line")) if match.group("line") else None
    return _Place(resolved.relative_to(root).as_posix(), resolved, line if line and line > 0 else None)


def _places(request: ResearchRequest, limit: int) -> tuple[list[_Place], list[str]]:
    """Up to ``limit`` distinct files from the trigger's locations, and a gap for each one not used."""
    places: list[_Place] = []
    gaps: list[str] = []
    for location in request.trigger.locations or ((request.trigger.location,) if request.trigger.location else ()):
        place = _place(request.root, location)
        if isinstance(place, str):
            gaps.append(place)
        elif all(p.relative != place.relative for p in places):
            if len(places) < limit:
                places.append(place)
            else:
                gaps.append(f"`{location}` not researched: only {limit} file(s) per answer")
    if not places and not gaps:
        gaps.append("the finding has no location: nothing to look up")
    return places, gaps


def _read_text(path: Path) -> str | None:
    """The file's text; None when it is too large, binary or unreadable."""
    try:
        if path.stat().st_size > MAX_FILE_BYTES:
            return None
        data = path.read_bytes()
    except OSError:
        return None
    if b"\x00" in data[:8192]:
        return None
    return data.decode("utf-8", errors="replace")


def _quote(code: str) -> str:
    code = code.strip().replace("`", "'")
    return f"`{code[:157]}…`" if len(code) > 160 else f"`{code}`"


# --------------------------------------------------------------------------
# git-history

_FIX_SUBJECT = re.compile(
    r"(?<![\w])(?:fix(?:e[sd]|ing|up)?|bug(?:s|fix(?:es)?)?|revert(?:s|ed|ing)?|hotfix(?:es)?)(?![\w])", re.IGNORECASE
)
_SHA_LINE = re.compile(r"^([0-9a-f]{40}|[0-9a-f]{64}) (\d+) (\d+)(?: \d+)?$")  # SHA-1 or SHA-256
_GIT_ENV_DROP = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY", "GIT_COMMON_DIR")


def _git(request: ResearchRequest, *args: str) -> subprocess.CompletedProcess[str] | None:
    """One read-only git command in the root, bounded by the request's deadline; None if git cannot run."""
    git = shutil.which("git")
    if git is None:
        return None
    request.check()
    env = {k: v for k, v in os.environ.items() if k not in _GIT_ENV_DROP}
    env.update(GIT_OPTIONAL_LOCKS="0", GIT_TERMINAL_PROMPT="0", GIT_CEILING_DIRECTORIES=str(request.root.parent))
    try:
        return subprocess.run(
            [git, "-c", "core.quotePath=false", "--no-pager", *args],
            cwd=request.root, capture_output=True, text=True, encoding="utf-8", errors="replace",
            timeout=max(0.05, request.remaining()), check=False, env=env,
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        raise ResearchTimeout(f"git {args[0]} did not finish before the deadline") from None
    except OSError:
        return None


def _day(timestamp: str) -> str:
    try:
        return datetime.fromtimestamp(int(timestamp), UTC).strftime("%Y-%m-%d")
    except (ValueError, OverflowError, OSError):
        return "????-??-??"


@dataclass(frozen=True, slots=True)
class _Commit:
    short: str
    time: int
    author: str
    subject: str

    def line(self) -> str:
        return f"{self.short} {_day(str(self.time))} {self.author}: {self.subject}"


def _log(request: ResearchRequest, relative: str) -> list[_Commit] | None:
    proc = _git(
        request, "log", "--follow", f"-n{LOG_SCAN}", "--no-color", "--format=%h%x1f%at%x1f%an%x1f%s", "--", relative
    )
    if proc is None or proc.returncode != 0:
        return None
    commits = []
    for row in proc.stdout.splitlines():
        parts = row.split("\x1f")
        if len(parts) == 4 and parts[1].isdigit():
            commits.append(_Commit(parts[0], int(parts[1]), parts[2], parts[3]))
    return commits


def _ranges(lines: Iterable[int], noun: str) -> str:
    """``[3, 4, 5, 9]`` -> ``lines 3-5, 9``; ``[7]`` -> ``line 7``."""
    spans: list[list[int]] = []
    for line in sorted(lines):
        if spans and line == spans[-1][1] + 1:
            spans[-1][1] = line
        else:
            spans.append([line, line])
    text = ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in spans)
    return f"{noun} {text}" if len(spans) == 1 and spans[0][0] == spans[0][1] else f"{noun}s {text}"


def _parse_blame(text: str) -> tuple[dict[int, str], dict[str, dict[str, str]]]:
    """Porcelain blame -> final line -> commit, and each commit's author, author-time and summary."""
    by_line: dict[int, str] = {}
    info: dict[str, dict[str, str]] = {}
    current: str | None = None
    for row in text.splitlines():
        if row.startswith("\t"):
            continue
        header = _SHA_LINE.match(row)
        if header:
            current = header.group(1)
            by_line[int(header.group(3))] = current
            info.setdefault(current, {})
        elif current is not None:
            key, _, value = row.partition(" ")
            if key in ("author", "author-time", "summary"):
                info[current].setdefault(key, value)
    return by_line, info


def _blame_label(sha: str, info: Mapping[str, str]) -> str:
    if _uncommitted(sha):
        return "not committed yet (working tree change)"
    return f"{sha[:7]} {_day(info.get('author-time', ''))} {info.get('author', '?')}: {info.get('summary', '')}"


@dataclass
class _Notes:
    """What an executor accumulates before it becomes a :class:`ResearchAnswer`."""

    sources: list[str] = dataclasses.field(default_factory=list)
    points: list[Point] = dataclasses.field(default_factory=list)
    gaps: list[str] = dataclasses.field(default_factory=list)
    key_commits: list[str] = dataclasses.field(default_factory=list)


@dataclass(frozen=True, slots=True)
class _Blame:
    points: tuple[Point, ...]
    flagged: str | None  # the full hash of the commit that last changed the flagged line


def _blame(request: ResearchRequest, place: _Place, out: _Notes) -> _Blame | None:
    """Who last touched the lines around the flagged one; None when blame could not run."""
    if place.line is None:
        out.gaps.append(f"{place.relative}: the location has no line number, so no blame")
        return None
    text = _read_text(place.path)
    lines = text.splitlines() if text is not None else []
    if place.line > len(lines):
        out.gaps.append(f"{place.relative}:{place.line}: past the end of the file ({len(lines)} lines), no blame")
        return None
    first, last = max(1, place.line - BLAME_CONTEXT), min(len(lines), place.line + BLAME_CONTEXT)
    proc = _git(request, "blame", "--porcelain", "-L", f"{first},{last}", "--", place.relative)
    if proc is None or proc.returncode != 0:
        out.gaps.append(f"{place.relative}: git blame failed ({_stderr(proc)})")
        return None
    by_line, info = _parse_blame(proc.stdout)
    touched: dict[str, list[int]] = {}
    for line, sha in by_line.items():
        touched.setdefault(sha, []).append(line)
    order = sorted(touched, key=lambda s: (-_number(info[s].get("author-time", "")), s))
    points = [
        Point(
            f"Lines {first}-{last} were last touched by {len(touched)} commit(s), newest first:",
            tuple(f"{_blame_label(s, info[s])} ({_ranges(touched[s], 'line')})" for s in order),
        )
    ]
    out.sources.append(f"{place.relative}:{first}-{last} (git blame)")
    flagged = by_line.get(place.line)
    if flagged is None:
        return _Blame(tuple(points), None)
    label = _blame_label(flagged, info[flagged])
    quote = (_quote(lines[place.line - 1]),)
    points.insert(0, Point(f"{place.relative}:{place.line} was last changed by {label}", quote))
    if not _uncommitted(flagged):
        out.key_commits.append(flagged[:7])
    return _Blame(tuple(points), flagged)


def _uncommitted(sha: str) -> bool:
    return set(sha) == {"0"}


def _number(text: str) -> int:
    return int(text) if text.isdigit() else 0


def _stderr(proc: subprocess.CompletedProcess[str] | None) -> str:
    if proc is None:
        return "git could not run"
    return _one_line(proc.stderr or f"exit {proc.returncode}", 120)


def _conclusion(blame: _Blame | None, commits: Sequence[_Commit], fixes: Sequence[_Commit]) -> Point | None:
    """Regression, long-standing or uncommitted: where the flagged line sits in the file's history."""
    if blame is None or blame.flagged is None:
        return None
    sha = blame.flagged
    recurring = f" {len(fixes)} fix/revert commit(s) on this file: check whether the problem recurs." if fixes else ""
    if _uncommitted(sha):
        return Point("Conclusion: the flagged line is an uncommitted change in the working tree." + recurring)
    index = next((i for i, c in enumerate(commits) if sha.startswith(c.short)), None)
    if index is None:
        text = f"the flagged line comes from {sha[:7]}, older than the {len(commits)} commit(s) read"
    elif len(commits) == 1:
        text = f"the flagged line dates from the file's only commit, {sha[:7]}"
    elif index == len(commits) - 1:
        text = f"long-standing: the flagged line dates from the file's first commit {sha[:7]}"
        text += f" and survived {index} later commit(s)"
    elif index == 0:
        text = (
            f"recent: the flagged line changed in the latest commit to the file, {sha[:7]}; a regression starts there"
        )
    else:
        text = f"the flagged line changed in {sha[:7]}, {index} commit(s) before the latest"
    return Point(f"Conclusion: {text}.{recurring}")


def _timeline(request: ResearchRequest, place: _Place, out: _Notes) -> list[_Commit] | None:
    """The file's commits, newest first (at most LOG_SCAN); None when it has no history."""
    tracked = _git(request, "ls-files", "--error-unmatch", "--", place.relative)
    if tracked is None or tracked.returncode != 0:
        out.gaps.append(f"{place.relative} is not tracked by git (new or ignored): it has no history")
        return None
    commits = _log(request, place.relative)
    if not commits:
        out.gaps.append(f"{place.relative}: git log found no commits")
        return None
    more = "+" if len(commits) >= LOG_SCAN else ""
    out.sources.append(f"git log --follow -- {place.relative} ({len(commits)}{more} commit(s))")
    return commits


def _history_points(place: _Place, commits: Sequence[_Commit], fixes: Sequence[_Commit]) -> list[Point]:
    """Recent commits, fix commits, churn and the main authors of one file."""
    more = "+" if len(commits) >= LOG_SCAN else ""
    recent = commits[:RECENT_COMMITS]
    points = [
        Point(
            f"Recent commits touching {place.relative} ({len(recent)} of {len(commits)}{more}, newest first):",
            tuple(c.line() for c in recent),
        )
    ]
    if fixes:
        what = f"{len(fixes)} commit(s) touching {place.relative} say fix, bug, revert or hotfix:"
        points.append(Point(what, tuple(c.line() for c in fixes[:5])))
    else:
        points.append(Point(f"No commit touching {place.relative} says fix, bug, revert or hotfix."))
    since = time.time() - CHURN_DAYS * 86_400
    churn = sum(1 for c in commits if c.time >= since)
    authors = sorted(Counter(c.author for c in commits).items(), key=lambda kv: (-kv[1], kv[0]))
    most = ", ".join(f"{name} ({n})" for name, n in authors[:3])
    points.append(
        Point(
            f"Churn of {place.relative}: {churn} commit(s) in the last {CHURN_DAYS} days, "
            f"{len(commits)}{more} in all; changed most by {most}."
        )
    )
    return points


def _is_repository(request: ResearchRequest, out: _Notes) -> bool:
    proc = _git(request, "rev-parse", "--is-inside-work-tree")
    if proc is None:
        out.gaps.append("git is not installed, so the history could not be read")
        return False
    if proc.returncode != 0 or proc.stdout.strip() != "true":
        out.gaps.append(f"{request.root.name} is not a git repository: there is no history to read")
        return False
    shallow = _git(request, "rev-parse", "--is-shallow-repository")
    if shallow is not None and shallow.stdout.strip() == "true":
        out.gaps.append("the repository is a shallow clone: older history is missing (git fetch --unshallow)")
    return True


def git_history(request: ResearchRequest) -> ResearchAnswer:
    """How the flagged code came to be, from git: timeline, churn, fixes, authors, blame."""
    out = _Notes()
    places, gaps = _places(request, limit=2)
    out.gaps.extend(gaps)
    if not places or not _is_repository(request, out):
        return ResearchAnswer(
            tuple(out.sources), tuple(out.points), "low", "a location inside a git repository", tuple(out.gaps)
        )
    histories = blames = 0
    fix_commits: list[str] = []
    for place in places:
        commits = _timeline(request, place, out)
        if commits is None:
            continue
        histories += 1
        fixes = [c for c in commits if _FIX_SUBJECT.search(c.subject)]
        fix_commits.extend(c.short for c in fixes[:1])
        blame = _blame(request, place, out)
        blames += blame is not None
        conclusion = _conclusion(blame, commits, fixes)
        if blame is not None:
            out.points.extend(blame.points[:1])
        out.points.extend([conclusion] if conclusion else [])
        out.points.extend(blame.points[1:] if blame is not None else [])
        out.points.extend(_history_points(place, commits, fixes))
    confidence: Literal["high", "medium", "low"] = "high" if blames else "medium" if histories else "low"
    if fix_commits:
        note = f"the diff of {fix_commits[0]} (git show {fix_commits[0]}): was the same behaviour fixed before?"
    elif out.key_commits:
        note = f"the full change in {out.key_commits[0]} (git show {out.key_commits[0]}): why the line reads this way"
    else:
        note = "committed history for the flagged file"
    return ResearchAnswer(tuple(out.sources), tuple(out.points), confidence, note, tuple(out.gaps))


# --------------------------------------------------------------------------
# repo-research

CODE_SUFFIXES = frozenset({
    ".py", ".pyi", ".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".go", ".rb", ".java", ".kt", ".kts", ".rs",
    ".php", ".cs", ".c", ".h", ".cc", ".cpp", ".hpp", ".swift", ".scala", ".sh", ".bash", ".lua", ".ex", ".exs",
    ".erl", ".clj", ".dart", ".vue", ".svelte",
})  # fmt: skip
_TEST_NAME = re.compile(
    r"(?:^test_.+\.py$|_test\.py$|^conftest\.py$|_test\.go$|\.(?:test|spec)\.[cm]?[jt]sx?$"
    r"|_(?:spec|test)\.rb$|Tests?\.(?:java|kt|cs|php|swift|scala)$|_test\.(?:rs|exs|dart)$)"
)
_TEST_DIRS = frozenset({"test", "tests", "__tests__", "spec", "specs", "testing", "e2e"})
_STEM_AFFIXES = re.compile(r"^test_|_test$|_spec$|Tests?$")
_DEFINITIONS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("function", re.compile(r"^\s*(?:export\s+)?(?:default\s+)?(?:async\s+)?function\s*\*?\s*([A-Za-z_$][\w$]*)")),
    (
        "function",
        re.compile(
            r"^\s*(?:export\s+)?(?:const|let|var)\s+([A-Za-z_$][\w$]*)\s*=\s*(?:async\s+)?"
            r"(?:function\b|\([^)]*\)\s*=>|[A-Za-z_$][\w$]*\s*=>)"
        ),
    ),
    ("function", re.compile(r"^\s*func\s+(?:\([^)]*\)\s*)?([A-Za-z_]\w*)")),
    ("function", re.compile(r"^\s*(?:pub(?:\([^)]*\))?\s+)?(?:async\s+)?(?:unsafe\s+)?fn\s+([A-Za-z_]\w*)")),
    ("function", re.compile(r"^\s*(?:async\s+)?def\s+(?:self\.)?([A-Za-z_]\w*[?!]?)")),
    (
        "class",
        re.compile(
            r"^\s*(?:export\s+)?(?:default\s+)?(?:(?:public|private|protected|abstract|final|static|sealed)\s+)*"
            r"(?:class|interface|struct|module|trait|enum)\s+([A-Za-z_$][\w$]*)"
        ),
    ),
)
_IMPORT_LINE = re.compile(
    r"^[ \t]*(?:from|import|use|require|require_relative|#include|@import)\b.*$|^.*\b(?:require|import)\s*\(.*$",
    re.MULTILINE,
)


@dataclass(frozen=True, slots=True)
class _Symbol:
    name: str
    kind: str
    line: int
    container: str | None = None

    def search_names(self) -> tuple[str, ...]:
        """What callers would write: the name itself; the class for a dunder method."""
        if self.name.startswith("__") and self.name.endswith("__"):
            return (self.container,) if self.container else ()
        return (self.name,)


def _python_symbol(text: str, line: int) -> _Symbol | None:
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    around: list[ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            if start <= line <= (node.end_lineno or node.lineno):
                around.append(node)
    if not around:
        return None
    around.sort(key=lambda n: n.lineno)
    inner = around[-1]
    classes = [n.name for n in around[:-1] if isinstance(n, ast.ClassDef)]
    container = classes[-1] if classes else None
    kind = "class" if isinstance(inner, ast.ClassDef) else "method" if container else "function"
    return _Symbol(inner.name, kind, inner.lineno, container)


def _regex_symbol(lines: Sequence[str], line: int) -> _Symbol | None:
    for number in range(min(line, len(lines)), 0, -1):
        for kind, pattern in _DEFINITIONS:
            match = pattern.match(lines[number - 1])
            if match:
                return _Symbol(match.group(1), kind, number)
    return None


def _enclosing(place: _Place, text: str) -> _Symbol | None:
    """The innermost function or class around the flagged line (``ast`` for Python, regexes otherwise)."""
    if place.line is None:
        return None
    if place.path.suffix in (".py", ".pyi"):
        found = _python_symbol(text, place.line)
        if found is not None:
            return found
    return _regex_symbol(text.splitlines(), place.line)


def _is_test(relative: str) -> bool:
    *dirs, name = relative.split("/")
    return bool(_TEST_NAME.search(name)) or any(d in _TEST_DIRS for d in dirs)


def _core_stem(relative: str) -> str:
    name = relative.rsplit("/", 1)[-1]
    return _STEM_AFFIXES.sub("", name.split(".", 1)[0]) or name


def _module_stem(place: _Place) -> str:
    stem = place.path.stem
    if stem == "__init__":
        return place.relative.rsplit("/", 2)[-2] if "/" in place.relative else stem
    return stem


@dataclass(frozen=True, slots=True)
class _Use:
    relative: str
    line: int
    code: str
    why: str
    count: int = 1
    direct: bool = True  # uses or imports the name itself, not only the module

    def detail(self) -> str:
        times = f" ({self.count} mentions)" if self.count > 1 else ""
        return f"{self.relative}:{self.line} {self.why}: {_quote(self.code)}{times}"


def _name_pattern(names: Sequence[str]) -> re.Pattern[str] | None:
    if not names:
        return None
    return re.compile(r"(?<![\w$])(?:" + "|".join(re.escape(n) for n in names) + r")(?![\w$])")


def _definition_of(code: str, name: str) -> bool:
    return bool(re.search(r"\b(?:def|function|func|fn|class|interface|struct)\s+\*?\s*" + re.escape(name), code))


def _line_at(text: str, offset: int) -> tuple[int, str]:
    start = text.rfind("\n", 0, offset) + 1
    end = text.find("\n", offset)
    return text.count("\n", 0, offset) + 1, text[start : end if end >= 0 else len(text)]


def _first_use(relative: str, text: str, pattern: re.Pattern[str] | None) -> _Use | None:
    """The first line using one of the names (a call before an import; never a definition), and how many do."""
    if pattern is None:
        return None
    first: tuple[int, str, str] | None = None
    imported: tuple[int, str, str] | None = None
    lines: set[int] = set()
    for match in pattern.finditer(text):
        number, code = _line_at(text, match.start())
        if number in lines or _definition_of(code, match.group(0)):
            continue
        lines.add(number)
        if _IMPORT_LINE.fullmatch(code):
            imported = imported or (number, code, f"imports `{match.group(0)}`")
        elif first is None:
            first = (number, code, f"uses `{match.group(0)}`")
    found = first or imported
    if found is None:
        return None
    return _Use(relative, found[0], found[1], found[2], len(lines))


def _import_of(relative: str, text: str, stem: str) -> _Use | None:
    word = re.compile(r"(?<![\w$])" + re.escape(stem) + r"(?![\w$])")
    for match in _IMPORT_LINE.finditer(text):
        if word.search(match.group(0)):
            number, code = _line_at(text, match.start())
            return _Use(relative, number, code, f"imports module `{stem}`", direct=False)
    return None


@dataclass
class _Scan:
    tests: list[_Use] = dataclasses.field(default_factory=list)
    callers: list[_Use] = dataclasses.field(default_factory=list)
    scanned: int = 0
    candidates: int = 0
    too_large: int = 0
    escaped: int = 0


def _scan(request: ResearchRequest, place: _Place, files: Sequence[str], symbol: _Symbol | None) -> _Scan:
    """Read up to MAX_FILES_SCANNED source files (same directory, then tests, then the rest)."""
    directory = place.relative.rpartition("/")[0]
    names = symbol.search_names() if symbol else ()
    pattern = _name_pattern(names)
    stem = _module_stem(place)
    code = [f for f in files if Path(f).suffix in CODE_SUFFIXES and f != place.relative]
    code.sort(key=lambda f: (f.rpartition("/")[0] != directory, not _is_test(f), f))
    scan = _Scan(candidates=len(code))
    for relative in code[:MAX_FILES_SCANNED]:
        if scan.scanned % 25 == 0:
            request.check()
        scan.scanned += 1
        path = _inside(request.root, request.root / relative)
        if path is None:
            scan.escaped += 1
            continue
        text = _read_text(path)
        if text is None:
            scan.too_large += 1
            continue
        use = _first_use(relative, text, pattern)
        if _is_test(relative):
            hit = use or _import_of(relative, text, stem)
            if hit is not None:
                scan.tests.append(hit)
        elif use is not None:
            scan.callers.append(use)
    scan.tests.sort(key=lambda u: u.relative)
    scan.callers.sort(key=lambda u: u.relative)
    return scan


def _listing(request: ResearchRequest, out: _Notes) -> tuple[str, ...]:
    try:
        return review_files(request.root, request.root)
    except (FluxdriveError, OSError) as exc:
        out.gaps.append(f"could not list the project's files: {exc}")
        return ()


def _related(place: _Place, files: Sequence[str]) -> list[Point]:
    directory = place.relative.rpartition("/")[0]
    stem = _core_stem(place.relative)
    same_stem = sorted(f for f in files if f != place.relative and _core_stem(f) == stem)
    siblings = sorted(f for f in files if f != place.relative and f.rpartition("/")[0] == directory)
    points = []
    if same_stem:
        points.append(Point(f"Same stem `{stem}`: {len(same_stem)} file(s)", tuple(same_stem[:6])))
    where = directory or "the project root"
    if siblings:
        shown = ", ".join(siblings[:8]) + (f", … {len(siblings) - 8} more" if len(siblings) > 8 else "")
        points.append(Point(f"Same directory ({where}): {len(siblings)} other file(s): {shown}"))
    else:
        points.append(Point(f"No other file in {where}."))
    return points


def _symbol_point(place: _Place, symbol: _Symbol | None) -> Point:
    if symbol is None:
        where = f"{place.relative}:{place.line}" if place.line else place.relative
        return Point(f"No enclosing function or class found for {where}: tests matched by module import only.")
    inside = f" of class `{symbol.container}`" if symbol.container else ""
    return Point(
        f"{place.relative}:{place.line} is inside {symbol.kind} `{symbol.name}`{inside} "
        f"(defined at {place.relative}:{symbol.line})."
    )


def _coverage_points(place: _Place, symbol: _Symbol | None, scan: _Scan) -> list[Point]:
    stem = _module_stem(place)
    names = ", ".join(f"`{n}`" for n in (symbol.search_names() if symbol else ()))
    if scan.tests:
        tests = Point(
            f"Tests that use {names or 'it'} or import `{stem}`: {len(scan.tests)} file(s)",
            tuple(u.detail() for u in scan.tests[:6]),
        )
    else:
        tests = Point(f"No test file imports `{stem}`" + (f" or uses {names}" if names else "") + ": looks untested.")
    if not names:
        callers = Point("Callers not searched: no function or class name to look for.")
    elif scan.callers:
        callers = Point(
            f"Callers outside tests: {len(scan.callers)} file(s) use {names}",
            tuple(u.detail() for u in scan.callers[:6]),
        )
    else:
        callers = Point(f"No file outside tests uses {names}: no callers found by text search.")
    direct = sum(1 for u in scan.tests if u.direct)
    if direct:
        verdict = f"used by {direct} test file(s)"
    elif scan.tests:
        verdict = f"no test uses it by name; {len(scan.tests)} test file(s) import `{stem}`"
    else:
        verdict = "no covering test found"
    reach = f"{len(scan.callers)} calling file(s)" if names else "callers unknown"
    return [tests, callers, Point(f"Conclusion: {verdict}; reach: {reach}.")]


def repo_research(request: ResearchRequest) -> ResearchAnswer:
    """The code around the flagged location: enclosing symbol, covering tests, callers, related files."""
    out = _Notes()
    places, gaps = _places(request, limit=1)
    out.gaps.extend(gaps)
    if not places:
        return ResearchAnswer((), (), "low", "a location inside the project", tuple(out.gaps))
    place = places[0]
    text = _read_text(place.path)
    if text is None:
        out.gaps.append(f"{place.relative} is larger than 2 MB, binary or unreadable: not read")
        text = ""
    symbol = _enclosing(place, text)
    files = _listing(request, out)
    scan = _scan(request, place, files, symbol)
    out.points.append(_symbol_point(place, symbol))
    out.points.extend(_coverage_points(place, symbol, scan))
    out.points.extend(_related(place, files))
    span = f":{symbol.line}-{place.line}" if symbol and place.line else f":{place.line}" if place.line else ""
    out.sources.append(f"{place.relative}{span}")
    out.sources.extend(f"{u.relative}:{u.line}" for u in [*scan.tests[:3], *scan.callers[:3]])
    out.sources.append(f"file listing honoring .gitignore: {len(files)} file(s), {scan.scanned} source file(s) read")
    if scan.candidates > MAX_FILES_SCANNED:
        out.gaps.append(f"read the first {MAX_FILES_SCANNED:,} of {scan.candidates:,} source files (nearby first)")
    if scan.too_large:
        out.gaps.append(f"{scan.too_large} file(s) over 2 MB, binary or unreadable were skipped")
    if scan.escaped:
        out.gaps.append(f"{scan.escaped} file(s) resolving outside the project root were skipped")
    out.gaps.append("text search misses calls through aliases, strings or dynamic dispatch")
    note = f"running the tests with coverage on {place.relative} would settle what is exercised"
    return ResearchAnswer(tuple(out.sources), tuple(out.points), "medium" if symbol else "low", note, tuple(out.gaps))


EXECUTORS: dict[str, ResearchExecutor] = {"git-history": git_history, "repo-research": repo_research}


# --------------------------------------------------------------------------
# rendering

MAX_SOURCES = 8
MAX_GAPS = 6
_LINE_LIMIT = 240


def _clean(text: str) -> str:
    text = mask_text(re.sub(r"[\r\n\t]+", " ", text))
    return text if len(text) <= _LINE_LIMIT else text[: _LINE_LIMIT - 1] + "…"


def _bullets(items: Sequence[str], cap: int, empty: str) -> list[str]:
    if not items:
        return [f"- {empty}"]
    if len(items) > cap:
        return [f"- {_clean(i)}" for i in items[: cap - 1]] + [f"- … {len(items) - cap + 1} more"]
    return [f"- {_clean(i)}" for i in items]


def _numbered(points: Sequence[Point], budget: int) -> list[str]:
    lines: list[str] = []
    for number, point in enumerate(points, 1):
        lines.append(f"{number}. {_clean(point.text)}")
        lines.extend(f"   - {_clean(d)}" for d in point.details)
    if not lines:
        return ["1. Nothing found."]
    if len(lines) > budget:
        cut = len(lines) - budget + 1
        lines = [*lines[: budget - 1], f"   - … {cut} more line(s) cut to keep the answer short."]
    return lines


def render_answer(trigger: Trigger, agent: str, answer: ResearchAnswer, *, stand_in_for: str | None = None) -> str:
    """The research-contract file: a short header, then Sources, Findings, Confidence, Gaps (under 60 lines)."""
    how = f"{agent} standing in for {stand_in_for} ({OFFLINE_NOTE})" if stand_in_for else "answered from the repository"
    header = [
        f"# Research: {agent}",
        "",
        f"Question: {_clean(trigger.question)}",
        f'Finding: {_clean(trigger.finding_id)} ({trigger.severity}), matched "{trigger.matched}"; {how}.',
        "",
    ]
    sources = _bullets(answer.sources, MAX_SOURCES, "none: nothing could be read")
    gaps = _bullets(answer.gaps, MAX_GAPS, "none known")
    confidence = f"{answer.confidence} - {_clean(answer.confidence_note)}"
    fixed = len(header) + len(sources) + len(gaps) + 8  # four headings, three blank lines, the confidence line
    findings = _numbered(answer.points, MAX_LINES - fixed)
    lines = [
        *header,
        "### Sources", *sources, "",
        "### Findings", *findings, "",
        "### Confidence", confidence, "",
        "### Gaps", *gaps,
    ]  # fmt: skip
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------
# running


def _skip_note(agent: str, offline: bool) -> str:
    if agent in NEEDS_STORE:
        return STORE_NOTE
    return OFFLINE_NOTE if offline else RUNTIME_NOTE


def _output_path(output_dir: Path, agent: str) -> tuple[str, Path]:
    relative = f"{RESEARCH_DIR}/{agent}.md"
    return relative, Path(output_dir) / RESEARCH_DIR / f"{agent}.md"


def _discard(output_dir: Path, agent: str) -> None:
    """No stale answer from an earlier run may stand in for this one."""
    if re.fullmatch(NAME_PATTERN, agent):
        with contextlib.suppress(OSError):
            _output_path(output_dir, agent)[1].unlink(missing_ok=True)


def _in_worker(
    executor: ResearchExecutor, request: ResearchRequest, *, name: str
) -> concurrent.futures.Future[ResearchAnswer]:
    """Start ``executor(request)`` in a daemon worker thread and return its future.

    A daemon thread, not a ThreadPoolExecutor: an executor still running after
    its timeout must not keep the process alive at exit (built-in executors
    stop themselves at the deadline; a plugged-in one might not).
    """
    future: concurrent.futures.Future[ResearchAnswer] = concurrent.futures.Future()

    def work() -> None:
        if not future.set_running_or_notify_cancel():
            return
        try:
            future.set_result(executor(request))
        except BaseException as exc:  # handed to the waiting caller
            future.set_exception(exc)

    threading.Thread(target=work, name=name, daemon=True).start()
    return future


def _run_one(
    agent: str,
    trigger: Trigger,
    executor: ResearchExecutor,
    *,
    root: Path,
    output_dir: Path,
    timeout_s: float,
    stand_in_for: str | None = None,
) -> ResearchOutcome:
    start = time.monotonic()

    def outcome(status: ResearchStatus, note: str, output: str | None = None) -> ResearchOutcome:
        if status != "completed":
            _discard(output_dir, agent)
        seconds = round(time.monotonic() - start, 3)
        return ResearchOutcome(agent, trigger.question, output, status, note, seconds, trigger.finding_id)

    if not re.fullmatch(NAME_PATTERN, agent):
        return outcome("error", f"invalid research agent name {agent!r}")
    request = ResearchRequest(trigger, root, start + timeout_s, stand_in_for)
    try:
        answer = _in_worker(executor, request, name=f"fluxdrive-research-{agent}").result(timeout=timeout_s)
    except (TimeoutError, ResearchTimeout):
        return outcome("timeout", f"no answer within {timeout_s:g} s; nothing written")
    except Exception as exc:  # a crashed researcher is recorded as an error, never raised
        return outcome("error", _one_line(mask_text(f"{type(exc).__name__}: {exc}"), 200))
    if stand_in_for is not None:
        gap = f"the {stand_in_for} question needs the web or a model; this answer comes from the repository only"
        answer = dataclasses.replace(answer, gaps=(gap, *answer.gaps))
    relative, path = _output_path(output_dir, agent)
    try:
        atomic_write_text(path, render_answer(trigger, agent, answer, stand_in_for=stand_in_for))
    except OSError as exc:
        return outcome("error", f"could not write {relative}: {exc.strerror or exc}")
    note = f"stood in for {stand_in_for} ({OFFLINE_NOTE})" if stand_in_for else "answered offline from the repository"
    return outcome("completed", note, relative)


def run_research(
    triggers: Sequence[Trigger],
    *,
    root: Path,
    output_dir: Path,
    timeout_s: float = RESEARCH_TIMEOUT_S,
    offline: bool = True,
    executors: Mapping[str, ResearchExecutor] | None = None,
) -> list[ResearchOutcome]:
    """Run each trigger's research agent in turn, each bounded by ``timeout_s``; never raises for one agent.

    ``executors`` maps agent names to functions (default :data:`EXECUTORS`, the
    offline ones); an agent without one is skipped with the reason. Offline, a
    skipped ``framework-docs`` or ``best-practices`` question is answered by
    ``repo-research`` instead when no trigger uses repo-research. Outcomes
    follow the triggers' order, a stand-in right after the agent it replaces.
    """
    table = EXECUTORS if executors is None else executors
    root = Path(root).resolve()
    reserved = {t.research_agent for t in triggers}
    answered: dict[str, str] = {}
    outcomes: list[ResearchOutcome] = []

    def run(agent: str, trigger: Trigger, executor: ResearchExecutor, stand_in_for: str | None = None) -> None:
        where = {"root": root, "output_dir": Path(output_dir)}
        outcomes.append(_run_one(agent, trigger, executor, timeout_s=timeout_s, stand_in_for=stand_in_for, **where))

    for trigger in triggers:
        agent = trigger.research_agent
        if agent in answered:
            note = f"already answered for {answered[agent]}"
            outcomes.append(ResearchOutcome(agent, trigger.question, None, "skipped", note, 0.0, trigger.finding_id))
            continue
        answered[agent] = trigger.finding_id
        executor = table.get(agent)
        if executor is not None:
            run(agent, trigger, executor)
            continue
        _discard(Path(output_dir), agent)
        note = _skip_note(agent, offline)
        outcomes.append(ResearchOutcome(agent, trigger.question, None, "skipped", note, 0.0, trigger.finding_id))
        stand_in = table.get(FALLBACK_AGENT)
        free = FALLBACK_AGENT not in reserved and FALLBACK_AGENT not in answered
        if offline and agent in STAND_IN_FOR and stand_in is not None and free:
            answered[FALLBACK_AGENT] = trigger.finding_id
            run(FALLBACK_AGENT, trigger, stand_in, stand_in_for=agent)
    return outcomes
