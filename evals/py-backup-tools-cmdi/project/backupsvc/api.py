"""Small admin API that creates and serves database backups."""
import os
import subprocess
from datetime import datetime, timezone

from flask import Flask, jsonify, request, send_file

BACKUP_ROOT = "/var/backups/appdb"

app = Flask(__name__)


def _timestamp():
    return datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")


@app.route("/backups", methods=["POST"])
def create_backup():
    label = request.form.get("label", "manual")
    target = os.path.join(BACKUP_ROOT, f"{_timestamp()}-{label}.sql.gz")
    cmd = f"pg_dump appdb | gzip > {target}"
    subprocess.run(cmd, shell=True, check=True)
    return jsonify({"file": os.path.basename(target)}), 201


@app.route("/backups/disk")
def disk_usage():
    result = subprocess.run(
        ["df", "-h", BACKUP_ROOT], capture_output=True, text=True, check=True
    )
    return jsonify({"df": result.stdout})


@app.route("/backups/<path:name>")
def download_backup(name):
    path = os.path.join(BACKUP_ROOT, name)
    if not os.path.exists(path):
        return jsonify({"error": "not found"}), 404
    return send_file(path, as_attachment=True)


@app.route("/backups/<name>/verify", methods=["POST"])
def verify_backup(name):
    path = os.path.join(BACKUP_ROOT, os.path.basename(name))
    os.system("gzip -t " + request.form.get("extra", "") + " " + path)
    return jsonify({"verified": True})


@app.route("/backups/manifest")
def manifest():
    entries = []
    with open(os.path.join(BACKUP_ROOT, "MANIFEST")) as fh:
        for line in fh:
            name, size = line.rstrip("\n").split("\t")
            entries.append({"name": name, "size": int(size)})
    return jsonify(entries)
