"""Publishing a review to a GitLab merge request, against a wire-level fake GitLab API.

The reviews are real (the static runtime, offline) on a real git repository; the merge request's versions
and diffs are built from its real ``git diff``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from fluxdrive.cli import main
from fluxdrive.errors import UsageError
from fluxdrive.publish.gitlab import MergeRequest, no_quick_actions, publish_gitlab, resolve_merge_request
from fluxdrive.publish.gitlab_api import GitLabClient
from fluxdrive.publish.render import FINDING_MARKER_RE, SUMMARY_MARKER
from tests.fakes.gitlab_api import LINE_CODE_ERROR, FakeGitLab, merge_request_from_git
from tests.publish.test_github import BASE_DB, BASE_TOOLS, LEGACY, SHELL, SHELL_FIXED, SQL, git

REPO = Path(__file__).resolve().parents[2]
TOKEN = "glpat-fakeGitLabToken0123456789ab"
MR = 7
PROJECT = 42
MR_PATH = rf"/projects/{PROJECT}/merge_requests/{MR}"


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
def gitlab() -> Any:
    with FakeGitLab(token=TOKEN, project_id=PROJECT, project_path="octo/app", max_per_page=1) as fake:
        yield fake


def push(fake: FakeGitLab, repo: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """Push the branch: the fake's merge request gets a new version and the real diff; CI's variables point at it."""
    fake.add_merge_request(MR, **merge_request_from_git(repo, "main", "HEAD"))
    for name, value in {
        "GITLAB_TOKEN": TOKEN,
        "CI_API_V4_URL": fake.url,
        "CI_PROJECT_ID": str(PROJECT),
        "CI_MERGE_REQUEST_IID": str(MR),
    }.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("CI_MERGE_REQUEST_PROJECT_ID", raising=False)
    monkeypatch.delenv("CI_JOB_TOKEN", raising=False)
    return git(repo, "rev-parse", "HEAD")


def review(repo: Path, out: Path, monkeypatch: pytest.MonkeyPatch, *target: str) -> None:
    monkeypatch.chdir(repo)
    args = [*target] if target else ["--diff", "main"]
    assert main(["review", *args, "--yes", "--quiet", "--fail-on", "never", "--output-dir", str(out)]) == 0


def publish(monkeypatch: pytest.MonkeyPatch, repo: Path, *args: str) -> int:
    monkeypatch.chdir(repo)
    return main(["publish", "gitlab", *args])


def summary_notes(fake: FakeGitLab) -> list[dict[str, Any]]:
    return [n for n in fake.notes(MR) if SUMMARY_MARKER in n["body"]]


def by_path(fake: FakeGitLab, path: str) -> dict[str, Any]:
    return next(d for d in fake.threads(MR) if d["notes"][0]["position"]["new_path"] == path)


def findings_file(out: Path, findings: list[dict[str, Any]], verdict: str = "needs-changes") -> None:
    out.mkdir(parents=True, exist_ok=True)
    counts: dict[str, int] = {}
    for f in findings:
        counts[f["severity"]] = counts.get(f["severity"], 0) + 1
    (out / "findings.json").write_text(
        json.dumps({"verdict": verdict, "counts": counts, "findings": findings, "agents": []})
    )


def finding(location: str, title: str = "range", **extra: Any) -> dict[str, Any]:
    return {
        "id": "P1-1",
        "severity": "P1",
        "agents": ["fd-correctness"],
        "section": location.split(":")[0],
        "title": title,
        "location": location,
        "locations": [location],
        "source_ids": {},
        "rules": [],
        "cwe": [],
        **extra,
    }


# --- the whole flow -------------------------------------------------------------------------------------


def test_review_publish_fix_republish(
    project: Path,
    gitlab: FakeGitLab,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    head = push(gitlab, project, monkeypatch)
    first = tmp_path / "run1"
    # what the example pipeline runs: the Code Quality report on stdout, the run in --output-dir
    monkeypatch.chdir(project)
    code = main(
        [
            "review",
            "--diff",
            "main",
            "--yes",
            "--fail-on",
            "never",
            "--format",
            "codeclimate",
            "--output-dir",
            str(first),
        ]
    )
    assert code == 0
    quality = json.loads(capsys.readouterr().out)
    assert {issue["location"]["path"] for issue in quality} == {"app/db.py", "app/tools.py"}
    findings = json.loads((first / "findings.json").read_text())["findings"]
    assert {f["location"] for f in findings} == {"app/db.py:10", "app/tools.py:9"}

    assert publish(monkeypatch, project, str(first)) == 0
    printed = capsys.readouterr()
    assert f"octo/app!{MR}" not in printed.out and f"{PROJECT}!{MR}" in printed.out
    assert "2 new discussion(s)" in printed.out and head[:12] in printed.out

    # one discussion per finding, on the changed line, positioned on the latest version's SHAs
    posts = gitlab.calls("POST", rf"{MR_PATH}/discussions")
    assert [p.status for p in posts] == [201, 201]
    version = gitlab.merge_requests[MR].versions[0]
    for post in posts:
        position = post.body["position"]
        assert position["position_type"] == "text"
        assert (position["base_sha"], position["start_sha"], position["head_sha"]) == (
            version["base_commit_sha"],
            version["start_commit_sha"],
            head,
        )
        assert "old_line" not in position  # added lines: new_line only
    placed = {(p.body["position"]["new_path"], p.body["position"]["new_line"]) for p in posts}
    assert placed == {("app/db.py", 10), ("app/tools.py", 9)}
    sql = by_path(gitlab, "app/db.py")["notes"][0]
    assert sql["type"] == "DiffNote" and sql["resolvable"] and not sql["resolved"]
    assert "P0" in sql["body"] and "SQL" in sql["body"] and "**Fix:**" in sql["body"] and "fd-safety" in sql["body"]
    assert FINDING_MARKER_RE.search(sql["body"])
    # one summary note
    (summary,) = summary_notes(gitlab)
    assert "risky" in summary["body"] and "2 finding(s) on changed lines" in summary["body"]
    # every list was read page by page (one item per page on this fake), following Link
    pages = gitlab.calls("GET", rf"{MR_PATH}/diffs")
    assert pages[0].query["per_page"] == ["100"] and [p.query.get("page") for p in pages] == [None, ["2"]]

    # the shell injection is fixed and pushed; the review runs again
    (project / "app" / "tools.py").write_text(BASE_TOOLS + SHELL_FIXED)
    git(project, "commit", "-q", "-am", "no shell")
    head = push(gitlab, project, monkeypatch)
    second = tmp_path / "run2"
    review(project, second, monkeypatch)
    assert [f["location"] for f in json.loads((second / "findings.json").read_text())["findings"]] == ["app/db.py:10"]
    capsys.readouterr()
    assert publish(monkeypatch, project, str(second)) == 0
    printed = capsys.readouterr()
    assert "0 new discussion(s); 1 already discussed; 1 fixed finding(s) resolved" in printed.out, printed

    # no duplicate discussion; the fixed finding's discussion is resolved, the other stays open
    assert len(gitlab.calls("POST", rf"{MR_PATH}/discussions")) == 2 and len(gitlab.threads(MR)) == 2
    shell, sql_thread = by_path(gitlab, "app/tools.py"), by_path(gitlab, "app/db.py")
    assert shell["notes"][0]["resolved"] is True and sql_thread["notes"][0]["resolved"] is False
    resolves = gitlab.calls("PUT", rf"{MR_PATH}/discussions/[0-9a-f]+")
    assert [(r.path, r.query) for r in resolves] == [(f"{MR_PATH}/discussions/{shell['id']}", {"resolved": ["true"]})]
    # the summary note was edited in place
    assert len(summary_notes(gitlab)) == 1 and summary_notes(gitlab)[0]["id"] == summary["id"]
    edits = gitlab.calls("PUT", rf"{MR_PATH}/notes/\d+")
    assert [e.path for e in edits] == [f"{MR_PATH}/notes/{summary['id']}"]
    assert "1 fixed since the last run" in summary_notes(gitlab)[0]["body"] and head[:12] in edits[0].body["body"]

    # a third run changes nothing but the summary; a resolved discussion is not resolved again
    assert publish(monkeypatch, project, str(second)) == 0
    assert len(gitlab.threads(MR)) == 2 and len(summary_notes(gitlab)) == 1
    assert len(gitlab.calls("PUT", rf"{MR_PATH}/discussions/[0-9a-f]+")) == 1

    # every request authenticated with PRIVATE-TOKEN; the token is nowhere but that header
    assert all(r.authorized for r in gitlab.requests)
    assert not gitlab.quick_actions
    assert TOKEN not in gitlab.log_text()
    assert TOKEN not in printed.out + printed.err


def test_finding_outside_the_diff_goes_to_the_summary_only(
    project: Path, gitlab: FakeGitLab, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    push(gitlab, project, monkeypatch)
    out = tmp_path / "run"
    review(project, out, monkeypatch, ".")  # the whole project: the old injection in app/legacy.py too
    locations = {f["location"] for f in json.loads((out / "findings.json").read_text())["findings"]}
    assert "app/legacy.py:2" in locations
    assert publish(monkeypatch, project, "--filter", "nofilter", str(out)) == 0  # default added: left out
    posted = [p.body["position"]["new_path"] for p in gitlab.calls("POST", rf"{MR_PATH}/discussions")]
    assert sorted(posted) == ["app/db.py", "app/tools.py"]
    body = summary_notes(gitlab)[0]["body"]
    assert "Findings outside the diff" in body and "app/legacy.py:2" in body
    assert "app/db.py:10" not in body  # discussed findings are not repeated in the summary table


# --- errors ---------------------------------------------------------------------------------------------


def test_no_token_is_one_line_exit_2(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    review(project, out, monkeypatch)
    monkeypatch.delenv("GITLAB_TOKEN", raising=False)
    monkeypatch.setenv("CI_JOB_TOKEN", "job-token-value-123")
    capsys.readouterr()
    assert publish(monkeypatch, project, str(out), "--project-id", "42", "--mr", "7") == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "GITLAB_TOKEN is not set" in err and "CI_JOB_TOKEN cannot" in err
    assert "job-token-value-123" not in err


def test_no_merge_request_is_one_line_exit_2(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    review(project, out, monkeypatch)
    monkeypatch.setenv("GITLAB_TOKEN", TOKEN)
    monkeypatch.setenv("CI_PROJECT_ID", "42")
    monkeypatch.delenv("CI_MERGE_REQUEST_IID", raising=False)
    capsys.readouterr()
    assert publish(monkeypatch, project, str(out)) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no merge request" in err and TOKEN not in err


def test_an_error_that_echoes_the_token_is_masked(
    project: Path,
    gitlab: FakeGitLab,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    push(gitlab, project, monkeypatch)
    out = tmp_path / "run"
    review(project, out, monkeypatch)
    gitlab.fail("GET", rf"{MR_PATH}/versions", 403, message=f"403 Forbidden - token {TOKEN} lacks the api scope")
    capsys.readouterr()
    assert publish(monkeypatch, project, str(out)) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "403" in err and "****" in err and "api scope" in err and TOKEN not in err


def test_a_refused_token_says_which_variable(
    project: Path,
    gitlab: FakeGitLab,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    push(gitlab, project, monkeypatch)
    out = tmp_path / "run"
    review(project, out, monkeypatch)
    monkeypatch.setenv("GITLAB_TOKEN", "glpat-wrongTokenWrongToken000000")
    capsys.readouterr()
    assert publish(monkeypatch, project, str(out)) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "401 Unauthorized" in err and "GITLAB_TOKEN" in err
    assert "wrongToken" not in err
    assert gitlab.requests and not any(r.authorized for r in gitlab.requests)


def test_retries_a_5xx_and_a_rate_limit(
    project: Path, gitlab: FakeGitLab, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    push(gitlab, project, monkeypatch)
    out = tmp_path / "run"
    review(project, out, monkeypatch)
    by_name = r"/projects/octo%2Fapp/merge_requests/7"  # the project by its path, URL-encoded
    gitlab.fail("GET", rf"{by_name}/diffs", 502, message="502 Bad Gateway")
    gitlab.fail("POST", rf"{by_name}/discussions", 429, headers={"Retry-After": "0"}, message="Retry later")
    env = {"GITLAB_TOKEN": TOKEN, "CI_API_V4_URL": gitlab.url}
    result = publish_gitlab(
        out, root=project, env=env, project="octo/app", mr=MR, client=lambda t, a: GitLabClient(t, a, backoff=0)
    )
    assert result.discussions_posted == 2 and result.summary_note_id
    assert [r.status for r in gitlab.calls("POST", rf"{by_name}/discussions")] == [429, 201, 201]
    assert [r.status for r in gitlab.calls("GET", rf"{by_name}/diffs")][:2] == [502, 200]


def test_a_refused_line_moves_the_finding_to_the_summary(
    project: Path, gitlab: FakeGitLab, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    push(gitlab, project, monkeypatch)
    out = tmp_path / "run"
    review(project, out, monkeypatch)
    gitlab.fail("POST", rf"{MR_PATH}/discussions", 400, message=LINE_CODE_ERROR)  # the MR moved meanwhile
    assert publish(monkeypatch, project, str(out)) == 0
    assert [r.status for r in gitlab.calls("POST", rf"{MR_PATH}/discussions")] == [400, 201]
    body = summary_notes(gitlab)[0]["body"]
    assert "Findings outside the diff" in body and "1 finding(s) on changed lines" in body


# --- GitLab's variants ----------------------------------------------------------------------------------


def test_older_gitlab_changes_endpoint_and_x_next_page(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before 15.7 there is no /diffs (404): /changes; an instance without Link: X-Next-Page."""
    with FakeGitLab(token=TOKEN, project_id=PROJECT, max_per_page=1, diffs_endpoint=False, link_header=False) as fake:
        push(fake, project, monkeypatch)
        out = tmp_path / "run"
        review(project, out, monkeypatch)
        assert publish(monkeypatch, project, str(out)) == 0
        assert [r.status for r in fake.calls("GET", rf"{MR_PATH}/diffs")] == [404]
        assert fake.calls("GET", rf"{MR_PATH}/changes")[0].status == 200
        assert len(fake.threads(MR)) == 2
        assert publish(monkeypatch, project, str(out)) == 0  # the discussions, two pages, are found again
        pages = fake.calls("GET", rf"{MR_PATH}/discussions")
        assert [p.query.get("page") for p in pages[-3:]] == [None, ["2"], ["3"]]
        assert len(fake.threads(MR)) == 2 and len(summary_notes(fake)) == 1


