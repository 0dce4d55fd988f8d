"""Content routing over real inputs: git diffs of real repositories, documents and directories on disk.

The agents are the built-in definitions; the profile comes from triage's own
``build_profile`` over the resolved target, exactly as a review computes it.
"""

from __future__ import annotations

import functools
import re
import subprocess
from collections.abc import Sequence
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from unidiff.patch import PatchSet

from fluxdrive.agents import AgentDefinition, load_roster
from fluxdrive.config.model import SlicingConfig
from fluxdrive.contracts.run_manifest import SliceRecord
from fluxdrive.core.match import Finder, Text, glob_match, keyword_pattern, word_pattern
from fluxdrive.launch.slicing import (
    SAFETY_PATH_GLOBS,
    SAFETY_TEXT_WORDS,
    ContentPlan,
    Slice,
    _glob_literal,
    route_content,
)
from fluxdrive.triage.profile import build_profile
from fluxdrive.workspace import Target, resolve_target

EVERYONE = ("fd-architecture", "fd-quality", "fd-safety", "fd-performance", "fd-game-design")


def git(root: Path, *args: str) -> str:
    proc = subprocess.run(
        ["git", "-c", "user.email=t@example.com", "-c", "user.name=t", *args],
        cwd=root, capture_output=True, text=True, check=True,
    )  # fmt: skip
    return proc.stdout


def write(root: Path, files: dict[str, str]) -> None:
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def staged_diff(root: Path, before: dict[str, str], after: dict[str, str | None]) -> Target:
    """Commit ``before``, apply ``after`` (None deletes), stage it: the target of ``--staged``."""
    write(root, before)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "base")
    for relative, text in after.items():
        if text is None:
            (root / relative).unlink()
        else:
            write(root, {relative: text})
    git(root, "add", "-A")
    return resolve_target(None, staged=True, cwd=root)


def agents(root: Path, names: Sequence[str] = EVERYONE) -> list[AgentDefinition]:
    roster = load_roster(root)
    return [roster.agents[name] for name in names]


def route(target: Target, out: Path, names: Sequence[str] = EVERYONE, **config: float | int) -> ContentPlan:
    return route_content(target, build_profile(target), agents(target.root, names), out, SlicingConfig(**config))


def filler(tag: str, count: int) -> str:
    """Lines no built-in agent routes on (no loops, no security words, no game words)."""
    return "".join(f"value_{tag}_{i} = combine_{i}(alpha, beta)\n" for i in range(count))


# --------------------------------------------------------------------------
# a 1,200-line diff over ten files


AUTH = "src/auth/login.py"
HANDLERS = "src/api/handlers.py"
SUMMARY = "src/reports/summary.py"
KEYS = "src/pkg/signing_keys.py"
FILLERS = ("src/pkg/alpha.py", "src/pkg/beta.py", "src/pkg/gamma.py", "src/pkg/delta.py")
NEW = "src/pkg/fresh.py"
GONE = "src/pkg/retired.py"


def handlers(version: str) -> str:
    """Two far-apart hunks: only the second mentions a password."""
    top = filler(f"h{version}", 30)
    middle = filler("hkeep", 40)
    bottom = filler(f"g{version}", 29) + ("password = read_value(field)\n" if version == "new" else "plain_value = 1\n")
    return top + middle + bottom


@pytest.fixture
def big_diff(tmp_path: Path) -> Target:
    root = tmp_path / "project"
    before = {
        AUTH: filler("a0", 60),
        HANDLERS: handlers("old"),
        SUMMARY: filler("s0", 60),
        KEYS: filler("k0", 60),
        GONE: filler("r0", 40),
        **{path: filler(f"f{n}0", 60) for n, path in enumerate(FILLERS)},
    }
    # A query per row (N+1) through a query builder: performance's business, not a raw SQL sink for safety.
    loop = (
        "def totals(db, rows):\n    for row in rows:\n        db.scalar('SELECT total FROM orders WHERE id = ?', row)\n"
    )
    after: dict[str, str | None] = {
        AUTH: filler("a1", 60),
        HANDLERS: handlers("new"),
        SUMMARY: loop + filler("s1", 57),
        KEYS: filler("k1", 60),
        NEW: filler("n1", 80),
        GONE: None,
        **{path: filler(f"f{n}1", 150) for n, path in enumerate(FILLERS)},
    }
    return staged_diff(root, before, after)


