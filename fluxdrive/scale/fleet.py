"""Many reviews as jobs: ``fluxdrive fleet run REPOS.txt`` and :func:`run_fleet`.

Each repository is reviewed by an ordinary :func:`~fluxdrive.api.run`
in its own worker - a Ray task on a cluster, a local process otherwise - with
at most ``max_parallel`` in flight (Ray gets them as the window frees up, so
a thousand repositories never flood the scheduler). Every review writes its
outputs where a review of that repository always does (its
``docs/research/flux-drive/`` runs directory), or under ``--output-root`` in
a directory named after it; the driver gathers one row per repository, in
the list's order, whatever order they finish in. A review that fails is a
row with its error, never a lost repository and never a traceback.

On a cluster the repositories must be visible to the nodes at the listed
paths (a shared file system, or a cluster on one machine): a review reads
the whole project and writes its run next to it.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Sequence
from concurrent.futures import as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fluxdrive import api
from fluxdrive.core.pool import worker_pool
from fluxdrive.errors import FluxdriveError, InputError
from fluxdrive.launch.execute import Interaction
from fluxdrive.launch.progress import Recorder
from fluxdrive.launch.settings import ReviewSettings
from fluxdrive.scale import ray_session

SEVERITIES = ("P0", "P1", "P2", "P3")
MAX_REPOS = 10_000


@dataclass(frozen=True, slots=True)
class FleetJob:
    """One repository's review, as the worker runs it."""

    repo: str
    output_dir: str | None = None
    runtime: str = "static"
    model: str | None = None
    agents: tuple[str, ...] | None = None
    settings: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class FleetRow:
    """One repository's outcome: its verdict and counts, or the error that stopped its review."""

    repo: str
    verdict: str  # safe | needs-changes | risky | incomplete | error
    counts: dict[str, int]
    incomplete: bool
    seconds: float
    output_dir: str
    error: str = ""
    node: str = ""

    def record(self) -> dict[str, Any]:
        """The row as JSON."""
        return {
            "repo": self.repo,
            "verdict": self.verdict,
            "counts": self.counts,
            "incomplete": self.incomplete,
            "seconds": round(self.seconds, 3),
            "output_dir": self.output_dir,
            "error": self.error,
        }


def read_repos(path: Path) -> list[Path]:
    """Repositories listed one per line (``#`` comments, blank lines ignored; relative to the list's directory)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read the repository list {path}: {exc}") from None
    base = Path(path).resolve().parent
    repos = []
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        repo = (base / line).resolve()
        if not repo.is_dir():
            raise InputError(f"{path}:{number}: {line} is not a directory", hint="list one repository path per line")
        repos.append(repo)
    if not repos:
        raise InputError(f"{path} lists no repository", hint="one repository path per line")
    if len(repos) > MAX_REPOS:
        raise InputError(f"{path} lists {len(repos)} repositories; at most {MAX_REPOS} per fleet run")
    if len(set(repos)) != len(repos):
        raise InputError(f"{path} lists a repository twice", hint="each repository once")
    return repos


def output_dir_under(root: Path, repo: Path) -> Path:
    """``--output-root``: ``ROOT/<name>-<hash of the path>`` (two repositories may share a name)."""
    digest = hashlib.sha256(str(repo).encode()).hexdigest()[:8]
    return root / f"{repo.name}-{digest}"


def review_one(job: FleetJob) -> FleetRow:
    """Review one repository (in a worker); any failure is the row's error."""
    started = time.monotonic()
    node = ray_session.node_id()
    settings = ReviewSettings(
        yes=True,
        expand="recommended",
        runtime=job.runtime,
        model=job.model,
        agents=tuple(job.agents or ()),
        output_dir=Path(job.output_dir) if job.output_dir else None,
        overrides=dict(job.settings),
        project=Path(job.repo),
    )
    try:
        run = api.run(job.repo, settings, Interaction(progress=Recorder()))
    except FluxdriveError as exc:
        return _failed(job, exc.one_line(), started, node)
    except Exception as exc:  # a worker must bring back a row, whatever happened
        return _failed(job, f"{type(exc).__name__}: {exc}", started, node)
    synthesis = run.synthesis
    if synthesis is None:
        reason = "no agent report was written" if run.approved else "the plan was rejected"
        return _failed(job, reason, started, node, str(run.output_dir))
    counts = {s: sum(1 for f in synthesis.findings if f.severity == s) for s in SEVERITIES}
    return FleetRow(
        job.repo,
        synthesis.verdict,
        counts,
        bool(synthesis.incomplete),
        time.monotonic() - started,
        str(run.output_dir),
        node=node,
    )


