"""``run.json``: what the launch phase tells synthesis about a run.

Written by launch into OUTPUT_DIR, read by synthesis; optional (synthesis of
a directory written by another orchestrator works without it). It records
which agents were launched in which stage, whether the review stopped early,
what content each agent received when slicing was active (so convergence
counts only agents that saw a finding's file or section), each agent's
provenance (provider, model family, model id) for cross-family convergence,
outcomes and usage, and the research that ran between stages.

Example::

    {
      "schema_version": 1,
      "run_id": "4f1c2a9e",
      "input": {"path": "src/", "type": "directory", "stem": "src", "project_root": "/repo"},
      "started_at": "2026-11-21T10:00:00.000Z",
      "finished_at": "2026-11-21T10:01:12.000Z",
      "stages": [{"stage": 1, "agents": ["fd-safety", "fd-architecture"]},
                 {"stage": 2, "agents": ["fd-quality"], "launched": false}],
      "early_stop": true,
      "content_routing_active": true,
      "agents": {
        "fd-safety": {"stage": 1, "category": "builtin", "outcome": "completed",
                      "provenance": {"provider": "anthropic", "model_family": "claude",
                                     "model_id": "claude-sonnet-4"},
                      "slice": {"mode": "sliced", "files": ["src/auth.py"], "sections": []},
                      "usage": {"tokens_in": 18000, "tokens_out": 2100, "cost_usd": 0.08, "wall_s": 41.2},
                      "finished_at": "2026-11-21T10:00:41.000Z"}
      },
      "research": [{"agent": "git-history", "question": "...", "output": "research/git-history.md",
                    "status": "completed"}]
    }
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

RUN_FILE = "run.json"
MAX_MANIFEST_BYTES = 64 * 1024 * 1024
SCHEMA_VERSION = 1

InputType = Literal["file", "document", "directory", "diff"]
AgentOutcome = Literal["completed", "error", "timeout", "cancelled", "not-launched", "dropped"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="allow", frozen=True)


class RunInput(_Model):
    """What was reviewed."""

    path: str
    type: InputType
    stem: str = ""
    project_root: str = ""


class StageRecord(_Model):
    """One stage: its agents and whether it was launched."""

    stage: int = Field(ge=1)
    agents: list[str] = Field(default_factory=list)
    launched: bool = True


class ProvenanceRecord(_Model):
    """Who produced an agent's findings."""

    provider: str
    model_family: str
    model_id: str


class SliceRecord(_Model):
    """What content an agent received: everything, or priority files/sections."""

    mode: Literal["full", "sliced"] = "full"
    files: list[str] = Field(default_factory=list)
    sections: list[str] = Field(default_factory=list)

    def covers(self, file: str | None, section: str | None) -> bool:
        """True when this slice included the file (or section) in full."""
        if self.mode == "full":
            return True
        if file is not None and any(file == f or file.endswith("/" + f) or f.endswith("/" + file) for f in self.files):
            return True
        return section is not None and section in self.sections


class UsageRecord(_Model):
    """Tokens, cost and wall time."""

    tokens_in: int = 0
    tokens_out: int = 0
    cost_usd: float = 0.0
    wall_s: float = 0.0


class AgentRecord(_Model):
    """One launched (or considered) agent."""

    stage: int | None = None
    category: Literal["builtin", "project", "cross-model"] = "builtin"
    outcome: AgentOutcome = "completed"
    provenance: ProvenanceRecord | None = None
    slice: SliceRecord = Field(default_factory=SliceRecord)
    usage: UsageRecord = Field(default_factory=UsageRecord)
    finished_at: str | None = None
    report_sha256: str | None = None  # the report as it was when the agent's run ended (.reports/<agent>.md)


class ResearchRecord(_Model):
    """A research agent run between stages (with provenance and usage when a model answered)."""

    agent: str
    question: str = ""
    output: str | None = None
    status: str = "completed"
    provenance: ProvenanceRecord | None = None
    usage: UsageRecord | None = None


class ModelCallRecord(_Model):
    """A model call that is not an agent's review, e.g. ``--llm-triage`` refining the base scores."""

    name: str
    outcome: str = "completed"
    provenance: ProvenanceRecord
    usage: UsageRecord = Field(default_factory=UsageRecord)


class SkippedFile(_Model):
    """A file the review did not cover, and why (over the size limit, binary, a symlink out of the root...).

    ``agents`` empty: left out before dispatch, so no agent saw it.
    """

    path: str
    reason: str
    agents: list[str] = Field(default_factory=list)


class FilesRecord(_Model):
    """How much of the input the agents could review."""

    reviewed: int = 0
    skipped: list[SkippedFile] = Field(default_factory=list)


class RunManifest(_Model):
    """The whole of run.json."""

    schema_version: int = SCHEMA_VERSION
    run_id: str = ""
    input: RunInput | None = None
    started_at: str | None = None
    finished_at: str | None = None
    stages: list[StageRecord] = Field(default_factory=list)
    early_stop: bool = False
    content_routing_active: bool = False
    agents: dict[str, AgentRecord] = Field(default_factory=dict)
    research: list[ResearchRecord] = Field(default_factory=list)
    model_calls: list[ModelCallRecord] = Field(default_factory=list)
    interrupted: bool = False
    files: FilesRecord = Field(default_factory=FilesRecord)
    phases: dict[str, float] = Field(default_factory=dict)  # seconds per phase: triage, stage1, ..., total
    notes: list[str] = Field(default_factory=list)  # what the run said once, with the verdict
    placement: list[str] = Field(default_factory=list)  # where agents and analysis ran (a Ray cluster's nodes)

    @property
    def launched(self) -> list[str]:
        """Agents of every launched stage (all agents when there are no stages)."""
        if not self.stages:
            return sorted(a for a, r in self.agents.items() if r.outcome not in ("not-launched", "dropped"))
        return sorted({a for s in self.stages if s.launched for a in s.agents})

    @property
    def skipped(self) -> list[str]:
        """Agents of stages that were not launched."""
        return sorted({a for s in self.stages if not s.launched for a in s.agents})


class ManifestError(ValueError):
    """run.json exists but cannot be used."""


def load_manifest(output_dir: Path) -> RunManifest | None:
    """Read OUTPUT_DIR/run.json; None if absent; ManifestError if corrupt."""
    path = Path(output_dir) / RUN_FILE
    if not path.is_file():
        return None
    if path.stat().st_size > MAX_MANIFEST_BYTES:
        raise ManifestError(f"{path} is larger than {MAX_MANIFEST_BYTES:,} bytes")
    try:
        data = json.loads(path.read_bytes().decode("utf-8"))
        return RunManifest.model_validate(data)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ManifestError(f"{path} is not valid JSON: {exc}") from None
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(p) for p in error["loc"])
        raise ManifestError(f"{path}: field '{where}': {error['msg']}") from None
