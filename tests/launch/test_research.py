"""Research between stages: which findings trigger it, and what the offline researchers answer.

Real git repositories built in tmp_path, real files; the only stand-ins are
executors passed through the executor table (a slow one for the timeout, a
crashing one for the error path).
"""

from __future__ import annotations

import os
import subprocess
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from fluxdrive.agents import Roster, load_roster
from fluxdrive.contracts.run_manifest import ResearchRecord
from fluxdrive.launch import research
from fluxdrive.launch.research import (
    COMPARISON_PHRASES,
    OUTWARD_PHRASES,
    Point,
    ResearchAnswer,
    ResearchRequest,
    Trigger,
    find_triggers,
    render_answer,
    run_research,
)
from fluxdrive.synthesis.model import Finding

SECTIONS = ["### Sources", "### Findings", "### Confidence", "### Gaps"]


def git(root: Path, *args: str, author: str = "alice") -> str:
    proc = subprocess.run(
        ["git", "-c", f"user.email={author}@example.com", "-c", f"user.name={author}", *args],
        cwd=root, capture_output=True, text=True, check=True,
    )  # fmt: skip
    return proc.stdout


def write(root: Path, files: dict[str, str]) -> None:
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def commit(root: Path, message: str, files: dict[str, str], *, author: str = "alice") -> str:
    write(root, files)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", message, author=author)
    return git(root, "rev-parse", "--short=7", "HEAD").strip()


DB_V1 = """\
import sqlite3


def connect(path):
    return sqlite3.connect(path)


def save(conn, user_id, name):
    cursor = conn.cursor()
    cursor.execute("INSERT INTO users VALUES (?, ?)", (user_id, name))
    conn.commit()
    return cursor.lastrowid
"""

API = """\
from app.db import connect, save


def create(name):
    conn = connect("app.db")
    return save(conn, 1, name)
"""

TEST_DB = """\
from app.db import save


def test_save(conn):
    assert save(conn, 1, "x") == 1
"""


@pytest.fixture
def repo(tmp_path: Path) -> dict[str, object]:
    """A project with four commits: db module, api caller, a fix to line 10, tests."""
    root = tmp_path / "project"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    first = commit(root, "Add db module", {"app/__init__.py": "", "app/db.py": DB_V1})
    second = commit(root, "Add api", {"app/api.py": API}, author="bob")
    fixed = DB_V1.replace(
        '    cursor.execute("INSERT INTO users VALUES (?, ?)", (user_id, name))',
        "    cursor.execute(\"INSERT INTO users VALUES (%s, '%s')\" % (user_id, name))",
    )
    fix = commit(root, "Fix insert bug in save", {"app/db.py": fixed}, author="bob")
    tests = commit(root, "Add tests", {"tests/__init__.py": "", "tests/test_db.py": TEST_DB}, author="carol")
    return {"root": root, "first": first, "second": second, "fix": fix, "tests": tests}


@pytest.fixture(scope="module")
def roster() -> Roster:
    return load_roster()


def finding(
    fid: str = "SF-1",
    severity: str = "P0",
    title: str = "Query built by string formatting, a regression",
    *,
    location: str | None = "app/db.py:10",
    agents: tuple[str, ...] = ("fd-safety",),
    section: str = "Security",
    descriptions: dict[str, str] | None = None,
    improvement: bool = False,
    locations: list[str] | None = None,
) -> Finding:
    return Finding(
        id=fid,
        severity=severity,
        agents=list(agents),
        section=section,
        title=title,
        locations=locations if locations is not None else ([location] if location else []),
        descriptions=descriptions or {},
        improvement=improvement,
    )


def trigger_for(agent: str, location: str | None = "app/db.py:10", *, locations: tuple[str, ...] = ()) -> Trigger:
    return Trigger(
        finding_id="SF-1",
        severity="P0",
        agents=("fd-safety",),
        location=location,
        matched="regression",
        research_agent=agent,
        question=f"fd-safety P0 at {location}: something — {agent}?",
        title="something",
        locations=locations or ((location,) if location else ()),
    )


def assert_contract(text: str) -> None:
    lines = text.splitlines()
    assert len(lines) < 60
    positions = [lines.index(s) for s in SECTIONS]
    assert positions == sorted(positions)
    confidence = lines[positions[2] + 1]
    assert confidence.split(" - ")[0] in {"high", "medium", "low"}


