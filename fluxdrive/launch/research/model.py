"""The executor seam's data: what a research executor gets, what it returns, how an agent ended.

Every other module of the package shares these types and notes, so they live
apart from the code that produces or consumes them. The only package import is
:class:`~fluxdrive.launch.research.triggers.Trigger`, which a request carries.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from fluxdrive.launch.research.triggers import Trigger
from fluxdrive.runtimes.base import Provenance, Usage

RESEARCH_DIR = "research"
RESEARCH_TIMEOUT_S = 60.0

OFFLINE_NOTE = "needs the web or a model; not run offline"

ResearchStatus = Literal["completed", "timeout", "skipped", "error"]


class ResearchTimeout(Exception):  # noqa: N818 - it is the outcome's name, "timeout"
    """Raised inside an executor when its deadline has passed."""


@dataclass(frozen=True, slots=True)
class Point:
    """One numbered answer under Findings, with detail lines under it."""

    text: str
    details: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class ResearchAnswer:
    """What an executor found, before it is rendered in the research-contract shape."""

    sources: tuple[str, ...]
    points: tuple[Point, ...]
    confidence: Literal["high", "medium", "low"]
    confidence_note: str
    gaps: tuple[str, ...] = ()
    how: str | None = None  # how it was answered, when not from the repository alone (e.g. by a model)
    provenance: Provenance | None = None  # the model that answered, if one did
    usage: Usage | None = None  # its tokens and cost (every token is accounted for)


@dataclass(frozen=True, slots=True)
class ResearchRequest:
    """What an executor gets: the trigger, the resolved project root and a monotonic deadline."""

    trigger: Trigger
    root: Path
    deadline: float
    stand_in_for: str | None = None

    def remaining(self) -> float:
        """Seconds left before the deadline (negative once it has passed)."""
        return self.deadline - time.monotonic()

    def check(self) -> None:
        """Raise :class:`ResearchTimeout` once the deadline has passed."""
        if self.remaining() <= 0:
            raise ResearchTimeout(f"{self.trigger.research_agent}: deadline passed")


ResearchExecutor = Callable[[ResearchRequest], ResearchAnswer]


@dataclass(frozen=True, slots=True)
class ResearchOutcome:
    """How one research agent ended; ``output`` is relative to OUTPUT_DIR."""

    agent: str
    question: str
    output: str | None
    status: ResearchStatus
    note: str
    seconds: float
    finding_id: str = ""
    provenance: Provenance | None = None
    usage: Usage | None = None

    def record(self) -> dict[str, object]:
        """The ``research`` entry of run.json (provenance and usage only when a model answered)."""
        data: dict[str, object] = {
            "agent": self.agent,
            "question": self.question,
            "output": self.output,
            "status": self.status,
            "note": self.note,
            "seconds": self.seconds,
            "finding_id": self.finding_id,
        }
        if self.provenance is not None and self.usage is not None:
            data["provenance"] = self.provenance.record()
            data["usage"] = self.usage.record()
        return data


@dataclass
class Notes:
    """What an executor accumulates before it becomes a :class:`ResearchAnswer`."""

    sources: list[str] = dataclasses.field(default_factory=list)
    points: list[Point] = dataclasses.field(default_factory=list)
    gaps: list[str] = dataclasses.field(default_factory=list)
    key_commits: list[str] = dataclasses.field(default_factory=list)
