"""The history database (runs, agent calls, estimates) and ``fluxdrive history``.

Everything is real: SQLite files under the temp XDG_DATA_HOME the autouse
fixture sets, manifests validated by the run.json model, and the CLI run as a
subprocess that finds the same database through the environment.
"""

from __future__ import annotations

import dataclasses
import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from fluxdrive.config import load_config
from fluxdrive.config.model import Config
from fluxdrive.contracts.run_manifest import RunManifest
from fluxdrive.runs import history
from fluxdrive.runs.history import (
    CallRow,
    RunRow,
    agent_calls,
    database_path,
    estimate_tokens,
    feedback_counts,
    open_history,
    record_feedback,
    record_run,
    runs,
    trust_multiplier,
)
from tests.conftest import committed_copy, run_fluxdrive

PROJECT = "/repo"


def _manifest(run_id: str = "4f1c2a9e0b1c", *, started: str = "2026-11-21T10:00:00.000Z", **extra: Any) -> RunManifest:
    """A run.json as launch writes it: two reviewers (one failed), one dropped candidate."""
    data: dict[str, Any] = {
        "schema_version": 1,
        "run_id": run_id,
        "input": {"path": "src/", "type": "directory", "stem": "src", "project_root": PROJECT},
        "started_at": started,
        "finished_at": started.replace("10:00:00", "10:01:12"),
        "runtime": "llm",
        "interrupted": False,
        "stages": [{"stage": 1, "agents": ["fd-safety", "fd-architecture"]}],
        "agents": {
            "fd-safety": {
                "stage": 1,
                "outcome": "completed",
                "provenance": {"provider": "anthropic", "model_family": "claude", "model_id": "claude-sonnet-4-5"},
                "usage": {"tokens_in": 18000, "tokens_out": 2100, "cost_usd": 0.0855, "wall_s": 41.2},
                "finished_at": started.replace("10:00:00", "10:00:41"),
            },
            "fd-architecture": {
                "stage": 1,
                "outcome": "error",
                "provenance": {"provider": "openai", "model_family": "gpt", "model_id": "gpt-4.1"},
                "usage": {"tokens_in": 1200, "tokens_out": 0, "cost_usd": 0.0024, "wall_s": 3.5},
                "finished_at": started.replace("10:00:00", "10:00:04"),
            },
            "fd-quality": {"stage": 2, "outcome": "dropped"},
        },
        **extra,
    }
    return RunManifest.model_validate(data)


@pytest.fixture
def db(tmp_path: Path) -> Iterator[sqlite3.Connection]:
    with open_history(tmp_path / "history.db") as connection:
        yield connection


def _tables(connection: sqlite3.Connection) -> set[str]:
    return {row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'index')")}


def _migrations(connection: sqlite3.Connection) -> list[tuple[int, str]]:
    return list(connection.execute("SELECT version, name FROM schema_migrations ORDER BY version"))


# --- migrations ----------------------------------------------------------------------------------------------


def test_fresh_database_has_every_migration(tmp_path: Path) -> None:
    with open_history(tmp_path / "history.db") as connection:
        assert _migrations(connection) == [(1, "feedback"), (2, "runs"), (3, "eval_runs"), (4, "precision")]
        assert _tables(connection) >= {
            "feedback",
            "runs",
            "agent_calls",
            "agent_calls_agent_model",
            "runs_project_started",
            "eval_runs",
            "eval_runs_model",
        }


