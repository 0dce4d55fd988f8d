"""Stage 3: the terminal UI in which a person answers pending knowledge-base reviews.

A view of :class:`~fluxdrive.kb.reviews.ReviewSession` (which holds the
logic and saves every answer the moment it is given): the subject, the
item's own text and references, the question and the options of one review
at a time; arrows and Enter or a number key pick an option, ``s`` skips,
``u`` undoes the last answer or skip, ``q`` quits. The highlighted option is
never the one that deletes the item, and deleting asks for a second Enter.
Auto-apply reviews never appear. The end screen counts answered and skipped
reviews and says what to run next (``fluxdrive kb apply``). The person
never sees ``agent_notes`` - they are for the apply step.
"""

from __future__ import annotations

from typing import ClassVar

from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.widgets import Footer, Header, OptionList, Static
from textual.widgets.option_list import Option

from fluxdrive.kb.reviews import ReviewSession, is_destructive


class ReviewApp(App[int]):
    """Answer the pending reviews; the app's return value is how many were answered."""

    TITLE = "fluxdrive - knowledge-base reviews"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("s", "skip", "Skip"),
        Binding("u", "undo", "Undo"),
        Binding("q", "quit_reviews", "Quit"),
        *(Binding(str(n), f"choose({n - 1})", show=False) for n in range(1, 10)),
    ]
    CSS = """
    #progress { color: $text-muted; padding: 0 1; }
    #subject { text-style: bold; padding: 1 1 0 1; }
    #item { color: $text-muted; padding: 0 1; }
    #question { padding: 1; }
    #confirm { color: $error; text-style: bold; padding: 0 1; }
    #options { height: auto; max-height: 12; margin: 0 1; }
    """

    def __init__(self, session: ReviewSession) -> None:
        super().__init__()
        self.session = session
        self.pending_delete: int | None = None  # the destructive option waiting for its second Enter

    def compose(self) -> ComposeResult:
        yield Header()
        with Vertical():
            yield Static(id="progress")
            yield Static(id="subject", markup=False)  # review text is data, never markup
            yield Static(id="item", markup=False)
            yield Static(id="question", markup=False)
            yield OptionList(id="options")
            yield Static(id="confirm", markup=False)
        yield Footer()

    def on_mount(self) -> None:
        self._show()

    @property
    def answered(self) -> int:
        return self.session.answered_count

    def _show(self) -> None:
        review = self.session.current
        options = self.query_one("#options", OptionList)
        options.clear_options()
        self.pending_delete = None
        self.query_one("#confirm", Static).update("")
        total = len(self.session.reviews)
        if review is None:
            skipped = len(self.session.skipped)
            self.query_one("#progress", Static).update(f"{self.answered} answered, {skipped} skipped, of {total}")
            self.query_one("#subject", Static).update("All done." if not skipped else "Done for now.")
            self.query_one("#item", Static).update("")
            later = (
                f" {skipped} skipped review(s) stay pending: `fluxdrive kb review` asks them again." if skipped else ""
            )
            self.query_one("#question", Static).update(
                f"Run `fluxdrive kb apply` to carry out the answers (and the automatic fixes).{later} u: undo."
            )
            options.display = False
            return
        options.display = True
        self.query_one("#progress", Static).update(f"Review {self.session.position + 1} of {total} ({review.type})")
        self.query_one("#subject", Static).update(review.subject)
        item = self.session.item(review)
        if item is None:
            about = f"(the item {review.item_id} is no longer in the knowledge base)"
        else:
            refs = f"\nReferences: {', '.join(item.refs)}" if item.refs else ""
            about = f"{item.title}\n{item.content[:600]}{refs}"
        self.query_one("#item", Static).update(about)
        self.query_one("#question", Static).update(review.question)
        options.add_options(
            [Option(f"{index + 1}. {choice}", id=str(index)) for index, choice in enumerate(review.options)]
        )
        safe = next((i for i, c in enumerate(review.options) if not is_destructive(review, c)), 0)
        options.highlighted = safe  # Enter alone never deletes
        options.focus()

    def _choose(self, index: int) -> None:
        review = self.session.current
        if review is None or not 0 <= index < len(review.options):
            return
        choice = review.options[index]
        if is_destructive(review, choice) and self.pending_delete != index:
            self.pending_delete = index
            self.query_one("#options", OptionList).highlighted = index
            self.query_one("#confirm", Static).update(
                f"'{choice}' deletes the item: press Enter (or {index + 1}) again to confirm, any arrow to go back."
            )
            return
        self.session.answer(choice)
        self._show()

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        if self.pending_delete is not None and event.option_index != self.pending_delete:
            self.pending_delete = None
            self.query_one("#confirm", Static).update("")

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self._choose(event.option_index)

    def action_choose(self, index: int) -> None:
        self._choose(index)

    def action_skip(self) -> None:
        self.session.skip()
        self._show()

    def action_undo(self) -> None:
        if self.session.undo() is not None:
            self._show()

    def action_quit_reviews(self) -> None:
        self.exit(self.answered)
