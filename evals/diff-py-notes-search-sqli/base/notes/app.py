"""Team notes service."""
import os
import sqlite3

from flask import Flask, abort, g, jsonify, request

app = Flask(__name__)
app.config["DATABASE"] = os.environ.get("NOTES_DB", "notes.db")
app.secret_key = os.environ["NOTES_SECRET_KEY"]


def db():
    if "db" not in g:
        g.db = sqlite3.connect(app.config["DATABASE"])
        g.db.row_factory = sqlite3.Row
    return g.db


@app.teardown_appcontext
def close_db(exc):
    conn = g.pop("db", None)
    if conn is not None:
        conn.close()


@app.get("/notes/<int:note_id>")
def get_note(note_id):
    row = db().execute(
        "SELECT id, title, body, author FROM notes WHERE id = ?", (note_id,)
    ).fetchone()
    if row is None:
        abort(404)
    return jsonify(dict(row))


@app.post("/notes")
def create_note():
    data = request.get_json(force=True)
    cur = db().execute(
        "INSERT INTO notes (title, body, author) VALUES (?, ?, ?)",
        (data["title"], data.get("body", ""), data["author"]),
    )
    db().commit()
    return jsonify({"id": cur.lastrowid}), 201