def test_big_diff_is_sliced_per_agent(big_diff: Target, tmp_path: Path) -> None:
    out = tmp_path / "out"
    profile = build_profile(big_diff)
    assert profile.diff is not None and profile.diff.changed == 1_440 and profile.diff.files == 10

    plan = route(big_diff, out)

    assert plan.active
    assert plan.shared_path == out / "input.diff"
    assert plan.shared_path.read_text(encoding="utf-8") == big_diff.diff_text
    assert list(plan.slices) == list(EVERYONE)

    safety = plan.slices["fd-safety"]
    assert safety.mode == "sliced" and not safety.fallback
    assert safety.files == (HANDLERS, AUTH, KEYS)  # hunk keyword, path glob, path word (the override)
    assert safety.content_path == out / "content" / "fd-safety.diff"
    assert (safety.priority_lines, safety.total_lines) == (120 + 120 + 120, 1_440)
    assert safety.reason == "sliced: 3 of 10 files (360 of 1,440 changed lines)"
    assert safety.lines is None

    performance = plan.slices["fd-performance"]
    assert performance.mode == "sliced" and performance.files == (SUMMARY,)
    assert performance.content_path == out / "content" / "fd-performance.diff"

    for name in ("fd-architecture", "fd-quality"):
        assert plan.slices[name].mode == "full"
        assert plan.slices[name].content_path == plan.shared_path
        assert plan.slices[name].reason == "cross-cutting: full content"

    game = plan.slices["fd-game-design"]
    assert (game.mode, game.fallback, game.content_path) == ("full", True, plan.shared_path)
    assert game.reason == "no priority content: full content (fallback)"
    assert not (out / "content" / "fd-game-design.diff").exists()

    assert plan.log[0] == "content routing on: diff of 1,440 changed lines >= 1,000"
    assert plan.log[1:] == tuple(f"{name}: {plan.slices[name].reason}" for name in EVERYONE)


def test_diff_slice_holds_priority_files_verbatim_then_exact_context_lines(big_diff: Target, tmp_path: Path) -> None:
    plan = route(big_diff, tmp_path / "out")
    text = plan.slices["fd-safety"].content_path.read_text(encoding="utf-8")
    diff_text = big_diff.diff_text
    assert diff_text is not None

    body, _, context = text.partition("[context] ")
    context_lines = ("[context] " + context).splitlines()
    assert context_lines == [
        "[context] src/pkg/alpha.py: +150 -60",
        "[context] src/pkg/beta.py: +150 -60",
        "[context] src/pkg/delta.py: +150 -60",
        "[context] src/pkg/fresh.py: +80 -0",
        "[context] src/pkg/gamma.py: +150 -60",
        "[context] src/pkg/retired.py: +0 -40",
        "[context] src/reports/summary.py: +60 -60",
    ]
    # Each priority file's diff is the input's own text (both hunks of handlers.py, too).
    blocks = ["diff --git" + block for block in body.split("diff --git")[1:]]
    assert [b.splitlines()[0] for b in blocks] == [f"diff --git a/{p} b/{p}" for p in (HANDLERS, AUTH, KEYS)]
    assert all(block in diff_text for block in blocks)
    assert blocks[0].count("\n@@ ") == 2 and "+password = read_value(field)" in blocks[0]
    # The slice is still a diff a parser reads: the context lines are ignored as trailing text.
    parsed = PatchSet(text.splitlines(keepends=True))
    assert [p.path for p in parsed] == [HANDLERS, AUTH, KEYS]


