"""Benchmark the peer-findings channel.

Prints appends per second from one process and from 8 concurrent processes
(timed from a common start signal, after every process has imported
fluxdrive, so the figure is the append path and not interpreter start-up),
checks that no line was lost or corrupted, and times a safe read of a
100,000-line channel. Run: ``make bench`` or ``.venv/bin/python bench/channel.py``.

Budget (ARCHITECTURE.md): 50 writer processes x 200 lines -> 0 lines lost or
corrupted. There is no throughput budget; the figures make regressions visible.
"""

from __future__ import annotations

import json
import multiprocessing
import sys
import tempfile
import time
from multiprocessing.synchronize import Event
from pathlib import Path

from fluxdrive.exchange import channel

SUMMARY = "Session tokens are written to localStorage and read by every page script"
PER_PROCESS = 5_000


def _append_many(path: Path, agent: str, count: int) -> None:
    for i in range(count):
        channel.append(path, "notable", agent, "bench-finding", f"{SUMMARY} #{i}", [f"a.py:{i}"])


def _worker(path: str, agent: str, count: int, ready: Event, go: Event) -> None:
    ready.set()
    go.wait()
    _append_many(Path(path), agent, count)


def _concurrent(path: Path, processes: int, per_process: int) -> float:
    """Seconds from the start signal until every writer finished."""
    context = multiprocessing.get_context("spawn")
    go = context.Event()
    readies = [context.Event() for _ in range(processes)]
    workers = [
        context.Process(target=_worker, args=(str(path), f"fd-w{n}", per_process, readies[n], go))
        for n in range(processes)
    ]
    for worker in workers:
        worker.start()
    for ready in readies:
        ready.wait()
    start = time.perf_counter()
    go.set()
    for worker in workers:
        worker.join()
        if worker.exitcode != 0:
            raise SystemExit(f"writer exited with {worker.exitcode}")
    return time.perf_counter() - start


def _check(path: Path, expected: int) -> None:
    lines = path.read_bytes().split(b"\n")[:-1]
    corrupted = 0
    for line in lines:
        try:
            json.loads(line)
        except ValueError:
            corrupted += 1
    if len(lines) != expected or corrupted:
        raise SystemExit(f"FAIL: {len(lines)} lines (expected {expected}), {corrupted} corrupted")


def _big_channel(path: Path, lines: int) -> None:
    with path.open("wb") as handle:
        for i in range(lines):
            severity = "blocking" if i % 10 == 0 else "notable"
            finding = channel.make_finding(
                severity, f"fd-agent-{i % 7}", "bench-finding", f"{SUMMARY} #{i}", [f"a.py:{i}"]
            )
            handle.write((json.dumps(finding.to_dict()) + "\n").encode())


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)

        single = directory / "single.jsonl"
        start = time.perf_counter()
        _append_many(single, "fd-bench", PER_PROCESS)
        elapsed = time.perf_counter() - start
        _check(single, PER_PROCESS)
        rate = PER_PROCESS / elapsed
        print(f"append, 1 process:   {rate:>8,.0f} appends/s ({PER_PROCESS:,} lines, {elapsed:.2f} s)")

        multi = directory / "multi.jsonl"
        elapsed = _concurrent(multi, 8, PER_PROCESS)
        _check(multi, 8 * PER_PROCESS)
        rate = 8 * PER_PROCESS / elapsed
        print(f"append, 8 processes: {rate:>8,.0f} appends/s ({8 * PER_PROCESS:,} lines, {elapsed:.2f} s)")

        stress = directory / "stress.jsonl"
        elapsed = _concurrent(stress, 50, 200)
        _check(stress, 10_000)
        print(f"stress, 50 x 200:    0 of 10,000 lines lost or corrupted ({elapsed:.2f} s); budget 0")

        big = directory / "big.jsonl"
        _big_channel(big, 100_000)
        timings = []
        for _ in range(3):
            start = time.perf_counter()
            result = channel.read(big)
            timings.append(time.perf_counter() - start)
        assert len(result.findings) == 100_000 and result.skipped == 0
        best = min(timings)
        start = time.perf_counter()
        channel.timeline(result.findings)
        ordered = time.perf_counter() - start
        size = big.stat().st_size / 1e6
        print(
            f"read 100,000 lines:  {best:.3f} s best of 3 ({size:.1f} MB, "
            f"{100_000 / best:,.0f} lines/s); timeline sort {ordered:.3f} s"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
