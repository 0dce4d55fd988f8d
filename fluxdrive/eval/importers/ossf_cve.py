"""OpenSSF CVE Benchmark (github.com/ossf-cve-benchmark/ossf-cve-benchmark, MIT): real JavaScript and
TypeScript CVEs, each with its vulnerable lines marked.

SOURCE is the benchmark's checkout (or its ``CVEs/`` directory): one ``CVE-*.json`` per vulnerability with
``repository`` (a github.com URL), ``prePatch.commit`` and ``prePatch.weaknesses[]`` (``location.file``,
``location.line``, ``explanation``), ``postPatch.commit`` and ``CWEs``. The upstream repositories are found as
for every importer: ``owner+name/`` (or ``owner+name/repo/``) under ``--repos``, default SOURCE/repos.

The benchmark marks where the vulnerable code is just before the fix, not which change a reviewer saw, so
each weakness is traced to the change that wrote it, the way ``eval mine`` traces a bug (SZZ): ``git blame``
of the weakness line at ``prePatch`` names the commit that last wrote it and the line's number there (the
first commit too: a vulnerability present since a project's first commit was written by that commit). One
fixture per such introducing commit, as a review would have seen it:

- ``base/``: the weakness files at the commit's parent (none when the commit created them);
- ``change.patch``: the commit's diff of those files;
- ground truth: every weakness of the benchmark it wrote, at its own line numbers: P1 (the benchmark grades
  no severity; each is a published CVE), a category and ``cwe`` from the CVE's CWEs (:data:`CATEGORIES`;
  ``security`` when none is known), the CVE id and the benchmark's explanation as the description.

Clean changes: each CVE's fix (``prePatch`` -> ``postPatch``, its non-test code files) with empty ground
truth: a review that reports a vulnerability in the change that removes one raises a false alarm. A fix is
left out when a weakness of the benchmark was blamed on one of its commits (an incomplete fix a later CVE
names), so no clean change holds a known vulnerability.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fluxdrive.core.confine import read_confined
from fluxdrive.errors import InputError, UsageError
from fluxdrive.eval.importers import mirror
from fluxdrive.eval.importers.base import (
    Options,
    SkipError,
    Summary,
    commit_id,
    line_count,
    safe_relative,
    slug,
    write_fixture,
)
from fluxdrive.eval.mine_szz import Blamed, Repository, code_files

URL = "https://github.com/ossf-cve-benchmark/ossf-cve-benchmark"
LICENCE = "MIT (OpenSSF CVE Benchmark data); the code is the upstream project's, under its licence"
MAX_CVE_BYTES = 1024 * 1024
MAX_FILE_BYTES = 1024 * 1024
MAX_PATCH_BYTES = 1024 * 1024
MAX_FIX_FILES = 10
EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"  # git's id of the empty tree: the first commit's "parent"
_TYPESCRIPT = (".ts", ".tsx", ".mts", ".cts")

# The category of a weakness, from the benchmark's explanation (mostly CodeQL query names: "Prototype-polluting
# function", "Uncontrolled data used in path expression"), first match wins; with the CWEs that name that kind.
# The explanation comes first because the records' CWE lists are broad (a prototype pollution is filed under
# CWE-78, -79, -94, -400 and -915 alike); a category's words are matched against a finding's title and rule ids.
KINDS: tuple[tuple[re.Pattern[str], str, tuple[str, ...]], ...] = tuple(
    (re.compile(pattern, re.IGNORECASE), category, cwes)
    for pattern, category, cwes in (
        (r"prototype|__proto__|property injection", "prototype-pollution", ("CWE-1321", "CWE-915", "CWE-471")),
        (r"regular expression injection", "regex-injection", ("CWE-730",)),
        (r"regular expression|redos", "redos-regex", ("CWE-1333", "CWE-730", "CWE-400")),
        (
            r"cross-site scripting|xss|as html|html (attribute|tag|sanitization)|jquery plugin|javascript: ?ur|css|"
            r"style sheets",
            "xss",
            ("CWE-79", "CWE-80"),
        ),
        (r"shell command|command line|command injection", "command-injection", ("CWE-78", "CWE-88")),
        (
            r"code (injection|execution|sanitization)|sandbox escape|\brce\b|dynamic method",
            "code-injection",
            ("CWE-94", "CWE-95"),
        ),
        (
            r"path (expression|injection|sanitization)|zip slip|directory containment",
            "path-traversal",
            ("CWE-22", "CWE-23", "CWE-36", "CWE-73"),
        ),
        (r"database query|\bsql\b", "sql-injection", ("CWE-89",)),
        (r"url redirect", "open-redirect", ("CWE-601",)),
        (r"network request|untrusted host", "ssrf", ("CWE-918",)),
        (r"csrf", "csrf", ("CWE-352",)),
        (r"certificate validation|insecure connection", "insecure-transport", ("CWE-295", "CWE-319")),
        (r"random", "insecure-randomness", ("CWE-330", "CWE-338")),
        (r"sensitive|private files|clear-text", "sensitive-data-exposure", ("CWE-200", "CWE-312", "CWE-532")),
        (
            r"url scheme|escaping|encoding|sanitiz|substring with itself",
            "incomplete-sanitization",
            ("CWE-116", "CWE-20"),
        ),
        (
            r"resource exhaustion|denial of service|server crash|unclosed stream",
            "denial-of-service",
            ("CWE-400", "CWE-730"),
        ),
    )
)
# When the explanation names no kind: the record's CWEs, most specific first.
CATEGORIES = {
    "CWE-89": "sql-injection",
    "CWE-78": "command-injection",
    "CWE-94": "code-injection",
    "CWE-79": "xss",
    "CWE-1321": "prototype-pollution",
    "CWE-915": "prototype-pollution",
    "CWE-22": "path-traversal",
    "CWE-601": "open-redirect",
    "CWE-918": "ssrf",
    "CWE-1333": "redos-regex",
    "CWE-730": "redos-regex",
    "CWE-400": "denial-of-service",
    "CWE-116": "incomplete-sanitization",
}


@dataclass(frozen=True, slots=True)
class Weakness:
    path: str
    line: int
    explanation: str


@dataclass(frozen=True, slots=True)
class Cve:
    """One benchmark record, checked."""

    id: str
    owner: str
    name: str
    pre: str
    post: str
    weaknesses: tuple[Weakness, ...]
    cwes: tuple[str, ...]

    @property
    def language(self) -> str:
        return "TypeScript" if any(w.path.endswith(_TYPESCRIPT) for w in self.weaknesses) else "JavaScript"

    def kind(self, weakness: Weakness) -> tuple[str, str | None]:
        """(category, CWE) of ``weakness``: from its explanation (:data:`KINDS`; the CWE only when the record
        lists one of that kind), else from the record's CWEs, else ``security`` (which any finding's kind fits)."""
        for pattern, category, cwes in KINDS:
            if pattern.search(weakness.explanation):
                return category, next((cwe for cwe in cwes if cwe in self.cwes), None)
        for cwe, category in CATEGORIES.items():
            if cwe in self.cwes:
                return category, cwe
        return "security", None


def _cwe(value: object) -> str | None:
    """``CWE-079`` -> ``CWE-79`` (the benchmark pads to three digits; the ground-truth schema does not)."""
    text = str(value).strip().upper()
    number = text.removeprefix("CWE-")
    return f"CWE-{int(number)}" if text.startswith("CWE-") and number.isdigit() and int(number) > 0 else None


def _record(name: str, record: object) -> Cve:
    """A CVE file's record, or SkipError naming what is wrong with it."""
    if not isinstance(record, dict):
        raise SkipError("record is not a JSON object")
    parts = str(record.get("repository") or "").removesuffix(".git").rstrip("/").split("/")
    if len(parts) != 5 or parts[2] != "github.com" or not all(parts[3:]):
        raise SkipError("repository is not a github.com URL")
    pre, post = record.get("prePatch"), record.get("postPatch")
    if not isinstance(pre, dict) or not isinstance(post, dict):
        raise SkipError("prePatch or postPatch missing")
    weaknesses = []
    for item in pre.get("weaknesses") or []:
        location = item.get("location") if isinstance(item, dict) else None
        if not isinstance(location, dict):
            continue
        path, line = location.get("file"), location.get("line")
        if isinstance(path, str) and isinstance(line, int) and not isinstance(line, bool):
            path = path.removeprefix("/")  # a path written from the repository's root ("/index.js") is relative to it
            weaknesses.append(Weakness(path, line, str(item.get("explanation") or "").strip()))
    cwes = tuple(c for c in (_cwe(v) for v in record.get("CWEs") or []) if c)
    return Cve(
        id=str(record.get("CVE") or name.removesuffix(".json")),
        owner=parts[3],
        name=parts[4],
        pre=commit_id(pre.get("commit")),
        post=commit_id(post.get("commit")),
        weaknesses=tuple(weaknesses),
        cwes=cwes,
    )


