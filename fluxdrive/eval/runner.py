"""Run a reviewer on every fixture and score it: ``fluxdrive eval run``.

Each fixture is copied to a fresh temporary directory (a run never writes
into the fixtures; a symbolic link in it refuses the case, :mod:`fluxdrive.eval.stage`),
a diff fixture gets its patch applied with ``git apply``
and is reviewed as that diff, and the review runs through the same
``fluxdrive.api.run`` a user's command does, non-interactively (``--yes``), with the
runtime, model and agents asked for. Its findings.json is matched against
the ground truth (:mod:`fluxdrive.eval.match`) and counted
(:mod:`fluxdrive.eval.score`).
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fluxdrive.errors import FluxdriveError
from fluxdrive.eval.fixture import Fixture
from fluxdrive.eval.locate import Locator
from fluxdrive.eval.match import Matching, Produced, match
from fluxdrive.eval.score import Counts, count, sum_counts
from fluxdrive.eval.stage import RefusedCaseError, stage
from fluxdrive.runs.directory import RunDirectory


@dataclass(slots=True)
class FixtureResult:
    """One fixture's run: what was produced, how it matched, its counts."""

    fixture: Fixture
    produced: list[Produced]
    matching: Matching
    counts: Counts
    seconds: float
    verdict: str | None = None
    error: str | None = None
    usage: dict[str, float] = field(default_factory=dict)


@dataclass(slots=True)
class EvalRun:
    """Every fixture's result and the settings they ran with."""

    settings: dict[str, Any]
    results: list[FixtureResult] = field(default_factory=list)

    def lanes(self) -> dict[str, Counts]:
        """Counts added up per lane (the fixtures' agent_type)."""
        lanes: dict[str, list[Counts]] = {}
        for result in self.results:
            lanes.setdefault(result.fixture.truth.agent_type, []).append(result.counts)
        return {lane: sum_counts(parts) for lane, parts in sorted(lanes.items())}

    def categories(self) -> dict[str, tuple[int, int]]:
        """Ground-truth category -> (found, expected), over every fixture."""
        found: dict[str, list[int]] = {}
        for result in self.results:
            matched = {pair.expected for pair in result.matching.pairs}
            for index, expected in enumerate(result.fixture.truth.findings):
                cell = found.setdefault(expected.category, [0, 0])
                cell[0] += index in matched
                cell[1] += 1
        return {category: (cell[0], cell[1]) for category, cell in sorted(found.items())}

    def languages(self) -> dict[str, Counts]:
        """Counts added up per language, for fixtures whose ground truth names one (``source.language``, as
        imported benchmarks write it); empty when none does."""
        groups: dict[str, list[Counts]] = {}
        for result in self.results:
            source = (result.fixture.truth.model_extra or {}).get("source")
            language = source.get("language") if isinstance(source, dict) else None
            if isinstance(language, str) and language.strip():
                groups.setdefault(language.strip(), []).append(result.counts)
        return {language: sum_counts(parts) for language, parts in sorted(groups.items())}

    def overall(self) -> Counts:
        return sum_counts(r.counts for r in self.results)


def run_fixture(fixture: Fixture, review: Callable[..., Any]) -> FixtureResult:
    """Review one fixture's copy and score the findings.

    ``review(target, cwd=, output_dir=, stdin_text=)`` runs the reviewer and
    leaves findings.json in ``output_dir``.
    """
    started = time.monotonic()
    truth = fixture.truth
    with tempfile.TemporaryDirectory(prefix="fluxdrive-eval-") as tmp:
        scratch = Path(tmp)
        output = scratch / "out"
        try:
            target, work, diff = stage(fixture, scratch)
            review(target, cwd=work, output_dir=output, stdin_text=diff)
            run = RunDirectory(output)
            document = run.findings()
            produced = [Produced.of(item) for item in document.findings]
            verdict, error = document.verdict, None
            usage = _usage(run)
        except RefusedCaseError as exc:
            produced, verdict, error, usage = [], None, str(exc), {}
        except (OSError, ValueError, FluxdriveError) as exc:
            produced, verdict, error, usage = [], None, f"{type(exc).__name__}: {exc}", {}
    matching = match(truth.findings, produced, truth.must_not_flag, Locator.of(fixture.root, fixture.kind))
    counts = count(truth.findings, produced, matching, len(truth.must_not_flag))
    return FixtureResult(fixture, produced, matching, counts, time.monotonic() - started, verdict, error, usage)


def _usage(run: RunDirectory) -> dict[str, float]:
    """Tokens and cost of the review (run.json) and how many of its reports had a valid Findings Index."""
    from fluxdrive.contracts import OutputStatus, classify_output

    agents = run.manifest().agents
    ran = [name for name, record in agents.items() if record.outcome not in ("not-launched", "dropped")]
    valid = sum(classify_output(run.path / f"{name}.md").status is OutputStatus.VALID for name in ran)
    totals = {"tokens_in": 0.0, "tokens_out": 0.0, "cost_usd": 0.0}
    for record in agents.values():
        totals["tokens_in"] += float(record.usage.tokens_in)
        totals["tokens_out"] += float(record.usage.tokens_out)
        totals["cost_usd"] += float(record.usage.cost_usd)
    return {**totals, "reports": float(len(ran)), "reports_valid": float(valid)}


def run_eval(
    fixtures: Sequence[Fixture],
    review: Callable[..., Any],
    settings: dict[str, Any],
    progress: Callable[[FixtureResult], None] | None = None,
) -> EvalRun:
    """Every fixture, in id order; ``settings`` (runtime, model, agents) are recorded with the results."""
    run = EvalRun(dict(settings))
    for fixture in fixtures:
        result = run_fixture(fixture, review)
        run.results.append(result)
        if progress is not None:
            progress(result)
    return run
