"""Builds the weekly team activity report."""
import sqlite3
from collections import defaultdict
from contextlib import closing
from datetime import date, timedelta

DB_PATH = "activity.db"


def open_db():
    conn = sqlite3.connect(DB_PATH)
    conn.row_factory = sqlite3.Row
    return conn


def week_bounds(today: date):
    start = today - timedelta(days=today.weekday())
    return start, start + timedelta(days=7)


def team_report(team_id: int, today: date):
    conn = open_db()
    start, end = week_bounds(today)
    members = conn.execute(
        "SELECT id, name FROM users WHERE team_id = ? ORDER BY name", (team_id,)
    ).fetchall()
    report = []
    for member in members:
        commits = conn.execute(
            "SELECT COUNT(*) FROM commits WHERE author_id = ? AND created_at >= ? AND created_at < ?",
            (member["id"], start.isoformat(), end.isoformat()),
        ).fetchone()[0]
        reviews = conn.execute(
            "SELECT COUNT(*) FROM reviews WHERE reviewer_id = ? AND created_at >= ? AND created_at < ?",
            (member["id"], start.isoformat(), end.isoformat()),
        ).fetchone()[0]
        report.append({"name": member["name"], "commits": commits, "reviews": reviews})
    return report


def label_counts(team_id: int):
    with closing(open_db()) as conn:
        rows = conn.execute(
            "SELECT i.label, COUNT(*) AS n FROM issues i "
            "JOIN users u ON u.id = i.assignee_id "
            "WHERE u.team_id = ? GROUP BY i.label",
            (team_id,),
        ).fetchall()
    counts = defaultdict(int)
    for row in rows:
        counts[row["label"]] += row["n"]
    return dict(counts)


def team_names(team_ids):
    if not team_ids:
        return {}
    conn = open_db()
    try:
        placeholders = ",".join("?" for _ in team_ids)
        rows = conn.execute(
            f"SELECT id, name FROM teams WHERE id IN ({placeholders})", list(team_ids)
        ).fetchall()
        return {row["id"]: row["name"] for row in rows}
    finally:
        conn.close()


def write_report(path, report):
    out = open(path, "w", encoding="utf-8")
    out.write("name,commits,reviews\n")
    for row in report:
        out.write(f"{row['name']},{row['commits']},{row['reviews']}\n")
