"""The ``git-history`` executor: how the flagged code came to be, from read-only git commands.

The file's timeline, churn, fix and revert commits, main authors, and blame
around the flagged line. Every git call is bounded by the request's deadline
and ignores the caller's ``GIT_DIR``-style variables.
"""

from __future__ import annotations

import os
import re
import subprocess
import time
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Literal

from fluxdrive.core.git import command as _git_command
from fluxdrive.launch.research.model import Notes, Point, ResearchAnswer, ResearchRequest, ResearchTimeout
from fluxdrive.launch.research.places import Place, quote_code, read_text, trigger_places
from fluxdrive.launch.research.triggers import one_line

LOG_SCAN = 200  # commits read per file; enough for churn, fixes and authors
RECENT_COMMITS = 10
BLAME_CONTEXT = 5
CHURN_DAYS = 90

_FIX_SUBJECT = re.compile(
    r"(?<![\w])(?:fix(?:e[sd]|ing|up)?|bug(?:s|fix(?:es)?)?|revert(?:s|ed|ing)?|hotfix(?:es)?)(?![\w])", re.IGNORECASE
)
_SHA_LINE = re.compile(r"^([0-9a-f]{40}|[0-9a-f]{64}) (\d+) (\d+)(?: \d+)?$")  # SHA-1 or SHA-256
_GIT_ENV_DROP = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY", "GIT_COMMON_DIR")


def _git(request: ResearchRequest, *args: str) -> subprocess.CompletedProcess[str] | None:
    """One read-only git command in the root, bounded by the request's deadline; None if git cannot run."""
    argv = _git_command(request.root, "-c", "core.quotePath=false", "--no-pager", *args)
    if argv is None:
        return None
    request.check()
    env = {k: v for k, v in os.environ.items() if k not in _GIT_ENV_DROP}
    env.update(GIT_OPTIONAL_LOCKS="0", GIT_TERMINAL_PROMPT="0", GIT_CEILING_DIRECTORIES=str(request.root.parent))
    try:
        return subprocess.run(
            argv,
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


@dataclass(frozen=True, slots=True)
class _Blame:
    points: tuple[Point, ...]
    flagged: str | None  # the full hash of the commit that last changed the flagged line


def _blame(request: ResearchRequest, place: Place, out: Notes) -> _Blame | None:
    """Who last touched the lines around the flagged one; None when blame could not run."""
    if place.line is None:
        out.gaps.append(f"{place.relative}: the location has no line number, so no blame")
        return None
    text = read_text(place.path)
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
    quote = (quote_code(lines[place.line - 1]),)
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
    return one_line(proc.stderr or f"exit {proc.returncode}", 120)


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


def _timeline(request: ResearchRequest, place: Place, out: Notes) -> list[_Commit] | None:
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


def _history_points(place: Place, commits: Sequence[_Commit], fixes: Sequence[_Commit]) -> list[Point]:
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


def _is_repository(request: ResearchRequest, out: Notes) -> bool:
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
    out = Notes()
    places, gaps = trigger_places(request, limit=2)
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