# --------------------------------------------------------------------------
# find_triggers


def test_p2_p3_and_improvements_never_trigger(roster: Roster) -> None:
    findings = [
        finding("A-1", "P2", "Not the best practice for retries"),
        finding("A-2", "P3", "Framework docs say otherwise"),
        finding("A-3", "P1", "Use the recommended framework helper", improvement=True),
    ]
    assert find_triggers(findings, roster) == []


def test_findings_that_do_not_refer_outward_do_not_trigger(roster: Roster) -> None:
    findings = [finding("A-1", "P0", "SQL injection in save"), finding("A-2", "P1", "Off-by-one in the page loop")]
    assert find_triggers(findings, roster) == []


def test_whole_words_only(roster: Roster) -> None:
    assert find_triggers([finding(title="Conversion of standardized values overflows")], roster) == []
    found = find_triggers([finding(title="Two versions of the parser disagree")], roster)
    assert [t.matched for t in found] == ["version"]


def test_descriptions_and_section_count(roster: Roster) -> None:
    in_description = finding(title="Token leaks", descriptions={"fd-safety": "This usually ends up in logs."})
    in_section = finding(title="Token leaks", section="Deprecated API use")
    assert [t.matched for t in find_triggers([in_description], roster)] == ["usually"]
    assert [t.matched for t in find_triggers([in_section], roster)] == ["deprecated"]


@pytest.mark.parametrize(
    ("title", "matched"),
    [
        ("Retry loop versus exponential backoff", "versus"),
        ("Polling vs. events for completion", "vs"),
        ("Locks instead of a queue", "instead of"),
        ("Either a mutex or an atomic would do", "either"),
        ("This used to validate the header", "used to"),
        ("Cache is typically unbounded", "typically"),
    ],
)
def test_phrase_list(roster: Roster, title: str, matched: str) -> None:
    assert [t.matched for t in find_triggers([finding(title=title)], roster)] == [matched]
    assert matched in OUTWARD_PHRASES + COMPARISON_PHRASES


def test_two_highest_severity_first_one_per_agent(roster: Roster) -> None:
    findings = [
        finding("QU-1", "P1", "Callers duplicate this helper; usually extracted", agents=("fd-quality",)),
        finding("SF-1", "P0", "Deprecated API of the framework version in use"),
        finding("CO-1", "P1", "A regression since the refactor", agents=("fd-correctness",)),
        finding("SF-2", "P0", "Not the recommended best practice for hashing"),
    ]
    found = find_triggers(findings, roster)
    assert [(t.finding_id, t.research_agent) for t in found] == [("SF-1", "framework-docs"), ("SF-2", "best-practices")]
    assert [(t.finding_id, t.research_agent) for t in find_triggers(findings, roster, limit=4)] == [
        ("SF-1", "framework-docs"),
        ("SF-2", "best-practices"),
        ("QU-1", "repo-research"),
        ("CO-1", "git-history"),
    ]
    assert find_triggers(findings, roster, limit=1) == found[:1]
    assert find_triggers(findings, roster, limit=0) == []


def test_routing_by_concerns(roster: Roster) -> None:
    cases = {
        "A regression: this used to be checked before the refactor": "git-history",
        "Callers elsewhere in the codebase are untested; usually a helper": "repo-research",
        "Deprecated API; the docs of the library version say so": "framework-docs",
        "Not the recommended best practice; OWASP standard says otherwise": "best-practices",
        "A known gotcha that recurs again; usually the same workaround": "learnings",
    }
    for title, agent in cases.items():
        assert [t.research_agent for t in find_triggers([finding(title=title)], roster)] == [agent], title


def test_no_concern_matches_routes_to_repo_research_and_ties_follow_preference(roster: Roster) -> None:
    nothing = find_triggers([finding(title="Threads vs processes for the pool")], roster)
    assert [(t.matched, t.research_agent) for t in nothing] == [("vs", "repo-research")]
    tie = find_triggers([finding(title="A regression reported by callers, usually")], roster)
    # one concern each for git-history ("regression"), repo-research ("callers"), best-practices ("usually")
    assert [t.research_agent for t in tie] == ["git-history"]