def _failed(job: FleetJob, error: str, started: float, node: str, output_dir: str = "") -> FleetRow:
    return FleetRow(job.repo, "error", dict.fromkeys(SEVERITIES, 0), True, time.monotonic() - started,
                    output_dir or job.output_dir or "", error, node)  # fmt: skip


def run_fleet(
    jobs: Sequence[FleetJob],
    *,
    max_parallel: int,
    cluster: str | None = None,
    job_cpus: float = 1,
    on_row: Callable[[FleetRow], None] | None = None,
) -> list[FleetRow]:
    """Review every job (at most ``max_parallel`` at once; on the Ray cluster at ``cluster`` when given).

    Rows come back in the jobs' order; ``on_row`` hears each one as it finishes.
    """
    done: dict[int, FleetRow] = {}

    def finished(index: int, row: FleetRow) -> None:
        done[index] = row
        if on_row is not None:
            on_row(row)

    if cluster:
        _on_ray(jobs, max_parallel, cluster, job_cpus, finished)
    else:
        _on_processes(jobs, max_parallel, finished)
    return [done[i] for i in range(len(jobs))]


def _on_ray(
    jobs: Sequence[FleetJob], window: int, cluster: str, cpus: float, finished: Callable[[int, FleetRow], None]
) -> None:
    ray = ray_session.connect(cluster)
    review = ray_session.remote(review_one, num_cpus=cpus, max_retries=1)  # a dead node: the review runs again
    pending: dict[Any, int] = {}
    queue = list(enumerate(jobs))
    while queue or pending:
        while queue and len(pending) < max(1, window):
            index, job = queue.pop(0)
            pending[review.remote(job)] = index
        ready, _ = ray.wait(list(pending), num_returns=1)
        for ref in ready:
            index = pending.pop(ref)
            try:
                row = ray.get(ref)
            except Exception as exc:  # the task itself died twice: still a row
                row = _failed(jobs[index], f"Ray task failed: {type(exc).__name__}", time.monotonic(), "")
            finished(index, row)


def _on_processes(jobs: Sequence[FleetJob], window: int, finished: Callable[[int, FleetRow], None]) -> None:
    # Workers die with the fleet, even on kill -9; Ctrl-C or SIGTERM ends them at once (fluxdrive.core.pool).
    with worker_pool(window) as pool:
        futures = {pool.submit(review_one, job): index for index, job in enumerate(jobs)}
        for future in as_completed(futures):
            index = futures[future]
            try:
                row = future.result()
            except Exception as exc:  # the worker process died
                row = _failed(jobs[index], f"worker died: {type(exc).__name__}", time.monotonic(), "")
            finished(index, row)


def exit_code(rows: Sequence[FleetRow], fail_on_rank: int) -> int:
    """3 when a review could not run, 1 when one is at or above the gate (or incomplete), else 0."""
    rank = {"safe": 0, "incomplete": 0, "needs-changes": 1, "risky": 2}  # incomplete fails through row.incomplete
    if any(row.verdict == "error" for row in rows):
        return 3
    if any(rank[row.verdict] >= fail_on_rank or row.incomplete for row in rows):
        return 1
    return 0


def render_table(rows: Sequence[FleetRow], base: Path | None = None) -> str:
    """The verdict table: one line per repository, then the totals."""

    def shown(path: str) -> str:
        if base is not None:
            try:
                return str(Path(path).relative_to(base))
            except ValueError:
                return path
        return path

    names = [shown(row.repo) for row in rows]
    width = max([len("repository"), *map(len, names)])
    lines = [f"{'repository':<{width}}  {'verdict':<13}  P0  P1  P2  P3  {'time':>7}  output"]
    for name, row in zip(names, rows, strict=True):
        verdict = row.verdict.upper() + ("*" if row.incomplete and row.verdict not in ("error", "incomplete") else "")
        counts = "  ".join(f"{row.counts.get(s, 0):>2}" for s in SEVERITIES)
        where = row.error if row.verdict == "error" else shown(row.output_dir)
        lines.append(f"{name:<{width}}  {verdict:<13}  {counts}  {row.seconds:>6.1f}s  {where}")
    by_verdict = {
        v: sum(1 for r in rows if r.verdict == v) for v in ("risky", "needs-changes", "incomplete", "safe", "error")
    }
    summary = ", ".join(f"{n} {v}" for v, n in by_verdict.items() if n)
    lines.append(f"{len(rows)} repositories: {summary}" + ("; * incomplete" if any(r.incomplete for r in rows) else ""))
    return "\n".join(lines)