def test_diff_slice_keeps_hunk_headers_as_written(tmp_path: Path) -> None:
    root = tmp_path / "project"
    target = staged_diff(root, {"src/pkg/a.py": filler("a", 5)}, {"src/pkg/a.py": filler("b", 5), AUTH: "x = 1\n"})
    assert target.diff_text is not None and "@@ -0,0 +1 @@" in target.diff_text
    plan = route(target, tmp_path / "out", names=["fd-safety"], diff_min_lines=1)
    text = plan.slices["fd-safety"].content_path.read_text(encoding="utf-8")
    auth_block = target.diff_text[: target.diff_text.index("diff --git a/src/pkg/a.py")]
    assert auth_block.startswith(f"diff --git a/{AUTH}") and "@@ -0,0 +1 @@" in auth_block
    assert text == auth_block + "[context] src/pkg/a.py: +5 -5\n"


def test_slice_records_tell_synthesis_what_each_agent_saw(big_diff: Target, tmp_path: Path) -> None:
    plan = route(big_diff, tmp_path / "out")
    safety = plan.slices["fd-safety"].record()
    assert safety == SliceRecord(mode="sliced", files=[HANDLERS, AUTH, KEYS], sections=[])
    assert safety.covers(AUTH, None) and not safety.covers(SUMMARY, None)
    architecture = plan.slices["fd-architecture"].record()
    assert architecture == SliceRecord(mode="full") and architecture.covers(SUMMARY, None)
    assert plan.slices["fd-game-design"].record().mode == "full"


def test_priority_covering_the_ratio_sends_everything(big_diff: Target, tmp_path: Path) -> None:
    # fd-safety's priority is 360 of 1,440 lines (25%): at a 25% ratio it gets everything.
    plan = route(big_diff, tmp_path / "out", full_coverage_ratio=0.25)
    safety = plan.slices["fd-safety"]
    assert (safety.mode, safety.fallback, safety.content_path) == ("full", False, plan.shared_path)
    assert safety.reason == "priority covers 25% >= 25%: full content"
    assert (safety.priority_lines, safety.total_lines) == (360, 1_440)
    assert safety.record() == SliceRecord(mode="full")
    assert not (tmp_path / "out" / "content" / "fd-safety.diff").exists()
    # fd-performance (120 lines, 8%) is still sliced.
    assert plan.slices["fd-performance"].mode == "sliced"


def test_priority_at_most_of_a_diff_sends_everything_by_default(tmp_path: Path) -> None:
    root = tmp_path / "project"
    before = {f"src/auth/mod{n}.py": filler(f"b{n}", 60) for n in range(9)} | {"src/pkg/other.py": filler("o", 60)}
    after: dict[str, str | None] = {path: filler(f"x{path[-4]}", 60) for path in before}
    plan = route(staged_diff(root, before, after), tmp_path / "out")
    safety = plan.slices["fd-safety"]
    assert plan.active and safety.mode == "full"
    assert safety.reason == "priority covers 90% >= 80%: full content"


def test_small_diff_is_not_sliced(tmp_path: Path) -> None:
    root = tmp_path / "project"
    target = staged_diff(root, {AUTH: filler("a", 20)}, {AUTH: filler("b", 20)})
    out = tmp_path / "out"
    plan = route(target, out)
    assert not plan.active
    assert plan.shared_path == out / "input.diff" and plan.shared_path.read_text(encoding="utf-8") == target.diff_text
    assert {s.mode for s in plan.slices.values()} == {"full"}
    assert {s.content_path for s in plan.slices.values()} == {plan.shared_path}
    assert not any(s.fallback for s in plan.slices.values())
    assert plan.log[0] == "content routing off: diff of 40 changed lines < 1,000"
    assert not (out / "content").exists()


def test_threshold_comes_from_the_config(big_diff: Target, tmp_path: Path) -> None:
    assert not route(big_diff, tmp_path / "a", diff_min_lines=1_441).active
    assert route(big_diff, tmp_path / "b", diff_min_lines=1_440).active


