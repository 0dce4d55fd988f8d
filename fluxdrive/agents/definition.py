"""What an agent is: a markdown file with YAML front matter.

ARCHITECTURE.md "Agent definitions". The front matter carries everything the
deterministic orchestrator needs (identity, the keywords triage scores with,
routing for slicing, adjacency for expansion, dropout exemption, each
runtime's own section - ``static:``, which offline analyzers back it - and
model hints); the body is the reviewer's
instructions for LLM runtimes.

Example front matter::

    ---
    name: fd-safety
    kind: review
    prefix: SF
    description: Security and deployment risk - injection, credentials, trust boundaries.
    concerns: [security, auth, credential, injection, secret]
    prefilter: {keywords: [security, auth, password, deploy]}
    routing:
      priority_globs: ["**/auth/**", "**/*secret*"]
      hunk_keywords: [password, token]
    adjacent: [fd-correctness, fd-architecture]
    overlaps: []              # built-in agents a narrower project agent overlaps
    exempt_from_dropout: true
    static: {ruff: [S], secrets: true}
    tier: strong
    ---
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

AgentKind = Literal["review", "research"]
AgentCategory = Literal["builtin", "project", "cross-model"]
Origin = Literal["builtin", "project"]

NAME_PATTERN = r"^[a-z0-9][a-z0-9-]{1,62}$"
PREFIX_PATTERN = r"^[A-Z]{2,3}$"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def _lower_unique(values: list[str]) -> list[str]:
    seen: dict[str, None] = {}
    for value in values:
        text = value.strip()
        if not text:
            raise ValueError("entries must not be empty")
        seen.setdefault(text.lower(), None)
    return list(seen)


class Prefilter(_Strict):
    """When the agent is even considered for a file or directory input.

    ``always`` agents pass unconditionally; otherwise the input must mention
    one of ``keywords``, or be a document of one of ``document_types``, or
    belong to one of ``domains``. ``documents_only`` agents (the cognitive
    reviewers: systems, decisions, people, resilience, perception) judge
    prose: a code input, or a diff that touches no document, filters them out.
    """

    always: bool = False
    documents_only: bool = False
    keywords: list[str] = Field(default_factory=list)
    document_types: list[str] = Field(default_factory=list)
    domains: list[str] = Field(default_factory=list)

    _norm = field_validator("keywords")(_lower_unique)


class Routing(_Strict):
    """What content is priority for the agent when inputs are sliced, and what triage counts as relevant.

    ``cross_cutting`` agents (architecture, quality) see every input in full and
    are never irrelevant to source code (base score at least 1 when there is code).
    """

    cross_cutting: bool = False
    priority_globs: list[str] = Field(default_factory=list)
    hunk_keywords: list[str] = Field(default_factory=list)
    section_keywords: list[str] = Field(default_factory=list)
    always_priority_keywords: list[str] = Field(default_factory=list)
    critical_globs: list[str] = Field(default_factory=list)


class AgentDefinition(_Strict):
    """A validated agent definition (front matter + instructions)."""

    name: str = Field(pattern=NAME_PATTERN)
    kind: AgentKind = "review"
    category: AgentCategory
    prefix: str = Field(pattern=PREFIX_PATTERN)
    description: str = Field(min_length=10, max_length=300)
    domains: list[str] = Field(default_factory=list)
    concerns: list[str] = Field(min_length=1)
    prefilter: Prefilter = Field(default_factory=Prefilter)
    routing: Routing = Field(default_factory=Routing)
    adjacent: list[str] = Field(default_factory=list)
    overlaps: list[str] = Field(default_factory=list)
    exempt_from_dropout: bool = False
    # The most severe finding its lane usually produces: 3 (P0: safety, data integrity), 2 (P1), 1 (P2/P3).
    # Staging ranks equal scores by it, so a tie at the Stage 1 boundary never goes to style over safety.
    reach: int = Field(2, ge=1, le=3)
    # True: the agent reviews only through a model (a generated domain agent); a runtime that runs no model
    # (the static runtime) leaves it out of the plan, with a note.
    needs_model: bool = False
    # Each runtime's own section, read and validated by that runtime (``static:`` - which offline analyzers
    # back the agent - is the static runtime's); the definition knows no runtime.
    runtimes: dict[str, dict[str, Any]] = Field(default_factory=dict)
    tier: Literal["strong", "balanced", "fast"] = "balanced"
    runtime: str | None = None
    model: str | None = None
    instructions: str = Field(min_length=200)
    origin: Origin = "builtin"
    source: Path

    _norm_concerns = field_validator("concerns")(_lower_unique)

    @model_validator(mode="before")
    @classmethod
    def _runtime_sections(cls, data: Any) -> Any:
        """A top-level ``static:`` (how agent files have always said it) is the static runtime's section; its
        ``offline: false`` is ``needs_model``."""
        if not isinstance(data, dict) or "static" not in data:
            return data
        data = dict(data)
        section = data.pop("static")
        if isinstance(section, dict) and "offline" in section:
            section = dict(section)
            data.setdefault("needs_model", not section.pop("offline"))
        data["runtimes"] = {**(data.get("runtimes") or {}), "static": section}
        return data

    @field_validator("adjacent")
    @classmethod
    def _not_self_adjacent(cls, value: list[str]) -> list[str]:
        if len(set(value)) != len(value):
            raise ValueError("adjacent agents must be listed once each")
        return value

    @property
    def short_name(self) -> str:
        """``fd-safety`` -> ``safety``: the name used in adjacency tables."""
        return self.name.removeprefix("fd-")
