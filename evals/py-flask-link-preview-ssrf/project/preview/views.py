"""Link previews and login redirects for the community forum."""
from html.parser import HTMLParser
from urllib.parse import urlparse

import requests
from flask import Blueprint, jsonify, redirect, request, session, url_for

bp = Blueprint("preview", __name__)

STATUS_URL = "https://status.forum.example/api/v1/summary"
ALLOWED_HOSTS = {"forum.example", "docs.forum.example"}


class TitleParser(HTMLParser):
    def __init__(self):
        super().__init__()
        self._in_title = False
        self.title = ""

    def handle_starttag(self, tag, attrs):
        self._in_title = tag == "title"

    def handle_endtag(self, tag):
        self._in_title = False

    def handle_data(self, data):
        if self._in_title:
            self.title += data


@bp.route("/preview")
def link_preview():
    target = request.args["url"]
    resp = requests.get(target, timeout=5, allow_redirects=True)
    parser = TitleParser()
    parser.feed(resp.text[:65536])
    return jsonify({"url": target, "title": parser.title.strip(), "status": resp.status_code})


@bp.route("/status")
def service_status():
    resp = requests.get(STATUS_URL, timeout=3)
    resp.raise_for_status()
    return jsonify(resp.json())


@bp.route("/login/done")
def login_done():
    session["seen_welcome"] = True
    next_url = request.args.get("next", "/")
    return redirect(next_url)


@bp.route("/docs/go")
def docs_go():
    dest = request.args.get("to", "")
    host = urlparse(dest).hostname
    if urlparse(dest).scheme != "https" or host not in ALLOWED_HOSTS:
        return redirect(url_for("preview.service_status"))
    return redirect(dest)
