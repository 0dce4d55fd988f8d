"""The Publisher protocol: what a forge must do to show a review, and nothing the forges share.

Why: GitHub and GitLab publishing grew as two parallel sets of functions that each chose the inline
findings, rendered the bodies, found the earlier summary and counted what was posted. Everything
the forges share now lives once in :mod:`fluxdrive.publish.driver`; a publisher is only its context
(read from the CI environment) and its wire calls, so a third forge is one new class registered under
the ``fluxdrive.publishers`` entry-point group (:mod:`fluxdrive.extensions`).

The driver calls a publisher in this order (it never names one)::

    Host.from_env(env, mode=..., **options)       # context and token: no network
    with host:                                     # host.connect() opens the API client; closed after
        host.head()                                # the commit the comments belong to
        review mode:  host.changed_lines() -> host.threads() -> host.post_inline(...)
                      -> host.resolve(stale) -> host.comments() -> host.edit_summary | host.add_summary
        other modes:  host.set_status(report, result, fail_on=...)   # a check run, a commit status...

Capabilities are class attributes: ``name`` (the entry point's name), ``token_env_var``, ``modes``
(``review`` first; any other is a status mode) and ``inline_in_one_request`` - True where the forge
takes every inline comment in one request (a GitHub review: a refusal moves them all to the summary,
after the findings outside the diff), False where each is its own request (a GitLab discussion: a
refused one joins the summary in its place), and ``suggestion_fence`` - the info string of the
forge's suggested-change block (GitHub ``suggestion``: the comment spans exactly the lines replaced;
GitLab ``suggestion:-{above}+{below}``: lines around the commented one), or "" for a forge without
one. The words :meth:`Publisher.describe` uses are class attributes too.
"""

from __future__ import annotations

import abc
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol, Self

from fluxdrive.errors import UsageError
from fluxdrive.publish.diff import Anchor, DiffIndex
from fluxdrive.publish.report import PublishedFinding, RunReport

VERDICT_RANK = {"safe": 0, "needs-changes": 1, "risky": 2}  # "incomplete" is not ranked: it always fails
FAIL_ON_RANK = {"needs-changes": 1, "risky": 2, "never": 99}


class Closable(Protocol):
    """What :meth:`Publisher.connect` returns: an API client, closed when the ``with publisher:`` block ends."""

    def close(self) -> None: ...


@dataclass(frozen=True, slots=True)
class InlineComment:
    """One finding to comment on a changed line: where, and the body (rendered and defused by the driver)."""

    finding: PublishedFinding
    anchor: Anchor
    body: str
    suggested: bool = False  # the body carries a suggested change of exactly the anchor's lines


@dataclass(frozen=True, slots=True)
class ReviewRound:
    """What a publisher may consult while posting inline comments: the run, what was posted so far (notes
    go there too) and fluxdrive's earlier threads by fingerprint."""

    report: RunReport
    result: PublishResult
    earlier: Mapping[str, Any]


@dataclass
class PublishResult:
    """What was posted, whatever the forge; ``where`` is the forge's own name for the place (``octo/app#7``,
    ``group/app!3``)."""

    host: str
    mode: str
    where: str
    commit: str
    verdict: str
    review_id: int | None = None
    review_event: str | None = None
    inline_posted: int = 0
    already_posted: int = 0
    outside_diff: int = 0
    suggestions: int = 0
    left_out: int = 0  # findings outside --filter (at review time and here), not shown
    line_filter: str = ""
    resolved: int = 0
    resolved_by_reply: int = 0
    summary_comment_id: int | None = None
    summary_updated: bool = False
    status_id: int | None = None
    conclusion: str | None = None
    annotations: int = 0
    notes: list[str] = field(default_factory=list)

    @property
    def discussions_posted(self) -> int:
        """GitLab's word for :attr:`inline_posted`."""
        return self.inline_posted

    @property
    def summary_note_id(self) -> int | None:
        """GitLab's word for :attr:`summary_comment_id`."""
        return self.summary_comment_id


