"""The SZZ half of ``eval mine``: which commits fix bugs, and which earlier commits wrote the lines they fixed.

SZZ (Śliwerski, Zimmermann, Zeller 2005): for a bug-fixing commit, the lines
it deleted or modified in its parent are the suspect lines; ``git blame`` at
the parent names the commit that last wrote each of them - the change that
introduced the bug. Blame runs with ``-w`` and blank or comment-only lines are
dropped first, so a re-indent or a reworded comment is never taken for the
bug (the usual SZZ refinements). Pure additions in a fix name no line to
blame and are not counted.

The repository is untrusted input: every git command goes through
:func:`fluxdrive.core.git.command` (hooks, fsmonitor, textconv, filter and
diff drivers off), paths come only from git's ``-z`` output and are used as
literal pathspecs, and a path that could leave a fixture directory is refused
(:func:`~fluxdrive.eval.fixture.safe_relative`).
"""

from __future__ import annotations

import os
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from fluxdrive.core import git
from fluxdrive.errors import InputError
from fluxdrive.eval.fixture import safe_relative

# What makes a commit a bug fix (case-insensitive, whole words): one of FIX_WORDS in its subject line, or a link
# to the issue it fixes ("Fixes #12") or git's revert line in its body. Only the subject is searched for words:
# a long body mentions "fix" or "security" in passing far more often than it describes a fix. Deterministic by
# design: no model, no issue-tracker lookups. A revert's deleted lines are the reverted commit's, which blame names.
FIX_LINK = re.compile(
    r"\b(fix(?:e[sd])?|resolve[sd]?)\s*:?\s+(?:[\w.-]+/[\w.-]+)?#\d+|\bthis reverts commit [0-9a-f]{7,40}", re.I
)
FIX_WORDS = re.compile(
    r"\b(fix(?:e[sd]|ing)?|bug(?:s|fix(?:es)?)?|hotfix|crash(?:es|ed|ing)?|regression|cve-\d{4}-\d+|security"
    r"|vulnerab\w*|revert(?:s|ed)?)\b",
    re.IGNORECASE,
)
# Severity of the lines a fix changed, from its subject line: P0 when it speaks of security, a crash or lost data;
# P2 when it calls itself minor; P1 (serious) otherwise.
P0_WORDS = re.compile(
    r"\b(security|cve-\d{4}-\d+|vulnerab\w*|exploit\w*|injection|xss|csrf|ssrf|traversal|crash(?:es|ed|ing)?"
    r"|segfault|data[ -]loss|corrupt\w*)\b",
    re.IGNORECASE,
)
P2_WORDS = re.compile(r"\b(typo|cosmetic|minor|nit|lint|warning)s?\b", re.IGNORECASE)
SECURITY_WORDS = re.compile(r"\b(security|cve-\d{4}-\d+|vulnerab\w*|exploit\w*|injection|xss|csrf|ssrf)\b", re.I)

# Files that are code (the rest - docs, changelogs, data - never make a fix or a fixture), and which code is tests.
CODE_SUFFIXES = frozenset(
    {".py", ".pyi", ".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".go", ".rs", ".java", ".kt", ".scala", ".c", ".h",
     ".cc", ".cpp", ".hpp", ".cs", ".rb", ".php", ".swift", ".sh", ".lua", ".pl", ".ex", ".exs", ".erl", ".hs", ".ml",
     ".sql"}
)  # fmt: skip
_TEST_DIRS = frozenset({"test", "tests", "testing", "__tests__", "spec", "specs"})
_TEST_NAME = re.compile(r"(^test_.*|^tests?\.\w+$|.*_test\.\w+$|.*\.(test|spec)\.\w+$|^conftest\.py$)")
_COMMENT = re.compile(r"^\s*(#|//|/\*|\*|--|$)")
_HUNK = re.compile(rb"^@@ -(\d+)(?:,(\d+))? \+\d+(?:,\d+)? @@")
_SHA = re.compile(r"^[0-9a-f]{40}$")
# Paths from the repository are taken literally (a file named ``*.py`` is one file), output is not localized.
_ENV = {**os.environ, "GIT_LITERAL_PATHSPECS": "1", "LC_ALL": "C"}


@dataclass(frozen=True, slots=True)
class Commit:
    """One commit as ``git log`` shows it."""

    sha: str
    parents: tuple[str, ...]
    subject: str
    body: str

    @property
    def message(self) -> str:
        return f"{self.subject}\n\n{self.body}".strip()

    @property
    def short(self) -> str:
        return self.sha[:10]


@dataclass(slots=True)
class Blamed:
    """What SZZ says about one fix: introducing commit -> path in it -> its new-side line numbers."""

    lines: dict[str, dict[str, set[int]]] = field(default_factory=dict)
    skipped: str | None = None  # why this fix names no introducing change

    def add(self, sha: str, path: str, line: int) -> None:
        self.lines.setdefault(sha, {}).setdefault(path, set()).add(line)


