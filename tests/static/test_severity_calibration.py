"""P0 is kept for what is exploitable as written (issue 13, item 5), measured on pydantic's own tree.

pydantic's docstrings show ``https://user:pass@host`` and ``{'password': 'bar'}``,
and its ``load_str_bytes`` unpickles its argument only after the caller opts
in with ``allow_pickle=True``: neither is a P0. The same value read from a
route or pasted into code stays P0.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

from fluxdrive.config import Config
from fluxdrive.runtimes.static.analyzers import secrets
from fluxdrive.runtimes.static.analyzers.base import AnalyzerContext
from fluxdrive.runtimes.static.checks.engine.runner import run_python_checks
from fluxdrive.runtimes.static.source import load_sources


def _severities(source: str) -> list[str]:
    ran = run_python_checks("app.py", textwrap.dedent(source), ["py-unsafe-deserialization"], [])
    return [r.hit.severity for r in ran]


def test_unpickling_a_plain_parameter_is_p1_a_route_or_request_value_p0() -> None:
    library = """
        import pickle

        def load_str_bytes(b, allow_pickle=False):
            if not allow_pickle:
                raise RuntimeError("pickle is off")
            return pickle.loads(b)
    """
    route = """
        import pickle
        from flask import Flask, request
        app = Flask(__name__)

        @app.route("/restore/<blob>")
        def restore(blob):
            return pickle.loads(blob)

        @app.post("/load")
        def load():
            return pickle.loads(request.get_data())
    """
    assert _severities(library) == ["P1"]
    assert _severities(route) == ["P0", "P0"]


def _secret_hits(tmp_path: Path, text: str) -> list[tuple[int, str, str]]:
    (tmp_path / "settings.py").write_text(textwrap.dedent(text), encoding="utf-8")
    loaded = load_sources(tmp_path, ["settings.py"], max_bytes=1_000_000)
    output = secrets.run(AnalyzerContext(tmp_path, loaded, Config().static))
    assert output.error is None
    return [(hit.line, hit.severity, hit.title) for hit in output.hits]


def test_example_credentials_in_docstrings_and_comments_are_p2_real_ones_p0(tmp_path: Path) -> None:
    hits = _secret_hits(
        tmp_path,
        '''
        """Connection settings.

        e.g. postgres://admin:Zq8vN3rT6wXp2LsK@db.internal:5432/app
        """
        # a comment shows one too: postgres://admin:Zq8vN3rT6wXp2LsK@db.internal:5432/app
        DATABASE_URL = "postgres://admin:Zq8vN3rT6wXp2LsK@db.internal:5432/app"
        # AWS key pasted into a comment: AKIAZ7Q3XK2M4N5P6R8T
        ''',
    )
    by_line = {line: (severity, title) for line, severity, title in hits}
    assert by_line[4][0] == "P2" and "(in a docstring or comment)" in by_line[4][1]
    assert by_line[6][0] == "P2"
    assert by_line[7] == ("P0", "Hard-coded Basic Auth Credentials in settings.py")
    assert by_line[8][0] == "P0", "a provider-format key is real wherever it is pasted"


def test_a_secret_keyword_whose_value_is_words_is_a_placeholder_not_a_p0(tmp_path: Path) -> None:
    """Docs write ``SECRET_KEY="base64 encoded random bytes"`` (pallets/itsdangerous docs/concepts.rst):
    detect-secrets' keyword rule flags it, but a value made of words is prose; a real-looking value stays P0."""
    hits = _secret_hits(
        tmp_path,
        """
        SECRET_KEY = "base64 encoded random bytes"
        password = "hK8s9dL2mQ7xP4vRt6Yw"
        """,
    )
    by_line = {line: (severity, title) for line, severity, title in hits}
    assert by_line[2][0] == "P2" and "(a placeholder value)" in by_line[2][1], hits
    assert by_line[3][0] == "P0", hits
