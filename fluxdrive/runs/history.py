"""fluxdrive's SQLite record: feedback on findings (the trust multiplier), runs and their costs.

The database lives at ``$XDG_DATA_HOME/fluxdrive/history.db`` (default
``~/.local/share/fluxdrive/history.db``). Migrations are numbered and applied
in order when the database is opened; each one runs once, recorded in
``schema_migrations``.

    feedback      one verdict on a finding, per agent that reported it (migration 1)
    runs          one review run: input, verdict, runtime, totals (migration 2)
    agent_calls   one launched agent of a run: model, tokens, cost, seconds, outcome (migration 2)
    eval_runs     one ``fluxdrive eval run``: suite, model, metrics (migration 3)
    precision     judged findings per rule and per agent-model pair: right, wrong (migration 4,
                  read and written by :mod:`fluxdrive.runs.precision`)

Past calls also estimate what an agent will cost next time
(:func:`estimate_tokens`): the median of its recent completed calls.

Trust (PROTOCOL.md section 3): an agent whose findings people keep discarding
should rank lower in triage, but never be silenced for good, and never on
thin evidence. See :func:`trust_multiplier`: with no feedback it is 1.0; one
discard costs under 5%; it only approaches ``trust_floor`` (0.5) after many
discards.
"""

from __future__ import annotations

import dataclasses
import json
import os
import sqlite3
import statistics
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fluxdrive.config.model import ScoringConfig
from fluxdrive.core.clock import utc_timestamp
from fluxdrive.errors import InputError

if TYPE_CHECKING:
    from fluxdrive.contracts.run_manifest import RunManifest

MIGRATIONS: tuple[tuple[int, str, str], ...] = (
    (
        1,
        "feedback",
        """
        CREATE TABLE feedback (
            id INTEGER PRIMARY KEY,
            agent TEXT NOT NULL,
            project TEXT NOT NULL,
            finding_id TEXT NOT NULL,
            accepted INTEGER NOT NULL CHECK (accepted IN (0, 1)),
            at TEXT NOT NULL
        );
        CREATE INDEX feedback_agent_project ON feedback (agent, project);
        """,
    ),
    (
        2,
        "runs",
        """
        CREATE TABLE runs (
            id TEXT PRIMARY KEY,
            project TEXT NOT NULL,
            input TEXT,
            input_type TEXT,
            started_at TEXT,
            finished_at TEXT,
            verdict TEXT,
            runtime TEXT,
            agents INTEGER NOT NULL,
            tokens_in INTEGER NOT NULL,
            tokens_out INTEGER NOT NULL,
            cost_usd REAL NOT NULL,
            interrupted INTEGER NOT NULL CHECK (interrupted IN (0, 1))
        );
        CREATE TABLE agent_calls (
            id INTEGER PRIMARY KEY,
            run_id TEXT NOT NULL REFERENCES runs (id),
            agent TEXT NOT NULL,
            stage INTEGER,
            provider TEXT,
            model_family TEXT,
            model_id TEXT,
            tokens_in INTEGER NOT NULL,
            tokens_out INTEGER NOT NULL,
            cost_usd REAL NOT NULL,
            duration_s REAL NOT NULL,
            outcome TEXT NOT NULL,
            at TEXT NOT NULL
        );
        CREATE INDEX agent_calls_agent_model ON agent_calls (agent, model_id);
        CREATE INDEX agent_calls_run ON agent_calls (run_id);
        CREATE INDEX runs_project_started ON runs (project, started_at);
        """,
    ),
    (
        3,
        "eval_runs",
        """
        CREATE TABLE eval_runs (
            id INTEGER PRIMARY KEY,
            at TEXT NOT NULL,
            suite TEXT NOT NULL,
            runtime TEXT NOT NULL,
            model TEXT,
            agents TEXT,
            fixtures INTEGER NOT NULL,
            passed INTEGER NOT NULL CHECK (passed IN (0, 1)),
            qualify INTEGER NOT NULL CHECK (qualify IN (0, 1)),
            metrics TEXT NOT NULL,
            reasons TEXT NOT NULL
        );
        CREATE INDEX eval_runs_model ON eval_runs (model, at);
        """,
    ),
    (
        4,
        "precision",
        """
        CREATE TABLE precision (
            kind TEXT NOT NULL CHECK (kind IN ('rule', 'agent-model')),
            key TEXT NOT NULL,
            right_count INTEGER NOT NULL CHECK (right_count >= 0),
            wrong_count INTEGER NOT NULL CHECK (wrong_count >= 0),
            updated TEXT NOT NULL,
            PRIMARY KEY (kind, key)
        );
        """,
    ),
)