def test_an_unchanged_line_carries_both_numbers(gitlab: FakeGitLab, tmp_path: Path) -> None:
    diff = "@@ -1,4 +1,5 @@\n a\n-b\n+B\n+C\n c\n d"
    version = {"base_commit_sha": "b" * 40, "start_commit_sha": "s" * 40, "head_commit_sha": "h" * 40}
    gitlab.add_merge_request(
        MR, versions=[version], diffs=[{"old_path": "old.py", "new_path": "m.py", "diff": diff, "renamed_file": True}]
    )
    out = tmp_path / "run"
    findings_file(
        out, [finding("m.py:4"), dict(finding("m.py:2-3", "added"), id="P1-2", locations=["m.py:2-3", "x.py:9"])]
    )
    env = {
        "GITLAB_TOKEN": TOKEN,
        "CI_API_V4_URL": gitlab.url,
        "CI_PROJECT_ID": str(PROJECT),
        "CI_MERGE_REQUEST_IID": "7",
    }
    result = publish_gitlab(out, root=tmp_path, env=env, line_filter="diff_context")
    assert result.discussions_posted == 2 and result.commit == "h" * 40
    positions = [p.body["position"] for p in gitlab.calls("POST", rf"{MR_PATH}/discussions")]
    assert (positions[0]["old_path"], positions[0]["new_line"], positions[0]["old_line"]) == ("old.py", 4, 3)
    assert positions[1]["new_line"] == 3 and "old_line" not in positions[1]  # a range: its last line
    assert "x.py:9" in gitlab.threads(MR)[1]["notes"][0]["body"]


