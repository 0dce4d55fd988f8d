"""An agent's ``static:`` section: which offline analyzers back it under the static runtime.

The agent definition carries each runtime's section as plain data and knows
no runtime; this runtime reads and validates its own. ``ruff`` lists rule-code
prefixes; ``ast_grep`` lists rule ids or tags of the rules shipped in
``fluxdrive/data/rules``; ``checks`` names built-in Python-AST and document
checks; ``lizard`` and ``secrets`` claim those analyzers' hits. A typo in a
project agent's section is one line and exit 2 when a review would run it
(:meth:`~fluxdrive.runtimes.static.runtime.StaticRuntime.check`).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from fluxdrive.agents import AgentDefinition
from fluxdrive.errors import UsageError


class StaticSection(BaseModel):
    """The static runtime's section of one agent definition."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    ruff: tuple[str, ...] = Field(default_factory=tuple)
    ast_grep: tuple[str, ...] = Field(default_factory=tuple)
    lizard: bool = False
    secrets: bool = False
    checks: tuple[str, ...] = Field(default_factory=tuple)


def static_section(agent: AgentDefinition) -> StaticSection:
    """``agent``'s static section (an empty one when it has none); a bad one is one UsageError line."""
    try:
        return StaticSection.model_validate(agent.runtimes.get("static", {}))
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(p) for p in error["loc"])
        raise UsageError(
            f"agent {agent.name} ({agent.source}): static.{where}: {error['msg']}",
            hint="static: takes ruff, ast_grep, lizard, secrets and checks",
        ) from None
