"""fd-safety check: JSON Web Tokens decoded with their signature check switched off (CWE-347).

A JWT is only as trustworthy as the signature check that accepted it. PyJWT
and python-jose verify by default; code turns that off explicitly -
``verify=False`` (PyJWT 1.x), ``options={"verify_signature": False}``, or an
``algorithms`` list that admits ``"none"`` (an unsigned token). Whoever sends
such a token then chooses its ``sub``, its roles and its expiry.

Reading a token's header or claims before verifying it is a legitimate
pattern (pick the key by ``kid`` or ``iss``, then verify), so a function that
also decodes the same token with verification on is left alone, and
``get_unverified_header`` is never reported. Severity follows the data flow:
a token from the request is P0, any other token P1; a result the code
itself names ``unverified`` (a deliberate peek), python-jose's
``get_unverified_claims`` (reading is not yet trusting) and a switched-off
expiry check alone are P2. Tests decode their own tokens: no finding there.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from fluxdrive.runtimes.static.checks._common import (
    Function,
    example,
    first_arg,
    is_literal,
    name_tail,
    qualified_name,
    snippet,
    str_value,
    walk_function,
)
from fluxdrive.runtimes.static.checks._flows import tainted_at
from fluxdrive.runtimes.static.checks.engine.pymodule import PyModule
from fluxdrive.runtimes.static.checks.engine.registry import CheckHit, CheckSeverity, python_check
from fluxdrive.runtimes.static.checks.engine.syntax import call_name, keyword

JWT_MODULES = ("jwt.", "jose.jwt.", "jose.jws.")
DECODERS = {"decode", "decode_complete"}
UNVERIFIED_CLAIMS = {"get_unverified_claims"}
# Names that say the code knows it holds unverified claims (a deliberate peek, not a login).
_ACKNOWLEDGED = re.compile(r"(?i)unverified|untrusted|peek|without_verif|no_verif")


def _jwt_call(module: PyModule, node: ast.Call) -> str | None:
    """``decode`` / ``decode_complete`` / ``get_unverified_claims`` when ``node`` calls PyJWT or python-jose."""
    name = qualified_name(node, module.imports)
    if not name.startswith(JWT_MODULES) or name.count(".") > 2:
        return None
    method = name_tail(name)
    return method if method in DECODERS | UNVERIFIED_CLAIMS else None


def _options(node: ast.expr | None, function: Function | None) -> dict[str, ast.expr]:
    """The literal entries of an ``options`` argument: a dict, ``dict(...)``, or a local variable holding one."""
    if isinstance(node, ast.Name) and function is not None:
        entries: dict[str, ast.expr] = {}
        for sub in walk_function(function):
            if isinstance(sub, ast.Assign) and any(isinstance(t, ast.Name) and t.id == node.id for t in sub.targets):
                entries.update(_options(sub.value, None))
            elif isinstance(sub, ast.Assign) and len(sub.targets) == 1:
                target = sub.targets[0]  # options["verify_signature"] = False
                if isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name):
                    key = str_value(target.slice)
                    if target.value.id == node.id and key:
                        entries[key] = sub.value
        return entries
    if isinstance(node, ast.Dict):
        return {key: v for k, v in zip(node.keys, node.values, strict=True) if (key := str_value(k)) is not None}
    if isinstance(node, ast.Call) and call_name(node) == "dict":
        return {k.arg: k.value for k in node.keywords if k.arg}
    return {}


def _unverified(node: ast.Call, method: str, function: Function | None) -> tuple[str, bool] | None:
    """(how verification is off, whether the signature itself is unchecked) for a decode call."""
    if method in UNVERIFIED_CLAIMS:
        return f"{call_name(node)}() reads the claims without checking the signature", True
    if is_literal(keyword(node, "verify"), False) or (len(node.args) > 2 and is_literal(node.args[2], False)):
        return "verify=False", True
    options = _options(keyword(node, "options"), function)
    if is_literal(options.get("verify_signature"), False):
        return '"verify_signature": False', True
    algorithms = keyword(node, "algorithms")
    listed = algorithms.elts if isinstance(algorithms, ast.List | ast.Tuple | ast.Set) else [algorithms]
    if any((str_value(a) or "").lower() == "none" for a in listed):
        return 'algorithms that admit "none" (unsigned tokens)', True
    if is_literal(options.get("verify_exp"), False):
        return '"verify_exp": False', False
    return None


def _verified_elsewhere(module: PyModule, node: ast.Call, token: ast.expr, function: Function | None) -> bool:
    """The same function also decodes the same token with its signature checked (peek, then verify)."""
    if function is None:
        return False
    text = snippet(token, 200)
    for sub in walk_function(function):
        if sub is node or not isinstance(sub, ast.Call) or _jwt_call(module, sub) not in DECODERS:
            continue
        other = first_arg(sub, "jwt", "token")
        if other is not None and snippet(other, 200) == text:
            verdict = _unverified(sub, "decode", function)
            if verdict is None or not verdict[1]:
                return True
    return False


def _acknowledged(module: PyModule, node: ast.Call) -> bool:
    """The result is bound to a name that says its claims are unverified (a peek, not a login).

    Only the result's name counts: a function called ``insecure_verify`` that returns True
    for any token is still what its callers authorize with.
    """
    parent = module.parents.get(node)
    targets = parent.targets if isinstance(parent, ast.Assign) else []
    return any(isinstance(t, ast.Name) and _ACKNOWLEDGED.search(t.id) for t in targets)


@python_check(
    "py-jwt-unverified",
    tag="security",
    severity="P1",
    summary="a JWT is decoded with its signature check off (verify=False, verify_signature False, 'none'); "
    "P0 when the token comes from the request",
    match=[
        example("""
            import jwt
            from flask import request

            def current_user():
                token = request.headers["Authorization"].split()[1]
                claims = jwt.decode(token, options={"verify_signature": False})
                return claims["sub"]
        """),
        example("""
            import jwt

            def user_id(token, key):
                return jwt.decode(token, key, verify=False)["user_id"]
        """),
        example("""
            import jwt

            def insecure_verify(token):
                decoded = jwt.decode(token, verify=False)
                return decoded is not None
        """),
        example("""
            import jwt

            def claims(token, key):
                options = {"verify_signature": False, "verify_exp": False}
                return jwt.decode(token, key, algorithms=["HS256"], options=options)
        """),
        example("""
            import jwt

            def claims(token, key):
                return jwt.decode(token, key, algorithms=["HS256", "none"])
        """),
        example("""
            from jose import jwt

            def roles(token):
                return jwt.get_unverified_claims(token)["roles"]
        """),
        example("""
            import jwt

            def session(token, key):
                return jwt.decode(token, key, algorithms=["RS256"], options={"verify_exp": False})
        """),
    ],
    no_match=[
        example("""
            import jwt

            def claims(token, key):
                return jwt.decode(token, key, algorithms=["RS256"], audience="api")
        """),
        example("""
            import jwt

            def claims(token, keys):
                unverified = jwt.decode(token, options={"verify_signature": False})
                key = keys[unverified["iss"]]
                return jwt.decode(token, key, algorithms=["RS256"])
        """),
        example("""
            import jwt

            def key_for(token, keys):
                return keys[jwt.get_unverified_header(token)["kid"]]
        """),
        example("""
            from jose import jwt

            def claims(token, key):
                return jwt.decode(token, key, algorithms=["RS256"], options={"verify_aud": False})
        """),
        example("""
            def decode(token, codec):
                return codec.decode(token, verify=False)
        """),
    ],
    nodes=(ast.Call,),
)
def jwt_unverified(module: PyModule, node: ast.Call) -> Iterator[CheckHit]:
    method = _jwt_call(module, node)
    if method is None or module.is_test_module():
        return
    function = module.enclosing_function(node)
    found = _unverified(node, method, function)
    token = first_arg(node, "jwt", "token")
    if found is None or token is None or _verified_elsewhere(module, node, token, function):
        return
    how, signature = found
    source = tainted_at(module, node, token)
    outside = source is not None and not source.startswith("command-line")  # whoever types it runs the program
    severity: CheckSeverity = "P0" if outside else "P1"
    if not signature or method in UNVERIFIED_CLAIMS or (not outside and _acknowledged(module, node)):
        severity = "P2"  # an expiry alone, a claims peek (reading is not yet trusting), a peek the code names
    origin = f" from {source}" if source else ""
    if not signature:
        title = f"JWT{origin} is accepted after it expired: {call_name(node)}() with {how} {module.where(node)}"
    elif method in UNVERIFIED_CLAIMS:
        title = f"JWT claims{origin} are used unverified: {how} {module.where(node)}"
    else:
        title = f"JWT{origin} is decoded without checking its signature: {how} {module.where(node)}"
    yield CheckHit(
        line=node.lineno,
        title=title,
        why=(
            "Without the expiry check a stolen or logged-out token stays valid forever."
            if not signature
            else "Anyone can write a token with any user id, role or expiry and it is accepted as if "
            "this server had signed it; with 'none' allowed the attacker need not sign it at all."
        ),
        fix=(
            "Decode with the key and an explicit list of real algorithms "
            '(jwt.decode(token, key, algorithms=["RS256"])) and keep the default options; '
            "read unverified claims only to choose the key, then verify."
        ),
        severity=severity,
    )
