"""Stage 3: the terminal UI in which a person answers pending knowledge-base reviews.

A view of :class:`~fluxdrive.kb.reviews.ReviewSession` (which holds the
logic and saves every answer the moment it is given): the subject, the
question and the options of one review at a time; arrows and Enter pick an
option, ``s`` skips, ``q`` quits. Auto-apply reviews never appear. When the
last one is answered it says what to run next (``fluxdrive kb apply``).
The person never sees ``agent_notes`` - they are for the apply step.
"""

from __future__ import annotations

from typing import ClassVar

from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.widgets import Footer, Header, OptionList, Static
from textual.widgets.option_list import Option

from fluxdrive.kb.reviews import ReviewSession


class ReviewApp(App[int]):
    """Answer the pending reviews; the app's return value is how many were answered."""

    TITLE = "fluxdrive - knowledge-base reviews"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("s", "skip", "Skip"),
        Binding("q", "quit_reviews", "Quit"),
    ]
    CSS = """
    #progress { color: $text-muted; padding: 0 1; }
    #subject { text-style: bold; padding: 1 1 0 1; }
    #question { padding: 1; }
    #options { height: auto; max-height: 12; margin: 0 1; }
    """

    def __init__(self, session: ReviewSession) -> None:
        super().__init__()
        self.session = session
        self.answered = 0

    def compose(self) -> ComposeResult:
        yield Header()
        with Vertical():
            yield Static(id="progress")
            yield Static(id="subject", markup=False)  # review text is data, never markup
            yield Static(id="question", markup=False)
            yield OptionList(id="options")
        yield Footer()

    def on_mount(self) -> None:
        self._show()

    def _show(self) -> None:
        review = self.session.current
        options = self.query_one("#options", OptionList)
        options.clear_options()
        total = len(self.session.reviews)
        if review is None:
            self.query_one("#progress", Static).update(f"{self.answered} of {total} answered")
            self.query_one("#subject", Static).update("All done.")
            self.query_one("#question", Static).update(
                "Run `fluxdrive kb apply` to carry out the answers (and the automatic fixes)."
            )
            options.display = False
            return
        self.query_one("#progress", Static).update(f"Review {self.session.position + 1} of {total} ({review.type})")
        self.query_one("#subject", Static).update(review.subject)
        self.query_one("#question", Static).update(review.question)
        options.add_options([Option(choice, id=str(index)) for index, choice in enumerate(review.options)])
        options.highlighted = 0
        options.focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        review = self.session.current
        if review is None:
            return
        self.session.answer(review.options[event.option_index])
        self.answered += 1
        self._show()

    def action_skip(self) -> None:
        self.session.skip()
        self._show()

    def action_quit_reviews(self) -> None:
        self.exit(self.answered)