# Outcomes of agents that never made a call: they are not recorded in agent_calls.
_NOT_CALLED = ("not-launched", "dropped")
# How many recent completed calls estimate_tokens takes the median of.
ESTIMATE_WINDOW = 20


def database_path(env: dict[str, str] | None = None) -> Path:
    """``$XDG_DATA_HOME/fluxdrive/history.db``."""
    env = dict(os.environ) if env is None else env
    base = env.get("XDG_DATA_HOME") or str(Path(env.get("HOME", "~")).expanduser() / ".local" / "share")
    return Path(base) / "fluxdrive" / "history.db"


def _migrate(connection: sqlite3.Connection) -> None:
    connection.execute(
        "CREATE TABLE IF NOT EXISTS schema_migrations"
        " (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)"
    )
    applied = {row[0] for row in connection.execute("SELECT version FROM schema_migrations")}
    for version, name, script in MIGRATIONS:
        if version in applied:
            continue
        # One transaction per migration: the schema change and its record land together.
        record = f"INSERT INTO schema_migrations VALUES ({int(version)}, '{name}', '{utc_timestamp()}');"  # noqa: S608  (our own constants)
        connection.executescript(f"BEGIN;\n{script}\n{record}\nCOMMIT;")


class HistoryUnavailableError(InputError):
    """The history database cannot be opened or used (corrupt, a directory, unwritable).

    History is auxiliary: a review warns once and runs without it; the
    commands that only read it (``history``, ``feedback``) exit 2 with this line.
    """


@contextmanager
def open_history(path: Path | None = None) -> Iterator[sqlite3.Connection]:
    """Open (creating and migrating) the history database; :class:`HistoryUnavailableError` when it cannot be used."""
    path = Path(path) if path is not None else database_path()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        connection = sqlite3.connect(path, timeout=30)
    except (OSError, sqlite3.Error) as exc:
        raise _unavailable(path, exc) from None
    try:
        try:
            connection.execute("PRAGMA journal_mode=WAL")
            _migrate(connection)
        except sqlite3.Error as exc:
            raise _unavailable(path, exc) from None
        try:
            yield connection
        except sqlite3.Error as exc:
            raise _unavailable(path, exc) from None
    finally:
        connection.close()


def _unavailable(path: Path, exc: BaseException) -> HistoryUnavailableError:
    reason = getattr(exc, "strerror", None) or " ".join(str(exc).split()) or type(exc).__name__
    return HistoryUnavailableError(
        f"history database {path} cannot be used: {reason}",
        hint="move it aside (fluxdrive starts a new one) or point XDG_DATA_HOME elsewhere",
    )


def record_feedback(
    connection: sqlite3.Connection, *, agents: list[str], project: str, finding_id: str, accepted: bool
) -> None:
    """One verdict on a finding, credited to every agent that reported it."""
    with connection:
        connection.executemany(
            "INSERT INTO feedback (agent, project, finding_id, accepted, at) VALUES (?, ?, ?, ?, ?)",
            [(agent, project, finding_id, int(accepted), utc_timestamp()) for agent in agents],
        )


def feedback_counts(connection: sqlite3.Connection, project: str) -> dict[str, tuple[int, int]]:
    """Agent -> (accepted, total) for one project."""
    rows = connection.execute(
        "SELECT agent, SUM(accepted), COUNT(*) FROM feedback WHERE project = ? GROUP BY agent", (project,)
    )
    return {agent: (int(accepted), int(total)) for agent, accepted, total in rows}


def trust_multiplier(accepted: int, total: int, settings: ScoringConfig) -> float:
    """The trust multiplier for an acceptance record: 1.0 without any, never below ``trust_floor``.

    ::

        k     = settings.trust_prior_reviews            (10: what a prior is worth)
        p     = (accepted + k) / (total + k)            (posterior mean acceptance)
        trust = floor + (1 - floor) * p                 (floor = settings.trust_floor, 0.5)

    ``p`` is the mean of a Beta(accepted + k, discarded) posterior: the prior
    is ``k`` reviews' worth of acceptance, so an agent is trusted until the
    evidence says otherwise, and one verdict cannot outweigh ten. The
    multiplier then maps ``p`` onto ``[floor, 1]``. With the defaults:

    ====================  ======
    verdicts              trust
    ====================  ======
    none                  1.0
    1 discard             0.9545
    3 discards of 3       0.8846
    5 of 10 accepted      0.875
    10 discards of 10     0.75
    100 discards of 100   0.5455
    any number, all kept  1.0
    ====================  ======

    Why: the old banded rate (acceptance rate -> 0.05..1.0) turned a single
    ``fluxdrive feedback discard`` of a P3 into trust 0.05, which removed the
    agent from the next triage. A rate over one verdict is not evidence.
    The result is monotone: more accepts never lower it, more discards never
    raise it, and it stays above ``floor`` however bad the record.
    """
    if total <= 0:
        return 1.0
    accepted = min(max(accepted, 0), total)
    prior, floor = settings.trust_prior_reviews, settings.trust_floor
    posterior = (accepted + prior) / (total + prior)
    return round(floor + (1 - floor) * posterior, 4)