def _load(source: Path) -> tuple[list[tuple[str, object]], str, Path]:
    """(every CVE file's name and parsed record, a sha256 over them all, the checkout's directory)."""
    directory = source / "CVEs" if (source / "CVEs").is_dir() else source
    if not directory.is_dir():
        raise UsageError(f"{source}: not a directory with the benchmark's CVEs/*.json")
    files = sorted(p for p in directory.iterdir() if p.name.startswith("CVE-") and p.name.endswith(".json"))
    if not files:
        raise UsageError(f"{directory}: no CVE-*.json file (expected the OpenSSF CVE Benchmark's CVEs/ directory)")
    digest = hashlib.sha256()
    records: list[tuple[str, object]] = []
    for path in files:
        try:
            data = read_confined(path, directory, path.name, limit=MAX_CVE_BYTES)
        except InputError as error:
            raise UsageError(f"{path}: {error.message}") from None
        digest.update(path.name.encode() + b"\0" + data + b"\0")
        try:
            records.append((path.name, json.loads(data.decode("utf-8"))))
        except (ValueError, RecursionError) as error:
            raise UsageError(f"{path}: not readable JSON ({str(error)[:120]})") from None
    return records, digest.hexdigest(), directory.parent if directory.name == "CVEs" else directory


class _Introduced:
    """What blame found in one repository: introducing commit -> path there -> line -> the (CVE, weakness)s."""

    def __init__(self) -> None:
        self.lines: dict[str, dict[str, dict[int, list[tuple[Cve, Weakness]]]]] = {}

    def add(self, cve: Cve, weakness: Weakness, blamed: Blamed) -> None:
        for sha, paths in blamed.lines.items():
            for path, numbers in paths.items():
                for number in numbers:
                    self.lines.setdefault(sha, {}).setdefault(path, {}).setdefault(number, []).append((cve, weakness))


