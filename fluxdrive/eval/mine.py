"""``eval mine``: a team's own history as eval fixtures - past bugs as positives, never-fixed changes as negatives.

Each bug-fixing commit (:func:`fluxdrive.eval.mine_szz.is_fix`) is traced back
by SZZ (:mod:`fluxdrive.eval.mine_szz`) to the commits that wrote the lines
it changed. Every such introducing commit becomes one diff fixture, as a
reviewer would have seen it at review time:

- ``base/``: the files the fixes later touched, as they were at the
  introducing commit's parent (only those files: the fixture stays small);
- ``change.patch``: the introducing commit's diff of those files;
- ``ground-truth.json``: one finding per run of consecutive lines a later fix
  changed, at the introducing commit's new-side line numbers (where a review
  of the patch would report them); severity from the fix's subject (P0 for
  security, crashes, lost or corrupted data; P2 for a typo or a minor fix;
  P1 otherwise), category ``security`` or ``bug`` (a broad category: any
  finding on those lines counts); ``source`` names the repository, the
  introducing commit, the fixes and their messages.

Clean changes (negatives): commits that are no fix and whose lines no later
fix ever blamed, sampled in a fixed pseudo-random order (SHA-256 of the
commit id), as many as positives unless asked otherwise. Their ground truth
is empty, so every finding on them is a false alarm per clean change.

Fixture ids are ``mine-<introducing>`` and ``clean-<commit>`` (10-digit short
hashes). A fixture directory is built under a hidden temporary name and
renamed into place, so a reader never sees half a fixture; an existing one is
never overwritten (it is counted as skipped).
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from fluxdrive.errors import UsageError
from fluxdrive.eval.importers.base import write_fixture
from fluxdrive.eval.mine_szz import (
    SECURITY_WORDS,
    Blamed,
    Commit,
    Repository,
    code_files,
    is_fix,
    line_runs,
    severity,
    szz,
)

MAX_FILE_BYTES = 512 * 1024
MAX_PATCH_BYTES = 256 * 1024
MAX_CHECKS_PER_CLEAN = 25  # uncached SZZ runs one negative candidate may cost before it is skipped
_LEVEL = {"P0": 0, "P1": 1, "P2": 2, "P3": 3}


@dataclass(frozen=True, slots=True)
class MineOptions:
    """What ``eval mine`` was asked for."""

    since: str | None = None
    limit: int | None = None  # newest fix commits examined
    negatives: int | None = None  # clean changes written (default: as many as positives)
    max_files: int = 5  # a fix or change touching more code files is skipped


@dataclass(slots=True)
class MineSummary:
    """The figures ``eval mine`` prints."""

    commits: int = 0
    fixes_found: int = 0
    fixes_examined: int = 0
    introducing: int = 0
    positives: int = 0
    negatives: int = 0
    skipped: Counter[str] = field(default_factory=Counter)


@dataclass(slots=True)
class _Introduced:
    """Lines of one introducing commit that later fixes changed: path -> line -> the fixes."""

    lines: dict[str, dict[int, list[Commit]]] = field(default_factory=dict)

    def add(self, fix: Commit, path: str, numbers: set[int]) -> None:
        for number in numbers:
            self.lines.setdefault(path, {}).setdefault(number, []).append(fix)


class _Miner:
    """One mining run: the repository, where fixtures go, the SZZ results shared by positives and negatives."""

    def __init__(self, root: Path, out: Path, options: MineOptions) -> None:
        self.repo = Repository(root)
        self.out = out
        self.options = options
        self.summary = MineSummary()
        self.ready = 0  # positive fixtures in OUT after this run (written now or kept from before)
        self.origin = str(root.resolve())  # the ``repo`` of every fixture's source
        self.szz_cache: dict[str, Blamed] = {}
        self.files: dict[str, set[str]] = {}

    def blamed(self, fix: Commit) -> Blamed:
        if fix.sha not in self.szz_cache:
            self.szz_cache[fix.sha] = szz(self.repo, fix, self.options.max_files)
        return self.szz_cache[fix.sha]

    def commit(self, sha: str, known: dict[str, Commit]) -> Commit | None:
        if sha in known:
            return known[sha]
        found = self.repo.log_one(sha)
        if found is not None:
            known[sha] = found
        return found

    def change(self, commit: Commit, paths: list[str]) -> tuple[dict[str, bytes], bytes] | str:
        """(base files, patch) of ``commit`` restricted to ``paths``, or why it cannot be a fixture."""
        if len(commit.parents) != 1:
            return "a merge commit" if commit.parents else "a root commit (no parent for base/)"
        if len(paths) > self.options.max_files:
            return f"more than {self.options.max_files} files (--max-files)"
        parent = commit.parents[0]
        base = {}
        for path in paths:
            data, why = self.repo.blob(parent, path, MAX_FILE_BYTES)
            if why:
                return why
            if data is not None:
                base[path] = data
        patch = self.repo.patch(parent, commit.sha, paths)
        if not patch:
            return "git diff failed or was empty"
        if len(patch) > MAX_PATCH_BYTES:
            return f"a patch over {MAX_PATCH_BYTES // 1024} KiB"
        try:
            patch.decode("utf-8")
        except UnicodeDecodeError:
            return "a patch that is not UTF-8"
        return base, patch

    def write(self, fixture_id: str, base: dict[str, bytes], patch: bytes, truth: dict[str, object]) -> bool:
        """Write the fixture whole (:func:`~fluxdrive.eval.importers.base.write_fixture`); False when it already
        exists (a rerun into the same OUT keeps what is there and still counts it towards the clean sample)."""
        if write_fixture(self.out, fixture_id, base, patch.decode("utf-8"), truth):
            return True
        self.summary.skipped["already in OUT (never overwritten)"] += 1
        return False


def _truth(
    fixture_id: str, findings: list[dict[str, str]], source: Mapping[str, object], notes: str
) -> dict[str, object]:
    return {
        "fixture_id": fixture_id,
        "agent_type": "any",
        "findings": findings,
        "annotator": "fluxdrive eval mine (SZZ over git history)",
        "notes": notes,
        "source": source,
    }


def _findings(introduced: _Introduced) -> list[dict[str, str]]:
    """One finding per run of consecutive fixed lines in each file, with the most serious of its fixes."""
    findings = []
    for path in sorted(introduced.lines):
        by_line = introduced.lines[path]
        for start, end in line_runs(set(by_line)):
            fixes = {fix.sha: fix for n in range(start, end + 1) for fix in by_line.get(n, [])}
            ordered = sorted(fixes.values(), key=lambda f: f.sha)
            worst = min((severity(f.subject) for f in ordered), key=_LEVEL.__getitem__)
            named = "; ".join(f"{f.short} {f.subject[:160]!r}" for f in ordered)
            findings.append(
                {
                    "severity": worst,
                    "location": f"{path}:{start}" if start == end else f"{path}:{start}-{end}",
                    "description": f"Lines a later fix changed: {named}",
                    "category": "security" if any(SECURITY_WORDS.search(f.subject) for f in ordered) else "bug",
                }
            )
    return findings


def _fixes_of(introduced: _Introduced) -> list[Commit]:
    unique = {f.sha: f for lines in introduced.lines.values() for fixes in lines.values() for f in fixes}
    return sorted(unique.values(), key=lambda f: f.sha)


def _positives(miner: _Miner, fixes: list[Commit], known: dict[str, Commit]) -> None:
    introduced: dict[str, _Introduced] = {}
    for fix in fixes:
        blamed = miner.blamed(fix)
        if blamed.skipped:
            miner.summary.skipped[f"fix: {blamed.skipped}"] += 1
            continue
        for sha in sorted(blamed.lines):
            for path, numbers in blamed.lines[sha].items():
                introduced.setdefault(sha, _Introduced()).add(fix, path, numbers)
    miner.summary.introducing = len(introduced)
    for sha in sorted(introduced):
        commit = miner.commit(sha, known)
        if commit is None:
            miner.summary.skipped["introducing: git log failed"] += 1
            continue
        made = miner.change(commit, sorted(introduced[sha].lines))
        if isinstance(made, str):
            miner.summary.skipped[f"introducing: {made}"] += 1
            continue
        fixes_of = _fixes_of(introduced[sha])
        source = {
            "repo": miner.origin,
            "method": "szz",
            "introducing_commit": commit.sha,
            "introducing_message": commit.message[:2000],
            "fix_commit": fixes_of[0].sha,
            "fix_message": fixes_of[0].message[:2000],
            "fixes": [{"commit": f.sha, "message": f.message[:2000]} for f in fixes_of],
        }
        fixture_id = f"mine-{commit.short}"
        notes = f"Introduced by {commit.short}; the lines below were changed later by {len(fixes_of)} fix commit(s)."
        miner.ready += 1
        if miner.write(fixture_id, *made, _truth(fixture_id, _findings(introduced[sha]), source, notes)):
            miner.summary.positives += 1


def _sample_order(commit: Commit) -> str:
    return hashlib.sha256(commit.sha.encode("ascii")).hexdigest()


def _clean(miner: _Miner, commit: Commit, later_fixes: list[Commit], files: list[str]) -> str | None:
    """Why ``commit`` is not a clean change (a later fix blamed it, or checking would cost too much), or None."""
    wanted = set(files)
    uncached = 0
    for fix in later_fixes:
        if fix.sha not in miner.files:
            parent = fix.parents[0] if len(fix.parents) == 1 else None
            miner.files[fix.sha] = {p for p, _ in miner.repo.changed(parent, fix.sha)} if parent else set()
        if not miner.files[fix.sha] & wanted:
            continue
        if fix.sha not in miner.szz_cache:
            uncached += 1
            if uncached > MAX_CHECKS_PER_CLEAN:
                return "too many later fixes to check"
        if commit.sha in miner.blamed(fix).lines:
            return "a later fix changed its lines"
    return None


def _negatives(miner: _Miner, commits: list[Commit], fixes: list[Commit], wanted: int) -> None:
    position = {c.sha: i for i, c in enumerate(commits)}
    candidates = [c for c in commits if len(c.parents) == 1 and not is_fix(c)]
    ready = 0
    for commit in sorted(candidates, key=_sample_order):
        if ready >= wanted:
            return
        files, why = code_files(miner.repo, commit.parents[0], commit.sha, miner.options.max_files)
        if why:
            miner.summary.skipped[f"clean: {why}"] += 1
            continue
        later = [f for f in fixes if position[f.sha] < position[commit.sha]]
        why = _clean(miner, commit, later, files)
        made = miner.change(commit, files) if why is None else why
        if isinstance(made, str):
            miner.summary.skipped[f"clean: {made}"] += 1
            continue
        fixture_id = f"clean-{commit.short}"
        source = {"repo": miner.origin, "method": "clean", "commit": commit.sha, "message": commit.message[:2000]}
        notes = "A change no later fix commit touched: every finding on it is a false alarm."
        ready += 1
        if miner.write(fixture_id, *made, _truth(fixture_id, [], source, notes)):
            miner.summary.negatives += 1


def mine(root: Path, out: Path, options: MineOptions) -> MineSummary:
    """Write positive and clean-change fixtures from the history of the repository at ``root`` into ``out``."""
    if out.exists() and not out.is_dir():
        raise UsageError(f"{out}: not a directory", hint="name a directory for the fixtures (created if missing)")
    miner = _Miner(root, out, options)
    commits = miner.repo.log(options.since)
    known = {c.sha: c for c in commits}
    matching = [c for c in commits if is_fix(c)]
    fixes = [c for c in matching if len(c.parents) == 1]
    miner.summary.commits = len(commits)
    miner.summary.fixes_found = len(fixes)
    if len(matching) > len(fixes):
        miner.summary.skipped["fix: merge or root commit"] += len(matching) - len(fixes)
    examined = fixes[: options.limit] if options.limit is not None else fixes
    miner.summary.fixes_examined = len(examined)
    out.mkdir(parents=True, exist_ok=True)
    _positives(miner, examined, known)
    wanted = options.negatives if options.negatives is not None else miner.ready
    _negatives(miner, commits, fixes, wanted)
    return miner.summary


def render_summary(summary: MineSummary, out: Path) -> str:
    """The lines ``eval mine`` prints."""
    lines = [
        f"commits examined: {summary.commits}",
        f"fix commits found: {summary.fixes_found} (examined: {summary.fixes_examined})",
        f"introducing changes located: {summary.introducing}",
        f"fixtures written to {out}: {summary.positives} positive, {summary.negatives} clean",
    ]
    if summary.skipped:
        lines.append("skipped:")
        lines += [f"  {why}: {n}" for why, n in sorted(summary.skipped.items())]
    return "\n".join(lines)
