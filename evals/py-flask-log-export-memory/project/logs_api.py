"""Support console endpoints for searching and downloading service access logs.

Access logs are rotated daily and are typically 2-6 GB per service per day.
"""
import os
import re
from pathlib import Path

from flask import Flask, Response, abort, jsonify, request, send_file

app = Flask(__name__)

LOG_ROOT = Path(os.environ.get("LOG_ROOT", "/var/log/services"))
SERVICES = {"checkout", "search", "accounts"}
DAY_RE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
MAX_MATCHES = 500


def log_path(service: str, day: str) -> Path:
    if service not in SERVICES or not DAY_RE.match(day):
        abort(404)
    path = LOG_ROOT / service / f"access-{day}.log"
    if not path.is_file():
        abort(404)
    return path


@app.get("/logs/<service>/<day>/search")
def search_log(service, day):
    path = log_path(service, day)
    terms = [t for t in request.args.getlist("q") if t][:5]
    if not terms:
        abort(400)
    with open(path, encoding="utf-8", errors="replace") as fh:
        content = fh.read()
    matches = []
    for line in content.splitlines():
        for term in terms:
            pattern = re.compile(re.escape(term), re.IGNORECASE)
            if pattern.search(line):
                matches.append(line)
                break
        if len(matches) >= MAX_MATCHES:
            break
    return jsonify({"service": service, "day": day, "matches": matches})


@app.get("/logs/<service>/<day>/status-counts")
def status_counts(service, day):
    path = log_path(service, day)
    status_re = re.compile(r'" (\d{3}) ')
    counts = {}
    with open(path, encoding="utf-8", errors="replace") as fh:
        for line in fh:
            m = status_re.search(line)
            if m:
                counts[m.group(1)] = counts.get(m.group(1), 0) + 1
    return jsonify(counts)


@app.get("/logs/<service>/<day>/download")
def download_log(service, day):
    path = log_path(service, day)
    return send_file(path, mimetype="text/plain", as_attachment=True)


@app.get("/logs/<service>/<day>/head")
def head_log(service, day):
    path = log_path(service, day)
    n = min(request.args.get("n", 100, type=int), 1000)
    lines = []
    with open(path, encoding="utf-8", errors="replace") as fh:
        for _ in range(n):
            line = fh.readline()
            if not line:
                break
            lines.append(line)
    return Response("".join(lines), mimetype="text/plain")