def test_config_names_cross_cutting_agents(big_diff: Target, tmp_path: Path) -> None:
    plan = route_content(
        big_diff, build_profile(big_diff), agents(big_diff.root), tmp_path / "out",
        SlicingConfig(cross_cutting=["fd-performance"]),
    )  # fmt: skip
    assert plan.slices["fd-performance"].reason == "cross-cutting: full content"
    # The definition's own flag still holds when the config list leaves the agent out.
    assert plan.slices["fd-architecture"].reason == "cross-cutting: full content"


def test_routing_is_deterministic(big_diff: Target, tmp_path: Path) -> None:
    first_dir, second_dir = tmp_path / "one", tmp_path / "two"
    first = route(big_diff, first_dir)
    again = route(big_diff, first_dir)
    second = route(big_diff, second_dir)
    assert first == again
    assert first.log == second.log
    for name in EVERYONE:
        assert first.slices[name].files == second.slices[name].files
    files = sorted(p.relative_to(first_dir) for p in first_dir.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(second_dir) for p in second_dir.rglob("*") if p.is_file())
    assert [Path("content/fd-performance.diff"), Path("content/fd-safety.diff"), Path("input.diff")] == files
    for relative in files:
        assert (first_dir / relative).read_bytes() == (second_dir / relative).read_bytes()


def test_a_stale_shared_diff_is_replaced(big_diff: Target, tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "input.diff").write_text("an older run's diff\n", encoding="utf-8")
    plan = route(big_diff, out)
    assert plan.shared_path.read_text(encoding="utf-8") == big_diff.diff_text


def test_agents_must_have_distinct_names(big_diff: Target, tmp_path: Path) -> None:
    safety = agents(big_diff.root, ["fd-safety"])[0]
    with pytest.raises(ValueError, match="listed twice"):
        route_content(big_diff, build_profile(big_diff), [safety, safety], tmp_path / "out", SlicingConfig())


def test_camel_case_and_env_paths_are_priority_for_safety(tmp_path: Path) -> None:
    root = tmp_path / "project"
    before = {
        "web/SessionStore.ts": filler("w0", 60),
        "deploy.env": filler("e0", 10),
        **{f"src/pkg/m{n}.py": filler(f"m{n}0", 60) for n in range(8)},
    }
    after: dict[str, str | None] = {path: filler(f"{path[-5]}x", 60) for path in before}
    plan = route(staged_diff(root, before, after), tmp_path / "out", names=["fd-safety"])
    assert plan.slices["fd-safety"].files == ("deploy.env", "web/SessionStore.ts")


# --------------------------------------------------------------------------
# documents


def plan_document() -> tuple[str, dict[str, range]]:
    """A 250-line plan; returns the text and each part's 1-based line range."""
    parts: list[tuple[str, list[str]]] = [
        ("", ["Status: draft", "Owner: platform team", ""]),
        ("# Widget plan", [f"Line {i} says how the widget catalogue arranges its pages." for i in range(30)]),
        ("## Goals", [f"- Goal {i}: the catalogue shows every widget in order." for i in range(39)]),
        ("## Storage layout", [f"Widgets keep their layout {i} in one file per shelf." for i in range(49)]),
        ("## Credential handling", [f"Note {i} on where the service reads its settings." for i in range(19)]),
        ("### Sign-in page", ["Operators reach the console through the login page."] + ["More prose."] * 13),
        ("## Rendering pipeline", [f"Step {i} turns shelves into pages." for i in range(49)]),
        ("## Open questions", [f"- Question {i}: which shelf comes first?" for i in range(40)]),
    ]
    lines: list[str] = []
    ranges: dict[str, range] = {}
    for heading, body in parts:
        start = len(lines) + 1
        lines += ([heading] if heading else []) + body
        ranges[heading.lstrip("# ") or "(preamble)"] = range(start, len(lines) + 1)
    assert len(lines) == 250
    return "\n".join(lines) + "\n", ranges