def test_a_taken_agent_is_never_used_twice(roster: Roster) -> None:
    findings = [
        finding("SF-1", "P0", "A regression in the check"),
        finding("SF-2", "P0", "Another regression in the check"),
        finding("SF-3", "P0", "A third regression"),
    ]
    found = find_triggers(findings, roster, limit=5)
    assert [(t.finding_id, t.research_agent) for t in found] == [("SF-1", "git-history"), ("SF-2", "repo-research")]


def test_trigger_fields_and_question(roster: Roster) -> None:
    (trigger,) = find_triggers(
        [
            finding(
                title="Query built by string formatting, a regression.",
                agents=("fd-safety", "fd-correctness"),
                locations=["app/db.py:41", "app/api.py:6"],
            )
        ],
        roster,
    )
    assert trigger == Trigger(
        finding_id="SF-1",
        severity="P0",
        agents=("fd-safety", "fd-correctness"),
        location="app/db.py:41",
        matched="regression",
        research_agent="git-history",
        question=(
            "fd-safety, fd-correctness P0 at app/db.py:41: Query built by string formatting, a regression"
            " — what does the repository's history say about how this code came to be?"
        ),
        title="Query built by string formatting, a regression.",
        locations=("app/db.py:41", "app/api.py:6"),
    )
    no_location = find_triggers([finding(title="A regression", location=None)], roster)
    assert no_location[0].location is None
    assert "P0 (no location): A regression —" in no_location[0].question


def test_triggers_are_deterministic(roster: Roster) -> None:
    one = finding(descriptions={"fd-safety": "usually", "fd-correctness": "a regression"})
    two = finding(descriptions={"fd-correctness": "a regression", "fd-safety": "usually"})
    findings = [finding("CO-1", "P1", "Framework docs"), one]
    assert find_triggers(findings, roster) == find_triggers(findings, roster)
    assert find_triggers([one], roster) == find_triggers([two], roster)


def test_no_research_agents_no_triggers() -> None:
    assert find_triggers([finding()], Roster({})) == []


# --------------------------------------------------------------------------
# git-history


def test_git_history_finds_the_fix_commit_and_blame(repo: dict[str, object], tmp_path: Path) -> None:
    root = repo["root"]
    assert isinstance(root, Path)
    out = tmp_path / "out"
    (outcome,) = run_research([trigger_for("git-history")], root=root, output_dir=out, timeout_s=30)
    assert (outcome.agent, outcome.status, outcome.output) == ("git-history", "completed", "research/git-history.md")
    assert outcome.finding_id == "SF-1"
    text = (out / "research" / "git-history.md").read_text()
    assert_contract(text)
    fix, first = repo["fix"], repo["first"]
    assert f"app/db.py:10 was last changed by {fix}" in text
    assert "`cursor.execute(\"INSERT INTO users VALUES (%s, '%s')\" % (user_id, name))`" in text
    assert "Lines 5-12 were last touched by 2 commit(s), newest first:" in text
    assert f"   - {fix} " in text and "bob: Fix insert bug in save (line 10)" in text
    assert f"   - {first} " in text and "alice: Add db module (lines 5-9, 11-12)" in text
    assert "1 commit(s) touching app/db.py say fix, bug, revert or hotfix:" in text
    assert f"recent: the flagged line changed in the latest commit to the file, {fix}" in text
    assert "2 in all; changed most by alice (1), bob (1)." in text
    assert f"high - the diff of {fix} (git show {fix})" in text
    recent = text.index("Recent commits touching app/db.py (2 of 2, newest first):")
    assert text.index(f"   - {fix}", recent) < text.index(f"   - {first}", recent)  # git's newest-first order
    assert not list((out / "research").glob(".*.tmp"))


def test_git_history_masks_secrets_in_quoted_lines(repo: dict[str, object], tmp_path: Path) -> None:
    root = repo["root"]
    assert isinstance(root, Path)
    commit(root, "Add settings", {"app/settings.py": 'DEBUG = True\npassword = "hunter2hunter2"\n'})
    run_research([trigger_for("git-history", "app/settings.py:2")], root=root, output_dir=tmp_path / "o", timeout_s=30)
    text = (tmp_path / "o" / "research" / "git-history.md").read_text()
    assert "hunter2" not in text
    assert '`password = "****"`' in text