def test_version_1_database_upgrades_in_place(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "history.db"
    # The old code path: the same opener with only migration 1 known.
    with monkeypatch.context() as patch:
        patch.setattr(history, "MIGRATIONS", history.MIGRATIONS[:1])
        with open_history(path) as connection:
            record_feedback(connection, agents=["fd-safety"], project=PROJECT, finding_id="P1-1", accepted=True)
            assert _migrations(connection) == [(1, "feedback")]
            assert "runs" not in _tables(connection)

    with open_history(path) as connection:
        assert _migrations(connection) == [(1, "feedback"), (2, "runs"), (3, "eval_runs"), (4, "precision")]
        assert feedback_counts(connection, PROJECT) == {"fd-safety": (1, 1)}, "feedback survives the upgrade"
        record_run(connection, _manifest(), project=PROJECT, verdict="safe")
        assert [r.id for r in runs(connection)] == ["4f1c2a9e0b1c"]


def test_reopening_applies_nothing_twice(tmp_path: Path) -> None:
    path = tmp_path / "history.db"
    with open_history(path) as connection:
        record_run(connection, _manifest(), project=PROJECT, verdict="safe")
        first = list(connection.execute("SELECT version, name, applied_at FROM schema_migrations"))
    for _ in range(2):
        with open_history(path) as connection:
            assert list(connection.execute("SELECT version, name, applied_at FROM schema_migrations")) == first
            assert len(runs(connection)) == 1


# --- recording runs ------------------------------------------------------------------------------------------


def test_record_run_stores_the_run_and_one_row_per_launched_agent(db: sqlite3.Connection) -> None:
    record_run(db, _manifest(), project=PROJECT, verdict="needs-changes")
    assert runs(db) == [
        RunRow(
            id="4f1c2a9e0b1c",
            project=PROJECT,
            input="src/",
            input_type="directory",
            started_at="2026-11-21T10:00:00.000Z",
            finished_at="2026-11-21T10:01:12.000Z",
            verdict="needs-changes",
            runtime="llm",
            agents=2,
            tokens_in=19200,
            tokens_out=2100,
            cost_usd=0.0879,
            interrupted=False,
        )
    ]
    # The dropped candidate never made a call; calls come by stage, then agent.
    assert agent_calls(db, "4f1c2a9e0b1c") == [
        CallRow(
            "4f1c2a9e0b1c",
            "fd-architecture",
            1,
            "openai",
            "gpt",
            "gpt-4.1",
            1200,
            0,
            0.0024,
            3.5,
            "error",
            "2026-11-21T10:00:04.000Z",
        ),
        CallRow(
            "4f1c2a9e0b1c",
            "fd-safety",
            1,
            "anthropic",
            "claude",
            "claude-sonnet-4-5",
            18000,
            2100,
            0.0855,
            41.2,
            "completed",
            "2026-11-21T10:00:41.000Z",
        ),
    ]
    assert agent_calls(db, "unknown") == []


def test_rerecording_replaces_the_run_and_its_calls(db: sqlite3.Connection) -> None:
    record_run(db, _manifest(), project=PROJECT, verdict=None)
    again = _manifest(interrupted=True).model_copy(
        update={"agents": {k: v for k, v in _manifest().agents.items() if k == "fd-safety"}}
    )
    record_run(db, again, project=PROJECT, verdict="safe")
    (row,) = runs(db)
    assert (row.verdict, row.agents, row.tokens_in, row.interrupted) == ("safe", 1, 18000, True)
    assert [c.agent for c in agent_calls(db, row.id)] == ["fd-safety"]
    assert db.execute("SELECT COUNT(*) FROM agent_calls").fetchone() == (1,)


def test_rerecording_is_one_transaction(db: sqlite3.Connection) -> None:
    record_run(db, _manifest(), project=PROJECT, verdict="safe")
    # Make the second write fail half-way: after the deletes and the run row, at the first call.
    db.execute(
        "CREATE TRIGGER refuse BEFORE INSERT ON agent_calls WHEN NEW.agent = 'fd-architecture'"
        " BEGIN SELECT RAISE(ABORT, 'refused'); END"
    )
    with pytest.raises(sqlite3.IntegrityError, match="refused"):
        record_run(db, _manifest(), project=PROJECT, verdict="risky")
    (row,) = runs(db)
    assert row.verdict == "safe", "the old run is intact"
    assert len(agent_calls(db, row.id)) == 2


def test_a_manifest_without_run_id_is_refused(db: sqlite3.Connection) -> None:
    with pytest.raises(ValueError, match="no run_id"):
        record_run(db, RunManifest.model_validate({}), project=PROJECT, verdict=None)


def test_runs_newest_first_limited_and_per_project(db: sqlite3.Connection) -> None:
    for n, day in enumerate(("21", "23", "22")):
        record_run(db, _manifest(f"run{n}", started=f"2026-11-{day}T10:00:00.000Z"), project=PROJECT, verdict=None)
    record_run(db, _manifest("other", started="2026-11-30T10:00:00.000Z"), project="/elsewhere", verdict=None)
    assert [r.id for r in runs(db)] == ["other", "run1", "run2", "run0"]
    assert [r.id for r in runs(db, project=PROJECT)] == ["run1", "run2", "run0"]
    assert [r.id for r in runs(db, project=PROJECT, limit=2)] == ["run1", "run2"]
    assert runs(db, project="/nowhere") == []


# --- estimates -----------------------------------------------------------------------------------------------


def _calls(db: sqlite3.Connection, run_id: str, agent: str, model: str, totals: list[int], outcome: str) -> None:
    """One run per total, each with one call of ``agent`` on ``model`` spending that many tokens."""
    for n, total in enumerate(totals):
        call = {
            "stage": 1,
            "outcome": outcome,
            "provenance": {"provider": "p", "model_family": "f", "model_id": model},
            "usage": {"tokens_in": total - 100, "tokens_out": 100},
        }
        manifest = RunManifest.model_validate(
            {"run_id": f"{run_id}-{n}", "finished_at": f"2026-11-21T10:{n:02d}:00.000Z", "agents": {agent: call}}
        )
        record_run(db, manifest, project=PROJECT, verdict=None)


def test_estimate_is_the_median_of_completed_calls(db: sqlite3.Connection) -> None:
    assert estimate_tokens(db, "fd-safety", None, default=40_000) == (40_000, "default")
    _calls(db, "a", "fd-safety", "sonnet", [1000, 5000, 3000], "completed")
    _calls(db, "b", "fd-safety", "sonnet", [900_000], "error")  # failed calls do not count
    assert estimate_tokens(db, "fd-safety", "sonnet", default=40_000) == (3000, "median of 3 past calls")
    _calls(db, "c", "fd-safety", "gpt", [8000], "completed")
    assert estimate_tokens(db, "fd-safety", "gpt", default=40_000) == (8000, "median of 1 past call")
    assert estimate_tokens(db, "fd-safety", None, default=40_000) == (4000, "median of 4 past calls")
    assert estimate_tokens(db, "fd-safety", "haiku", default=40_000) == (40_000, "default")
    assert estimate_tokens(db, "fd-quality", None, default=15_000) == (15_000, "default")


def test_estimate_uses_the_last_twenty_calls(db: sqlite3.Connection) -> None:
    # 10 old expensive calls, then 20 cheap ones: only the cheap ones count.
    _calls(db, "old", "fd-safety", "m", [50_000] * 10, "completed")
    cheap = RunManifest.model_validate(
        {
            "run_id": "new",
            "agents": {
                "fd-safety": {
                    "outcome": "completed",
                    "usage": {"tokens_in": 1000},
                    "finished_at": "2027-01-01T00:00:00Z",
                }
            },
        }
    )
    for n in range(20):
        record_run(db, cheap.model_copy(update={"run_id": f"new-{n}"}), project=PROJECT, verdict=None)
    assert estimate_tokens(db, "fd-safety", None, default=1) == (1000, "median of 20 past calls")


# --- the CLI -------------------------------------------------------------------------------------------------


def _record(*manifests: RunManifest, verdict: str | None = "needs-changes", project: str = PROJECT) -> None:
    with open_history(database_path()) as connection:  # the path the subprocess finds through XDG_DATA_HOME
        for manifest in manifests:
            record_run(connection, manifest, project=project, verdict=verdict)


def test_cli_without_history_says_so(tmp_path: Path) -> None:
    done = run_fluxdrive("history", cwd=tmp_path)
    assert (done.code, done.out, done.err) == (0, "no runs recorded yet\n", "")
    assert not database_path().exists(), "reading history creates no database"
    as_json = run_fluxdrive("history", "--json", cwd=tmp_path)
    assert json.loads(as_json.out) == {"schema_version": 1, "project": None, "runs": []}


def test_cli_lists_runs_newest_first(tmp_path: Path) -> None:
    _record(_manifest("4f1c2a9e0b1c"), _manifest("9d0e77aa1234", started="2026-11-22T08:30:00.000Z", runtime="static"))
    done = run_fluxdrive("history", cwd=tmp_path)
    assert done.code == 0, done.err
    assert done.out == (
        "RUN           STARTED              INPUT  VERDICT        AGENTS  TOKENS  COST     RUNTIME\n"
        "9d0e77aa1234  2026-11-22 08:30:00  src/   needs-changes  2       21,300  $0.0879  static\n"
        "4f1c2a9e0b1c  2026-11-21 10:00:00  src/   needs-changes  2       21,300  $0.0879  llm\n"
    )
    limited = run_fluxdrive("history", "--limit", "1", cwd=tmp_path)
    assert limited.out.splitlines()[1:] == [done.out.splitlines()[1]]


def test_cli_filters_by_project(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    (project / ".git").mkdir(parents=True)
    _record(_manifest("aaa111"), project=str(project.resolve()))
    _record(_manifest("bbb222"))
    done = run_fluxdrive("history", "--project", project, cwd=tmp_path)
    assert [line.split()[0] for line in done.out.splitlines()] == ["RUN", "aaa111"]
    empty = run_fluxdrive("history", "--project", tmp_path, cwd=tmp_path)
    assert empty.out == f"no runs recorded yet for {tmp_path.resolve()}\n"


def test_cli_shows_one_run_by_prefix(tmp_path: Path) -> None:
    _record(_manifest("4f1c2a9e0b1c"), _manifest("9d0e77aa1234"))
    done = run_fluxdrive("history", "--run", "4f1c", cwd=tmp_path)
    assert done.code == 0, done.err
    assert done.out == (
        "run       4f1c2a9e0b1c\n"
        "input     src/ (directory)\n"
        "project   /repo\n"
        "started   2026-11-21 10:00:00\n"
        "finished  2026-11-21 10:01:12\n"
        "runtime   llm\n"
        "verdict   needs-changes\n"
        "\n"
        "AGENT            STAGE  PROVIDER   MODEL              TOKENS IN  TOKENS OUT  COST     SECONDS  OUTCOME\n"
        "fd-architecture  1      openai     gpt-4.1            1,200      0           $0.0024  3.5      error\n"
        "fd-safety        1      anthropic  claude-sonnet-4-5  18,000     2,100       $0.0855  41.2     completed\n"
        "total                                                 19,200     2,100       $0.0879  44.7     1 completed, 1 error\n"
    )


def test_cli_json_shapes(tmp_path: Path) -> None:
    _record(_manifest("4f1c2a9e0b1c"))
    listing = run_fluxdrive("history", "--json", cwd=tmp_path)
    assert listing.code == 0, listing.err
    assert listing.out.index('"project"') < listing.out.index('"runs"') < listing.out.index('"schema_version"')
    data = json.loads(listing.out)
    assert data["schema_version"] == 1 and data["project"] is None
    assert data["runs"] == [
        {
            "id": "4f1c2a9e0b1c",
            "project": PROJECT,
            "input": "src/",
            "input_type": "directory",
            "started_at": "2026-11-21T10:00:00.000Z",
            "finished_at": "2026-11-21T10:01:12.000Z",
            "verdict": "needs-changes",
            "runtime": "llm",
            "agents": 2,
            "tokens_in": 19200,
            "tokens_out": 2100,
            "cost_usd": 0.0879,
            "interrupted": False,
        }
    ]
    one = json.loads(run_fluxdrive("history", "--run", "4f1c2a9e0b1c", "--json", cwd=tmp_path).out)
    assert sorted(one) == ["calls", "run", "schema_version", "totals"]
    assert one["run"] == data["runs"][0]
    assert [c["agent"] for c in one["calls"]] == ["fd-architecture", "fd-safety"]
    assert set(one["calls"][1]) == {f.name for f in dataclasses.fields(CallRow)}
    assert one["calls"][1]["model_id"] == "claude-sonnet-4-5" and one["calls"][0]["outcome"] == "error"
    assert one["totals"] == {
        "calls": 2,
        "tokens_in": 19200,
        "tokens_out": 2100,
        "cost_usd": 0.0879,
        "duration_s": 44.7,
        "outcomes": {"completed": 1, "error": 1},
    }


def test_cli_unknown_or_ambiguous_run_is_one_line(tmp_path: Path) -> None:
    missing = run_fluxdrive("history", "--run", "zzz", cwd=tmp_path)
    assert (missing.code, missing.out) == (2, "")
    assert missing.err == "fluxdrive: error: no run 'zzz' recorded (hint: no runs recorded yet)\n"
    _record(_manifest("4f1c2a9e0b1c"), _manifest("4f9900000000"))
    unknown = run_fluxdrive("history", "--run", "zzz", cwd=tmp_path)
    assert (unknown.code, unknown.out) == (2, "")
    assert unknown.err == "fluxdrive: error: no run 'zzz' recorded (hint: list runs with: fluxdrive history)\n"
    ambiguous = run_fluxdrive("history", "--run", "4f", cwd=tmp_path)
    assert (ambiguous.code, ambiguous.err.count("\n")) == (2, 1)
    assert "matches 2 runs" in ambiguous.err and "Traceback" not in ambiguous.err


# --- trust: the multiplier needs evidence (issue 12 item 4) ---------------------------------------


def test_trust_needs_evidence_and_never_silences() -> None:
    settings = Config().scoring
    assert (settings.trust_floor, settings.trust_prior_reviews) == (0.5, 10)
    assert trust_multiplier(0, 0, settings) == 1.0, "no feedback, no change"
    assert trust_multiplier(0, 1, settings) >= 0.95, "one discard of a P3 must not drop an agent from triage"
    assert 0.5 <= trust_multiplier(0, 10, settings) <= 0.8, "ten discards of ten: noticeably lower, above the floor"
    assert trust_multiplier(500, 500, settings) == trust_multiplier(1, 1, settings) == 1.0
    assert trust_multiplier(0, 100_000, settings) >= settings.trust_floor
    for total in range(41):
        row = [trust_multiplier(accepted, total, settings) for accepted in range(total + 1)]
        assert row == sorted(row), f"more accepts never lower trust (total {total}): {row}"
        if total:
            assert trust_multiplier(0, total, settings) < trust_multiplier(0, total - 1, settings)


def test_trust_follows_its_settings() -> None:
    no_prior = Config.model_validate({"scoring": {"trust_prior_reviews": 0, "trust_floor": 0.2}}).scoring
    assert trust_multiplier(0, 1, no_prior) == 0.2, "without a prior the acceptance rate alone decides"
    assert trust_multiplier(1, 2, no_prior) == 0.6
    strong_prior = Config.model_validate({"scoring": {"trust_prior_reviews": 100}}).scoring
    assert trust_multiplier(0, 10, strong_prior) == 0.9545


def test_old_trust_settings_still_load(tmp_path: Path) -> None:
    """A config file written for the banded rule still loads; its band settings no longer do anything."""
    (tmp_path / ".fluxdrive").mkdir()
    (tmp_path / ".fluxdrive" / "config.toml").write_text(
        "[scoring]\ntrust_floor = 0.05\ntrust_min_reviews = 5\ntrust_high_acceptance = 0.9\ntrust_low_acceptance = 0.4\n"
    )
    scoring = load_config(tmp_path).config.scoring
    assert (scoring.trust_floor, scoring.trust_min_reviews) == (0.05, 5)
    assert trust_multiplier(0, 1, scoring) == 0.9136, "an explicit old floor is honoured, behind the same prior"


# --- feedback counts for the project the run reviewed, wherever it is run from ----------------------

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "projects" / "py-webapp"


@pytest.fixture
def reviewed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A real static review of a git project, written with --output-dir outside it: (project, output dir).

    Function-scoped on purpose: the review must see this test's temp XDG_DATA_HOME.
    """
    base = tmp_path_factory.mktemp("feedback-run")
    project = committed_copy(FIXTURE, base / "shop-project")
    out = base / "reports" / "run"
    done = run_fluxdrive("review", "shop", "--yes", "-q", "--output-dir", out, cwd=project)
    assert done.code in (0, 1), done.err
    return project, out


def _first_finding(out: Path) -> tuple[str, list[str]]:
    finding = json.loads((out / "findings.json").read_text())["findings"][0]
    return finding["id"], finding["agents"]


def _feedback_rows() -> list[tuple[str, str, str, int]]:
    with open_history() as connection:
        return list(connection.execute("SELECT agent, project, finding_id, accepted FROM feedback ORDER BY id"))


def test_feedback_from_another_directory_counts_for_the_reviewed_project(
    reviewed: tuple[Path, Path], tmp_path: Path
) -> None:
    project, out = reviewed
    assert json.loads((out / "run.json").read_text())["input"]["project_root"] == str(project)
    finding, agents = _first_finding(out)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    by_directory = run_fluxdrive("feedback", "discard", out, finding, cwd=elsewhere)
    assert by_directory.code == 0, by_directory.err
    shown = ", ".join(f"{agent} trust 0.95" for agent in agents)
    assert by_directory.out == f"discarded {finding} ({shown}) in {project.resolve()}\n"
    by_file = run_fluxdrive("feedback", "accept", out / "findings.json", finding, cwd=Path("/"))
    assert by_file.code == 0, by_file.err
    expected = [(a, str(project.resolve()), finding, 0) for a in agents]
    expected += [(a, str(project.resolve()), finding, 1) for a in agents]
    assert _feedback_rows() == expected, "never the output directory, never the current directory"
    with open_history() as connection:
        assert feedback_counts(connection, str(project.resolve())) == {a: (1, 2) for a in agents}


def test_feedback_without_run_json_uses_the_repository_around_findings(
    reviewed: tuple[Path, Path], tmp_path: Path
) -> None:
    project, out = reviewed
    inside = project / "docs" / "run-copy"
    inside.mkdir(parents=True)
    (inside / "findings.json").write_bytes((out / "findings.json").read_bytes())
    finding, _agents = _first_finding(out)
    done = run_fluxdrive("feedback", "accept", inside, finding, cwd=tmp_path)
    assert done.code == 0, done.err
    assert done.out.endswith(f" in {project.resolve()}\n")
    assert {row[1] for row in _feedback_rows()} == {str(project.resolve())}


def test_feedback_with_a_broken_run_json_is_one_line(reviewed: tuple[Path, Path], tmp_path: Path) -> None:
    _project, out = reviewed
    copy = tmp_path / "run"
    copy.mkdir()
    (copy / "findings.json").write_bytes((out / "findings.json").read_bytes())
    (copy / "run.json").write_text('{"schema_version": 1, "input": ')
    finding, _agents = _first_finding(out)
    done = run_fluxdrive("feedback", "discard", copy, finding, cwd=tmp_path)
    assert (done.code, done.out, done.err.count("\n")) == (2, "", 1), done.err
    assert done.err.startswith(f"fluxdrive: error: {copy / 'run.json'} is not valid JSON")
    assert "Traceback" not in done.err
    assert not database_path().exists() or _feedback_rows() == [], "nothing recorded against a guessed project"
