"""Benchmark the static runtime: all seven review agents on a ~100k-line Python tree.

Copies the installed sources of pydantic, rich and typer (about 99,000 lines
of real Python) into a temporary project, runs every review agent through
one StaticRuntime concurrently (as a review does), and prints the total wall
time, each analyzer's time, lines per second and findings per agent.

Budget (issue 3): all seven agents in <= 20 s on the 2-core machine; issue 13
tightened it to <= 6 s and at most half of bandit's time on the same tree.
When bandit is installed (it is in the dev extras), it runs on the same copy in
the same run, single process as it ships, and the ratio is printed.
Run: ``make bench`` or ``.venv/bin/python bench/static.py``.
"""

from __future__ import annotations

import asyncio
import importlib
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from fluxdrive.agents import builtin_agents
from fluxdrive.config import Config
from fluxdrive.contracts import classify_output
from fluxdrive.runtimes import AgentTask, ReviewContent, run_guarded
from fluxdrive.runtimes.static import StaticRuntime
from fluxdrive.workspace import review_files

PACKAGES = ("pydantic", "rich", "typer")
BUDGET_S = 6.0


def _copy_tree(target: Path) -> int:
    lines = 0
    for name in PACKAGES:
        source = Path(importlib.import_module(name).__file__ or "").parent
        shutil.copytree(source, target / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "*.so"))
    for path in target.rglob("*.py"):
        lines += path.read_text(encoding="utf-8", errors="replace").count("\n")
    return lines


def _bandit(root: Path) -> float | None:
    """Seconds bandit takes over the tree (None when it is not installed)."""
    command = shutil.which("bandit", path=str(Path(sys.executable).parent)) or shutil.which("bandit")
    if command is None:
        return None
    started = time.perf_counter()
    subprocess.run([command, "-r", str(root), "-f", "json", "-q"], capture_output=True, check=False)
    return time.perf_counter() - started


def main() -> int:
    agents = [a for a in builtin_agents().values() if a.kind == "review"]
    with tempfile.TemporaryDirectory(prefix="fluxdrive-bench-") as tmp:
        root = Path(tmp) / "project"
        root.mkdir()
        lines = _copy_tree(root)
        output = Path(tmp) / "out"
        output.mkdir()
        files = review_files(root, root)
        content = ReviewContent(root, files)
        runtime = StaticRuntime()
        config = Config()
        tasks = [
            AgentTask(agent, "", content, output, output / "peer-findings.jsonl", config, 600.0)
            for agent in sorted(agents, key=lambda a: a.name)
        ]

        async def review() -> None:
            await asyncio.gather(*(run_guarded(runtime, task) for task in tasks))

        started = time.perf_counter()
        asyncio.run(review())
        total = time.perf_counter() - started

        analysis = runtime.analysis_for(tasks[0])
        print(f"tree: {', '.join(PACKAGES)}: {len(files)} files, {lines:,} lines of Python")
        print(
            f"all seven agents: {total:.2f} s  ({lines / total:,.0f} lines/s)  budget {BUDGET_S:.0f} s -> ratio {total / BUDGET_S:.2f}"
        )
        print(f"  load sources       {analysis.load_seconds:6.2f} s")
        for name, output_ in analysis.outputs.items():
            state = f"  ({output_.error})" if output_.error else f"  {len(output_.hits):5d} hits"
            print(f"  {name:<18} {output_.seconds:6.2f} s{state}")
        for task in tasks:
            result = classify_output(output / f"{task.agent.name}.md")
            print(f"  {task.agent.name:<18} {len(result.index.entries):4d} findings, verdict {result.index.verdict}")
        bandit = _bandit(root)
        if bandit is None:
            print("bandit: not installed (pip install -e '.[dev]'); no side-by-side figure")
        else:
            print(
                f"bandit on the same tree: {bandit:.2f} s -> fluxdrive / bandit = {total / bandit:.2f} (goal <= 0.50)"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
