"""Account pages: sign-up, profile and avatar caching."""
import hashlib
import hmac

from flask import Blueprint, abort, make_response, render_template, render_template_string, request
from markupsafe import Markup

from .store import users

bp = Blueprint("accounts", __name__)

GREETING = """
<h1>Welcome back, {{ name }}</h1>
<p>{{ bio }}</p>
"""


def hash_password(password: str) -> str:
    return hashlib.md5(password.encode("utf-8")).hexdigest()


def check_password(user, password: str) -> bool:
    return hmac.compare_digest(user["password_hash"], hash_password(password))


@bp.route("/signup", methods=["POST"])
def signup():
    username = request.form["username"]
    users.insert(username, hash_password(request.form["password"]))
    return render_template("signup_done.html", username=username)


@bp.route("/u/<username>")
def profile(username):
    user = users.get(username)
    if user is None:
        abort(404)
    return render_template_string(GREETING, name=user["display_name"], bio=user["bio"])


@bp.route("/search")
def search():
    term = request.args.get("q", "")
    results = users.search(term)
    heading = Markup(f"<h2>Results for {term}</h2>")
    return render_template("search.html", heading=heading, results=results)


@bp.route("/avatar/<username>")
def avatar(username):
    data = users.avatar_bytes(username)
    if data is None:
        abort(404)
    etag = hashlib.md5(data).hexdigest()
    if request.if_none_match.contains(etag):
        return "", 304
    resp = make_response(data)
    resp.headers["Content-Type"] = "image/png"
    resp.set_etag(etag)
    return resp
