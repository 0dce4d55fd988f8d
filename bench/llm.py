"""Benchmark the llm runtime over real HTTP: 10 agents whose model takes 2 s to answer.

Everything fluxdrive does is real - pydantic-ai and the provider SDK, the
backoff transport, tools on a real project, the channel, the completion
contract, the guard and the monitor. Only the model is the local fake
provider (OpenAI Chat Completions shape, tests/fakes/llm_server.py), run in a
process of its own so its CPU is not counted as ours.

Two scenarios, three runs each:

- ``one call``: each agent's model answers its first request after 2 s.
  Wall minus 2 s is the dispatch overhead; budget (ARCHITECTURE.md,
  dispatch overhead, 10 agents x 2 s): wall <= 2.3 s.
- ``tool loop``: ``read_file``, ``grep`` and ``share_finding`` answered at
  once, then the 2 s report - 40 requests. Wall minus 2 s over the 30 quick
  requests is the client-side CPU cost of one model turn (pydantic-ai plus the
  SDK); reported, with no budget of its own (a real model takes seconds per
  turn, so this overlaps with waiting).

Run: ``make bench`` or ``.venv/bin/python bench/llm.py``.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import sys
import tempfile
import time
from multiprocessing.connection import Connection
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tests.fakes, when run as a script
sys.path.insert(0, str(Path(__file__).resolve().parent))  # bench/_stage.py

from _stage import timed_stage

from fluxdrive.config import Config
from fluxdrive.runtimes.llm import LlmRuntime
from tests.fakes.llm_server import FakeProvider, Slow, Step, Text, ToolCall

AGENTS = int(os.environ.get("BENCH_AGENTS", "10"))
MODEL_S = 2.0
BUDGET_S = 2.3
REPORT = '### Findings Index\n- P1 | SF-001 | "app.py" | Bench finding | app.py:1\nVerdict: needs-changes\n'
SCENARIOS: dict[str, list[Step]] = {
    "one call": [Slow(MODEL_S, Text(REPORT))],
    "tool loop": [
        ToolCall("read_file", {"path": "app.py"}),
        ToolCall("grep", {"pattern": "execute", "glob": "*.py"}),
        ToolCall("share_finding", {"severity": "notable", "category": "b", "summary": "x", "file_refs": ["app.py:1"]}),
        Slow(MODEL_S, Text(REPORT)),
    ],
}


async def run(directory: Path, attempt: int) -> tuple[float, int]:
    config = Config.model_validate({"llm": {"model": "openai:gpt-4.1"}, "dispatch": {"max_concurrency": AGENTS}})
    names = [f"bench-agent-{n:02d}" for n in range(AGENTS)]
    runtime = LlmRuntime()
    try:
        return await timed_stage(
            directory,
            runtime,
            names,
            config,
            prompt=lambda name: f"You are {name} (run {attempt}). Review app.py.",
            verdict="needs-changes",
        )
    finally:
        await runtime.aclose()


def warm_up() -> float:
    """Import the SDKs and build one model, as a review process does once before its first agent."""
    started = time.monotonic()
    import httpx2

    from fluxdrive.runtimes.llm.models import build_model, parse_model

    spec = parse_model("openai:gpt-4.1", env={"OPENAI_API_KEY": "-", "OPENAI_BASE_URL": "http://127.0.0.1:9/v1"})
    build_model(spec, httpx2.AsyncClient())
    return time.monotonic() - started


def serve(pipe: Connection, steps: list[Step]) -> None:
    """The fake provider in a process of its own: its CPU is the provider's, not fluxdrive's."""
    with FakeProvider(default=steps) as provider:
        pipe.send(provider.base_url_openai)
        while pipe.recv() != "stop":
            pipe.send(len(provider.requests))


def scenario(name: str, steps: list[Step], scratch: Path) -> tuple[float, float, int]:
    """Three runs against a fresh provider: (best wall, worst wall, requests per run)."""
    ours, theirs = multiprocessing.Pipe()
    server = multiprocessing.get_context("fork").Process(target=serve, args=(theirs, steps), daemon=True)
    server.start()
    os.environ["OPENAI_BASE_URL"] = ours.recv()
    os.environ["OPENAI_API_KEY"] = "sk-bench"
    walls, requests = [], 0
    for attempt in range(3):
        directory = scratch / f"{name.replace(' ', '-')}-{attempt}"
        directory.mkdir()
        (directory / "app.py").write_text("def f(cur, name):\n    cur.execute('SELECT %s' % name)\n")
        ours.send("count")
        before = ours.recv()
        wall, valid = asyncio.run(run(directory, attempt))
        ours.send("count")
        requests = ours.recv() - before
        walls.append(wall)
        print(f"{name}, run {attempt + 1}: {AGENTS} agents, {requests} requests -> wall {wall:.3f} s, {valid} valid")
    ours.send("stop")
    server.join(5)
    return min(walls), max(walls), requests


def main() -> int:
    print(f"import pydantic-ai + openai SDK, build a model (once per process): {warm_up():.3f} s")
    with tempfile.TemporaryDirectory() as scratch:
        best, worst, _ = scenario("one call", SCENARIOS["one call"], Path(scratch))
        loop_best, _, loop_requests = scenario("tool loop", SCENARIOS["tool loop"], Path(scratch))
    print(f"one call: wall best {best:.3f} s, worst {worst:.3f} s; dispatch overhead {best - MODEL_S:.3f} s")
    print(f"budget {BUDGET_S:.1f} s -> ratio {worst / BUDGET_S:.2f} (worst run)")
    quick = loop_requests - AGENTS
    per_turn = (loop_best - best) / (quick / AGENTS) if quick else 0.0
    print(
        f"tool loop: wall best {loop_best:.3f} s for {loop_requests} requests; "
        f"{(loop_best - best) * 1000 / max(quick, 1):.1f} ms client CPU per quick turn, "
        f"{per_turn:.3f} s added per tool round in a stage of {AGENTS} agents"
    )
    return 0 if worst <= BUDGET_S else 1


if __name__ == "__main__":
    sys.exit(main())
