"""Comments on blog posts."""

import os

from flask import Blueprint
from flask import current_app
from flask import flash
from flask import g
from flask import redirect
from flask import render_template
from flask import render_template_string
from flask import request
from flask import send_file
from flask import url_for
from werkzeug.exceptions import abort

from .auth import login_required
from .blog import get_post
from .db import get_db

bp = Blueprint("comments", __name__, url_prefix="/comments")


@bp.route("/<int:post_id>")
def thread(post_id):
    """Show a post with its comments, and the replies of every comment."""
    post = get_post(post_id, check_author=False)
    db = get_db()
    comments = db.execute(
        "SELECT c.id, c.body, c.created, u.username FROM comment c"
        " JOIN user u ON c.author_id = u.id WHERE c.post_id = ? ORDER BY c.created",
        (post_id,),
    ).fetchall()
    replies = {}
    for comment in comments:
        replies[comment["id"]] = db.execute(
            "SELECT r.body, u.username FROM reply r JOIN user u ON r.author_id = u.id"
            " WHERE r.comment_id = ?",
            (comment["id"],),
        ).fetchall()
    return render_template("comments/thread.html", post=post, comments=comments, replies=replies)


@bp.route("/<int:post_id>/preview", methods=("POST",))
@login_required
def preview(post_id):
    """Render the comment as it will appear, before it is saved."""
    body = request.form["body"]
    return render_template_string("<div class='comment'>" + body + "</div>")


@bp.route("/<int:post_id>/add", methods=("POST",))
@login_required
def add(post_id):
    """Add a comment to a post."""
    body = request.form["body"].strip()
    if not body:
        flash("Comment is empty.")
        return redirect(url_for("comments.thread", post_id=post_id))
    db = get_db()
    db.execute(
        "INSERT INTO comment (post_id, author_id, body) VALUES (?, ?, ?)",
        (post_id, g.user["id"], body),
    )
    db.commit()
    return redirect(url_for("comments.thread", post_id=post_id))


@bp.route("/delete/<int:comment_id>", methods=("POST",))
@login_required
def delete(comment_id):
    """Delete a comment."""
    db = get_db()
    comment = db.execute("SELECT post_id FROM comment WHERE id = ?", (comment_id,)).fetchone()
    if comment is None:
        abort(404)
    db.execute("DELETE FROM comment WHERE id = ?", (comment_id,))
    db.commit()
    return redirect(url_for("comments.thread", post_id=comment["post_id"]))


@bp.route("/export")
@login_required
def export():
    """Download a previously generated CSV export of the comments."""
    name = request.args["name"]
    path = os.path.join(current_app.instance_path, "exports", name)
    return send_file(path, as_attachment=True)
