"""How an agent is executed: the runtime protocol and its data.

A runtime turns an :class:`AgentTask` into the agent's ``.md`` report
(through the completion contract) and an :class:`AgentResult`. It implements
one async method, :meth:`Runtime.run`; its capabilities are class attributes
checked when it is registered. The protocol never depends on which runtime
ran an agent: static analyzers, an LLM API or a coding-assistant CLI all end
in the same files.
"""

from __future__ import annotations

import abc
import enum
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

if TYPE_CHECKING:
    from fluxdrive.agents import AgentDefinition
    from fluxdrive.config import Config
    from fluxdrive.runtimes.llm.spend import SpendMeter
    from fluxdrive.synthesis.evidence import Candidate


@dataclass(frozen=True, slots=True)
class ReviewContent:
    """What an agent reviews: files under a project root, or part of them.

    ``files`` are POSIX paths relative to ``root``; an agent may read only
    inside ``root``. ``content_file`` is the rendered content (or the
    agent's slice) that prompt-based runtimes read. ``changed_lines``, for
    diffs, limits findings to the lines the change touched. ``focus``, when
    content routing gave the agent a slice, limits its findings to the slice:
    files it received in full (value None) or the lines it received (a set);
    it does not change what is analyzed, so analyzers still run once for all
    agents.
    """

    root: Path
    files: tuple[str, ...]
    input_type: str = "directory"
    content_file: Path | None = None
    changed_lines: Mapping[str, frozenset[int]] | None = None
    label: str = ""
    focus: Mapping[str, frozenset[int] | None] | None = None
    settings_revision: str | None = None  # a diff's base commit: the project agent definitions that apply
    # A diff's --filter as line sets: the lines a finding may be reported on (added lines, every hunk line,
    # or None for a whole file); None: ``changed_lines``. ``changed_lines`` stays what the change wrote.
    shown_lines: Mapping[str, frozenset[int] | None] | None = None

    @property
    def is_document(self) -> bool:
        """True when the input is a single markdown/text document."""
        return self.input_type == "document"


@dataclass(frozen=True, slots=True)
class AgentTask:
    """Everything a runtime needs to run one agent once."""

    agent: AgentDefinition
    prompt: str
    content: ReviewContent
    output_dir: Path
    channel_path: Path
    config: Config
    deadline_s: float | None = None
    stage: int = 1
    # Tells the person watching why the agent is waiting ("retrying (connection refused)"); set by the dispatcher.
    notify: Callable[[str], None] | None = None
    # What the runtime is doing, as often as that changes: (what, done, total), e.g. ("analyzers: ruff running",
    # 120, 493 files); set by the dispatcher for the heartbeat and the progress bar, never a line of its own.
    activity: Callable[[str, int, int], None] | None = None


class Outcome(enum.Enum):
    """How an agent run ended."""

    COMPLETED = "completed"
    ERROR = "error"
    TIMEOUT = "timeout"
    CANCELLED = "cancelled"


@dataclass(frozen=True, slots=True)
class Usage:
    """What the run cost."""

    tokens_in: int = 0
    tokens_out: int = 0
    cost_usd: float = 0.0
    wall_s: float = 0.0

    @property
    def tokens(self) -> int:
        """Billing tokens: input plus output."""
        return self.tokens_in + self.tokens_out

    def record(self) -> dict[str, int | float]:
        """run.json's ``usage`` object."""
        return {
            "tokens_in": self.tokens_in,
            "tokens_out": self.tokens_out,
            "cost_usd": self.cost_usd,
            "wall_s": round(self.wall_s, 3),
        }


@dataclass(frozen=True, slots=True)
class Provenance:
    """Who produced the findings (synthesis uses the model family)."""

    provider: str
    model_family: str
    model_id: str

    def record(self) -> dict[str, str]:
        """run.json's ``provenance`` object."""
        return {"provider": self.provider, "model_family": self.model_family, "model_id": self.model_id}


@dataclass(frozen=True, slots=True)
class Reply:
    """A runtime's answer to one question outside a review (the reaction round): the text, its cost, who."""

    text: str
    usage: Usage
    provenance: Provenance


@dataclass(frozen=True, slots=True)
class AgentResult:
    """The outcome of one agent run; the report itself is on disk."""

    agent: str
    outcome: Outcome
    output_path: Path
    provenance: Provenance
    usage: Usage = field(default_factory=Usage)
    error: str | None = None
    notes: tuple[str, ...] = ()
    skipped: tuple[tuple[str, str], ...] = ()  # (file, why): content the agent could not review
    report_sha256: str | None = None  # of the report as it was when the run ended (the frozen copy)
    retryable: bool = True  # False: a retry cannot help (the run's cost ceiling stopped it)