def is_fix(commit: Commit) -> bool:
    """Whether the commit says it fixes a bug (:data:`FIX_WORDS` in the subject, :data:`FIX_LINK` anywhere)."""
    return bool(FIX_WORDS.search(commit.subject) or FIX_LINK.search(commit.message))


def severity(subject: str) -> str:
    """P0, P1 or P2 for the lines a fix with this subject changed (:data:`P0_WORDS`, :data:`P2_WORDS`)."""
    if P0_WORDS.search(subject):
        return "P0"
    return "P2" if P2_WORDS.search(subject) else "P1"


def is_code(path: str) -> bool:
    return PurePosixPath(path).suffix.lower() in CODE_SUFFIXES


def is_test(path: str) -> bool:
    parts = PurePosixPath(path).parts
    return any(p.lower() in _TEST_DIRS for p in parts[:-1]) or bool(_TEST_NAME.match(parts[-1].lower()))


class Repository:
    """Read-only git questions about one (untrusted) repository, each a bounded subprocess."""

    def __init__(self, root: Path) -> None:
        readable = git.is_repository(root) or git.is_bare_repository(root)
        prefix = git.command(root) if readable else None
        if prefix is None:
            raise InputError(f"{root} is not a git repository git can read", hint="pass --repo PATH of a clone")
        self.root = root
        self._prefix = prefix  # git with the repository's programs defused, computed once

    def run(self, *args: str) -> bytes | None:
        """Stdout of ``git ARGS``, or None when git fails or times out (the caller counts it as skipped)."""
        try:
            proc = subprocess.run(
                [*self._prefix, *args],
                cwd=self.root,
                env=_ENV,
                capture_output=True,
                timeout=git.TIMEOUT_S,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired):
            return None
        return proc.stdout if proc.returncode == 0 else None

    def log(self, since: str | None) -> list[Commit]:
        """Every commit reachable from HEAD, newest first (merges included: the caller skips them)."""
        args = ["log", "--no-color", "--encoding=UTF-8", "--format=%H%x1f%P%x1f%s%x1f%b%x1e"]
        if since:
            args.append(f"--since={since}")
        out = self.run(*args)
        if out is None:
            raise InputError(f"{self.root}: git log failed", hint="is HEAD a commit? (an empty repository has none)")
        commits = []
        for record in out.decode("utf-8", "replace").split("\x1e"):
            fields = record.strip("\n").split("\x1f")
            if len(fields) == 4 and _SHA.match(fields[0]):
                commits.append(Commit(fields[0], tuple(fields[1].split()), fields[2].strip(), fields[3].strip()))
        return commits

    def log_one(self, sha: str) -> Commit | None:
        """One commit by id (an introducing commit older than ``--since``)."""
        out = self.run("log", "-1", "--no-color", "--encoding=UTF-8", "--format=%H%x1f%P%x1f%s%x1f%b", sha, "--")
        fields = out.decode("utf-8", "replace").strip("\n").split("\x1f") if out else []
        if len(fields) != 4 or not _SHA.match(fields[0]):
            return None
        return Commit(fields[0], tuple(fields[1].split()), fields[2].strip(), fields[3].strip())

    def patch(self, parent: str, sha: str, paths: list[str]) -> bytes | None:
        """``sha``'s diff against ``parent`` for ``paths``, in the a/ b/ form ``git apply`` reads whatever the
        repository's diff settings say."""
        return self.run(
            "diff", "--no-color", "--no-ext-diff", "--no-textconv", "--no-renames", "--no-relative",
            "--src-prefix=a/", "--dst-prefix=b/", parent, sha, "--", *paths,
        )  # fmt: skip

    def changed(self, parent: str, sha: str) -> list[tuple[str, bool]]:
        """(path, is text) of every file ``sha`` changed against ``parent``, renames as delete + add."""
        out = self.run("diff-tree", "-r", "-z", "--no-renames", "--numstat", parent, sha)
        if out is None:
            return []
        fields = out.decode("utf-8", "replace").split("\0")
        files = []
        for entry in fields:
            parts = entry.split("\t", 2)
            if len(parts) == 3:
                files.append((parts[2], parts[0] != "-"))
        return files

    def hunks(self, parent: str, sha: str, path: str) -> tuple[list[int], int]:
        """(old-side line numbers ``sha`` deleted or modified in ``path``, ignoring whitespace, blank and comment
        lines; how many lines changed at all beyond whitespace)."""
        out = self.run(
            "diff", "-U0", "-w", "--ignore-blank-lines", "--no-color", "--no-ext-diff", "--no-textconv",
            "--no-renames", parent, sha, "--", path,
        )  # fmt: skip
        if out is None:
            return [], 0
        deleted: list[int] = []
        changed = 0
        old = 0
        for raw in out.split(b"\n"):
            hunk = _HUNK.match(raw)
            if hunk:
                old = int(hunk.group(1))
            elif raw.startswith((b"---", b"+++")) and old == 0:
                continue
            elif raw.startswith(b"-"):
                changed += 1
                if not _COMMENT.match(raw[1:].decode("utf-8", "replace")):
                    deleted.append(old)
                old += 1
            elif raw.startswith(b"+"):
                changed += 1
        return deleted, changed

    def blob(self, revision: str, path: str, limit: int) -> tuple[bytes | None, str | None]:
        """(the bytes of regular file ``path`` at ``revision`` or None when it is absent there; why it cannot be
        used: a link, a submodule, too big)."""
        out = self.run("ls-tree", "-z", "-l", revision, "--", path)
        if not out:
            return None, None
        meta, _, name = out.split(b"\0")[0].partition(b"\t")
        fields = meta.split()
        if name.decode("utf-8", "replace") != path or len(fields) != 4:
            return None, None
        mode, kind, oid, size = fields
        if kind != b"blob" or mode not in (b"100644", b"100755"):
            return None, "a symbolic link or submodule"
        if int(size) > limit:
            return None, f"a file over {limit // 1024} KiB"
        data = self.run("cat-file", "blob", oid.decode("ascii"))
        return (data, None) if data is not None else (None, "git cat-file failed")

    def blame(self, parent: str, path: str, lines: list[int], into: Blamed, *, roots: bool = False) -> None:
        """Add to ``into`` the commit (and its path and line) that last wrote each of ``lines`` of ``path`` at
        ``parent``; lines from a root or boundary commit name no introducing change, unless ``roots``: then a
        line the first commit wrote names that commit (an import that has nothing else to point at)."""
        ranges = [arg for start, end in _runs(lines) for arg in ("-L", f"{start},{end}")]
        out = self.run(
            "-c",
            "blame.ignoreRevsFile=",
            "blame",
            "--line-porcelain",
            "--no-textconv",
            "-w",
            *(["--root"] if roots else []),
            *ranges,
            parent,
            "--",
            path,
        )
        if out is None:
            return
        sha, orig, name, boundary = "", 0, "", False
        for raw in out.decode("utf-8", "replace").split("\n"):
            if raw.startswith("\t"):
                if sha and not boundary and safe_relative(name):
                    into.add(sha, name, orig)
                sha, boundary = "", False
                continue
            head, _, rest = raw.partition(" ")
            if not sha and _SHA.match(head):
                sha, orig = head, int(rest.split()[0])
            elif head == "filename":
                name = rest
            elif head == "boundary":
                boundary = True


