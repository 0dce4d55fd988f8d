"""``fluxdrive eval``: measure a reviewer, model or configuration against ground truth."""

from fluxdrive.eval.fixture import Fixture, GroundTruth, find_fixtures, ground_truth_schema, load_fixture, scaffold
from fluxdrive.eval.match import Matching, Produced, match
from fluxdrive.eval.report import render_json, render_table
from fluxdrive.eval.runner import EvalRun, FixtureResult, run_eval, run_fixture
from fluxdrive.eval.score import Counts

__all__ = [
    "Counts",
    "EvalRun",
    "Fixture",
    "FixtureResult",
    "GroundTruth",
    "Matching",
    "Produced",
    "find_fixtures",
    "ground_truth_schema",
    "load_fixture",
    "match",
    "render_json",
    "render_table",
    "run_eval",
    "run_fixture",
    "scaffold",
]
