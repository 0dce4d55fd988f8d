"""A request value handed to the project's own helper that passes it to a declared sink (SSRF through a
helper in another module) is reported at the call, in a real review; a constant URL is not."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from fluxdrive.cli import main


def test_ssrf_through_a_helper_in_another_module(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    (root / "app").mkdir(parents=True)
    (root / "app" / "__init__.py").write_text("")
    (root / "app" / "net.py").write_text(
        "import requests\n\n\ndef fetch(url, timeout=5):\n    return requests.get(url, timeout=timeout).text\n"
    )
    (root / "app" / "views.py").write_text(
        "from flask import Flask, request\n"
        "from app.net import fetch\n\n"
        "app = Flask(__name__)\n\n\n"
        '@app.route("/preview")\n'
        "def preview():\n"
        '    return fetch(request.args["url"])\n\n\n'
        '@app.route("/status")\n'
        "def status():\n"
        '    return fetch("https://status.example.com/health")\n'
    )
    for args in (("init", "-q"), ("add", "-A"), ("commit", "-qm", "x")):
        subprocess.run(["git", "-c", "user.email=t@t.invalid", "-c", "user.name=t", *args], cwd=root, check=True)
    out = tmp_path / "out"
    assert main(["review", str(root), "--yes", "--agents", "fd-safety", "--output-dir", str(out), "-q"]) in (0, 1)
    findings = json.loads((out / "findings.json").read_text())["findings"]
    ssrf = [f for f in findings if "CWE-918" in f["cwe"]]
    assert [(f["severity"], f["locations"]) for f in ssrf] == [("P1", ["app/views.py:9"])], findings
    assert "requests.get() through fetch()" in ssrf[0]["title"] and "request.args" in ssrf[0]["title"]
