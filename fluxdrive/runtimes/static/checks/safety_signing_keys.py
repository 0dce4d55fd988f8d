"""fd-safety check: a web framework's signing key written into the code.

Flask signs its session cookie with ``SECRET_KEY``, Django its sessions,
password-reset tokens and CSRF tokens, Flask-JWT-Extended its tokens: whoever
reads the key (anyone with the repository, forever) forges a session for any
user. detect-secrets guesses at credentials from entropy and keywords, so a
key such as ``"aaaaaaa"`` or ``"dev"`` looks like a placeholder to it, and it
is right that such a value is no leaked credential; but the *setting* is the
vulnerability whatever its value, so this check names the setting.

Only string literals count: ``os.environ["SECRET_KEY"]`` is the fix, and a
default behind it (``os.environ.get("SECRET_KEY", "dev")``) is a P2 (it is
the key whenever the variable is missing). Tests, examples and docs are capped
to P2 where findings are composed (:mod:`~fluxdrive.runtimes.static.placement`).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from fluxdrive.runtimes.static.checks._common import example, str_value
from fluxdrive.runtimes.static.checks.engine.pymodule import PyModule
from fluxdrive.runtimes.static.checks.engine.registry import CheckHit, python_check
from fluxdrive.runtimes.static.checks.engine.syntax import call_name

KEY_NAMES = frozenset({"SECRET_KEY", "secret_key", "JWT_SECRET_KEY", "JWT_SECRET", "SESSION_SECRET", "SIGNING_KEY"})
ENV_READS = frozenset({"os.environ.get", "os.getenv", "environ.get", "getenv", "config", "env", "env.str"})


def _literal_key(value: ast.expr) -> tuple[str, bool] | None:
    """(shown value, whether it is an environment default) for a literal key or a default behind a read."""
    text = str_value(value)
    if text is not None:
        return text, False
    if isinstance(value, ast.Call) and call_name(value) in ENV_READS and len(value.args) >= 2:
        default = str_value(value.args[1])
        return (default, True) if default else None
    if isinstance(value, ast.BoolOp) and isinstance(value.op, ast.Or) and len(value.values) == 2:
        default = str_value(value.values[1])
        return (default, True) if default else None
    return None


def _settings(node: ast.AST) -> Iterator[tuple[str, ast.expr]]:
    """(setting name, value) pairs a statement or call sets."""
    if isinstance(node, ast.Assign):
        for target in node.targets:
            if isinstance(target, ast.Name | ast.Attribute):
                yield (target.id if isinstance(target, ast.Name) else target.attr), node.value
            elif isinstance(target, ast.Subscript) and (key := str_value(target.slice)) is not None:
                yield key, node.value
    elif isinstance(node, ast.Call) and call_name(node).rsplit(".", 1)[-1] in {"update", "Flask", "Config"}:
        for keyword in node.keywords:
            if keyword.arg is not None:
                yield keyword.arg, keyword.value


@python_check(
    "py-hardcoded-signing-key",
    tag="security",
    severity="P1",
    summary="a framework's signing key (SECRET_KEY, app.secret_key, JWT_SECRET_KEY) is a literal in the code",
    match=[
        example("""
            from flask import Flask
            app = Flask(__name__)
            app.secret_key = "aaaaaaa"
        """),
        'SECRET_KEY = "django-insecure-9x#2k!q"\nDEBUG = False\n',
        example("""
            import os
            app.config["JWT_SECRET_KEY"] = os.environ.get("JWT_SECRET_KEY", "super-secret")
        """),
    ],
    no_match=[
        'import os\nSECRET_KEY = os.environ["SECRET_KEY"]\n',
        'app.config["SECRET_KEY"] = load_secret("flask")\n',
        'SECRET_KEY = ""\n',
        'PASSWORD_FIELD = "secret_key"\n',
    ],
    nodes=(ast.Assign, ast.Call),
)
def hardcoded_signing_key(module: PyModule, node: ast.Assign | ast.Call) -> Iterator[CheckHit]:
    for name, value in _settings(node):
        found = _literal_key(value) if name in KEY_NAMES else None
        if found is None or not found[0].strip():
            continue
        _text, fallback = found
        yield CheckHit(
            line=node.lineno,
            title=(
                f"{name} falls back to a literal key when the environment lacks it {module.where(node)}"
                if fallback
                else f"{name} is written into the code {module.where(node)}"
            ),
            why="Whoever has the key signs their own sessions and tokens: any user, the admin included, is "
            "one forged cookie away. A key in the repository is known to everyone who ever cloned it.",
            fix="Read it from the environment or a secrets manager with no default (fail at start-up when it "
            "is missing), and rotate the one that was committed.",
            severity="P2" if fallback else None,
        )
        return