def test_review_text_cannot_run_quick_actions(gitlab: FakeGitLab, tmp_path: Path) -> None:
    gitlab.add_merge_request(
        MR,
        versions=[{"base_commit_sha": "b" * 40, "start_commit_sha": "s" * 40, "head_commit_sha": "h" * 40}],
        diffs=[{"old_path": "m.py", "new_path": "m.py", "diff": "@@ -0,0 +1,2 @@\n+a\n+b"}],
    )
    out = tmp_path / "run"
    findings_file(out, [finding("m.py:1"), dict(finding("z.py:5", "outside\n/close"), id="P1-2")])
    (out / "fd-correctness.md").write_text("")
    data = json.loads((out / "findings.json").read_text())
    data["incomplete_reasons"], data["complete"] = ["timed out\n/merge"], False
    (out / "findings.json").write_text(json.dumps(data))
    env = {"GITLAB_TOKEN": TOKEN, "CI_API_V4_URL": gitlab.url}
    publish_gitlab(out, root=tmp_path, env=env, project="42", mr=MR)
    assert gitlab.quick_actions == []
    assert no_quick_actions("a\n/merge\n  /close") == "a\n\u200b/merge\n  \u200b/close"


def test_the_fake_refuses_a_line_outside_the_diff(gitlab: FakeGitLab) -> None:
    version = {"base_commit_sha": "b" * 40, "start_commit_sha": "s" * 40, "head_commit_sha": "h" * 40}
    gitlab.add_merge_request(
        MR, versions=[version], diffs=[{"old_path": "m.py", "new_path": "m.py", "diff": "@@ -1 +1 @@\n-a\n+b"}]
    )
    position = {
        "position_type": "text",
        "base_sha": "b" * 40,
        "start_sha": "s" * 40,
        "head_sha": "h" * 40,
        "old_path": "m.py",
        "new_path": "m.py",
        "new_line": 5,
    }
    with GitLabClient(TOKEN, gitlab.url, backoff=0) as gl:
        response = gl._client.post(f"{MR_PATH}/discussions", json={"body": "no", "position": position})
    assert response.status_code == 400
    assert response.json() == {"message": LINE_CODE_ERROR}
    assert not gitlab.discussions