class Runtime(abc.ABC):
    """One way of executing agents. Implement :meth:`run`; set the capabilities.

    ``run`` writes ``OUTPUT_DIR/<agent>.md`` through
    :mod:`fluxdrive.contracts.completion`. It may raise: the guard in
    :mod:`fluxdrive.runtimes.guard` turns any failure into an error stub, so
    a runtime never takes the run down with it.

    The lifecycle of one review's instance is part of the protocol, with
    no-op defaults: :meth:`create` (given the command line's model),
    :meth:`check` before anything is dispatched, :meth:`aclose` when the
    stages are done, :meth:`notes` for run.json. Whoever drives runtimes
    (the review's pool, a backend that ships them elsewhere) needs no
    knowledge of which runtime it holds.
    """

    name: ClassVar[str]
    offline: ClassVar[bool] = False
    costs_tokens: ClassVar[bool] = True  # False: planning prices its agents at 0 tokens (the cost model, the budget)
    needs_key: ClassVar[bool] = False
    key_env_var: ClassVar[str | None] = None
    remote: ClassVar[bool] = False
    reads_prompt: ClassVar[bool] = True  # False: the prompt cannot prime it (knowledge re-discovery is independent)
    reacts: ClassVar[bool] = False  # True: it can answer peers' findings in the reaction round (react)
    supplies_evidence: ClassVar[bool] = False  # True: evidence() gives a lane's analyzer candidates, offline
    description: ClassVar[str] = ""

    @abc.abstractmethod
    async def run(self, task: AgentTask) -> AgentResult:
        """Run the agent and return its result."""

    def provenance(self, task: AgentTask) -> Provenance:
        """Who runs ``task`` (used for stubs when ``run`` fails)."""
        return Provenance(self.name, self.name, self.name)

    async def react(self, task: AgentTask) -> Reply:
        """The agent's answer to ``task.prompt`` (the reaction round's peers and rules) and what it cost.

        Only a runtime with ``reacts = True`` is asked (fluxdrive.launch.reaction); it may read the project
        to cite evidence but writes nothing. Any failure raises: the round turns it into a note.
        """
        raise NotImplementedError(f"the {self.name} runtime does not react")

    def evidence(self, task: AgentTask) -> list[Candidate]:
        """The candidates this runtime's analyzers find in ``task.agent``'s lane, unnumbered (blocking; in-process).

        Only a runtime with ``supplies_evidence = True`` is asked (fluxdrive.launch.evidence): its candidates are
        given to the agents that run on a model, to confirm or refute. Writes nothing.
        """
        raise NotImplementedError(f"the {self.name} runtime supplies no evidence")

    @classmethod
    def create(cls, model: str | None = None) -> Runtime:
        """The review's instance; ``model`` is the command line's ``--model`` (ignored unless it matters)."""
        return cls()

    def check(self, config: Config, root: Path, agent: AgentDefinition | None = None) -> None:
        """Raise a UsageError when this runtime cannot run ``agent`` (with no agent: cannot run at all).

        Called before anything is written or dispatched, so a missing key or
        CLI is one line and exit 2, not an error stub per agent.
        """
        return None

    def can_run(self, agent: AgentDefinition) -> bool:
        """False when this runtime cannot run ``agent`` at all (the plan leaves it out, with a note)."""
        return True

    def distribute(self, backend: Backend, model: str | None) -> Runtime:
        """The runtime the dispatcher calls when the review runs on ``backend``.

        By default every agent of this runtime runs as one of the backend's
        tasks. A runtime whose agents share work (the static runtime's one
        analysis) may instead keep its agents here and spread that work with
        :meth:`Backend.map`.
        """
        return backend.ship(self, model)

    async def aclose(self) -> None:
        """Release what the instance holds (HTTP clients); called once the stages are done."""
        return None

    def bind_meter(self, meter: SpendMeter) -> None:
        """Charge this runtime's model calls to the run's money meter (``budget.max_usd``); a runtime that
        makes no model calls of its own (static, a CLI agent billed elsewhere) ignores it."""
        return None

    def notes(self) -> list[str]:
        """What the run record should say about this runtime (e.g. a concurrency cap lowered by rate limiting)."""
        return []

    def placement(self) -> list[str]:
        """Where this runtime's work ran, when that is worth recording (a cluster's nodes): information for
        run.json and the console, not a warning about the verdict (so findings.json does not depend on it)."""
        return []


class Backend(Protocol):
    """Where a review's work executes when not all of it runs in this process (a Ray cluster).

    Passed to the review the way ``httpx.Client(transport=...)`` takes its
    transport: the local run is no backend at all. Each runtime decides what
    it distributes (:meth:`Runtime.distribute`), so a backend never asks
    which runtime it holds.
    """

    def ship(self, runtime: Runtime, model: str | None) -> Runtime:
        """A runtime that runs each of ``runtime``'s agents as a task of this backend."""
        ...

    def map(self, function: Callable[..., Any], jobs: Sequence[tuple[Any, ...]]) -> list[tuple[Any, str]]:
        """``function(*job)`` for every job as tasks of this backend: each result with the node it ran on, in
        job order (``function`` and the jobs must be picklable)."""
        ...

    def capacity(self) -> int:
        """How many tasks can run at once (the cluster's CPUs)."""
        ...
