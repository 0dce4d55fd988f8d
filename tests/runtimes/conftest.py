"""Helpers to build agent tasks for runtime tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from fluxdrive.agents import builtin_agents
from fluxdrive.config import Config
from fluxdrive.runtimes import AgentTask, ReviewContent


@pytest.fixture
def make_task(tmp_path: Path):  # type: ignore[no-untyped-def]
    """``make_task("fd-safety", deadline_s=1.0)`` -> an AgentTask writing under tmp_path/out."""

    def build(
        agent: str = "fd-safety",
        *,
        deadline_s: float | None = None,
        root: Path | None = None,
        files: tuple[str, ...] = (),
    ) -> AgentTask:
        output = tmp_path / "out"
        output.mkdir(exist_ok=True)
        content = ReviewContent(root or tmp_path, files)
        return AgentTask(
            builtin_agents()[agent],
            "prompt",
            content,
            output,
            output / "peer-findings.jsonl",
            Config(),
            deadline_s,
        )

    return build