def trust_for(project: str, settings: ScoringConfig, path: Path | None = None) -> dict[str, float]:
    """Every agent's trust multiplier in ``project`` (agents without feedback are absent: 1.0)."""
    database = Path(path) if path is not None else database_path()
    if not database.exists():
        return {}
    with open_history(database) as connection:
        counts = feedback_counts(connection, project)
    return {agent: trust_multiplier(a, t, settings) for agent, (a, t) in counts.items()}


@dataclasses.dataclass(frozen=True)
class RunRow:
    """One recorded run, with its totals over its agent calls."""

    id: str
    project: str
    input: str | None
    input_type: str | None
    started_at: str | None
    finished_at: str | None
    verdict: str | None
    runtime: str | None
    agents: int
    tokens_in: int
    tokens_out: int
    cost_usd: float
    interrupted: bool


@dataclasses.dataclass(frozen=True)
class CallRow:
    """One agent's call in a run: which model, what it used, how it ended."""

    run_id: str
    agent: str
    stage: int | None
    provider: str | None
    model_family: str | None
    model_id: str | None
    tokens_in: int
    tokens_out: int
    cost_usd: float
    duration_s: float
    outcome: str
    at: str


_RUN_COLUMNS = (
    "id, project, input, input_type, started_at, finished_at, verdict, runtime,"
    " agents, tokens_in, tokens_out, cost_usd, interrupted"
)
_CALL_COLUMNS = (
    "run_id, agent, stage, provider, model_family, model_id, tokens_in, tokens_out, cost_usd, duration_s, outcome, at"
)


def _run_row(row: tuple[Any, ...]) -> RunRow:
    run = RunRow(*row)
    return dataclasses.replace(run, interrupted=bool(run.interrupted))  # SQLite stores it as 0/1


def record_run(connection: sqlite3.Connection, manifest: RunManifest, *, project: str, verdict: str | None) -> None:
    """Record a run, one call per launched agent and one per other model call; re-recording replaces, atomically.

    The run's token and cost totals include every model call (research, --llm-triage), its agent count
    only the reviewers.
    """
    if not manifest.run_id:
        raise ValueError("the run manifest has no run_id; it cannot be recorded")
    extra = manifest.model_extra or {}
    runtime = extra.get("runtime")
    fallback_at = manifest.finished_at or manifest.started_at or utc_timestamp()
    calls: list[tuple[Any, ...]] = []
    for agent, record in sorted(manifest.agents.items()):
        if record.outcome in _NOT_CALLED:
            continue
        provenance, usage = record.provenance, record.usage
        calls.append(
            (
                manifest.run_id,
                agent,
                record.stage,
                provenance.provider if provenance else None,
                provenance.model_family if provenance else None,
                provenance.model_id if provenance else None,
                usage.tokens_in,
                usage.tokens_out,
                usage.cost_usd,
                usage.wall_s,
                record.outcome,
                record.finished_at or fallback_at,
            )
        )
    agents = len(calls)
    # model calls that are not reviews: research answered by a model, --llm-triage (stage NULL)
    others = [(r.agent, r.status, r.provenance, r.usage) for r in manifest.research if r.usage and r.provenance]
    others += [(c.name, c.outcome, c.provenance, c.usage) for c in manifest.model_calls]
    for name, outcome, provenance, usage in others:
        calls.append(
            (
                manifest.run_id,
                name,
                None,
                provenance.provider,
                provenance.model_family,
                provenance.model_id,
                usage.tokens_in,
                usage.tokens_out,
                usage.cost_usd,
                usage.wall_s,
                outcome,
                fallback_at,
            )
        )
    run = (
        manifest.run_id,
        project,
        manifest.input.path if manifest.input else None,
        manifest.input.type if manifest.input else None,
        manifest.started_at,
        manifest.finished_at,
        verdict,
        runtime if isinstance(runtime, str) else None,
        agents,
        sum(c[6] for c in calls),
        sum(c[7] for c in calls),
        round(sum(c[8] for c in calls), 6),
        int(manifest.interrupted),
    )
    with connection:  # one transaction: the old run and its calls go, the new ones land, or nothing changes
        connection.execute("DELETE FROM agent_calls WHERE run_id = ?", (manifest.run_id,))
        connection.execute("DELETE FROM runs WHERE id = ?", (manifest.run_id,))
        connection.execute(f"INSERT INTO runs ({_RUN_COLUMNS}) VALUES ({', '.join('?' * 13)})", run)  # noqa: S608
        connection.executemany(
            f"INSERT INTO agent_calls ({_CALL_COLUMNS}) VALUES ({', '.join('?' * 12)})",  # noqa: S608
            calls,
        )


