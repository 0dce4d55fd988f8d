"""AACR-Bench (github.com/alibaba/aacr-bench, Apache-2.0): real pull requests with line-level review comments.

SOURCE is a directory holding the benchmark's ``positive_samples.json`` (the dataset's own format: a
list of PRs, each with ``githubPrUrl``, ``project_main_language``, ``source_commit``, ``target_commit``
and ``comments[]`` with ``path``, ``side``, ``from_line``, ``to_line``, ``category``, ``note``), and a
directory of the upstream repositories, ``owner+name`` (or ``owner+name/repo``, the layout a mirror
fetch leaves), under SOURCE/repos or ``--repos``. In the dataset ``target_commit`` is the PR's head
(the benchmark's runner checks the PR branch out) and ``source_commit`` the branch it goes into, so a
fixture is: base/ = the touched files at their merge base, change.patch = merge base -> head, and each
right-side comment a finding at its lines in the head.

``negative_samples.json`` is not read: the benchmark does not document what its comments are (nor
uses them in its evaluator), so they are neither decoys nor clean changes here. Every PR carries
comments, so no clean-change fixture comes from this benchmark.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
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

DATASET = "positive_samples.json"
MAX_DATASET_BYTES = 64 * 1024 * 1024
MAX_BASE_BYTES = 4 * 1024 * 1024
MAX_DESCRIPTION = 2000
LICENCE = "Apache-2.0 (AACR-Bench annotations); the code is the upstream project's, under its licence"

# AACR's four categories -> (fluxdrive kebab-case category, severity). The benchmark grades no severity:
# a defect or a vulnerability is P1 (serious), a performance remark P2, readability P3 (a nit).
CATEGORIES = {
    "security vulnerability": ("security-vulnerability", "P1"),
    "code defect": ("code-defect", "P1"),
    "performance": ("performance", "P2"),
    "maintainability and readability": ("maintainability-readability", "P3"),
}
_LANGUAGE_WORDS = {"c++": "cpp", "c#": "csharp"}


def language_slug(language: str) -> str:
    """``C++`` -> ``cpp``, ``C#`` -> ``csharp``, ``TypeScript`` -> ``typescript`` (C and C++ stay apart)."""
    lowered = language.strip().lower()
    return _LANGUAGE_WORDS.get(lowered, slug(lowered))


def _load(source: Path) -> tuple[list[dict[str, Any]], str]:
    """The dataset's PRs and its sha256 (which version of the benchmark the fixtures came from)."""
    path = source / DATASET if source.is_dir() else source
    try:
        data = read_confined(path, path.parent, DATASET, limit=MAX_DATASET_BYTES)
    except InputError as error:
        raise UsageError(f"{path}: {error.message}") from None
    try:
        prs = json.loads(data.decode("utf-8"))
    except (ValueError, RecursionError) as error:
        raise UsageError(f"{path}: not readable JSON ({str(error)[:120]})") from None
    if not isinstance(prs, list) or not all(isinstance(pr, dict) for pr in prs):
        raise UsageError(f"{path}: expected AACR-Bench's list of pull requests")
    return prs, hashlib.sha256(data).hexdigest()


def _pr_identity(pr: dict[str, Any]) -> tuple[str, str, str]:
    url = pr.get("githubPrUrl")
    parts = url.rstrip("/").split("/") if isinstance(url, str) else []
    if len(parts) != 7 or parts[2] != "github.com" or parts[5] != "pull" or not parts[6].isdigit():
        raise SkipError("githubPrUrl is not a github.com pull request URL")
    return parts[3], parts[4], parts[6]


def _finding(comment: dict[str, Any], head_lines: dict[str, int]) -> dict[str, Any]:
    """One comment as an expected finding; SkipError with the reason when it cannot be one."""
    if comment.get("side") != "right":
        raise SkipError("comment on the old side of the diff (side is not right)")
    path, first, last = comment.get("path"), comment.get("from_line"), comment.get("to_line")
    if not isinstance(path, str) or not safe_relative(path):
        raise SkipError("comment path missing or not a safe relative path")
    if not isinstance(first, int) or not isinstance(last, int) or min(first, last) < 1:
        raise SkipError("comment lines missing or not positive")
    first, last = min(first, last), max(first, last)
    if path not in head_lines:
        raise SkipError("comment file not a text file of the PR head")
    if last > head_lines[path]:
        raise SkipError("comment lines past the end of the file")
    kind = CATEGORIES.get(str(comment.get("category", "")).strip().lower())
    note = str(comment.get("note") or "").strip()
    if kind is None or not note:
        raise SkipError("comment category unknown or note empty")
    category, severity = kind
    return {
        "severity": severity,
        "location": f"{path}:{first}" if first == last else f"{path}:{first}-{last}",
        "description": note[:MAX_DESCRIPTION],
        "category": category,
        "context": comment.get("context", ""),
        "ai_comment": bool(comment.get("is_ai_comment")),
    }