def test_target_from_ci_variables_and_options() -> None:
    env = {"CI_API_V4_URL": "https://gl.example.com/api/v4/", "CI_PROJECT_ID": "5", "CI_MERGE_REQUEST_IID": "11"}
    assert resolve_merge_request(env) == MergeRequest("https://gl.example.com/api/v4", "5", 11)
    assert resolve_merge_request({**env, "CI_MERGE_REQUEST_PROJECT_ID": "6"}).project == "6"
    target = resolve_merge_request(env, project="group/sub/app", mr=3, api_url="http://127.0.0.1:1/api/v4")
    assert target.path == "/projects/group%2Fsub%2Fapp/merge_requests/3"
    assert resolve_merge_request({"CI_PROJECT_ID": "5"}, mr=2).api_url == "https://gitlab.com/api/v4"
    for bad in ({"CI_PROJECT_ID": "5"}, {"CI_MERGE_REQUEST_IID": "1"}, {**env, "CI_MERGE_REQUEST_IID": "x"}):
        with pytest.raises(UsageError):
            resolve_merge_request(bad)
    with pytest.raises(UsageError):
        resolve_merge_request(env, api_url="gitlab.com")


# --- the example pipeline -------------------------------------------------------------------------------


def test_gitlab_ci_example_is_a_merge_request_pipeline() -> None:
    pipeline = yaml.safe_load((REPO / ".gitlab-ci.example.yml").read_text())
    job = pipeline["fluxdrive-review"]
    assert job["stage"] in pipeline["stages"]
    assert job["rules"] == [{"if": '$CI_PIPELINE_SOURCE == "merge_request_event"'}]
    assert job["variables"]["GIT_DEPTH"] == "0" and job["variables"]["FD_FAIL_ON"] == "risky"
    assert any("pip install" in line for line in job["before_script"])
    script = "\n".join(job["script"])
    assert 'git fetch --no-tags origin "+refs/heads/$CI_MERGE_REQUEST_TARGET_BRANCH_NAME' in script
    assert "git merge-base" in script and "CI_MERGE_REQUEST_DIFF_BASE_SHA" in script
    review_line = next(line for line in job["script"] if line.startswith("fluxdrive review"))
    assert '--diff "$BASE" --yes --fail-on never' in review_line
    assert review_line.endswith("--format codeclimate > gl-code-quality-report.json")
    assert 'fluxdrive publish gitlab "$FD_OUT"' in script
    assert 'fluxdrive synthesize "$FD_OUT" --fail-on "$FD_FAIL_ON"' in script
    assert job["artifacts"]["reports"]["codequality"] == "gl-code-quality-report.json"
    assert job["artifacts"]["when"] == "always"
    assert "CI_JOB_TOKEN" not in script  # it cannot post discussions


def test_publish_gitlab_help_lists_the_options(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["publish", "gitlab", "--help"]) == 0
    shown = capsys.readouterr().out
    assert all(option in shown for option in ("--project-id", "--mr", "--api-url", "GITLAB_TOKEN"))


def test_review_publish_gitlab_in_one_command(project: Path, gitlab: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """``review --publish gitlab``: the merge request gets its discussions and summary note from one command."""
    push(gitlab, project, monkeypatch)
    monkeypatch.chdir(project)
    assert main(["review", "--diff", "main", "--yes", "-q", "--fail-on", "never", "--publish", "gitlab"]) == 0
    assert len(summary_notes(gitlab)) == 1
    assert gitlab.threads(MR), "the findings on changed lines became discussions"