def _locate(repo: Repository, cve: Cve, found: _Introduced, dropped: Counter[str]) -> bool:
    """Blame each weakness of ``cve`` at its prePatch commit into ``found``; True when at least one was traced."""
    traced = False
    for weakness in cve.weaknesses:
        if not safe_relative(weakness.path) or weakness.line < 1:
            dropped["file not a safe relative path, or line not positive"] += 1
            continue
        data, why = repo.blob(cve.pre, weakness.path, MAX_FILE_BYTES)
        if data is None:
            dropped[f"file {why}" if why else "file not in the prePatch commit"] += 1
            continue
        if weakness.line > line_count(data):
            dropped["line past the end of the file"] += 1
            continue
        blamed = Blamed()
        repo.blame(cve.pre, weakness.path, [weakness.line], blamed, roots=True)
        if not blamed.lines:
            dropped["git blame named no commit"] += 1
            continue
        found.add(cve, weakness, blamed)
        traced = True
    return traced


def _change(repo: Repository, parent: str, head: str, paths: list[str]) -> tuple[dict[str, bytes], str]:
    """(the files at ``parent``, the diff ``parent`` -> ``head`` of ``paths``), or SkipError with the reason."""
    base = {}
    if parent != EMPTY_TREE:
        for path in paths:
            data, why = repo.blob(parent, path, MAX_FILE_BYTES)
            if why:
                raise SkipError(f"a base file is {why}")
            if data is not None:
                base[path] = data
    patch = repo.patch(parent, head, paths)
    if not patch:
        raise SkipError("git diff failed or was empty")
    if len(patch) > MAX_PATCH_BYTES:
        raise SkipError(f"a patch over {MAX_PATCH_BYTES // 1024} KiB")
    try:
        return base, patch.decode("utf-8")
    except UnicodeDecodeError:
        raise SkipError("a patch that is not UTF-8") from None


