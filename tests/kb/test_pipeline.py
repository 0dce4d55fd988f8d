"""The knowledge-base maintenance pipeline on a real git project: queue, processor, analysis, apply."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Mapping
from pathlib import Path

import pytest

from fluxdrive.kb import ReviewSession, analyze, apply_reviews, load_reviews, process_queue, queued, remember
from fluxdrive.kb.files import AGENT_MAP, MAP, load_items
from fluxdrive.kb.inquisitor import Investigation, static_inquisitor
from fluxdrive.kb.model import Item, Review
from fluxdrive.workspace import BusyError
from tests.conftest import committed_copy, hold_lock, run_fluxdrive
from tests.triage.conftest import git

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "projects" / "py-webapp"
NAME = "find_user() in the data layer looks users up by their name with one query."


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return committed_copy(FIXTURE, tmp_path / "shop")


def _commit(root: Path, message: str) -> None:
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", message)


def kb(root: Path) -> Path:
    return root / ".fluxdrive" / "kb"


def test_remember_returns_at_once_and_the_processor_takes_the_queue_in_order(project: Path) -> None:
    first = remember(kb(project), "Users are looked up by name", NAME, "architecture", ["shop/db.py:find_user"])
    remember(kb(project), "Users are looked up by name", NAME + " ", "architecture")  # the same thing again
    remember(kb(project), "Users are looked up by name", "Users are found by email through the ORM.", "architecture")
    remember(kb(project), "Cleanup swallows export errors", "cleanup() drops every error of the export.", "gotchas")
    assert first.parent.name == "remember-queue" and len(queued(kb(project))) == 4  # nothing processed yet

    done = process_queue(kb(project))

    assert (done.added, done.duplicates, done.conflicts) == (
        ["users-are-looked-up-by-name", "cleanup-swallows-export-errors"],
        ["Users are looked up by name"],
        ["Users are looked up by name"],
    )
    assert queued(kb(project)) == [], "each queue file is deleted once its result is on disk"
    items = load_items(kb(project))
    assert [i.id for i in items["architecture"]] == ["users-are-looked-up-by-name"]
    assert "- Users are looked up by name (shop/db.py:find_user)" in (kb(project) / MAP).read_text()
    assert "users-are-looked-up-by-name | architecture |" in (kb(project) / AGENT_MAP).read_text()
    (review,) = load_reviews(kb(project))
    assert review.type == "conflict" and "Users are found by email" in review.question
    assert json.loads(review.agent_notes)["actions"]["keep both"]["kind"] == "add"


def test_a_failed_write_keeps_the_queue_file(project: Path) -> None:
    remember(kb(project), "Cleanup swallows export errors", "cleanup() drops every error.", "gotchas")
    (kb(project) / "gotchas.md").mkdir()  # the category file cannot be written
    with pytest.raises(OSError):
        process_queue(kb(project))
    assert len(queued(kb(project))) == 1


def test_analysis_debounces_per_head_fixes_moves_and_asks_about_deletions(project: Path) -> None:
    remember(kb(project), "Users are looked up by name", NAME, "architecture", ["shop/db.py:find_user"])
    remember(
        kb(project), "Cleanup swallows export errors", "cleanup() drops every error.", "gotchas", ["shop/routes.py"]
    )
    remember(
        kb(project), "Models have no docstrings", "The User model is undocumented.", "patterns", ["shop/models.py:User"]
    )
    process_queue(kb(project))

    first = analyze(project, kb(project))
    assert [f.outcome for f in first.investigations] == ["valid", "valid", "valid"]
    assert analyze(project, kb(project)).skipped is not None, "same HEAD: debounced"

    git(project, "mv", "shop/db.py", "shop/data.py")
    (project / "shop" / "routes.py").unlink()
    (project / "shop" / "models.py").write_text("class Account:\n    pass\n")
    _commit(project, "move, delete, rewrite")
    second = analyze(project, kb(project))

    outcomes = {f.item_id: f.outcome for f in second.investigations}
    assert outcomes == {
        "users-are-looked-up-by-name": "outdated",
        "cleanup-swallows-export-errors": "stale",
        "models-have-no-docstrings": "conflicting",
    }
    reviews = {r.item_id: r for r in load_reviews(kb(project))}
    auto = reviews["users-are-looked-up-by-name"]
    assert auto.auto_apply and auto.type == "auto_fix" and auto.options == []
    for review in reviews.values():
        assert review.agent_notes.strip(), "every review carries agent_notes (the reference's known bug)"
    assert reviews["cleanup-swallows-export-errors"].options == ["delete it", "keep it as it is"]

    # a person restores the model: its review is moot at the next analysis
    (project / "shop" / "models.py").write_text("class User:\n    pass\n")
    _commit(project, "restore User")
    third = analyze(project, kb(project))
    assert third.removed == ["conflicting-models-have-no-docstrings"]


def test_answers_and_auto_fixes_are_applied_then_their_files_deleted(project: Path) -> None:
    remember(kb(project), "Users are looked up by name", NAME, "architecture", ["shop/db.py:find_user"])
    remember(
        kb(project), "Cleanup swallows export errors", "cleanup() drops every error.", "gotchas", ["shop/routes.py"]
    )
    process_queue(kb(project))
    analyze(project, kb(project))
    git(project, "mv", "shop/db.py", "shop/data.py")
    (project / "shop" / "routes.py").unlink()
    _commit(project, "move and delete")
    analyze(project, kb(project))

    session = ReviewSession.open(kb(project))
    assert [r.item_id for r in session.reviews] == ["cleanup-swallows-export-errors"], "auto-fixes are not asked"
    session.answer("delete it")
    assert session.done and load_reviews(kb(project))[1].answer == "delete it"

    applied = apply_reviews(kb(project))

    assert applied.lines == [
        "auto-fix-users-are-looked-up-by-name: updated users-are-looked-up-by-name (refs)",
        "stale-cleanup-swallows-export-errors: deleted cleanup-swallows-export-errors from gotchas.md",
    ]
    items = load_items(kb(project))
    assert items["architecture"][0].refs == ["shop/data.py:find_user"] and items["gotchas"] == []
    assert load_reviews(kb(project)) == []
    assert "Cleanup swallows" not in (kb(project) / MAP).read_text()


def test_the_swarm_is_a_rolling_pool_bounded_by_the_cap(project: Path) -> None:
    topics = [
        "alpha",
        "bravo",
        "charlie",
        "delta",
        "echo",
        "foxtrot",
        "golf",
        "hotel",
        "india",
        "juliet",
        "kilo",
        "lima",
    ]
    for topic in topics:
        remember(kb(project), f"{topic.capitalize()} subsystem", f"The {topic} part.", "patterns", ["shop/db.py"])
    process_queue(kb(project))
    assert len(load_items(kb(project))["patterns"]) == 12
    lock = threading.Lock()
    first_five = threading.Barrier(5, timeout=10)  # passes only if five inquisitors run at once
    running, peak, finished = 0, 0, []

    def inquisitor(item: Item, root: Path, renamed: Mapping[str, str]) -> Investigation:
        nonlocal running, peak
        with lock:
            running += 1
            peak = max(peak, running)
        if item.id in ("alpha-subsystem", "bravo-subsystem", "charlie-subsystem", "delta-subsystem", "echo-subsystem"):
            first_five.wait()
        if item.id == "alpha-subsystem":
            time.sleep(0.5)  # a slow one: the others must not wait for it (no fixed batches)
        with lock:
            running -= 1
            finished.append(item.id)
        return static_inquisitor(item, root, renamed)

    result = analyze(project, kb(project), concurrency=5, inquisitor=inquisitor)
    assert len(result.investigations) == 12 and peak == 5
    assert finished[-1] == "alpha-subsystem", "the other eleven finished while the slow one still ran"


def test_a_live_analysis_refuses_a_second_and_a_dead_owners_lock_is_taken(project: Path) -> None:
    kb(project).mkdir(parents=True)
    with hold_lock(kb(project)) as holder, pytest.raises(BusyError, match=f"pid {holder.pid}"):
        analyze(project, kb(project))
    # the holder was killed -9: its lock file stays behind, the kernel's lock does not
    assert (kb(project) / ".fluxdrive.lock").exists()
    assert analyze(project, kb(project)).skipped is None


def test_a_review_without_agent_notes_is_refused() -> None:
    with pytest.raises(ValueError, match="agent_notes"):
        Review(
            id="stale-x", subject="x", type="stale", question="?", options=["delete it"], knowledge_file="a.md",
            item_id="x", agent_notes="", created_at="2026-11-22T00:00:00.000Z",
        )  # fmt: skip


def test_kb_commands(project: Path) -> None:
    queued_line = run_fluxdrive(
        "kb", "remember", "Users are looked up by name", NAME, "-c", "architecture", "--ref", "shop/db.py:find_user",
        cwd=project,
    )  # fmt: skip
    assert queued_line.code == 0 and queued_line.out.startswith("queued ")
    assert run_fluxdrive("kb", "process", cwd=project).out.startswith("1 added, 0 duplicate(s) dropped")
    assert "1 item(s) investigated (1 valid)" in run_fluxdrive("kb", "analyze", cwd=project).out
    assert run_fluxdrive("kb", "status", cwd=project).out.splitlines() == [
        "Items: 1 architecture",
        "Queue: 0; reviews: 0 waiting, 0 answered, 0 automatic",
    ]
    bad = run_fluxdrive("kb", "remember", "T", "text", "-c", "folklore", cwd=project)
    assert bad.code == 2 and "unknown category 'folklore'" in bad.err
    assert run_fluxdrive("kb", "review", cwd=project).out.strip() == "No review is waiting for an answer."


def test_bad_items_are_one_line_usage_errors(project: Path) -> None:
    from fluxdrive.errors import UsageError

    with pytest.raises(UsageError, match="unknown category 'folklore'"):
        remember(kb(project), "T", "text", "folklore")
    with pytest.raises(UsageError, match="title: "):
        remember(kb(project), "   ", "text", "patterns")
    assert queued(kb(project)) == []


def test_a_file_that_moved_to_one_of_several_places_offers_each(tmp_path: Path) -> None:
    """Two files now have the old name: the person is offered "update the reference to X" for each."""
    from fluxdrive.kb.analysis import _review_for
    from fluxdrive.kb.model import Item, Notes

    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "a" / "retry.py").write_text("def backoff(): ...\n")
    (tmp_path / "b" / "retry.py").write_text("def backoff(): ...\n")
    item = Item(id="retry-backoff", category="patterns", title="Backoff lives in retry.py",
                content="Use backoff().", refs=["lib/retry.py:backoff", "README.md"])  # fmt: skip
    (tmp_path / "README.md").write_text("# x\n")
    found = static_inquisitor(item, tmp_path, {})
    assert found.outcome == "stale"
    review = _review_for(item, found, tmp_path / "kb")
    assert review.options == [
        "update the reference to a/retry.py", "update the reference to b/retry.py", "delete it", "keep it as it is",
    ]  # fmt: skip
    action = Notes.model_validate_json(review.agent_notes).actions["update the reference to b/retry.py"]
    assert action.kind == "update" and action.refs == ["b/retry.py:backoff", "README.md"]
