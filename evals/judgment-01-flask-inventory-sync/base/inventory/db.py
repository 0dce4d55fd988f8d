"""SQLite access for the inventory service."""

import sqlite3

import click
from flask import current_app, g

SCHEMA = """
CREATE TABLE IF NOT EXISTS items (
    id INTEGER PRIMARY KEY,
    sku TEXT UNIQUE NOT NULL,
    name TEXT NOT NULL,
    qty INTEGER NOT NULL DEFAULT 0
);
"""


def get_db():
    """Return the request's connection, opening it on first use."""
    if "db" not in g:
        g.db = sqlite3.connect(current_app.config["DATABASE"])
        g.db.row_factory = sqlite3.Row
    return g.db


def close_db(exc=None):
    """Close the request's connection, if one was opened."""
    db = g.pop("db", None)
    if db is not None:
        db.close()


@click.command("init-db")
def init_db_command():
    """Create the tables."""
    get_db().executescript(SCHEMA)
    click.echo("Initialized the database.")


def init_app(app):
    """Register teardown and CLI commands."""
    app.teardown_appcontext(close_db)
    app.cli.add_command(init_db_command)
