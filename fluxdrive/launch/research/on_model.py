"""framework-docs and best-practices research on a model, for reviews that run on the llm runtime.

Offline those two agents are skipped (their questions need outside
knowledge). With a model they run: the research agent's own instructions,
the question and the flagged finding, the project's files through the same
read-only tools the reviewers have (project guidance first), and the model's
own knowledge for the rest. There is no web tool, so every answer carries a
gap saying that documentation and practice claims come from the model's
training and should be checked against current sources.

It lives with the other research executors; the llm runtime's modules (an
optional extra) are imported only when a question is asked. The executor is
synchronous (the research runner calls it in a worker thread with a
deadline) and opens its own HTTP client through the same backoff transport
as the agents; tokens are reported in the outcome's note.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, Field

from fluxdrive.agents import AgentDefinition
from fluxdrive.config.model import Config
from fluxdrive.launch.research.model import Point, ResearchAnswer, ResearchExecutor, ResearchRequest, ResearchTimeout

if TYPE_CHECKING:  # the llm extra is optional: its modules are imported when a model is asked
    from fluxdrive.runtimes.llm.runtime import ModelFactory

MODEL_AGENTS = ("framework-docs", "best-practices")
MAX_TURNS = 12
NO_WEB_GAP = (
    "no web access in this run: documentation and practice claims come from the model's training data; "
    "check them against the current official sources"
)
PREFACE = (
    "You have no web access in this run. Use the project's own files first (read_file, list_files, grep: "
    "CLAUDE.md, AGENTS.md, docs/, manifests and lock files for versions), then your own knowledge of the "
    "framework or practice. List project files you read as sources by path; name documentation you rely on "
    "from memory as 'from model knowledge: <what>'. Keep each finding to one or two sentences."
)


class ModelAnswer(BaseModel):
    """What the model must return: the research contract's four parts."""

    sources: list[str] = Field(description="project files read (paths) and 'from model knowledge: ...' entries")
    findings: list[str] = Field(min_length=1, max_length=6, description="numbered answers, most important first")
    confidence: Literal["high", "medium", "low"]
    confidence_note: str = Field(description="why this confidence, in one sentence")
    gaps: list[str] = Field(default_factory=list, description="what could not be checked")


def _question(request: ResearchRequest) -> str:
    trigger = request.trigger
    places = ", ".join(trigger.locations or ((trigger.location,) if trigger.location else ())) or "no location"
    return (
        f"Research question: {trigger.question}\n"
        f"Triggering finding {trigger.finding_id} ({trigger.severity}, reported by {', '.join(trigger.agents)}): "
        f"{trigger.title}\nLocation(s): {places}\n"
        "Read the flagged location first, then answer."
    )


def model_executor(
    agent: AgentDefinition, model_name: str, config: Config, *, model_factory: ModelFactory | None = None
) -> ResearchExecutor:
    """A research executor that answers ``agent``'s questions with ``model_name``."""

    def execute(request: ResearchRequest) -> ResearchAnswer:
        remaining = request.remaining()
        if remaining <= 0:
            raise ResearchTimeout(f"{agent.name}: deadline passed")
        from fluxdrive.runtimes.llm.oneshot import ask

        try:
            answer, spec, usage = asyncio.run(
                asyncio.wait_for(
                    ask(
                        model_name,
                        f"{PREFACE}\n\n{agent.instructions}",
                        _question(request),
                        ModelAnswer,
                        config,
                        root=Path(request.root),
                        max_requests=MAX_TURNS,
                        model_factory=model_factory,
                    ),
                    remaining,
                )
            )
        except TimeoutError:
            raise ResearchTimeout(f"{agent.name}: no answer from {model_name} in time") from None
        return ResearchAnswer(
            sources=tuple(answer.sources),
            points=tuple(Point(text) for text in answer.findings),
            confidence=answer.confidence,
            confidence_note=answer.confidence_note,
            gaps=(NO_WEB_GAP, *answer.gaps),
            how=f"answered by {spec.label} from the repository and its own knowledge, no web ({usage.tokens:,} tokens)",
            provenance=spec.provenance,
            usage=usage,
        )

    return execute