class Publisher(abc.ABC):
    """Where a review is posted: one forge's context and wire calls (see the module docstring)."""

    name: ClassVar[str]
    token_env_var: ClassVar[str]
    modes: ClassVar[tuple[str, ...]] = ("review",)
    inline_in_one_request: ClassVar[bool] = False
    suggestion_fence: ClassVar[str] = ""
    inline_noun: ClassVar[str] = "inline comment"
    already_said: ClassVar[str] = "already commented"
    summary_noun: ClassVar[str] = "summary comment"

    # --- context ----------------------------------------------------------------------------------

    @classmethod
    @abc.abstractmethod
    def from_env(cls, env: Mapping[str, str], *, mode: str = "review") -> Self:
        """The forge, place, commit and token from the CI environment, for ``mode``; one
        :class:`~fluxdrive.errors.UsageError` for what is missing or malformed. No network. A publisher adds
        keyword options of its own that override the environment (GitHub's ``repo``, GitLab's ``mr``...)."""

    @classmethod
    def token(cls, env: Mapping[str, str]) -> str:
        """The token from ``token_env_var`` only (never a broader credential the job happens to have)."""
        token = (env.get(cls.token_env_var) or "").strip()
        if not token:
            raise UsageError(f"{cls.token_env_var} is not set", hint=cls.token_hint(env))
        return token

    @classmethod
    def token_hint(cls, env: Mapping[str, str]) -> str:
        """How to provide the token, given what the environment has."""
        return f"export a token with write access as {cls.token_env_var}"

    @property
    @abc.abstractmethod
    def where(self) -> str:
        """The place in the forge's own notation, for :attr:`PublishResult.where`."""

    _connection: Closable | None = None

    def connect(self) -> Closable | None:
        """Open the API client (``with publisher:`` calls this, and closes what it returns afterwards)."""
        return None

    def __enter__(self) -> Self:
        self._connection = self.connect()
        return self

    def __exit__(self, *exc: object) -> None:
        connection, self._connection = self._connection, None
        if connection is not None:
            connection.close()

    @abc.abstractmethod
    def head(self) -> str:
        """The commit the comments and the status belong to (asked for, if the context did not say)."""

    # --- review mode ------------------------------------------------------------------------------

    @abc.abstractmethod
    def changed_lines(self) -> DiffIndex:
        """The lines of the change an inline comment may sit on."""

    @abc.abstractmethod
    def threads(self) -> Iterable[tuple[str, Any]]:
        """(body of the first comment, thread) of every inline thread: the driver finds fluxdrive's by marker."""

    @abc.abstractmethod
    def post_inline(self, comments: Sequence[InlineComment], state: ReviewRound) -> list[InlineComment]:
        """Post ``comments`` (all at once where ``inline_in_one_request``, else one); return those the forge
        refused (the change moved since the review), which the driver lists in the summary."""

    @abc.abstractmethod
    def resolve(self, stale: Mapping[str, Any], result: PublishResult) -> None:
        """Resolve the threads of fixed findings (by fingerprint, sorted), counting in ``result``; never reopen
        one a person resolved."""

    @abc.abstractmethod
    def comments(self) -> Iterable[tuple[Any, str]]:
        """(id, body) of the conversation's top-level comments: the driver finds the summary by its marker."""

    @abc.abstractmethod
    def edit_summary(self, comment_id: Any, body: str) -> None:
        """Replace the body of the earlier summary comment."""

    @abc.abstractmethod
    def add_summary(self, body: str) -> int | None:
        """Post the summary comment; its id."""

    def defuse(self, body: str) -> str:
        """``body`` made inert for this forge beyond what the renderer does (GitLab: quick actions)."""
        return body

    # --- status modes -----------------------------------------------------------------------------

    def set_status(self, report: RunReport, result: PublishResult, *, fail_on: str) -> None:
        """Set a status or check on :meth:`head` (the modes after ``review`` in ``modes``), failing at or
        above the verdict ``fail_on`` (a key of :data:`FAIL_ON_RANK`)."""
        raise UsageError(f"{self.name} has no {result.mode!r} mode", hint="use " + " or ".join(self.modes))

    # --- what was posted --------------------------------------------------------------------------

    @classmethod
    def inline_said(cls, result: PublishResult) -> str:
        """The first part of :meth:`describe`: the inline comments posted."""
        return f"{result.inline_posted} new {cls.inline_noun}(s)"

    @classmethod
    def status_said(cls, result: PublishResult) -> str:
        """:meth:`describe` of a status mode."""
        return f"Status on {result.commit[:12]} in {result.where}: {result.conclusion}."

    @classmethod
    def describe(cls, result: PublishResult) -> str:
        """One line saying what was posted."""
        if result.mode != "review":
            return cls.status_said(result)
        parts = [cls.inline_said(result)]
        if result.already_posted:
            parts.append(f"{result.already_posted} {cls.already_said}")
        if result.suggestions:
            parts.append(f"{result.suggestions} with a suggested change")
        if result.outside_diff:
            parts.append(f"{result.outside_diff} outside the diff (in the summary)")
        if result.left_out:
            parts.append(f"{result.left_out} outside the changed lines not shown (--filter {result.line_filter})")
        if result.resolved or result.resolved_by_reply:
            parts.append(f"{result.resolved + result.resolved_by_reply} fixed finding(s) resolved")
        verb = "updated" if result.summary_updated else "posted"
        parts.append(f"{cls.summary_noun} {result.summary_comment_id} {verb}")
        return f"Published to {result.where} at {result.commit[:12]}: " + "; ".join(parts) + "."
