"""Publishing a review to a GitHub pull request, against a wire-level fake GitHub API.

The reviews are real (the static runtime, offline) on a real git repository;
the pull request's files are built from its real ``git diff``.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from fluxdrive.cli import main
from fluxdrive.errors import UsageError
from fluxdrive.publish import GitHubClient, Target, publish_github, resolve_target
from fluxdrive.publish.diff import DiffIndex, right_side_hunks
from fluxdrive.publish.render import FINDING_MARKER_RE, SUMMARY_MARKER
from fluxdrive.publish.report import load_run, parse_place
from tests.fakes.github_api import FakeGitHub, pull_files_from_git

REPO = Path(__file__).resolve().parents[2]
TOKEN = "ghs_fakeTokenForTests0123456789abcdef"
PR = 7

BASE_DB = 'import sqlite3\n\n\ndef connect():\n    return sqlite3.connect("app.db")\n'
BASE_TOOLS = (
    "import subprocess\n\n\ndef version():\n"
    '    return subprocess.run(["git", "--version"], capture_output=True, check=True).stdout\n'
)
LEGACY = (
    "def lookup(cur, name):\n"
    "    cur.execute(\"SELECT id FROM accounts WHERE name = '%s'\" % name)\n"
    "    return cur.fetchone()\n"
)
SQL = (
    "\n\ndef find_user(name):\n    cur = connect().cursor()\n"
    "    cur.execute(\"SELECT id FROM users WHERE name = '%s'\" % name)\n    return cur.fetchone()\n"
)
SHELL = '\n\ndef ping(host):\n    return subprocess.check_output("ping -c 1 " + host, shell=True)\n'
SHELL_FIXED = '\n\ndef ping(host):\n    return subprocess.check_output(["ping", "-c", "1", host])\n'


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-c", "user.email=tests@fluxdrive.invalid", "-c", "user.name=fluxdrive tests", *args],
        cwd=repo,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """main: clean code (and a legacy file with an old SQL injection); feature: SQL + shell injections added."""
    repo = tmp_path / "repo"
    (repo / "app").mkdir(parents=True)
    (repo / "app" / "db.py").write_text(BASE_DB)
    (repo / "app" / "tools.py").write_text(BASE_TOOLS)
    (repo / "app" / "legacy.py").write_text(LEGACY)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    git(repo, "checkout", "-q", "-b", "feature")
    (repo / "app" / "db.py").write_text(BASE_DB + SQL)
    (repo / "app" / "tools.py").write_text(BASE_TOOLS + SHELL)
    git(repo, "commit", "-q", "-am", "add lookups")
    return repo


@pytest.fixture
def github() -> Any:
    with FakeGitHub(token=TOKEN, owner="octo", repo="app", max_per_page=1) as fake:
        yield fake


def open_pull(fake: FakeGitHub, repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """Push the branch: the fake's PR gets the real diff; the Actions environment points at it."""
    sha = git(repo, "rev-parse", "HEAD")
    fake.add_pull(PR, head_sha=sha, files=pull_files_from_git(repo, "main", "HEAD"))
    event = tmp_path / "event.json"
    event.write_text(
        json.dumps({"pull_request": {"number": PR, "head": {"sha": sha}}, "repository": {"full_name": "octo/app"}})
    )
    for name, value in {
        "GITHUB_TOKEN": TOKEN,
        "GITHUB_API_URL": fake.url,
        "GITHUB_REPOSITORY": "octo/app",
        "GITHUB_EVENT_PATH": str(event),
    }.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("GITHUB_GRAPHQL_URL", raising=False)
    return sha


def review(repo: Path, out: Path, monkeypatch: pytest.MonkeyPatch, *target: str) -> None:
    monkeypatch.chdir(repo)
    args = [*target] if target else ["--diff", "main"]
    assert main(["review", *args, "--yes", "--quiet", "--fail-on", "never", "--output-dir", str(out)]) == 0


def publish(monkeypatch: pytest.MonkeyPatch, repo: Path, *args: str) -> int:
    monkeypatch.chdir(repo)
    return main(["publish", "github", *args])


def summary_comments(fake: FakeGitHub) -> list[dict[str, Any]]:
    return [c for c in fake.issue_comments if SUMMARY_MARKER in c["body"]]