def test_git_history_outside_a_repository_is_a_gap(tmp_path: Path) -> None:
    root = tmp_path / "plain"
    write(root, {"app/db.py": DB_V1})
    (outcome,) = run_research([trigger_for("git-history")], root=root, output_dir=tmp_path / "o", timeout_s=30)
    assert outcome.status == "completed"
    text = (tmp_path / "o" / "research" / "git-history.md").read_text()
    assert_contract(text)
    assert "### Confidence\nlow - " in text
    assert "- plain is not a git repository: there is no history to read" in text


def test_git_history_untracked_file_and_missing_line(repo: dict[str, object], tmp_path: Path) -> None:
    root = repo["root"]
    assert isinstance(root, Path)
    write(root, {"app/new.py": "x = 1\n"})
    trigger = trigger_for("git-history", "app/new.py:1", locations=("app/new.py:1", "app/api.py"))
    run_research([trigger], root=root, output_dir=tmp_path / "o", timeout_s=30)
    text = (tmp_path / "o" / "research" / "git-history.md").read_text()
    assert "- app/new.py is not tracked by git (new or ignored): it has no history" in text
    assert "- app/api.py: the location has no line number, so no blame" in text
    assert "Recent commits touching app/api.py (1 of 1, newest first):" in text
    assert "### Confidence\nmedium - " in text


def test_no_location_is_a_gap(repo: dict[str, object], tmp_path: Path) -> None:
    root = repo["root"]
    assert isinstance(root, Path)
    outcomes = run_research([trigger_for("git-history", None)], root=root, output_dir=tmp_path / "o", timeout_s=30)
    assert outcomes[0].status == "completed"
    text = (tmp_path / "o" / "research" / "git-history.md").read_text()
    assert "- the finding has no location: nothing to look up" in text
    assert "### Confidence\nlow - " in text


# --------------------------------------------------------------------------
# repo-research


def test_repo_research_finds_tests_callers_and_related_files(repo: dict[str, object], tmp_path: Path) -> None:
    root = repo["root"]
    assert isinstance(root, Path)
    write(root, {".gitignore": "generated/\n", "generated/copy.py": "from app.db import save\nsave(None, 1, 'x')\n"})
    (outcome,) = run_research(
        [trigger_for("repo-research", "app/db.py:11")], root=root, output_dir=tmp_path / "o", timeout_s=30
    )
    assert (outcome.status, outcome.output) == ("completed", "research/repo-research.md")
    text = (tmp_path / "o" / "research" / "repo-research.md").read_text()
    assert_contract(text)
    assert "1. app/db.py:11 is inside function `save` (defined at app/db.py:8)." in text
    assert "Tests that use `save` or import `db`: 1 file(s)" in text
    assert '   - tests/test_db.py:5 uses `save`: `assert save(conn, 1, "x") == 1` (2 mentions)' in text
    assert "Callers outside tests: 1 file(s) use `save`" in text
    assert "   - app/api.py:6 uses `save`: `return save(conn, 1, name)` (2 mentions)" in text
    assert "Conclusion: used by 1 test file(s); reach: 1 calling file(s)." in text
    assert "Same stem `db`: 1 file(s)\n   - tests/test_db.py" in text
    assert "Same directory (app): 2 other file(s): app/__init__.py, app/api.py" in text
    assert "generated/" not in text  # ignored by .gitignore
    assert "### Confidence\nmedium - " in text


def test_repo_research_module_import_only_and_non_python(tmp_path: Path) -> None:
    root = tmp_path / "web"
    write(
        root,
        {
            "src/cart.js": "export function total(items) {\n  let sum = 0;\n  for (const i of items) sum += i;\n"
            "  return sum;\n}\n",
            "src/cart.test.js": "import { total } from './cart';\ntest('sums', () => expect(total([1])).toBe(1));\n",
            "src/page.js": "import { total } from './cart';\nconst t = total([]);\n",
        },
    )
    run_research([trigger_for("repo-research", "src/cart.js:3")], root=root, output_dir=tmp_path / "o", timeout_s=30)
    text = (tmp_path / "o" / "research" / "repo-research.md").read_text()
    assert "src/cart.js:3 is inside function `total` (defined at src/cart.js:1)." in text
    assert "src/cart.test.js:2 uses `total`" in text
    assert "src/page.js:2 uses `total`: `const t = total([]);`" in text


