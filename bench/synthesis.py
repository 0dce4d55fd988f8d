"""Benchmark synthesis: 1k, 10k, 20k and 100k findings over 7 agents.

Generates agent reports (Findings Index form) with realistic structure: a
third of the findings are reported again by another agent at the same place
with reworded titles (rule 1 merges), some places hold a second, different
issue (rule 2), and issue templates recur across files of one module
(rule 3 cross-references). Times ``synthesize()`` end to end - reading,
parsing, dedup, convergence, verdict - and prints the 20k/10k ratio.

Then the clustered case of issue 26 (item 13): one report of 1,250 / 5,000 /
10,000 distinct findings on 30 lines of one file, their titles sharing two
words - every finding is co-located with hundreds of others and shares a
word with every issue of its section (it took 0.5 / 20 / 175 s when linking
was pairwise). It should grow near-linearly.

Budget (ARCHITECTURE.md): 10k findings <= 2 s, 20k <= 2.3x the 10k time.
Run: ``make bench`` or ``.venv/bin/python bench/synthesis.py`` (``--clustered``: that case alone).
"""

from __future__ import annotations

import hashlib
import random
import sys
import tempfile
import time
from pathlib import Path

from fluxdrive.contracts import IndexEntry, render_index, write_agent_output
from fluxdrive.synthesis import synthesize

AGENTS = [("fd-safety", "SF"), ("fd-correctness", "CR"), ("fd-quality", "QS"), ("fd-performance", "PF"),
          ("fd-architecture", "AR"), ("fd-user-product", "UP"), ("fd-game-design", "GD")]  # fmt: skip
TEMPLATES = [
    "SQL query built from {x} reaches cursor.execute in {f}",
    "Unchecked None returned by fetchone used in {f}",
    "File handle opened in {f} is never closed",
    "Shared counter {x} updated without a lock in {f}",
    "N+1 query: {x} loaded once per item inside {f}",
    "Exception swallowed silently in {f} hides {x} failures",
    "Regex compiled on every iteration of the loop in {f}",
    "Public function {f} has no docstring",
    "Magic number used as the {x} threshold in {f}",
    "Request parameter {x} reaches open() without sanitizing in {f}",
]
REWORDINGS = [("reaches", "flows into"), ("never closed", "not closed"), ("without a lock", "with no lock"),
              ("silently", "quietly"), ("used in", "dereferenced in")]  # fmt: skip
NAMES = ["user_id", "order", "cart", "token", "session", "invoice", "price", "limit", "path", "query"]
BUDGET_10K = 2.0


def _generate(directory: Path, total: int, seed: int = 7) -> None:
    rng = random.Random(seed)
    per_agent: dict[str, list[IndexEntry]] = {name: [] for name, _prefix in AGENTS}
    files = [f"app/module{m}/file{n}.py" for m in range(max(total // 400, 4)) for n in range(20)]
    made = 0
    while made < total:
        name, prefix = AGENTS[made % len(AGENTS)]
        path = rng.choice(files)
        line = rng.randint(1, 400)
        template = rng.choice(TEMPLATES)
        title = template.format(x=rng.choice(NAMES), f=f"handler_{rng.randint(1, 60)}()")
        severity = rng.choices(["P0", "P1", "P2", "P3"], weights=[1, 3, 4, 4])[0]
        section = path.rsplit("/", 1)[0]
        entries = [(name, prefix, title, path, line, severity)]
        roll = rng.random()
        if roll < 0.33:  # the same issue seen by another agent, reworded (rule 1)
            other, other_prefix = rng.choice([a for a in AGENTS if a[0] != name])
            reworded = title
            for old, new in rng.sample(REWORDINGS, 2):
                reworded = reworded.replace(old, new)
            entries.append((other, other_prefix, reworded, path, line, rng.choice(["P0", "P1", "P2"])))
        elif roll < 0.43:  # a different issue at the same place (rule 2)
            other_title = rng.choice([t for t in TEMPLATES if t != template]).format(x="state", f="worker()")
            entries.append((name, prefix, other_title, path, line, "P2"))
        for agent, agent_prefix, text, file, number, level in entries:
            index = len(per_agent[agent]) + 1
            per_agent[agent].append(
                IndexEntry(level, f"{agent_prefix}-{index:03d}", section, text, f"{file}:{number}")  # type: ignore[arg-type]
            )
            made += 1
    for agent, entries in per_agent.items():
        write_agent_output(directory, agent, render_index(entries))


def _generate_clustered(directory: Path, total: int, lines: int = 30) -> None:
    """One agent's report: ``total`` distinct issues on ``lines`` lines of one file (titles share 2 words)."""
    entries = []
    for i in range(total):
        digest = hashlib.sha256(str(i).encode()).hexdigest()
        title = f"Unsafe {digest[:10]} flows into {digest[10:20]} via {digest[20:30]}"
        entries.append(IndexEntry("P2", f"SF-{i + 1:05d}", "app", title, f"app/views.py:{i % lines + 1}"))
    write_agent_output(directory, "fd-safety", render_index(entries))


def clustered() -> dict[int, float]:
    """Seconds to synthesize 1,250 / 5,000 / 10,000 findings on 30 lines (printed, with the 10k/5k ratio)."""
    timings: dict[int, float] = {}
    for total in (1_250, 5_000, 10_000):
        with tempfile.TemporaryDirectory(prefix="fluxdrive-synth-") as tmp:
            _generate_clustered(Path(tmp), total)
            started = time.perf_counter()
            result = synthesize(Path(tmp))
            timings[total] = time.perf_counter() - started
            print(f"{total:>7,} findings on 30 lines -> {len(result.findings):>6,} findings: {timings[total]:6.3f} s")
    print(
        f"clustered 10k: {timings[10_000]:.3f} s, budget {BUDGET_10K:.1f} s -> ratio {timings[10_000] / BUDGET_10K:.2f};"
        f" 10k/5k time ratio {timings[10_000] / timings[5_000]:.2f} (linear: 2.0)"
    )
    return timings


def main() -> int:
    timings: dict[int, float] = {}
    for total in (1_000, 10_000, 20_000, 100_000):
        with tempfile.TemporaryDirectory(prefix="fluxdrive-synth-") as tmp:
            directory = Path(tmp)
            _generate(directory, total)
            best = float("inf")
            result = None
            for _ in range(3 if total <= 20_000 else 1):
                started = time.perf_counter()
                result = synthesize(directory)
                best = min(best, time.perf_counter() - started)
            assert result is not None
            timings[total] = best
            merged = len(result.findings)
            co_located = sum(1 for f in result.findings if f.co_located)
            linked = sum(1 for f in result.findings if f.cross_references)
            print(
                f"{total:>7,} findings -> {merged:>6,} merged ({co_located:,} co-located, {linked:,} cross-referenced): "
                f"{best:6.3f} s"
            )
    ratio = timings[20_000] / timings[10_000]
    print(f"10k: {timings[10_000]:.3f} s, budget {BUDGET_10K:.1f} s -> ratio {timings[10_000] / BUDGET_10K:.2f}")
    print(f"20k/10k time ratio: {ratio:.2f} (budget 2.3)")
    clustered()
    return 0


if __name__ == "__main__":
    if "--clustered" in sys.argv:  # the clustered case alone
        clustered()
        sys.exit(0)
    sys.exit(main())
