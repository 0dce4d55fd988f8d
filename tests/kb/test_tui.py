"""The review UI driven by Textual's pilot: real widgets, real key presses, answers saved to the review files."""

from __future__ import annotations

import asyncio
from pathlib import Path

from fluxdrive.kb import ReviewSession, load_reviews
from fluxdrive.kb.files import REVIEW_DIR
from fluxdrive.kb.model import AUTO, Action, Review, notes_text
from fluxdrive.kb.tui import ReviewApp

DELETE_OR_KEEP = {"delete it": Action(kind="delete"), "keep it as it is": Action(kind="keep")}


def _review(kb: Path, review_id: str, *, auto: bool = False) -> None:
    review = Review(
        id=review_id,
        subject=f"Subject of {review_id}",
        type="auto_fix" if auto else "stale",
        question=f"What about {review_id}? [b]not markup[/b]",
        options=[] if auto else list(DELETE_OR_KEEP),
        knowledge_file="patterns.md",
        item_id=review_id,
        agent_notes=notes_text("why", {AUTO: Action(kind="keep")} if auto else DELETE_OR_KEEP),
        auto_apply=auto,
        created_at="2026-11-22T00:00:00.000Z",
    )
    path = kb / REVIEW_DIR / f"{review_id}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(review.dumps())


def test_a_person_answers_skips_and_finishes(tmp_path: Path) -> None:
    kb = tmp_path / "kb"
    _review(kb, "a-first")
    _review(kb, "b-automatic", auto=True)
    _review(kb, "c-second")
    _review(kb, "d-third")
    app = ReviewApp(ReviewSession.open(kb))
    seen: list[str] = []

    async def drive() -> None:
        async with app.run_test() as pilot:
            seen.append(str(app.query_one("#progress").render()))
            seen.append(str(app.query_one("#question").render()))
            await pilot.press("enter")  # a-first: the highlighted option is the safe one, "keep it as it is"
            seen.append(str(app.query_one("#subject").render()))
            await pilot.press("s")  # skip c-second
            await pilot.press("1")  # d-third: "delete it" by its number ...
            seen.append(str(app.query_one("#confirm").render()))
            await pilot.press("enter")  # ... and confirmed
            seen.append(str(app.query_one("#subject").render()))
            seen.append(str(app.query_one("#progress").render()))
            await pilot.press("u")  # undo the deletion: d-third is asked again, pending on disk
            seen.append(str(app.query_one("#subject").render()))
            await pilot.press("2")  # keep it
            await pilot.press("q")

    asyncio.run(drive())

    assert seen[0] == "Review 1 of 3 (stale)", "the auto-apply review is never shown"
    assert seen[1] == "What about a-first? [b]not markup[/b]", "review text is shown as it is"
    assert seen[2] == "Subject of c-second"
    assert seen[3].startswith("'delete it' deletes the item: press Enter (or 1) again to confirm")
    assert seen[4] == "Done for now."
    assert seen[5] == "2 answered, 1 skipped, of 3"  # a-first and d-third; d-third is undone next
    assert seen[6] == "Subject of d-third"
    answers = {r.id: r.answer for r in load_reviews(kb)}
    assert answers == {
        "a-first": "keep it as it is", "b-automatic": None, "c-second": None, "d-third": "keep it as it is",
    }  # fmt: skip
    assert app.return_value == 2


def test_the_item_and_its_references_are_shown(tmp_path: Path) -> None:
    from fluxdrive.kb.files import save_category
    from fluxdrive.kb.model import Item

    kb = tmp_path / "kb"
    item = Item(id="a-first", category="patterns", title="Retries wrap every provider call",
                content="Use BackoffTransport; never sleep in a loop.", refs=["fluxdrive/runtimes/llm/backoff.py"])  # fmt: skip
    save_category(kb, "patterns", [item])
    _review(kb, "a-first")
    app = ReviewApp(ReviewSession.open(kb))
    shown: list[str] = []

    async def drive() -> None:
        async with app.run_test() as pilot:
            shown.append(str(app.query_one("#item").render()))
            await pilot.press("q")

    asyncio.run(drive())
    assert shown[0] == (
        "Retries wrap every provider call\nUse BackoffTransport; never sleep in a loop.\n"
        "References: fluxdrive/runtimes/llm/backoff.py"
    )


def test_kb_review_in_a_real_terminal(tmp_path: Path) -> None:
    """The console script in a pty: the full-screen app starts, takes a key and leaves the answer on disk."""
    import sys

    import pexpect

    from tests.triage.conftest import git

    project = tmp_path / "project"
    project.mkdir()
    git(project, "init", "-q", "-b", "main")
    _review(project / ".fluxdrive" / "kb", "a-first")
    fluxdrive = str(Path(sys.executable).parent / "fluxdrive")
    child = pexpect.spawn(
        fluxdrive, ["kb", "review"], cwd=str(project), dimensions=(30, 100), timeout=30, encoding="utf-8"
    )
    child.expect("Review 1 of 1")
    child.send("1")  # "delete it" by its number: a confirmation first
    child.expect("again to confirm")
    child.send("\r")
    child.expect("All done")
    child.send("q")
    child.expect(pexpect.EOF)
    assert "1 answered; run `fluxdrive kb apply`" in child.before
    assert load_reviews(project / ".fluxdrive" / "kb")[0].answer == "delete it"
