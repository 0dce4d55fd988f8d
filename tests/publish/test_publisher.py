"""The Publisher protocol: the registry of forges, and a third forge that needs nothing but its wire calls.

``Memo`` below is a whole forge kept in memory (a dict of threads and comments): it implements only the
protocol's context and wire calls, and the shared driver gives it what GitHub and GitLab get - findings
on changed lines commented once, the rest in the summary, a refused line moved to the summary, fixed
findings resolved, one summary comment edited in place. It is registered through a real entry point
(a ``.dist-info`` on ``sys.path``), exactly as a plugin's forge would be.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Self

import pytest

from fluxdrive.errors import UsageError
from fluxdrive.publish import GitHubPublisher, GitLabPublisher, Publisher, PublishResult, post, publisher, publishers
from fluxdrive.publish.base import InlineComment, ReviewRound
from fluxdrive.publish.diff import DiffIndex
from fluxdrive.publish.registry import resolve
from fluxdrive.publish.render import SUMMARY_MARKER


class Board:
    """The forge's state: inline threads (first body, resolved) and the conversation's comments."""

    def __init__(self) -> None:
        self.threads: dict[int, dict[str, Any]] = {}
        self.comments: dict[int, str] = {}
        self.next_id = 1

    def new_id(self) -> int:
        self.next_id += 1
        return self.next_id


class MemoPublisher(Publisher):
    """A forge in memory: lines 1-20 of ``a.py`` are the change; it refuses a comment on line 13."""

    name = "memo"
    token_env_var = "MEMO_TOKEN"

    def __init__(self, board: Board) -> None:
        self.board = board

    @classmethod
    def from_env(
        cls, env: Mapping[str, str], *, mode: str = "review", fail_on: str = "risky", board: Board | None = None
    ) -> Self:
        cls.token(env)
        return cls(board or Board())

    @property
    def where(self) -> str:
        return "memo:1"

    def head(self) -> str:
        return "c0ffee" * 6 + "0000"

    def changed_lines(self) -> DiffIndex:
        return DiffIndex({"a.py": [frozenset(range(1, 21))]})

    def threads(self) -> Iterable[tuple[str, Any]]:
        return [(thread["body"], number) for number, thread in self.board.threads.items()]

    def post_inline(self, comments: Sequence[InlineComment], state: ReviewRound) -> list[InlineComment]:
        (comment,) = comments  # one request per comment (inline_in_one_request is False)
        if comment.anchor.line == 13:
            state.result.notes.append(f"memo refused line 13 of {comment.finding.id}")
            return [comment]
        self.board.threads[self.board.new_id()] = {"body": comment.body, "line": comment.anchor.line, "done": False}
        return []

    def resolve(self, stale: Mapping[str, Any], result: PublishResult) -> None:
        for number in stale.values():
            if not self.board.threads[number]["done"]:  # resolved already (by a person, or an earlier run)
                self.board.threads[number]["done"] = True
                result.resolved += 1

    def comments(self) -> Iterable[tuple[Any, str]]:
        return list(self.board.comments.items())

    def edit_summary(self, comment_id: Any, body: str) -> None:
        self.board.comments[comment_id] = body

    def add_summary(self, body: str) -> int | None:
        number = self.board.new_id()
        self.board.comments[number] = body
        return number


class MisnamedPublisher(MemoPublisher):
    """Registered as ``misnamed`` but calling itself ``memo``: refused at lookup."""


def finding(fid: str, title: str, location: str) -> dict[str, Any]:
    return {"id": fid, "severity": "P1", "agents": ["fd-correctness"], "title": title, "locations": [location]}


def write_run(directory: Path, *findings: dict[str, Any]) -> Path:
    directory.mkdir(parents=True)
    counts = {"P1": len(findings)} if findings else {}
    data = {"verdict": "needs-changes" if findings else "safe", "counts": counts, "findings": list(findings)}
    (directory / "findings.json").write_text(json.dumps(data))
    return directory


def test_a_third_forge_is_one_class(tmp_path: Path) -> None:
    board, env = Board(), {"MEMO_TOKEN": "t"}
    first = write_run(
        tmp_path / "one",
        finding("P1-1", "off by one", "a.py:5"),
        finding("P1-2", "outside the change", "b.py:3"),
        finding("P1-3", "on the refused line", "a.py:13"),
    )
    result = post(MemoPublisher, first, root=tmp_path, env=env, board=board, line_filter="nofilter")
    assert (result.inline_posted, result.outside_diff, result.already_posted) == (1, 2, 0)
    assert result.notes == ["memo refused line 13 of P1-3"]
    assert [t["line"] for t in board.threads.values()] == [5]
    ((summary_id, summary),) = board.comments.items()
    assert SUMMARY_MARKER in summary and "outside the change" in summary and "on the refused line" in summary
    assert MemoPublisher.describe(result) == (
        f"Published to memo:1 at {'c0ffee' * 2}: 1 new inline comment(s); 2 outside the diff (in the summary); "
        f"summary comment {summary_id} posted."
    )

    # the next run: P1-1 fixed, P1-4 new, the rest as before
    second = write_run(
        tmp_path / "two",
        finding("P1-4", "new on a changed line", "a.py:7"),
        finding("P1-2", "outside the change", "b.py:3"),
    )
    again = post(MemoPublisher, second, root=tmp_path, env=env, board=board)
    assert (again.inline_posted, again.resolved, again.summary_updated) == (1, 1, True)
    assert again.summary_comment_id == summary_id and list(board.comments) == [summary_id]
    assert [(t["line"], t["done"]) for t in board.threads.values()] == [(5, True), (7, False)]

    # the same run once more: nothing new inline, the summary edited in place again
    same = post(MemoPublisher, second, root=tmp_path, env=env, board=board)
    assert (same.inline_posted, same.already_posted, same.resolved) == (0, 1, 0)
    assert len(board.threads) == 2 and list(board.comments) == [summary_id]


def test_the_driver_checks_what_every_forge_shares(tmp_path: Path) -> None:
    run = write_run(tmp_path / "run")
    with pytest.raises(UsageError, match="MEMO_TOKEN is not set"):
        post(MemoPublisher, run, root=tmp_path, env={})
    with pytest.raises(UsageError, match="unknown --mode 'checks'") as refused:
        post(MemoPublisher, run, root=tmp_path, env={"MEMO_TOKEN": "t"}, mode="checks")
    assert refused.value.hint == "use review"
    with pytest.raises(UsageError, match="--summary-url must be an http"):
        post(MemoPublisher, run, root=tmp_path, env={"MEMO_TOKEN": "t"}, summary_url="javascript:alert(1)")


def test_built_in_publishers_come_from_the_registry() -> None:
    assert publisher("github") is GitHubPublisher and publisher("gitlab") is GitLabPublisher
    assert {"github": GitHubPublisher, "gitlab": GitLabPublisher}.items() <= publishers().items()
    assert resolve("github") == (GitHubPublisher, "review")
    assert resolve("checks") == (GitHubPublisher, "checks")
    assert GitHubPublisher.modes == ("review", "checks") and GitLabPublisher.modes == ("review",)


def test_an_unknown_publisher_is_one_line_naming_the_known_ones(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(UsageError, match="unknown publisher 'bitbucket'") as unknown:
        publisher("bitbucket")
    assert unknown.value.hint is not None and "github, gitlab" in unknown.value.hint
    with pytest.raises(UsageError, match="unknown --publish 'bitbucket'") as flag:
        resolve("bitbucket")
    assert flag.value.hint is not None and "checks, github, gitlab" in flag.value.hint

    from fluxdrive.cli import main

    assert main(["review", "--publish", "bitbucket", "--yes", "-q"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) <= 2 and "unknown --publish 'bitbucket'" in err[0] and "Traceback" not in "".join(err)


def test_a_plugin_forge_registers_through_an_entry_point(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    dist = tmp_path / "memo_forge-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: memo-forge\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text(
        "[fluxdrive.publishers]\n"
        "memo = tests.publish.test_publisher:MemoPublisher\n"
        "misnamed = tests.publish.test_publisher:MisnamedPublisher\n"
        "broken = tests.publish.no_such_module:Nothing\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))

    assert publisher("memo") is MemoPublisher and resolve("memo") == (MemoPublisher, "review")
    found = publishers()
    assert "memo" in found and "misnamed" not in found and "broken" not in found
    with pytest.raises(UsageError, match="'misnamed' cannot be used: its name is 'memo'"):
        publisher("misnamed")
    with pytest.raises(UsageError, match="'broken' does not load: ModuleNotFoundError"):
        publisher("broken")

    result = post(publisher("memo"), write_run(tmp_path / "run"), root=tmp_path, env={"MEMO_TOKEN": "t"})
    assert (result.host, result.verdict, result.inline_posted) == ("memo", "safe", 0)
