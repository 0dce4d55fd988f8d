"""Grounding (issue 31, item 3): a finding must point at lines and code that are in the reviewed input.

The end-to-end test runs a real ``fluxdrive review --runtime llm`` process against the wire-level fake
provider (tests/fakes/llm_server.py); only the model's answer is scripted, the way real models go wrong:
a line past the end of the file, and code that is not in it. The unit tests drive the pure module
with an in-memory reader, and its disk edge against real files.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from fluxdrive.publish.render import finding_comment
from fluxdrive.publish.report import load_run
from fluxdrive.synthesis.grounding import judge, project_reader, quotes
from fluxdrive.synthesis.model import Grounding
from tests.conftest import committed_copy, run_fluxdrive
from tests.fakes.llm_server import FakeProvider, Text

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "projects" / "py-webapp"
KEY = "sk-test-SECRETSECRETSECRET0123456789"
CLEAN = "### Findings Index\nVerdict: safe\n\n### Summary\nNothing in my lane.\n"
# shop/db.py has 31 lines; line 15 is: cur.execute("SELECT id, name, email FROM users WHERE name = '%s'" % name)
SCRIPTED = (
    "### Findings Index\n"
    '- P1 | SF-001 | "shop/db.py" | SQL built with `"... WHERE name = \'%s\'" % name` reaches '
    "cur.execute() in find_user() | shop/db.py:15\n"
    '- P1 | SF-002 | "shop/db.py" | `models.User( row[0],row[1],  row[2] )` trusts a row that may be None'
    " | shop/db.py:17\n"
    '- P0 | SF-003 | "shop/db.py" | Password compared in plain text in check_password() | shop/db.py:93\n'
    '- P0 | SF-004 | "shop/db.py" | Untrusted bytes unpickled with `pickle.loads(request.data)` | shop/db.py:24\n'
    "Verdict: risky\n\n### Summary\nFour findings.\n"
)
PAST_END = "shop/db.py has 31 lines; the finding cites line 93"
INVENTED = "the quoted code `pickle.loads(request.data)` does not occur in shop/db.py"


@pytest.fixture
def provider(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeProvider]:
    with FakeProvider(default=Text(CLEAN)) as fake:
        monkeypatch.setenv("OPENAI_BASE_URL", fake.base_url_openai)
        monkeypatch.setenv("OPENAI_API_KEY", KEY)
        yield fake


def test_a_model_citing_missing_lines_or_invented_code_is_demoted(tmp_path: Path, provider: FakeProvider) -> None:
    project = committed_copy(FIXTURE, tmp_path / "shop")
    provider.script("Review task for fd-safety", [Text(SCRIPTED)])
    out = tmp_path / "run"
    done = run_fluxdrive(
        "review", ".", "--yes", "--set", "evidence.enabled=false", "--expand", "none", "--runtime", "llm", "--model", "openai:gpt-4o",
        "--fail-on", "never", "--output-dir", out, cwd=project,
    )  # fmt: skip
    assert done.code == 0, done.err
    # Two P0s the model made up no longer make the review risky: the grounded P1s decide.
    assert done.out.startswith("Verdict: NEEDS-CHANGES"), done.out
    assert done.out.count("[ungrounded]") == 2, done.out

    document = json.loads((out / "findings.json").read_text())
    assert document["verdict"] == "needs-changes" and document["counts"]["P0"] == 0
    by_id = {f["source_ids"]["fd-safety"]: f for f in document["findings"]}
    assert by_id["SF-001"]["severity"] == "P1" and by_id["SF-001"]["grounding"] == {
        "grounded": True,
        "reason": "",
        "demoted_from": None,
    }
    assert by_id["SF-002"]["severity"] == "P1" and by_id["SF-002"]["grounding"]["grounded"] is True
    assert by_id["SF-003"]["severity"] == "P2"
    assert by_id["SF-003"]["grounding"] == {"grounded": False, "reason": PAST_END, "demoted_from": "P0"}
    assert by_id["SF-004"]["severity"] == "P2"
    assert by_id["SF-004"]["grounding"] == {"grounded": False, "reason": INVENTED, "demoted_from": "P0"}

    summary = (out / "summary.md").read_text()
    assert f"**[ungrounded]** {PAST_END} (demoted from P0)" in summary
    assert "**[ungrounded]** the quoted code" in summary and "does not occur in shop/db.py" in summary

    results = json.loads((out / "findings.sarif").read_text())["runs"][0]["results"]
    by_place = {r["locations"][0]["physicalLocation"]["region"]["startLine"]: r for r in results}
    assert by_place[93]["level"] == "note"
    assert by_place[93]["properties"]["grounding"] == {"grounded": False, "reason": PAST_END, "demotedFrom": "P0"}
    assert by_place[24]["properties"]["grounding"]["reason"] == INVENTED
    assert by_place[15]["level"] == "error" and "grounding" not in by_place[15]["properties"]

    published = {f.title: f for f in load_run(out, project).findings}
    demoted = next(f for t, f in published.items() if "check_password" in t)
    assert f"Not grounded: {PAST_END}" in finding_comment(demoted)
    kept = next(f for t, f in published.items() if "find_user" in t)
    assert "Not grounded" not in finding_comment(kept)


# The pure module, with files held in memory.
DB = "def find_user(conn, name):\n    cur = conn.cursor()\n    cur.execute(\n        q % name\n    )\n"
PLAN = "# Plan\n\n## Rollback\n\nSteps.\n\n```\n# Not a heading\n```\n"
FILES = {"shop/db.py": DB, "docs/plan.md": PLAN}


def _read(path: str) -> str | None:
    return FILES.get(path)


def test_quotes_match_whitespace_insensitively_anywhere_in_the_cited_file() -> None:
    assert judge(["shop/db.py:1"], "Injection via `cur.execute(q % name)`", _read) == Grounding(True)
    assert judge(["shop/db.py:2"], "calls `cur.execute( q%name )` and `find_user()`", _read) == Grounding(True)
    missing = judge(["shop/db.py:3"], "Injection via `cur.execute(q + name)`", _read)
    assert missing == Grounding(False, "the quoted code `cur.execute(q + name)` does not occur in shop/db.py")
    assert not judge(["shop/db.py:1"], "`find_userr()` is never called", _read).grounded  # type: ignore[union-attr]


def test_only_code_like_backtick_spans_are_quotes() -> None:
    assert quotes("`name` in `shop/db.py` and `db.py` reaches `cur.execute(q)` via `a = b`") == [
        "cur.execute(q)",
        "a = b",
    ]


def test_line_ranges_and_missing_files() -> None:
    assert judge(["shop/db.py:3-5"], "a call spread over lines", _read) == Grounding(True)
    assert judge(["shop/db.py:4-9"], "t", _read) == Grounding(
        False, "shop/db.py has 5 lines; the finding cites lines 4-9"
    )
    assert judge(["shop/db.py:6:2"], "t", _read) == Grounding(False, "shop/db.py has 5 lines; the finding cites line 6")
    assert judge(["shop/dbb.py:1"], "t", _read) == Grounding(False, "no file shop/dbb.py in the reviewed input")
    # every place must hold: a grouped finding with one bad place is not grounded
    assert not judge(["shop/db.py:1", "shop/db.py:50"], "t", _read).grounded  # type: ignore[union-attr]
    assert judge([], "`made.up(code)` about the change as a whole", _read) is None


def test_a_document_section_is_grounded_when_the_heading_exists() -> None:
    assert judge(["section: Rollback"], "t", _read, ["docs/plan.md"]) == Grounding(True)
    assert judge(["section:  rollback "], "t", _read, ["docs/plan.md"]) == Grounding(True)
    assert judge(["section: Not a heading"], "t", _read, ["docs/plan.md"]) == Grounding(
        False, "no heading 'Not a heading' in docs/plan.md"
    )
    assert judge(["section: Rollback"], "t", _read, []) is None  # no document to look in: not judged


def test_the_disk_reader_stays_in_the_project(tmp_path: Path) -> None:
    root = tmp_path / "project"
    (root / "shop").mkdir(parents=True)
    (root / "shop" / "db.py").write_text(DB)
    (tmp_path / "secret.py").write_text("x = 1\n" * 100)
    (root / "shop" / "link.py").symlink_to(tmp_path / "secret.py")
    (root / "big.py").write_text("x = 1\n" * 100)
    read = project_reader(root, limit=200)
    assert judge(["shop/db.py:5"], "`cur.execute(q % name)`", read) == Grounding(True)
    assert judge(["shop/link.py:50"], "t", read) == Grounding(False, "no file shop/link.py in the reviewed input")
    assert judge(["big.py:500"], "t", read) is None  # too large to read: not judged, never demoted on a guess


def test_a_diff_review_is_not_judged_against_a_working_tree_without_the_change(
    tmp_path: Path, provider: FakeProvider
) -> None:
    """A saved diff of a change that is not checked out: its line 40 exists only in the diff. Judging it
    against the working tree (31 lines) would demote a true finding; a diff is not judged (yet)."""
    import subprocess

    project = committed_copy(FIXTURE, tmp_path / "shop")
    db = project / "shop" / "db.py"
    original = db.read_text()
    db.write_text(original + "\n" * 6 + "def purge(name):\n    return eval(name)\n" + "\n" * 3)
    change = tmp_path / "change.diff"
    change.write_text(subprocess.run(["git", "diff"], cwd=project, capture_output=True, text=True, check=True).stdout)
    db.write_text(original)  # the change is not in the working tree
    provider.script(
        "Review task for fd-safety",
        [Text('### Findings Index\n- P0 | SF-001 | "shop/db.py" | eval() of a name in purge() | shop/db.py:39\n'
              "Verdict: risky\n\n### Summary\nOne.\n")],
    )  # fmt: skip
    out = tmp_path / "run"
    done = run_fluxdrive(
        "review", change, "--project", project, "--yes", "--expand", "none", "--runtime", "llm",
        "--model", "openai:gpt-4o", "--agents", "safety", "--fail-on", "never", "--output-dir", out, cwd=project,
    )  # fmt: skip
    assert done.code == 0, done.err
    findings = json.loads((out / "findings.json").read_text())["findings"]
    assert [(f["severity"], f["grounding"]) for f in findings if "purge" in f["title"]] == [("P0", None)]
