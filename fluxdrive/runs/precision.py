"""Measured precision in the history database: how often each rule, and each agent-model pair, was right.

Two sources judge a finding: ``fluxdrive eval run`` (a reported finding
matched to ground truth is right, one left over is wrong) and ``fluxdrive
feedback accept|discard`` (accepted is right). Each judged finding counts
once for every key it carries (:func:`fluxdrive.synthesis.measured.keys_of`:
each rule, each agent-model pair), the way feedback credits every agent
that reported a finding. The table is global, not per project: a rule that
is wrong on ten projects is wrong on the eleventh's too.

A review does not read the table during synthesis: :func:`snapshot` writes
what it holds into the run directory first (``measured-precision.json``),
so synthesizing that run again gives the same findings however the table
changed since (:mod:`fluxdrive.synthesis.measured` says why).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence
from pathlib import Path

from fluxdrive.config.model import SynthesisConfig
from fluxdrive.core.atomic import atomic_write_json
from fluxdrive.core.clock import utc_timestamp
from fluxdrive.runs.history import database_path, open_history
from fluxdrive.synthesis.measured import FILE_NAME, Tally, document

Key = tuple[str, str]  # (kind, key): ("rule", "ruff:S108"), ("agent-model", "fd-safety@anthropic:claude-...")


def record(connection: sqlite3.Connection, judged: Iterable[tuple[Sequence[Key], bool]]) -> int:
    """Add judged findings (their keys, right or not) to the table in one transaction; how many keys were counted."""
    rows: dict[Key, list[int]] = {}
    for keys, right in judged:
        for key in dict.fromkeys(keys):
            cell = rows.setdefault(key, [0, 0])
            cell[0 if right else 1] += 1
    now = utc_timestamp()
    with connection:
        connection.executemany(
            "INSERT INTO precision (kind, key, right_count, wrong_count, updated) VALUES (?, ?, ?, ?, ?)"
            " ON CONFLICT (kind, key) DO UPDATE SET right_count = right_count + excluded.right_count,"
            " wrong_count = wrong_count + excluded.wrong_count, updated = excluded.updated",
            [(kind, key, right, wrong, now) for (kind, key), (right, wrong) in sorted(rows.items())],
        )
    return len(rows)


def table(connection: sqlite3.Connection, *, min_judged: int = 1) -> dict[Key, Tally]:
    """Every key with at least ``min_judged`` judged findings."""
    rows = connection.execute(
        "SELECT kind, key, right_count, wrong_count FROM precision WHERE right_count + wrong_count >= ?"
        " ORDER BY kind, key",
        (max(min_judged, 1),),
    )
    return {(kind, key): Tally(int(right), int(wrong)) for kind, key, right, wrong in rows}


def snapshot(output_dir: Path, settings: SynthesisConfig, database: Path | None = None) -> Path:
    """Write the measured table a synthesis of this run reads (only keys with enough judged findings to count).

    No database yet writes an empty table: the file still records that nothing was measured when the
    review ran. Raises :class:`~fluxdrive.runs.history.HistoryUnavailableError` when the database cannot be read.
    """
    database = Path(database) if database is not None else database_path()
    found: dict[Key, Tally] = {}
    if database.exists():
        with open_history(database) as connection:
            found = table(connection, min_judged=settings.measured_min_judged)
    path = Path(output_dir) / FILE_NAME
    atomic_write_json(path, document(found, utc_timestamp()))
    return path
