"""fluxdrive's SQLite record: feedback on findings (the trust multiplier), later runs and costs.

The database lives at ``$XDG_DATA_HOME/fluxdrive/history.db`` (default
``~/.local/share/fluxdrive/history.db``). Migrations are numbered and applied
in order when the database is opened; each one runs once, recorded in
``schema_migrations``.

Trust (PROTOCOL.md section 3): an agent whose findings people keep discarding
should rank lower in triage, but never be silenced for good. With no feedback
the multiplier is 1.0. Otherwise, with acceptance rate r over n verdicts:
r > 80% -> 0.85..1.0 (only with n >= ``trust_min_reviews``; fewer stays at
0.85), 50-80% -> 0.50..0.85, below 50% -> 0.05..0.50, linear within a band.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from fluxdrive._clock import utc_timestamp
from fluxdrive.config.model import ScoringConfig

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
)


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


@contextmanager
def open_history(path: Path | None = None) -> Iterator[sqlite3.Connection]:
    """Open (creating and migrating) the history database."""
    path = Path(path) if path is not None else database_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    connection = sqlite3.connect(path, timeout=30)
    try:
        connection.execute("PRAGMA journal_mode=WAL")
        _migrate(connection)
        yield connection
    finally:
        connection.close()


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
    """The trust multiplier for an acceptance record (1.0 without any)."""
    if total <= 0:
        return 1.0
    rate = accepted / total
    high, low, floor = settings.trust_high_acceptance, settings.trust_low_acceptance, settings.trust_floor
    if rate > high:
        if total < settings.trust_min_reviews:
            return 0.85
        return round(0.85 + (rate - high) / (1 - high) * 0.15, 4) if high < 1 else 1.0
    if rate >= low:
        return round(0.50 + (rate - low) / max(high - low, 1e-9) * 0.35, 4)
    return round(floor + rate / max(low, 1e-9) * (0.50 - floor), 4)


def trust_for(project: str, settings: ScoringConfig, path: Path | None = None) -> dict[str, float]:
    """Every agent's trust multiplier in ``project`` (agents without feedback are absent: 1.0)."""
    database = Path(path) if path is not None else database_path()
    if not database.exists():
        return {}
    with open_history(database) as connection:
        counts = feedback_counts(connection, project)
    return {agent: trust_multiplier(a, t, settings) for agent, (a, t) in counts.items()}