def top_level(fake: FakeGitHub) -> list[dict[str, Any]]:
    return [c for c in fake.review_comments(PR) if "in_reply_to_id" not in c]


# --- the whole flow -------------------------------------------------------------------------------------


def test_review_publish_fix_republish(
    project: Path,
    github: FakeGitHub,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    sha = open_pull(github, project, tmp_path, monkeypatch)
    first = tmp_path / "run1"
    review(project, first, monkeypatch)
    findings = json.loads((first / "findings.json").read_text())["findings"]
    assert {f["location"] for f in findings} == {"app/db.py:10", "app/tools.py:9"}
    capsys.readouterr()

    assert publish(monkeypatch, project, str(first)) == 0
    printed = capsys.readouterr()
    assert "review" in printed.out and "2 inline comment(s)" in printed.out

    # one review, COMMENT, on the head commit, with both findings inline on the changed lines
    reviews = github.calls("POST", r"/repos/octo/app/pulls/7/reviews")
    assert len(reviews) == 1 and reviews[0].status == 200
    payload = reviews[0].body
    assert payload["event"] == "COMMENT" and payload["commit_id"] == sha and payload["body"]
    placed = {(c["path"], c["line"], c["side"]) for c in payload["comments"]}
    assert placed == {("app/db.py", 10, "RIGHT"), ("app/tools.py", 9, "RIGHT")}
    sql = next(c["body"] for c in payload["comments"] if c["path"] == "app/db.py")
    assert "P0" in sql and "SQL" in sql and "**Fix:**" in sql and "fd-safety" in sql
    assert FINDING_MARKER_RE.search(sql)
    # one summary comment
    assert len(summary_comments(github)) == 1
    summary_id = summary_comments(github)[0]["id"]
    assert "risky" in summary_comments(github)[0]["body"]
    # every list was read page by page, following Link (one item per page on this fake)
    pages = github.calls("GET", r"/repos/octo/app/pulls/7/files")
    assert pages[0].query["per_page"] == ["100"] and [p.query.get("page") for p in pages] == [None, ["2"]]

    # the shell injection is fixed and pushed; the review runs again
    (project / "app" / "tools.py").write_text(BASE_TOOLS + SHELL_FIXED)
    git(project, "commit", "-q", "-am", "no shell")
    open_pull(github, project, tmp_path, monkeypatch)
    second = tmp_path / "run2"
    review(project, second, monkeypatch)
    assert [f["location"] for f in json.loads((second / "findings.json").read_text())["findings"]] == ["app/db.py:10"]
    capsys.readouterr()
    assert publish(monkeypatch, project, str(second)) == 0
    printed = capsys.readouterr()
    assert "1 fixed finding(s) resolved" in printed.out, printed

    # no new review (nothing new to say inline), no duplicate inline comment
    assert len(github.calls("POST", r"/repos/octo/app/pulls/7/reviews")) == 1
    assert len(top_level(github)) == 2
    # the summary comment was edited in place
    assert len(summary_comments(github)) == 1
    edits = github.calls("PATCH", r"/repos/octo/app/issues/comments/\d+")
    assert [e.path for e in edits] == [f"/repos/octo/app/issues/comments/{summary_id}"]
    assert summary_comments(github)[0]["body"] == edits[0].body["body"]
    assert "1 fixed since the last run" in edits[0].body["body"]
    # the fixed finding's thread is resolved through GraphQL, the other one stays open
    shell = next(c for c in top_level(github) if c["path"] == "app/tools.py")
    sql_comment = next(c for c in top_level(github) if c["path"] == "app/db.py")
    assert github.thread_of(shell["id"])["isResolved"] is True
    assert github.thread_of(sql_comment["id"])["isResolved"] is False
    mutations = [r for r in github.calls("POST", "/graphql") if "resolveReviewThread" in r.body["query"]]
    assert [m.body["variables"] for m in mutations] == [{"threadId": github.thread_of(shell["id"])["id"]}]

    # a third run with nothing new changes nothing but the summary
    capsys.readouterr()
    assert publish(monkeypatch, project, str(second)) == 0
    assert len(top_level(github)) == 2 and len(summary_comments(github)) == 1
    assert len([r for r in github.calls("POST", "/graphql") if "resolveReviewThread" in r.body["query"]]) == 1

    # every request authenticated the way GitHub wants; the token is nowhere but the header
    assert all(r.authorized for r in github.requests)
    assert all(r.headers.get("x-github-api-version") == "2022-11-28" for r in github.requests)
    assert all(r.headers.get("accept") == "application/vnd.github+json" for r in github.requests)
    assert TOKEN not in github.log_text()
    assert TOKEN not in printed.out + printed.err


def test_finding_outside_the_diff_goes_to_the_summary_only(
    project: Path, github: FakeGitHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    open_pull(github, project, tmp_path, monkeypatch)
    out = tmp_path / "run"
    review(project, out, monkeypatch, ".")  # the whole project: the old injection in app/legacy.py too
    locations = {f["location"] for f in json.loads((out / "findings.json").read_text())["findings"]}
    assert "app/legacy.py:2" in locations
    assert publish(monkeypatch, project, "--filter", "nofilter", str(out)) == 0  # default added: left out
    inline = github.calls("POST", r"/repos/octo/app/pulls/7/reviews")[0].body["comments"]
    assert {c["path"] for c in inline} == {"app/db.py", "app/tools.py"}
    body = summary_comments(github)[0]["body"]
    assert "Findings outside the diff" in body and "app/legacy.py:2" in body
    assert "app/db.py:10" not in body  # inline findings are not repeated in the summary table


# --- errors ---------------------------------------------------------------------------------------------


def test_no_token_is_one_line_exit_2(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    review(project, out, monkeypatch)
    monkeypatch.delenv("GITHUB_TOKEN", raising=False)
    capsys.readouterr()
    assert publish(monkeypatch, project, str(out), "--repo", "octo/app", "--pr", "7") == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "GITHUB_TOKEN is not set" in err


def test_no_pull_request_is_one_line_exit_2(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    review(project, out, monkeypatch)
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
    monkeypatch.setenv("GITHUB_REPOSITORY", "octo/app")
    monkeypatch.delenv("GITHUB_EVENT_PATH", raising=False)
    capsys.readouterr()
    assert publish(monkeypatch, project, str(out)) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no pull request" in err and TOKEN not in err


def test_an_error_that_echoes_the_token_is_masked(
    project: Path,
    github: FakeGitHub,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    open_pull(github, project, tmp_path, monkeypatch)
    out = tmp_path / "run"
    review(project, out, monkeypatch)
    github.fail("GET", r"/repos/octo/app/pulls/7/files", 403, message=f"token {TOKEN} lacks pull-requests: read")
    capsys.readouterr()
    assert publish(monkeypatch, project, str(out)) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "403" in err and "****" in err and TOKEN not in err


def test_retries_a_5xx_and_a_secondary_rate_limit(
    project: Path, github: FakeGitHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    open_pull(github, project, tmp_path, monkeypatch)
    out = tmp_path / "run"
    review(project, out, monkeypatch)
    github.fail("GET", r"/repos/octo/app/pulls/7/files", 502, message="Server Error")
    github.fail(
        "POST",
        r"/repos/octo/app/pulls/7/reviews",
        403,
        headers={"retry-after": "0"},
        message="You have exceeded a secondary rate limit. Please wait a few minutes before you try again.",
    )
    env = {"GITHUB_TOKEN": TOKEN, "GITHUB_API_URL": github.url, "GITHUB_REPOSITORY": "octo/app"}
    result = publish_github(
        out,
        root=project,
        env=env,
        pr=PR,
        client=lambda token, api, graphql: GitHubClient(token, api, backoff=0),
    )
    assert result.inline_posted == 2 and result.summary_comment_id
    assert [r.status for r in github.calls("POST", r"/repos/octo/app/pulls/7/reviews")] == [403, 200]
    assert [r.status for r in github.calls("GET", r"/repos/octo/app/pulls/7/files")][:2] == [502, 200]
    # without --sha and outside a pull_request event, the head commit was asked for
    assert github.calls("GET", r"/repos/octo/app/pulls/7")


def test_a_refused_line_moves_the_findings_to_the_summary(
    project: Path, github: FakeGitHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    open_pull(github, project, tmp_path, monkeypatch)
    out = tmp_path / "run"
    review(project, out, monkeypatch)
    github.fail(
        "POST", r"/repos/octo/app/pulls/7/reviews", 422, message="Unprocessable Entity"
    )  # the head moved between the diff and the post
    assert publish(monkeypatch, project, str(out)) == 0
    posted = github.calls("POST", r"/repos/octo/app/pulls/7/reviews")
    assert [r.status for r in posted] == [422, 200] and posted[1].body["comments"] == []
    body = summary_comments(github)[0]["body"]
    assert "app/db.py:10" in body and "app/tools.py:9" in body


def test_without_graphql_a_fixed_finding_gets_a_resolved_reply(
    project: Path, github: FakeGitHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    open_pull(github, project, tmp_path, monkeypatch)
    first = tmp_path / "run1"
    review(project, first, monkeypatch)
    assert publish(monkeypatch, project, str(first)) == 0
    (project / "app" / "tools.py").write_text(BASE_TOOLS + SHELL_FIXED)
    git(project, "commit", "-q", "-am", "no shell")
    sha = open_pull(github, project, tmp_path, monkeypatch)
    second = tmp_path / "run2"
    review(project, second, monkeypatch)
    github.graphql_forbidden = True
    for _ in range(2):  # the second run does not reply again
        assert publish(monkeypatch, project, str(second)) == 0
    replies = [c for c in github.review_comments(PR) if "in_reply_to_id" in c]
    assert len(replies) == 1 and f"Resolved in {sha}" in replies[0]["body"]
    shell = next(c for c in top_level(github) if c["path"] == "app/tools.py")
    assert replies[0]["in_reply_to_id"] == shell["id"]


def test_request_changes_on_a_risky_verdict(
    project: Path, github: FakeGitHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    open_pull(github, project, tmp_path, monkeypatch)
    out = tmp_path / "run"
    review(project, out, monkeypatch)
    assert publish(monkeypatch, project, str(out), "--request-changes") == 0
    assert github.calls("POST", r"/repos/octo/app/pulls/7/reviews")[0].body["event"] == "REQUEST_CHANGES"
    assert github.reviews[0]["state"] == "CHANGES_REQUESTED"
    assert publish(monkeypatch, project, str(out), "--request-changes") == 0  # nothing new: no second review
    assert len(github.reviews) == 1


def test_the_latest_run_is_published_by_default(
    project: Path, github: FakeGitHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    open_pull(github, project, tmp_path, monkeypatch)
    monkeypatch.chdir(project)
    assert main(["review", "--diff", "main", "--yes", "--quiet", "--fail-on", "never"]) == 0
    assert list((project / "docs" / "research" / "flux-drive").glob("*/findings.json"))
    assert publish(monkeypatch, project) == 0
    assert len(github.calls("POST", r"/repos/octo/app/pulls/7/reviews")[0].body["comments"]) == 2


def test_target_from_the_event_and_the_options(tmp_path: Path) -> None:
    event = tmp_path / "event.json"
    event.write_text(
        json.dumps({"pull_request": {"number": 3, "head": {"sha": "h" * 40}}, "repository": {"full_name": "a/b"}})
    )
    env = {"GITHUB_EVENT_PATH": str(event)}
    assert resolve_target(env) == Target("a", "b", 3, "h" * 40)
    assert resolve_target({**env, "GITHUB_REPOSITORY": "c/d"}, pr=9) == Target("c", "d", 9, "")
    assert resolve_target({"GITHUB_REPOSITORY": "c/d", "GITHUB_SHA": "s"}, need_pr=False) == Target("c", "d", None, "s")
    with pytest.raises(UsageError):
        resolve_target({"GITHUB_REPOSITORY": "c/d"})
    with pytest.raises(UsageError):
        resolve_target({}, repo="not-a-repo", pr=1)


# --- checks mode ----------------------------------------------------------------------------------------


def test_checks_mode_posts_annotations(
    project: Path,
    github: FakeGitHub,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    sha = open_pull(github, project, tmp_path, monkeypatch)
    out = tmp_path / "run"
    review(project, out, monkeypatch)
    capsys.readouterr()
    assert publish(monkeypatch, project, str(out), "--mode", "checks") == 0
    assert "failure" in capsys.readouterr().out
    (created,) = github.calls("POST", r"/repos/octo/app/check-runs")
    assert created.status == 201
    body = created.body
    assert body["head_sha"] == sha and body["status"] == "completed" and body["conclusion"] == "failure"
    annotations = body["output"]["annotations"]
    assert {(a["path"], a["start_line"], a["annotation_level"]) for a in annotations} == {
        ("app/db.py", 10, "failure"),
        ("app/tools.py", 9, "failure"),
    }
    assert all(a["message"] and a["title"].startswith("P0") for a in annotations)
    assert not github.comments and not github.issue_comments


def test_checks_mode_sends_annotations_50_at_a_time(
    project: Path, github: FakeGitHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    open_pull(github, project, tmp_path, monkeypatch)
    out = tmp_path / "run"
    review(project, out, monkeypatch)
    data = json.loads((out / "findings.json").read_text())
    template = data["findings"][0]
    data["findings"] = [
        dict(
            template,
            id=f"P2-{n}",
            severity="P2",
            title=f"finding {n}",
            location=f"app/db.py:{n}",
            locations=[f"app/db.py:{n}"],
        )
        for n in range(1, 121)
    ]
    data["verdict"] = "needs-changes"
    (out / "findings.json").write_text(json.dumps(data))
    assert publish(monkeypatch, project, str(out), "--mode", "checks", "--sha", "f" * 40) == 0
    (run,) = github.check_runs
    assert run["conclusion"] == "neutral" and run["head_sha"] == "f" * 40
    assert len(run["_annotations"]) == 120
    assert [len(r.body["output"]["annotations"]) for r in github.calls("PATCH", r"/repos/octo/app/check-runs/\d+")] == [
        50,
        20,
    ]


# --- pieces ---------------------------------------------------------------------------------------------


def test_right_side_lines_and_anchors() -> None:
    patch = "@@ -1,3 +1,4 @@\n a\n-b\n+B\n+C\n c\n@@ -10,2 +11,2 @@ def f():\n x\n-y\n+Y\n\\ No newline at end of file"
    assert right_side_hunks(patch) == [frozenset({1, 2, 3, 4}), frozenset({11, 12})]
    index = DiffIndex.from_pull_files(
        [
            {"filename": "a.py", "status": "modified", "patch": patch},
            {"filename": "gone.py", "status": "removed", "patch": "@@ -1 +0,0 @@\n-x"},
        ]
    )
    assert index.anchor("a.py", 3, 3) is not None and index.anchor("a.py", 3, 3).start_line is None  # type: ignore[union-attr]
    ranged = index.anchor("a.py", 2, 4)
    assert ranged is not None and (ranged.start_line, ranged.line) == (2, 4)
    assert index.anchor("a.py", 6, 9) is None  # between the hunks
    spanning = index.anchor("a.py", 4, 12)  # never across hunks
    assert spanning is not None and (spanning.start_line, spanning.line) == (None, 4)
    assert index.anchor("gone.py", 1, 1) is None and index.anchor("other.py", 1, 1) is None


def test_places_and_fingerprints(project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert str(parse_place("src/a.py:12-14")) == "src/a.py:12-14"
    assert parse_place("./src/a.py:L3").start == 3
    assert parse_place(f"{project}/app/db.py:5", project).path == "app/db.py"
    out = tmp_path / "run"
    review(project, out, monkeypatch)
    run = load_run(out, project)
    sql = next(f for f in run.findings if f.place and f.place.path == "app/db.py")
    assert len(sql.fingerprint) == 32 and sql.why and sql.fix and sql.agents == ("fd-safety",)


def test_multi_line_comments_carry_start_line(github: FakeGitHub, tmp_path: Path) -> None:
    patch = "@@ -1,2 +1,5 @@\n a\n+b\n+c\n+d\n e"
    github.add_pull(PR, head_sha="a" * 40, files=[{"filename": "m.py", "status": "modified", "patch": patch}])
    out = tmp_path / "run"
    out.mkdir()
    finding = {
        "id": "P1-1",
        "severity": "P1",
        "agents": ["fd-correctness"],
        "section": "m.py",
        "title": "range",
        "location": "m.py:2-4",
        "locations": ["m.py:2-4", "m.py:40"],
        "source_ids": {},
        "rules": [],
        "cwe": [],
    }
    (out / "findings.json").write_text(
        json.dumps({"verdict": "needs-changes", "counts": {"P1": 1}, "findings": [finding], "agents": []})
    )
    env = {"GITHUB_TOKEN": TOKEN, "GITHUB_API_URL": github.url, "GITHUB_REPOSITORY": "octo/app"}
    result = publish_github(out, root=tmp_path, env=env, pr=PR, sha="a" * 40)
    (comment,) = github.calls("POST", r"/repos/octo/app/pulls/7/reviews")[0].body["comments"]
    assert (comment["start_line"], comment["start_side"], comment["line"], comment["side"]) == (2, "RIGHT", 4, "RIGHT")
    assert "m.py:40" in comment["body"] and result.inline_posted == 1


def test_the_fake_refuses_a_line_outside_the_diff(github: FakeGitHub) -> None:
    github.add_pull(
        PR, head_sha="a" * 40, files=[{"filename": "m.py", "status": "modified", "patch": "@@ -1 +1 @@\n-a\n+b"}]
    )
    with GitHubClient(TOKEN, github.url, backoff=0) as gh:
        response = gh._client.post(
            "/repos/octo/app/pulls/7/reviews",
            json={
                "commit_id": "a" * 40,
                "event": "COMMENT",
                "body": "x",
                "comments": [{"path": "m.py", "line": 5, "side": "RIGHT", "body": "no"}],
            },
        )
    assert response.status_code == 422
    assert "must be part of the diff" in response.json()["errors"][0]
    assert not github.reviews and not github.comments


# --- the action -----------------------------------------------------------------------------------------


def test_action_yml_is_a_composite_action() -> None:
    action = yaml.safe_load((REPO / "action.yml").read_text())
    assert action["name"] and action["description"]
    inputs = action["inputs"]
    assert inputs["target"]["default"] == "." and inputs["fail-on"]["default"] == "risky"
    assert inputs["runtime"]["default"] == "static" and inputs["publish"]["default"] == "github"
    assert "model" in inputs
    assert action["runs"]["using"] == "composite"
    steps = action["runs"]["steps"]
    assert any(
        s.get("uses", "").startswith("actions/setup-python@") and s["with"]["python-version"] == "3.11" for s in steps
    )
    assert all(s.get("shell") == "bash" for s in steps if "run" in s)
    install, review_step, publish_step, verdict = steps[1:]
    assert install["env"]["FD_ACTION_PATH"] == "${{ github.action_path }}" and "pip install" in install["run"]
    assert "args=(review --yes --fail-on never" in review_step["run"] and '--diff "$base"' in review_step["run"]
    assert "origin/$FD_BASE_REF" in review_step["run"] and review_step["env"]["FD_BASE_REF"] == "${{ github.base_ref }}"
    assert "fluxdrive publish github" in publish_step["run"] and "GITHUB_TOKEN" in publish_step["env"]
    assert 'fluxdrive synthesize "$FD_OUT" --fail-on "$FD_FAIL_ON"' in verdict["run"]
    # inputs reach the scripts through env, never pasted into them (no script injection)
    assert all("${{" not in s["run"] for s in steps if "run" in s)


def test_bad_options_are_usage_errors(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
    for args in (["--mode", "comments"], ["--summary-url", "javascript:alert(1)"], ["--fail-on", "sometimes"]):
        capsys.readouterr()
        assert publish(monkeypatch, project, str(tmp_path), "--repo", "octo/app", "--pr", "7", *args) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and TOKEN not in err


def test_review_publish_flag_posts_after_the_review(
    project: Path, github: FakeGitHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``review --publish github``: one command reviews the branch and posts to its pull request."""
    open_pull(github, project, tmp_path, monkeypatch)
    monkeypatch.chdir(project)
    code = main(["review", "--diff", "main", "--yes", "-q", "--fail-on", "never", "--publish", "github"])
    assert code == 0
    assert len(summary_comments(github)) == 1
    assert {c["path"] for c in top_level(github)} == {"app/db.py", "app/tools.py"}
    assert main(["review", "--diff", "main", "--yes", "-q", "--publish", "bitbucket"]) == 2
