"""Publishing a run, whatever the forge: which findings go inline, every body, the idempotent summary.

    post(GitHubPublisher, output_dir, root=root, env=os.environ, **options) -> PublishResult
    publish(run_dir, publisher, root=root) -> PublishResult

Why here and not in each forge: the choices that make a re-run safe - a finding is commented once (by
the fingerprint in its marker), one summary comment is edited in place (found by its marker), the
threads of fixed findings are resolved, a finding the forge refuses to place is listed in the
summary instead - are the same on every forge, and were written twice. A
:class:`~fluxdrive.publish.base.Publisher` does the wire calls; this module decides.

**Review mode.** The finding's first place that lies on a changed line anchors it
(:meth:`DiffIndex.anchor`); a finding with no such place goes to the summary only. A fingerprint with
an earlier thread is counted as already posted; a new one is rendered (:func:`finding_comment`, the
forge's :meth:`~Publisher.defuse`) and posted - one request per comment, or all in one request where
the forge takes them so (``inline_in_one_request``). Earlier threads whose fingerprint is gone were
fixed and are resolved. Then the summary comment is edited in place or created once.

**Filter** (``line_filter``, reviewdog's modes: :mod:`fluxdrive.reports.diff_filter`): before anything is
placed, the findings outside the pull request's changed lines (the forge's own diff) are left out - of the
comments, of the summary and of the verdict the review event follows - and counted in the summary. The
mode is the one given, else the one the review recorded in findings.json, else ``added``.

**Suggestions**: where the forge has a suggested-change block (``suggestion_fence``) and a finding carries
a fix whose lines all lie in one hunk, its comment spans exactly those lines and ends with the block; a
fix whose text the masking would change is never offered.

**Status modes** (a GitHub check run): the forge's :meth:`~Publisher.set_status`.

Masking is not here: every body leaves through :class:`~fluxdrive.publish.api.RestClient`, which
masks it on the way out.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from fluxdrive.contracts import derive_verdict
from fluxdrive.core.masking import scrub
from fluxdrive.errors import UsageError
from fluxdrive.publish.base import FAIL_ON_RANK, InlineComment, Publisher, PublishResult, ReviewRound
from fluxdrive.publish.diff import Anchor, DiffIndex
from fluxdrive.publish.render import (
    FINDING_MARKER_RE,
    SUMMARY_MARKER,
    finding_comment,
    suggestion_block,
    summary_comment,
)
from fluxdrive.publish.report import PublishedFinding, RunReport, load_run
from fluxdrive.reports.diff_filter import DEFAULT_MODE, check_mode, split
from fluxdrive.reports.findings_json import SuggestionOut


def post(
    publisher: type[Publisher],
    output_dir: Path,
    *,
    root: Path,
    env: Mapping[str, str],
    mode: str = "review",
    summary_url: str | None = None,
    fail_on: str = "risky",
    line_filter: str | None = None,
    **options: Any,
) -> PublishResult:
    """Check the options, read the context from ``env`` (``options`` override it, as the forge defines
    them), then :func:`publish` the run in ``output_dir``; ``root`` is the repository root the finding
    paths are relative to. ``fail_on`` is the verdict at which a status fails."""
    if mode not in publisher.modes:
        raise UsageError(f"unknown --mode {mode!r}", hint="use " + " or ".join(publisher.modes))
    if summary_url is not None and not summary_url.startswith(("https://", "http://")):
        raise UsageError(f"--summary-url must be an http(s) URL, got {summary_url!r}")
    if fail_on not in FAIL_ON_RANK:
        raise UsageError(f"unknown --fail-on value {fail_on!r}", hint="use risky, needs-changes or never")
    if line_filter is not None:
        check_mode(line_filter)
    host = publisher.from_env(env, mode=mode, **options)
    return publish(
        output_dir, host, root=root, mode=mode, summary_url=summary_url, fail_on=fail_on, line_filter=line_filter
    )


def publish(
    run_dir: Path,
    publisher: Publisher,
    *,
    root: Path,
    mode: str = "review",
    summary_url: str | None = None,
    fail_on: str = "risky",
    line_filter: str | None = None,
) -> PublishResult:
    """Post the run in ``run_dir`` through ``publisher`` (see the module docstring); ``line_filter`` is the
    ``--filter`` mode (default: the review's, else ``added``)."""
    report = load_run(Path(run_dir), root)
    recorded = report.line_filter
    filter_mode = check_mode(line_filter or (recorded[0] if recorded else DEFAULT_MODE))
    with publisher:
        result = PublishResult(publisher.name, mode, publisher.where, publisher.head(), report.verdict)
        result.line_filter, result.left_out = filter_mode, recorded[1] if recorded else 0
        if mode == "review":
            _review(publisher, report, result, summary_url)
        else:
            publisher.set_status(report, result, fail_on=fail_on)
    return result


def _places(finding: PublishedFinding) -> list[tuple[str, int, int]]:
    return [(p.path, p.start, p.end) for p in finding.places]


def _filtered(report: RunReport, diff: DiffIndex, result: PublishResult) -> RunReport:
    """``report`` without the findings ``result.line_filter`` leaves out of the forge's diff (counted in
    ``result.left_out``), its counts and verdict derived from what stays."""
    shown, left = split(report.findings, _places, diff.lines(), check_mode(result.line_filter))
    if not left:
        return report
    result.left_out += len(left)
    verdict = report.verdict
    if verdict != "error":
        verdict = derive_verdict(f.severity for f in shown)
        verdict = "incomplete" if verdict == "safe" and not report.complete else verdict
    counts = {sev: sum(1 for f in shown if f.severity == sev) for sev in sorted(report.counts)}
    result.verdict = verdict
    return dataclasses.replace(report, findings=shown, verdict=verdict, counts=counts)


def _review(publisher: Publisher, report: RunReport, result: PublishResult, summary_url: str | None) -> None:
    diff = publisher.changed_lines()
    report = _filtered(report, diff, result)
    earlier: dict[str, Any] = {}
    for body, thread in publisher.threads():
        marker = FINDING_MARKER_RE.search(body)
        if marker:
            earlier.setdefault(marker.group(1), thread)

    inline, outside = _place(publisher, report, diff, earlier, result)
    result.outside_diff = len(outside)

    current = {f.fingerprint for f in report.findings}
    stale = {fp: thread for fp, thread in sorted(earlier.items()) if fp not in current}
    if stale:
        publisher.resolve(stale, result)

    body = summary_comment(
        report,
        sha=result.commit,
        inline=inline,
        outside=outside,
        resolved=result.resolved + result.resolved_by_reply,
        summary_url=summary_url,
        left_out=result.left_out,
        line_filter=result.line_filter,
    )
    body = publisher.defuse(body)
    existing = next((cid for cid, text in publisher.comments() if SUMMARY_MARKER in text), None)
    if existing is not None:
        publisher.edit_summary(existing, body)
        result.summary_comment_id, result.summary_updated = int(existing), True
    else:
        result.summary_comment_id = publisher.add_summary(body)


def _place(
    publisher: Publisher, report: RunReport, diff: DiffIndex, earlier: Mapping[str, Any], result: PublishResult
) -> tuple[list[PublishedFinding], list[PublishedFinding]]:
    """Post the new inline comments; the findings (in report order) commented inline, and those only in the
    summary."""
    inline: list[PublishedFinding] = []
    outside: list[PublishedFinding] = []
    queued: list[InlineComment] = []
    seen: set[str] = set()
    for finding in report.findings:
        anchor = _anchor(finding, diff)
        if anchor is None:
            outside.append(finding)
            continue
        if finding.fingerprint in earlier or finding.fingerprint in seen:
            inline.append(finding)
            result.already_posted += finding.fingerprint in earlier
            continue
        fix = _suggestion(publisher, finding, diff)
        block = ""
        if fix is not None:
            anchor = Anchor(fix.path, fix.end, fix.start if fix.start < fix.end else None)
            info = publisher.suggestion_fence.format(above=fix.end - fix.start, below=0)
            block = suggestion_block(fix.lines, info)
        body = finding_comment(finding, extra_places=_others(finding, anchor), suggestion=block)
        comment = InlineComment(finding, anchor, publisher.defuse(body), suggested=fix is not None)
        if publisher.inline_in_one_request:
            queued.append(comment)
        elif _post(publisher, [comment], report, result, earlier):
            outside.append(finding)  # refused: in the summary, where it stands
            continue
        seen.add(finding.fingerprint)
        inline.append(finding)
    if publisher.inline_in_one_request:
        moved = _post(publisher, queued, report, result, earlier)
        inline = [f for f in inline if f not in moved]
        outside += moved
    return inline, outside


def _post(
    publisher: Publisher,
    comments: list[InlineComment],
    report: RunReport,
    result: PublishResult,
    earlier: Mapping[str, Any],
) -> list[PublishedFinding]:
    """Post ``comments``, count those posted; the findings of those refused."""
    refused = publisher.post_inline(comments, ReviewRound(report, result, earlier))
    result.inline_posted += len(comments) - len(refused)
    result.suggestions += sum(1 for c in comments if c.suggested and c not in refused)
    return [c.finding for c in refused]


def _anchor(finding: PublishedFinding, diff: DiffIndex) -> Anchor | None:
    """Where the finding's first place on a changed line is commented, or None."""
    for place in finding.places:
        if place.start:
            found = diff.anchor(place.path, place.start, place.end)
            if found:
                return found
    return None


def _suggestion(publisher: Publisher, finding: PublishedFinding, diff: DiffIndex) -> SuggestionOut | None:
    """The finding's first fix the forge can show as a suggested change: its lines in one hunk of the diff,
    its text untouched by the masking (a masked line would replace the code with ``****``)."""
    if not publisher.suggestion_fence:
        return None
    for fix in finding.suggestions:
        if diff.same_hunk(fix.path, fix.start, fix.end) and all(scrub(line) == line for line in fix.lines):
            return fix
    return None


def _others(finding: PublishedFinding, anchor: Anchor) -> list[str]:
    """The finding's places other than the one the comment sits on (named in its body)."""
    return [str(p) for p in finding.places if not (p.path == anchor.path and p.start <= anchor.line <= p.end)]