def runs(connection: sqlite3.Connection, *, project: str | None = None, limit: int = 20) -> list[RunRow]:
    """The most recent runs, newest first (of one project when given)."""
    where, params = ("WHERE project = ?", [project]) if project is not None else ("", [])
    rows = connection.execute(
        f"SELECT {_RUN_COLUMNS} FROM runs {where} ORDER BY started_at DESC, id LIMIT ?",  # noqa: S608
        (*params, max(limit, 0)),
    )
    return [_run_row(row) for row in rows]


def runs_by_prefix(connection: sqlite3.Connection, prefix: str, *, project: str | None = None) -> list[RunRow]:
    """Runs whose id starts with ``prefix`` (a whole id matches itself even when it prefixes another)."""
    where = "substr(id, 1, ?) = ?" + (" AND project = ?" if project is not None else "")
    params: list[Any] = [len(prefix), prefix] + ([project] if project is not None else [])
    rows = [
        _run_row(row)
        for row in connection.execute(
            f"SELECT {_RUN_COLUMNS} FROM runs WHERE {where} ORDER BY started_at DESC, id",  # noqa: S608
            params,
        )
    ]
    exact = [row for row in rows if row.id == prefix]
    return exact or rows


def agent_calls(connection: sqlite3.Connection, run_id: str) -> list[CallRow]:
    """A run's agent calls, by stage then agent."""
    rows = connection.execute(
        f"SELECT {_CALL_COLUMNS} FROM agent_calls WHERE run_id = ? ORDER BY stage IS NULL, stage, agent, id",  # noqa: S608
        (run_id,),
    )
    return [CallRow(*row) for row in rows]


def estimate_tokens(
    connection: sqlite3.Connection, agent: str, model_id: str | None, *, default: int
) -> tuple[int, str]:
    """Tokens (in + out) ``agent`` will likely spend, and where the number comes from.

    The median over its last 20 completed calls (with ``model_id`` when given,
    else on any model); ``default`` when it has none.
    """
    where = "agent = ? AND outcome = 'completed'" + (" AND model_id = ?" if model_id is not None else "")
    params: list[Any] = [agent] + ([model_id] if model_id is not None else [])
    totals = [
        int(total)
        for (total,) in connection.execute(
            f"SELECT tokens_in + tokens_out FROM agent_calls WHERE {where} ORDER BY at DESC, id DESC LIMIT ?",  # noqa: S608
            (*params, ESTIMATE_WINDOW),
        )
    ]
    if not totals:
        return default, "default"
    calls = "call" if len(totals) == 1 else "calls"
    return round(statistics.median(totals)), f"median of {len(totals)} past {calls}"


@dataclasses.dataclass(frozen=True)
class EvalRow:
    """One recorded ``fluxdrive eval run`` / ``eval qualify``."""

    at: str
    suite: str
    runtime: str
    model: str | None
    fixtures: int
    passed: bool
    qualify: bool
    metrics: dict[str, Any]
    reasons: list[str]


def record_eval(
    connection: sqlite3.Connection,
    document: dict[str, Any],
    *,
    suite: str,
    reasons: list[str],
    qualify: bool,
) -> None:
    """Record an eval run (its overall metrics and why it failed, if it did) next to the reviews."""
    settings = document.get("settings", {})
    agents = settings.get("agents")
    with connection:
        connection.execute(
            "INSERT INTO eval_runs (at, suite, runtime, model, agents, fixtures, passed, qualify, metrics, reasons)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                utc_timestamp(),
                suite,
                str(settings.get("runtime") or "static"),
                settings.get("model"),
                ",".join(agents) if agents else None,
                len(document.get("fixtures", [])),
                int(not reasons),
                int(qualify),
                json.dumps(document["overall"]["metrics"], sort_keys=True),
                json.dumps(reasons),
            ),
        )


def eval_runs(connection: sqlite3.Connection, *, model: str | None = None, limit: int = 20) -> list[EvalRow]:
    """Recorded eval runs, newest first (of one model when given)."""
    query = "SELECT at, suite, runtime, model, fixtures, passed, qualify, metrics, reasons FROM eval_runs"
    args: tuple[Any, ...] = ()
    if model is not None:
        query, args = query + " WHERE model = ?", (model,)
    rows = connection.execute(query + " ORDER BY id DESC LIMIT ?", (*args, limit)).fetchall()
    return [
        EvalRow(r[0], r[1], r[2], r[3], int(r[4]), bool(r[5]), bool(r[6]), json.loads(r[7]), json.loads(r[8]))
        for r in rows
    ]
