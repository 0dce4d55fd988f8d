"""Benchmark domain detection on the labelled corpus of real projects (tests/fixtures/domains/).

Each project is materialized in a temporary directory (the real file tree,
its manifests and a sample of its sources) and detected without the cache.
Printed: one row per project (expected primary, detected primary, extra
domains, wrong ones marked ``!``, the primary's confidence, seconds), then
the figures for all projects and separately for the tuned and the held-out
ones (``holdout: true``, chosen before the detector was tuned).

A *wrong* domain is a detected one that is neither the expected primary nor
listed as acceptable for the project (a wrong primary counts too).

Targets (issue 12): primary correct >= 90%; wrong domains <= 1 per 10 projects.
Run: ``make bench`` or ``.venv/bin/python bench/domains.py [--tuned | --holdout | SLUG...]``.
"""

from __future__ import annotations

import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # bench/_domain_corpus.py, when run as a script
from _domain_corpus import CorpusProject, load_projects, materialize

from fluxdrive.config import Config
from fluxdrive.triage.domains import detect

TARGET_PRIMARY = 0.90
TARGET_WRONG_PER_10 = 1.0


@dataclass
class Outcome:
    project: CorpusProject
    primary: str | None
    confidence: float
    detected: list[str]
    seconds: float

    @property
    def correct(self) -> bool:
        return self.primary == self.project.primary

    @property
    def extras(self) -> list[str]:
        return [d for d in self.detected if d != self.primary]

    @property
    def wrong(self) -> list[str]:
        allowed = {self.project.primary, *self.project.acceptable}
        return [d for d in self.detected if d not in allowed]


def run(projects: list[CorpusProject]) -> list[Outcome]:
    config = Config().domains
    outcomes = []
    with tempfile.TemporaryDirectory(prefix="fluxdrive-domains-") as tmp:
        for project in projects:
            root = materialize(project, Path(tmp) / project.slug)
            started = time.perf_counter()
            detection = detect(root, config)
            seconds = time.perf_counter() - started
            primary = detection.primary
            outcomes.append(
                Outcome(
                    project,
                    primary.profile if primary else None,
                    primary.confidence if primary else 0.0,
                    [d.profile for d in detection.detected],
                    seconds,
                )
            )
    return outcomes


def figures(label: str, outcomes: list[Outcome]) -> list[str]:
    if not outcomes:
        return [f"{label}: no projects"]
    n = len(outcomes)
    correct = sum(o.correct for o in outcomes)
    wrong = sum(len(o.wrong) for o in outcomes)
    nothing = sum(o.primary is None for o in outcomes)
    share = correct / n
    per_10 = wrong / n * 10
    return [
        f"{label} ({n} projects)",
        f"  primary correct:        {correct}/{n} ({share:.0%})   target >= {TARGET_PRIMARY:.0%} -> ratio "
        f"{share / TARGET_PRIMARY:.2f} {'met' if share >= TARGET_PRIMARY else 'NOT met'}",
        f"  wrong domains:          {wrong} ({per_10:.1f} per 10 projects)   target <= {TARGET_WRONG_PER_10:.0f} -> "
        f"ratio {per_10 / TARGET_WRONG_PER_10:.2f} {'met' if per_10 <= TARGET_WRONG_PER_10 else 'NOT met'}",
        f"  nothing detected:       {nothing}",
    ]


def main(argv: list[str]) -> int:
    projects = load_projects()
    if "--tuned" in argv:
        projects = [p for p in projects if not p.holdout]
    elif "--holdout" in argv:
        projects = [p for p in projects if p.holdout]
    elif argv:
        projects = [p for p in projects if p.slug in argv]
    outcomes = run(projects)
    print(f"{'project':30} {'h':1} {'expected':19} {'detected primary':19} {'conf':>5} {'s':>6}  extras (! = wrong)")
    for o in outcomes:
        extras = ", ".join(f"{d}{'!' if d in o.wrong else ''}" for d in o.extras) or "-"
        mark = "" if o.correct else " X"
        print(
            f"{o.project.slug:30} {'h' if o.project.holdout else ' '} {o.project.primary:19} "
            f"{(o.primary or 'none') + mark:19} {o.confidence:5.2f} {o.seconds:6.3f}  {extras}"
        )
    print()
    lines = figures("all", outcomes)
    lines += figures("tuned", [o for o in outcomes if not o.project.holdout])
    lines += figures("held out", [o for o in outcomes if o.project.holdout])
    slowest = max(outcomes, key=lambda o: o.seconds)
    lines.append(f"slowest detection: {slowest.seconds:.3f} s ({slowest.project.slug})")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