def test_repo_research_without_symbol_matches_tests_by_import(repo: dict[str, object], tmp_path: Path) -> None:
    root = repo["root"]
    assert isinstance(root, Path)
    run_research([trigger_for("repo-research", "app/db.py:1")], root=root, output_dir=tmp_path / "o", timeout_s=30)
    text = (tmp_path / "o" / "research" / "repo-research.md").read_text()
    assert "No enclosing function or class found for app/db.py:1: tests matched by module import only." in text
    assert "tests/test_db.py:1 imports module `db`: `from app.db import save`" in text
    assert "Callers not searched: no function or class name to look for." in text
    assert "### Confidence\nlow - " in text


def test_locations_outside_the_root_are_never_read(repo: dict[str, object], tmp_path: Path) -> None:
    root = repo["root"]
    assert isinstance(root, Path)
    (tmp_path / "outside.py").write_text("def leaked():\n    return 'OUTSIDE-MARKER'\n")
    (root / "app" / "link.py").symlink_to(tmp_path / "outside.py")
    locations = ("../outside.py:2", "app/link.py:2", f"{tmp_path / 'outside.py'}:1")
    for agent in ("repo-research", "git-history"):
        trigger = trigger_for(agent, locations[0], locations=locations)
        (outcome,) = run_research([trigger], root=root, output_dir=tmp_path / agent, timeout_s=30)
        assert outcome.status == "completed"
        text = (tmp_path / agent / "research" / f"{agent}.md").read_text()
        assert "OUTSIDE-MARKER" not in text and "leaked" not in text
        assert "- `../outside.py:2` is outside the project root; not read" in text
        assert "- `app/link.py:2` is outside the project root; not read" in text
        assert "### Confidence\nlow - " in text


def test_repo_research_skips_symlinked_files_leaving_the_root(tmp_path: Path) -> None:
    root = tmp_path / "project"
    write(root, {"app/db.py": DB_V1})
    (tmp_path / "elsewhere.py").write_text("save(1)  # OUTSIDE-MARKER\n")
    (root / "app" / "caller.py").symlink_to(tmp_path / "elsewhere.py")
    run_research([trigger_for("repo-research", "app/db.py:11")], root=root, output_dir=tmp_path / "o", timeout_s=30)
    text = (tmp_path / "o" / "research" / "repo-research.md").read_text()
    assert "OUTSIDE-MARKER" not in text
    assert "1 file(s) resolving outside the project root were skipped" in text


# --------------------------------------------------------------------------
# running: timeouts, errors, skips, stand-ins, the executor seam