def _runs(lines: list[int]) -> list[tuple[int, int]]:
    """Sorted line numbers as (first, last) runs of consecutive lines."""
    runs: list[tuple[int, int]] = []
    for line in sorted(set(lines)):
        if runs and line == runs[-1][1] + 1:
            runs[-1] = (runs[-1][0], line)
        else:
            runs.append((line, line))
    return runs


def line_runs(lines: set[int]) -> list[tuple[int, int]]:
    """Public alias of the run grouping, for ground-truth ranges."""
    return _runs(list(lines))


def code_files(repo: Repository, parent: str, sha: str, max_files: int) -> tuple[list[str], str | None]:
    """(the non-test code files ``sha`` changed, or why the commit is no candidate: docs-only, test-only, ...)."""
    files = repo.changed(parent, sha)
    if not files:
        return [], "no file changed"
    code = [p for p, text in files if text and is_code(p)]
    if not code:
        return [], "docs-only (no code file changed)"
    source = [p for p in code if not is_test(p)]
    if not source:
        return [], "test-only"
    if not all(safe_relative(p) for p in source):
        return [], "a path that could leave the fixture directory"
    if len(source) > max_files:
        return [], f"more than {max_files} code files (--max-files)"
    return sorted(source), None


def szz(repo: Repository, fix: Commit, max_files: int) -> Blamed:
    """The introducing commits of ``fix``: blame, at its parent, every code line it deleted or modified."""
    found = Blamed()
    if len(fix.parents) != 1:
        found.skipped = "merge commit" if fix.parents else "root commit (no parent to blame)"
        return found
    parent = fix.parents[0]
    files, why = code_files(repo, parent, fix.sha, max_files)
    if why:
        found.skipped = why
        return found
    changed_any = False
    for path in files:
        deleted, changed = repo.hunks(parent, fix.sha, path)
        changed_any = changed_any or changed > 0
        if deleted:
            repo.blame(parent, path, deleted, found)
    if not found.lines:
        found.skipped = (
            "only code lines added (nothing to blame)" if changed_any else "formatting-only (whitespace/blank lines)"
        )
    return found