def _fixture(
    pr: dict[str, Any], repos: Path, digest: str, summary: Summary
) -> tuple[str, dict[str, bytes], str, dict[str, Any]]:
    owner, name, number = _pr_identity(pr)
    language = str(pr.get("project_main_language") or "unknown")
    into, head = commit_id(pr.get("source_commit")), commit_id(pr.get("target_commit"))
    repo = mirror.find(repos, owner, name)
    if not mirror.has_commit(repo, head) or not mirror.has_commit(repo, into):
        raise SkipError("PR commit not in the repository mirror (unmerged or rewritten history)")
    base = mirror.merge_base(repo, into, head)
    files = mirror.changed(repo, base, head) if base else None
    if base is None or files is None:
        raise SkipError("git could not diff the PR")
    text = [f.path for f in files if f.text and safe_relative(f.path)]
    comments = [c for c in pr.get("comments") or [] if isinstance(c, dict)]
    wanted = sorted(
        set(text) | {c["path"] for c in comments if isinstance(c.get("path"), str) and safe_relative(c["path"])}
    )
    base_files: dict[str, bytes] = {}
    head_lines: dict[str, int] = {}
    for path in wanted:
        before, after = mirror.show(repo, base, path), mirror.show(repo, head, path)
        if before is not None:
            base_files[path] = before
        if after is not None and (before is not None or path in text):
            head_lines[path] = line_count(after)
    if sum(len(data) for data in base_files.values()) > MAX_BASE_BYTES:
        raise SkipError(f"base files larger than {MAX_BASE_BYTES // (1024 * 1024)} MB")
    patch = mirror.diff(repo, base, head, text) if text else None
    if not patch:
        raise SkipError("no text change to review (binary, links or not UTF-8)")
    findings, dropped = [], Counter[str]()
    for comment in comments:
        try:
            findings.append(_finding(comment, head_lines))
        except SkipError as why:
            dropped[str(why)] += 1
    if not findings:
        raise SkipError("no comment usable as a line-level finding")
    summary.skipped_comments.update(dropped)
    fixture_id = slug("aacr", language_slug(language), owner, name, number)
    truth = {
        "fixture_id": fixture_id,
        "agent_type": "any",
        "findings": findings,
        "annotator": "AACR-Bench (GitHub reviewers and LLMs, verified by expert annotators)",
        "notes": f"Imported from AACR-Bench: {pr['githubPrUrl']}",
        "source": {
            "benchmark": "AACR-Bench",
            "url": "https://github.com/alibaba/aacr-bench",
            "licence": LICENCE,
            "dataset": DATASET,
            "dataset_sha256": digest,
            "pull_request": pr["githubPrUrl"],
            "repository": f"https://github.com/{owner}/{name}",
            "language": language,
            "base_commit": base,
            "head_commit": head,
            "into_commit": into,
        },
    }
    return fixture_id, base_files, patch, truth


class AacrImporter:
    """``fluxdrive eval import aacr SOURCE DIR``."""

    name = "aacr"

    def run(self, source: Path, out: Path, options: Options) -> Summary:
        prs, digest = _load(source)
        repos = options.repos or (source if source.is_dir() else source.parent) / "repos"
        if not repos.is_dir():
            raise UsageError(f"{repos}: no directory of upstream repositories (owner+name/); pass --repos DIR")
        wanted = language_slug(options.language) if options.language else None
        summary = Summary()
        for pr in prs:
            if options.limit is not None and summary.imported >= options.limit:
                break
            if wanted and language_slug(str(pr.get("project_main_language") or "")) != wanted:
                continue
            summary.seen += 1
            try:
                fixture_id, base_files, patch, truth = _fixture(pr, repos, digest, summary)
            except SkipError as why:
                summary.skipped[str(why)] += 1
                continue
            if not write_fixture(out, fixture_id, base_files, patch, truth):
                summary.skipped["fixture directory already exists (left as it is)"] += 1
                continue
            summary.imported += 1
            summary.comments += len(truth["findings"])
        return summary


IMPORTER = AacrImporter()