def test_long_document_is_sliced_by_sections(tmp_path: Path) -> None:
    root = tmp_path / "project"
    (root / ".git").mkdir(parents=True)
    text, ranges = plan_document()
    write(root, {"docs/plan.md": text})
    target = resolve_target(str(root / "docs/plan.md"))
    out = tmp_path / "out"

    plan = route(target, out)

    assert plan.active and plan.shared_path == root / "docs/plan.md"
    assert plan.log[0] == "content routing on: document of 250 lines >= 200"
    safety = plan.slices["fd-safety"]
    assert safety.mode == "sliced" and safety.content_path == out / "content" / "fd-safety.md"
    # "Credential handling" by its title; "Sign-in page" by the login override; the preamble always.
    assert safety.sections == ("(preamble)", "Credential handling", "Sign-in page")
    expected = set(ranges["(preamble)"]) | set(ranges["Credential handling"]) | set(ranges["Sign-in page"])
    assert safety.lines == {"docs/plan.md": frozenset(expected)}
    assert (safety.priority_lines, safety.total_lines) == (3 + 20 + 15, 250)
    assert safety.reason == "sliced: 2 of 7 sections (38 of 250 lines)"
    assert safety.files == ()

    source = text.splitlines()
    sent = [source[n - 1] for n in sorted(expected)]
    context = [
        "[context] # Widget plan (31 lines)",
        "[context] ## Goals (40 lines)",
        "[context] ## Storage layout (50 lines)",
        "[context] ## Rendering pipeline (50 lines)",
        "[context] ## Open questions (41 lines)",
    ]
    assert safety.content_path.read_text(encoding="utf-8") == "\n".join([*sent, "", *context]) + "\n"
    record = safety.record()
    assert record == SliceRecord(
        mode="sliced", files=[], sections=["(preamble)", "Credential handling", "Sign-in page"]
    )
    # Synthesis counts fd-safety for a finding in a section it saw, not for one in a section it did not.
    assert record.covers("docs/plan.md", "Credential handling")
    assert not record.covers("docs/plan.md", "Goals")

    assert plan.slices["fd-architecture"].content_path == root / "docs/plan.md"
    assert plan.slices["fd-game-design"].fallback


def test_short_document_is_shared(tmp_path: Path) -> None:
    root = tmp_path / "project"
    (root / ".git").mkdir(parents=True)
    write(root, {"docs/note.md": "# Note\n\nThe login page moves.\n"})
    target = resolve_target(str(root / "docs/note.md"))
    plan = route(target, tmp_path / "out")
    assert not plan.active
    assert {s.content_path for s in plan.slices.values()} == {root / "docs/note.md"}
    assert plan.log[0] == "content routing off: document of 3 lines < 200"


def test_document_without_headings_falls_back(tmp_path: Path) -> None:
    root = tmp_path / "project"
    (root / ".git").mkdir(parents=True)
    write(root, {"notes.txt": "".join(f"The login note {i}.\n" for i in range(220))})
    plan = route(resolve_target(str(root / "notes.txt")), tmp_path / "out")
    safety = plan.slices["fd-safety"]
    assert plan.active and safety.fallback and safety.mode == "full"
    assert safety.reason == "no headings to slice by: full content (fallback)"


# --------------------------------------------------------------------------
# directories and files


def test_directory_shares_a_file_listing(tmp_path: Path) -> None:
    root = tmp_path / "project"
    write(root, {"app.py": "print(1)\nprint(2)\n", "lib/util.py": "x = 1\n", "README.md": "# Hi\n"})
    (root / ".git").mkdir()
    out = tmp_path / "out"
    plan = route(resolve_target(str(root)), out)
    assert not plan.active
    assert plan.shared_path == out / "content" / "files.md"
    assert {s.content_path for s in plan.slices.values()} == {plan.shared_path}
    assert plan.shared_path.read_text(encoding="utf-8") == (
        "# Files under review: project\n\n3 files, 4 lines.\n\n"
        "- README.md (1 line)\n- app.py (2 lines)\n- lib/util.py (1 line)\n"
    )