def _finding(path: str, line: int, cve: Cve, weakness: Weakness) -> dict[str, Any]:
    category, cwe = cve.kind(weakness)
    said = weakness.explanation or "vulnerable code"
    finding: dict[str, Any] = {
        "severity": "P1",
        "location": f"{path}:{line}",
        "description": f"{cve.id}: {said} ({', '.join(cve.cwes) or 'no CWE given'})",
        "category": category,
        "cve": cve.id,
        "cwes": list(cve.cwes),
    }
    if cwe:
        finding["cwe"] = cwe
    return finding


def _source(cve_ids: list[str], owner: str, name: str, language: str, digest: str) -> dict[str, Any]:
    return {
        "benchmark": "OpenSSF CVE Benchmark",
        "url": URL,
        "licence": LICENCE,
        "dataset": "CVEs/*.json",
        "dataset_sha256": digest,
        "cves": cve_ids,
        "repository": f"https://github.com/{owner}/{name}",
        "language": language,
    }


class _Run:
    """One import: the options, the summary, where fixtures go."""

    def __init__(self, out: Path, digest: str, summary: Summary) -> None:
        self.out = out
        self.digest = digest
        self.summary = summary
        self.imported: set[str] = set()

    def write(self, fixture_id: str, base: dict[str, bytes], patch: str, truth: dict[str, Any]) -> bool:
        if write_fixture(self.out, fixture_id, base, patch, truth):
            return True
        self.summary.skipped["fixture directory already exists (left as it is)"] += 1
        return False

    def positives(self, repo: Repository, owner: str, name: str, found: _Introduced) -> None:
        for sha in sorted(found.lines):
            paths = found.lines[sha]
            weaknesses = sum(len(pairs) for lines in paths.values() for pairs in lines.values())
            try:
                commit = repo.log_one(sha)
                if commit is None:
                    raise SkipError("git log failed on the introducing commit")
                if len(commit.parents) > 1:
                    raise SkipError("a merge commit wrote the line")
                parent = commit.parents[0] if commit.parents else EMPTY_TREE
                base, patch = _change(repo, parent, sha, sorted(paths))
            except SkipError as why:
                self.summary.skipped_comments[f"introducing change: {why}"] += weaknesses
                continue
            pairs = [
                (path, line, pair)
                for path in sorted(paths)
                for line in sorted(paths[path])
                for pair in paths[path][line]
            ]
            cves = sorted({cve.id for _, _, (cve, _) in pairs})
            languages = Counter(cve.language for _, _, (cve, _) in pairs)
            fixture_id = slug("ossf", owner, name, sha[:10])
            truth = {
                "fixture_id": fixture_id,
                "agent_type": "any",
                "findings": [_finding(path, line, cve, weakness) for path, line, (cve, weakness) in pairs],
                "annotator": "OpenSSF CVE Benchmark (weakness lines), traced to the change that wrote them (git blame)",
                "notes": f"{', '.join(cves)}: vulnerable lines as {sha[:10]} wrote them ({commit.subject[:160]!r}).",
                "source": {
                    **_source(cves, owner, name, languages.most_common(1)[0][0], self.digest),
                    "method": "blame",
                    "introducing_commit": sha,
                    "base_commit": parent,
                },
            }
            if self.write(fixture_id, base, patch, truth):
                self.summary.fixtures += 1
                self.summary.comments += len(pairs)
                self.imported.update(cves)

    def fix(self, repo: Repository, cve: Cve, found: _Introduced) -> None:
        """The CVE's fix as a clean change, unless it is not one (see the module docstring)."""
        try:
            if not mirror.has_commit(repo, cve.post):
                raise SkipError("postPatch commit not in the repository mirror")
            listed = repo.run("rev-list", f"{cve.pre}..{cve.post}")
            commits = set(listed.decode("ascii", "replace").split()) if listed is not None else None
            if not commits:
                raise SkipError("postPatch is not a descendant of prePatch")
            if commits & set(found.lines):
                raise SkipError("a weakness of the benchmark was blamed on the fix")
            paths, why = code_files(repo, cve.pre, cve.post, MAX_FIX_FILES)
            if why:
                raise SkipError(why.removesuffix(" (--max-files)"))
            base, patch = _change(repo, cve.pre, cve.post, paths)
        except SkipError as why:
            self.summary.skipped_clean[str(why)] += 1
            return
        fixture_id = slug("ossf", cve.id, "fix")
        truth = {
            "fixture_id": fixture_id,
            "agent_type": "any",
            "findings": [],
            "annotator": "OpenSSF CVE Benchmark (the CVE's fix)",
            "notes": f"The fix of {cve.id}, a change that removes a vulnerability: any finding on it is a false alarm.",
            "source": {**_source([cve.id], cve.owner, cve.name, cve.language, self.digest), "method": "fix",
                       "pre_patch": cve.pre, "post_patch": cve.post},
        }  # fmt: skip
        if self.write(fixture_id, base, patch, truth):
            self.summary.clean += 1


