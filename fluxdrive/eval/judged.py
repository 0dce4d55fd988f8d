"""What an eval run says about each finding it produced: right (matched to ground truth) or wrong (left over).

These verdicts feed the measured precision of rules and agent-model pairs
(:mod:`fluxdrive.runs.precision`), the same table ``fluxdrive feedback``
adds to. A fixture whose review failed or was refused judges nothing: no
finding was produced, and a crash says nothing about any rule.
"""

from __future__ import annotations

from fluxdrive.eval.runner import EvalRun


def judged(run: EvalRun) -> list[tuple[tuple[tuple[str, str], ...], bool]]:
    """(keys, right) of every finding every fixture produced, in fixture then finding order."""
    verdicts = []
    for result in run.results:
        if result.error is not None:
            continue
        matched = {pair.produced for pair in result.matching.pairs}
        verdicts += [(finding.keys, index in matched) for index, finding in enumerate(result.produced)]
    return verdicts
