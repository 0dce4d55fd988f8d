"""Benchmark a whole offline review of a real ~100k-line Python project, end to end.

Copies the installed sources of pydantic, rich and typer (about 99,000 lines
of real Python) into a temporary git repository and runs ``fluxdrive
review`` through the library exactly as the CLI does: triage, Stage 1,
research, dropout, the expansion decision (``--expand all``, the slowest
path), Stage 2, synthesis and every report. Prints the wall time, lines per
second, the time of each phase from run.json, and what the caller's stdout
would cost.

Budget (ARCHITECTURE.md): a static review of a 100k-line Python repo in
<= 60 s end to end. Run: ``make bench`` or ``.venv/bin/python bench/review.py``.
"""

from __future__ import annotations

import importlib
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from fluxdrive.api import ReviewOptions, run_review
from fluxdrive.reports import render_console
from fluxdrive.reports.console import agent_lines

PACKAGES = ("pydantic", "rich", "typer")
BUDGET_S = 60.0


def build(root: Path) -> int:
    for name in PACKAGES:
        source = Path(importlib.import_module(name).__file__ or "").parent
        shutil.copytree(source, root / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "*.so"))
    (root / "pyproject.toml").write_text('[project]\nname = "bench"\nversion = "0"\n')
    for command in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "bench"]):
        subprocess.run(["git", "-c", "user.email=b@example.com", "-c", "user.name=b", *command], cwd=root, check=True)
    return sum(p.read_text(encoding="utf-8", errors="replace").count("\n") for p in root.rglob("*.py"))


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="fluxdrive-review-bench-") as scratch:
        root = Path(scratch) / "project"
        root.mkdir()
        lines = build(root)
        started = time.monotonic()
        run = run_review(".", ReviewOptions(cwd=root, output_dir=Path(scratch) / "out", yes=True, expand="all"))
        wall = time.monotonic() - started
        assert run.synthesis is not None and run.manifest is not None
        data = json.loads((Path(scratch) / "out" / "run.json").read_text())
        seconds = {name: record.usage.wall_s for name, record in run.manifest.agents.items()}
        stdout = render_console(run.synthesis, run.files, agents=agent_lines(run.synthesis, seconds))
        counts = ", ".join(f"{n} {s}" for s, n in run.synthesis.counts().items() if n)
        print(f"project: {', '.join(PACKAGES)} - {lines:,} lines of Python")
        print(f"agents: {len(run.manifest.launched)} launched ({', '.join(run.manifest.launched)})")
        print(f"verdict: {run.synthesis.verdict} ({counts}); {run.synthesis.validation_line}")
        print("phases: " + ", ".join(f"{k} {v:.2f} s" for k, v in data["phases"].items()))
        print(f"wall: {wall:.2f} s end to end, {lines / wall:,.0f} lines/s")
        print(f"caller's stdout: {len(stdout):,} characters")
        print(f"budget {BUDGET_S:.0f} s -> ratio {wall / BUDGET_S:.2f}")
        return 0 if wall <= BUDGET_S else 1


if __name__ == "__main__":
    sys.exit(main())
