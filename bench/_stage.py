"""One timed stage of N copies of fd-safety on a runtime: what bench/dispatch.py and bench/llm.py measure.

Real guard, real dispatcher, real file-event monitor and completion contract;
each bench supplies the runtime (scripted delays, or the llm runtime against
a fake provider) and what counts as a valid report.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from fluxdrive.agents import load_roster
from fluxdrive.config import Config
from fluxdrive.contracts import classify_output
from fluxdrive.launch.dispatcher import Launch, run_stage
from fluxdrive.launch.monitor import Monitor
from fluxdrive.launch.progress import Recorder
from fluxdrive.runtimes import AgentTask, ReviewContent, Runtime


async def timed_stage(
    directory: Path,
    runtime: Runtime,
    names: list[str],
    config: Config,
    *,
    prompt: Callable[[str], str] = lambda name: "prompt",
    verdict: str,
) -> tuple[float, int]:
    """Run every agent at once (cap = len(names)); the stage's wall time and how many reports had ``verdict``."""
    base = load_roster(directory).get("fd-safety")
    content = ReviewContent(directory, ("app.py",))
    launches = [
        Launch(
            AgentTask(
                base.model_copy(update={"name": name}),
                prompt(name),
                content,
                directory,
                directory / "peer-findings.jsonl",
                config,
                60.0,
            ),
            runtime,
        )
        for name in names
    ]
    async with Monitor(directory) as monitor:
        started = time.monotonic()
        result = await run_stage(1, launches, concurrency=len(names), retries=1, progress=Recorder(), monitor=monitor)
        wall = time.monotonic() - started
    assert len(result.results) == len(names)
    valid = sum(1 for name in names if classify_output(directory / f"{name}.md").verdict == verdict)
    return wall, valid