def _selected(records: list[tuple[str, object]], options: Options, summary: Summary) -> list[Cve]:
    wanted = slug(options.language) if options.language else None
    chosen: list[Cve] = []
    for name, record in records:
        if options.limit is not None and len(chosen) >= options.limit:
            break
        try:
            cve = _record(name, record)
        except SkipError as why:
            summary.seen += 1
            summary.skipped[str(why)] += 1
            continue
        if wanted and slug(cve.language) != wanted:
            continue
        summary.seen += 1
        chosen.append(cve)
    return chosen


class OssfCveImporter:
    """``fluxdrive eval import ossf-cve SOURCE DIR``."""

    name = "ossf-cve"

    def run(self, source: Path, out: Path, options: Options) -> Summary:
        records, digest, checkout = _load(source)
        repos = options.repos or checkout / "repos"
        if not repos.is_dir():
            raise UsageError(f"{repos}: no directory of upstream repositories (owner+name/); pass --repos DIR")
        summary = Summary(case="CVE", truth="weakness")
        run = _Run(out, digest, summary)
        by_repository: dict[tuple[str, str], list[Cve]] = {}
        for cve in _selected(records, options, summary):
            by_repository.setdefault((cve.owner, cve.name), []).append(cve)
        for (owner, name), cves in sorted(by_repository.items()):
            try:
                repo = mirror.find(repos, owner, name)
            except SkipError as why:
                summary.skipped[str(why)] += len(cves)
                continue
            found = _Introduced()
            located = []
            for cve in cves:
                if not cve.weaknesses:
                    summary.skipped["no weakness with a file and line"] += 1
                elif not mirror.has_commit(repo, cve.pre):
                    summary.skipped["prePatch commit not in the repository mirror"] += 1
                elif not _locate(repo, cve, found, summary.skipped_comments):
                    summary.skipped["no weakness could be traced to a change"] += 1
                else:
                    located.append(cve)
            run.positives(repo, owner, name, found)
            for cve in located:
                run.fix(repo, cve, found)
        summary.imported = len(run.imported)
        return summary


IMPORTER = OssfCveImporter()