def test_timeout_writes_nothing_and_is_recorded(
    repo: dict[str, object], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = repo["root"]
    assert isinstance(root, Path)
    release = threading.Event()

    def slow(request: ResearchRequest) -> ResearchAnswer:
        release.wait(10)
        return ResearchAnswer(("x",), (Point("late"),), "high", "never written")

    monkeypatch.setitem(research.EXECUTORS, "git-history", slow)
    out = tmp_path / "out"
    stale = out / "research" / "git-history.md"
    stale.parent.mkdir(parents=True)
    stale.write_text("an answer from an earlier run\n")
    try:
        outcomes = run_research(
            [trigger_for("git-history"), trigger_for("learnings")], root=root, output_dir=out, timeout_s=0.2
        )
    finally:
        release.set()
    assert [(o.agent, o.status, o.output) for o in outcomes] == [
        ("git-history", "timeout", None),
        ("learnings", "skipped", None),  # the run went on
    ]
    assert outcomes[0].note == "no answer within 0.2 s; nothing written"
    # no half file, and the stale answer is gone; only the verdict record of the agent that timed out
    assert [p.name for p in (out / "research").iterdir()] == ["verdicts"]
    assert [p.name for p in (out / "research" / "verdicts").iterdir()] == ["git-history.json"]


def test_real_git_history_past_its_deadline_is_a_timeout(repo: dict[str, object], tmp_path: Path) -> None:
    root = repo["root"]
    assert isinstance(root, Path)
    (outcome,) = run_research([trigger_for("git-history")], root=root, output_dir=tmp_path, timeout_s=0.0001)
    assert (outcome.status, outcome.output) == ("timeout", None)
    assert not (tmp_path / "research" / "git-history.md").exists()


def test_deadline_inside_an_executor_is_a_timeout(repo: dict[str, object], tmp_path: Path) -> None:
    root = repo["root"]
    assert isinstance(root, Path)

    def expired(request: ResearchRequest) -> ResearchAnswer:
        raise research.ResearchTimeout("git log did not finish before the deadline")

    (outcome,) = run_research(
        [trigger_for("git-history")], root=root, output_dir=tmp_path, timeout_s=5, executors={"git-history": expired}
    )
    assert outcome.status == "timeout"
    assert not (tmp_path / "research" / "git-history.md").exists()


def test_a_crashing_executor_is_an_error_not_an_exception(repo: dict[str, object], tmp_path: Path) -> None:
    root = repo["root"]
    assert isinstance(root, Path)

    def broken(request: ResearchRequest) -> ResearchAnswer:
        raise RuntimeError("token=ghp_abcdefghijklmnopqrstuvwxyz0123 went missing")

    (outcome,) = run_research(
        [trigger_for("git-history")], root=root, output_dir=tmp_path, timeout_s=5, executors={"git-history": broken}
    )
    assert outcome.status == "error"
    assert outcome.note.startswith("RuntimeError: token=")
    assert "ghp_" not in outcome.note


def test_framework_docs_offline_is_skipped_and_repo_research_stands_in(repo: dict[str, object], tmp_path: Path) -> None:
    root = repo["root"]
    assert isinstance(root, Path)
    out = tmp_path / "out"
    outcomes = run_research(
        [trigger_for("git-history"), trigger_for("framework-docs", "app/db.py:5")],
        root=root,
        output_dir=out,
        timeout_s=30,
    )
    assert [(o.agent, o.status, o.output, o.note) for o in outcomes] == [
        ("git-history", "completed", "research/git-history.md", "answered offline from the repository"),
        ("framework-docs", "skipped", None, "needs the web or a model; not run offline"),
        (
            "repo-research",
            "completed",
            "research/repo-research.md",
            "stood in for framework-docs (needs the web or a model; not run offline)",
        ),
    ]
    assert outcomes[2].question == outcomes[1].question
    text = (out / "research" / "repo-research.md").read_text()
    assert_contract(text)
    assert "repo-research standing in for framework-docs" in text
    assert "- the framework-docs question needs the web or a model; this answer comes from the repository only" in text
    assert "app/db.py:5 is inside function `connect`" in text
    assert not (out / "research" / "framework-docs.md").exists()


def test_no_stand_in_when_repo_research_has_its_own_trigger(repo: dict[str, object], tmp_path: Path) -> None:
    root = repo["root"]
    assert isinstance(root, Path)
    outcomes = run_research(
        [trigger_for("best-practices"), trigger_for("repo-research", "app/db.py:11")],
        root=root,
        output_dir=tmp_path,
        timeout_s=30,
    )
    assert [(o.agent, o.status) for o in outcomes] == [("best-practices", "skipped"), ("repo-research", "completed")]
    assert outcomes[1].note == "answered offline from the repository"


def test_learnings_waits_for_the_knowledge_store(repo: dict[str, object], tmp_path: Path) -> None:
    root = repo["root"]
    assert isinstance(root, Path)
    outcomes = run_research([trigger_for("learnings")], root=root, output_dir=tmp_path, timeout_s=30)
    assert [(o.agent, o.status, o.note) for o in outcomes] == [
        ("learnings", "skipped", "the knowledge store is not available yet")
    ]


def test_online_research_goes_through_the_executor_seam(repo: dict[str, object], tmp_path: Path) -> None:
    root = repo["root"]
    assert isinstance(root, Path)
    triggers = [trigger_for("framework-docs"), trigger_for("best-practices")]
    skipped = run_research(triggers, root=root, output_dir=tmp_path / "a", timeout_s=30, offline=False)
    assert [(o.agent, o.status, o.note) for o in skipped] == [
        ("framework-docs", "skipped", "LLM research runs through the runtime"),
        ("best-practices", "skipped", "LLM research runs through the runtime"),
    ]
    seen: list[Path] = []

    def docs(request: ResearchRequest) -> ResearchAnswer:
        seen.append(request.root)
        assert request.remaining() > 0
        return ResearchAnswer(("https://docs.example.com/v2",), (Point("Deprecated in 2.0."),), "high", "the changelog")

    plugged = run_research(
        triggers,
        root=root,
        output_dir=tmp_path / "b",
        timeout_s=30,
        offline=False,
        executors={**research.EXECUTORS, "framework-docs": docs},
    )
    assert [(o.agent, o.status) for o in plugged] == [("framework-docs", "completed"), ("best-practices", "skipped")]
    assert seen == [root.resolve()]
    text = (tmp_path / "b" / "research" / "framework-docs.md").read_text()
    assert "1. Deprecated in 2.0." in text and "- https://docs.example.com/v2" in text


def test_an_agent_answers_once_per_run(repo: dict[str, object], tmp_path: Path) -> None:
    root = repo["root"]
    assert isinstance(root, Path)
    outcomes = run_research(
        [trigger_for("git-history"), trigger_for("git-history", "app/api.py:1")],
        root=root,
        output_dir=tmp_path,
        timeout_s=30,
    )
    assert [(o.status, o.note) for o in outcomes][1] == ("skipped", "already answered for SF-1")


def test_outcome_record_fits_run_json(repo: dict[str, object], tmp_path: Path) -> None:
    root = repo["root"]
    assert isinstance(root, Path)
    (outcome,) = run_research([trigger_for("git-history")], root=root, output_dir=tmp_path, timeout_s=30)
    record = ResearchRecord.model_validate(outcome.record())
    assert (record.agent, record.output, record.status) == ("git-history", "research/git-history.md", "completed")


# --------------------------------------------------------------------------
# the file shape


def test_render_stays_under_sixty_lines() -> None:
    answer = ResearchAnswer(
        sources=tuple(f"file{i}.py:{i}" for i in range(20)),
        points=tuple(Point(f"point {i}", tuple(f"detail {i}.{j}" for j in range(8))) for i in range(20)),
        confidence="medium",
        confidence_note="more data",
        gaps=tuple(f"gap {i}" for i in range(20)),
    )
    text = render_answer(trigger_for("git-history"), "git-history", answer)
    assert_contract(text)
    lines = text.splitlines()
    assert len(lines) == 59
    assert "- … 13 more" in lines and "- … 15 more" in lines
    assert lines[lines.index("### Confidence") - 2].endswith("line(s) cut to keep the answer short.")


def test_render_shape_of_an_empty_answer() -> None:
    text = render_answer(trigger_for("git-history"), "git-history", ResearchAnswer((), (), "low", "anything"))
    assert text == (
        "# Research: git-history\n"
        "\n"
        "Question: fd-safety P0 at app/db.py:10: something — git-history?\n"
        'Finding: SF-1 (P0), matched "regression"; answered from the repository.\n'
        "\n"
        "### Sources\n"
        "- none: nothing could be read\n"
        "\n"
        "### Findings\n"
        "1. Nothing found.\n"
        "\n"
        "### Confidence\n"
        "low - anything\n"
        "\n"
        "### Gaps\n"
        "- none known\n"
    )


def test_git_history_on_a_busy_file_stays_short(tmp_path: Path, make_commits: Callable[[Path, int], None]) -> None:
    root = tmp_path / "busy"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    make_commits(root, 14)
    (outcome,) = run_research(
        [trigger_for("git-history", "a.py:7", locations=("a.py:7", "b.py:3"))],
        root=root,
        output_dir=tmp_path / "o",
        timeout_s=60,
    )
    assert outcome.status == "completed"
    text = (tmp_path / "o" / "research" / "git-history.md").read_text()
    assert_contract(text)
    assert "Recent commits touching a.py (10 of 14, newest first):" in text
    assert "4 commit(s) touching a.py say fix, bug, revert or hotfix:" in text
    assert "   - … 6 more line(s) cut to keep the answer short." in text


@pytest.fixture
def make_commits() -> Callable[[Path, int], None]:
    def build(root: Path, count: int) -> None:
        for number in range(count):
            lines = [f"value_{i} = {number if i % 3 == number % 3 else 0}" for i in range(20)]
            kind = "Fix" if number % 4 == 0 else "Change"
            commit(root, f"{kind} values {number}", {"a.py": "\n".join(lines) + "\n", "b.py": "\n".join(lines)})

    return build


def test_git_subprocesses_do_not_see_an_outer_git_dir(
    repo: dict[str, object], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = repo["root"]
    assert isinstance(root, Path)
    monkeypatch.setenv("GIT_DIR", os.fspath(tmp_path / "nowhere"))
    run_research([trigger_for("git-history")], root=root, output_dir=tmp_path / "o", timeout_s=30)
    text = (tmp_path / "o" / "research" / "git-history.md").read_text()
    assert "Recent commits touching app/db.py" in text