def test_directory_listing_is_bounded(tmp_path: Path) -> None:
    root = tmp_path / "project"
    (root / ".git").mkdir(parents=True)
    write(root, {f"pkg/m{n:04d}.py": "x = 1\n" for n in range(1_995)})
    plan = route(resolve_target(str(root)), tmp_path / "out", names=["fd-safety"])
    lines = plan.shared_path.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 4 + 1_990 + 1
    assert lines[-2] == "- pkg/m1989.py (1 line)"
    assert lines[-1] == "- … and 5 more files (5 lines) not listed"


def test_directory_listing_says_when_triage_grouped_files(tmp_path: Path) -> None:
    root = tmp_path / "project"
    (root / ".git").mkdir(parents=True)
    write(root, {f"pkg/m{n:04d}.py": "x = 1\n" for n in range(2_100)})
    plan = route(resolve_target(str(root)), tmp_path / "out", names=["fd-safety"])
    lines = plan.shared_path.read_text(encoding="utf-8").splitlines()
    assert lines[2] == "2,100 files, 2,100 lines."
    assert lines[3].startswith("The directory is large: triage grouped neighbouring files")
    assert lines[5] == "- pkg/m0000.py (2 lines)" and len(lines) < 2_000


def test_single_source_file_is_shared(tmp_path: Path) -> None:
    root = tmp_path / "project"
    (root / ".git").mkdir(parents=True)
    write(root, {"app.py": filler("a", 300)})
    plan = route(resolve_target(str(root / "app.py")), tmp_path / "out")
    assert not plan.active and plan.shared_path == root / "app.py"
    assert isinstance(plan.slices["fd-safety"], Slice)


# --------------------------------------------------------------------------
# the fast matching agrees with fluxdrive.core.match


ROSTER_WORDS = sorted(
    {
        word
        for agent in load_roster(None).agents.values()
        for word in (*agent.routing.hunk_keywords, *agent.concerns, *agent.routing.always_priority_keywords)
    }
    | set(SAFETY_TEXT_WORDS)
)
ROSTER_GLOBS = sorted(
    {
        glob
        for agent in load_roster(None).agents.values()
        for glob in (*agent.routing.priority_globs, *agent.routing.critical_globs)
    }
    | set(SAFETY_PATH_GLOBS)
)
# Roster words, their upper case, and the characters that decide boundaries and case folding.
FRAGMENTS = [*ROSTER_WORDS, *(w.upper() for w in ROSTER_WORDS[:40]), *"_ \nbxs(-.\u017f\u0131\u0130\u212a\u00e9", "es"]
PATH_PARTS = [
    "auth",
    "src",
    "migrations",
    "Dockerfile",
    ".env",
    "hooks",
    "plugin.json",
    "mcp-x.json",
    "a",
    "b.py",
    "keys",
    "/",
    "-",
    "_",
    "render",
    "component",
    "x",
]


@functools.cache
def _finder_and_pattern(kind: str) -> tuple[Finder, re.Pattern[str]]:
    """Built once per kind: a build takes 80 ms, and 400 examples rebuilt it every time (83 s on CI)."""
    compile_ = keyword_pattern if kind == "keyword" else word_pattern
    finder = Finder.build(ROSTER_WORDS, compile_)
    pattern = compile_(ROSTER_WORDS)
    assert finder is not None and pattern is not None
    return finder, pattern


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(FRAGMENTS), max_size=30), st.sampled_from(["keyword", "word"]))
def test_finder_agrees_with_the_pattern(parts: list[str], kind: str) -> None:
    text = "".join(parts)
    finder, pattern = _finder_and_pattern(kind)
    assert finder.found_in(Text.of(text)) == (pattern.search(text) is not None)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(PATH_PARTS), min_size=1, max_size=8))
def test_glob_prefilter_keeps_every_match(parts: list[str]) -> None:
    path = "".join(parts)
    for glob in ROSTER_GLOBS:
        kept = [glob] if _glob_literal(glob) in path else []
        assert glob_match(path, kept) == glob_match(path, [glob]), glob
