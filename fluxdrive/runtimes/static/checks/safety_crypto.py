"""fd-safety checks: TLS certificate checks turned off, and weak cryptography.

Calls are matched by their imported origin (``from requests import get`` is
``requests.get``); hashes and ``random`` count as security use only when the
surrounding names say so (password, token, salt...).
"""

from __future__ import annotations

import ast
import itertools
import re
from collections.abc import Iterator
from dataclasses import replace

from fluxdrive.runtimes.static.checks._common import (
    HTTP_VERBS,
    example,
    is_literal,
    name_tail,
    qualified_name,
    resolve_value,
    snippet,
    str_value,
    walk_function,
)
from fluxdrive.runtimes.static.checks.engine.pymodule import PyModule
from fluxdrive.runtimes.static.checks.engine.registry import CheckHit, python_check
from fluxdrive.runtimes.static.checks.engine.syntax import call_name, keyword

# --------------------------------------------------------------------------
# TLS


HTTP_CALLS = HTTP_VERBS | {
    "stream",
    "send",
    "Client",
    "AsyncClient",
    "urlopen",
    "ws_connect",
}
TLS_WHY = (
    "Without certificate checks anyone on the network path (proxy, Wi-Fi, spoofed DNS) can pose "
    "as the server and read or change the traffic, including credentials sent with it."
)
TLS_FIX = (
    'Keep verification on; for a private CA pass its bundle (verify="/path/ca.pem", '
    "ctx.load_verify_locations) or set REQUESTS_CA_BUNDLE / SSL_CERT_FILE."
)


def _tls_off(node: ast.Call, qualified: str) -> str | None:
    """The argument that turns certificate checks off in an HTTP call, if any."""
    tail = name_tail(qualified)
    http = qualified.startswith(("requests.", "httpx.", "aiohttp.")) or tail in HTTP_CALLS
    if is_literal(keyword(node, "verify"), False) and http:
        return "verify=False"
    if is_literal(keyword(node, "verify_certs"), False):
        return "verify_certs=False"
    if str_value(keyword(node, "cert_reqs")) == "CERT_NONE":
        return "cert_reqs='CERT_NONE'"
    session = http and "session" in call_name(node).lower()
    aiohttp = qualified.startswith("aiohttp.") or tail == "TCPConnector" or session
    for name in ("ssl", "verify_ssl"):
        if aiohttp and is_literal(keyword(node, name), False):
            return f"{name}=False"
    return None


def _http_client(node: ast.expr, module: PyModule) -> bool:
    """``session`` / ``client`` / a name bound to requests.Session() or httpx.Client()."""
    if re.search(r"session|client|http", snippet(node).lower()):
        return True
    value = resolve_value(node, module.enclosing_function(node), module.constants)
    return isinstance(value, ast.Call) and name_tail(call_name(value)) in {"Session", "Client"}


def _tls_setting(node: ast.AST, module: PyModule) -> str | None:
    """A TLS weakening outside call arguments: CERT_NONE, check_hostname = False..."""
    if isinstance(node, ast.Attribute) and node.attr == "_create_unverified_context":
        return "ssl._create_unverified_context"
    if isinstance(node, ast.Attribute) and node.attr == "CERT_NONE":
        parent = module.parents.get(node)  # set as a value, not compared or used as a dict key
        assigned = isinstance(parent, ast.Assign | ast.AnnAssign | ast.keyword | ast.Call)
        return "ssl.CERT_NONE" if assigned and node is not getattr(parent, "func", None) else None
    if not isinstance(node, ast.Assign) or not is_literal(node.value, False):
        return None
    for target in node.targets:
        if not isinstance(target, ast.Attribute):
            continue
        client = target.attr == "verify" and _http_client(target.value, module)
        if target.attr == "check_hostname" or client:
            return f"{snippet(target)} = False"
    return None


def _tls_hit(node: ast.AST, module: PyModule, imports: dict[str, str]) -> CheckHit | None:
    if not isinstance(node, ast.Call):
        setting = _tls_setting(node, module)
        if setting is None:
            return None
        title = f"TLS verification weakened: {setting} {module.where(node)}"
        return CheckHit(getattr(node, "lineno", 1), title, TLS_WHY, TLS_FIX)
    qualified = qualified_name(node, imports)
    if qualified.endswith("disable_warnings") and "urllib3" in qualified:
        return CheckHit(
            node.lineno,
            f"urllib3.disable_warnings() hides insecure-request warnings {module.where(node)}",
            "Silencing InsecureRequestWarning usually accompanies verify=False and hides every "
            "place that talks TLS without checking certificates.",
            "Remove it and fix the requests that warn (keep verification on).",
            severity="P2",
        )
    flag = _tls_off(node, qualified)
    if flag is None:
        return None
    where = module.where(node)
    title = f"TLS certificate verification disabled: {call_name(node)}(…, {flag}) {where}"
    return CheckHit(node.lineno, title, TLS_WHY, TLS_FIX)


@python_check(
    "py-tls-verify-disabled",
    tag="security",
    severity="P1",
    summary="TLS certificate/hostname verification off (verify=False, CERT_NONE, unverified ctx)",
    match=[
        example("""
            import requests

            def fetch_invoice(url, token):
                return requests.get(url, headers={"Authorization": token}, verify=False)
        """),
        example("""
            import ssl

            def context():
                ctx = ssl.create_default_context()
                ctx.check_hostname = False
                ctx.verify_mode = ssl.CERT_NONE
                return ctx
        """),
        example("""
            import httpx

            client = httpx.Client(base_url="https://billing.internal", verify=False)
        """),
        example("""
            import ssl, urllib.request

            def get(url):
                return urllib.request.urlopen(url, context=ssl._create_unverified_context())
        """),
    ],
    no_match=[
        example("""
            import requests

            def fetch_invoice(url):
                return requests.get(url, verify="/etc/ssl/internal-ca.pem", timeout=10)
        """),
        example("""
            import ssl

            def strict(ctx):
                if ctx.verify_mode == ssl.CERT_NONE:
                    raise ValueError("insecure context")
        """),
        example("""
            def check(form):
                return form.validate(verify=False)
        """),
    ],
    nodes=(ast.Attribute, ast.Assign, ast.Call),
)
def tls_verify_disabled(module: PyModule, node: ast.Attribute | ast.Assign | ast.Call) -> Iterator[CheckHit]:
    imports = module.imports
    hit = _tls_hit(node, module, imports)
    if hit is None:
        return
    option = _caller_option(module, node)
    if option is not None:  # httpx's create_ssl_context: `elif verify is False:` is the caller's explicit choice
        hit = replace(
            hit,
            severity="P2",
            why=hit.why + f" It runs only when the caller asks for it (`{option}`): make sure that option is "
            "documented as insecure and never on by default.",
        )
    yield hit


def _caller_option(module: PyModule, node: ast.AST) -> str | None:
    """The parameter whose test guards ``node`` (``if verify is False:``): an opt-out the caller chose."""
    function = module.enclosing_function(node)
    if function is None:
        return None
    parameters = {a.arg for a in [*function.args.args, *function.args.kwonlyargs]} - {"self", "cls"}
    for parent in module.ancestors(node):
        if parent is function:
            return None
        if isinstance(parent, ast.If):
            names = {n.id for n in ast.walk(parent.test) if isinstance(n, ast.Name)} & parameters
            if names:
                return sorted(names)[0]
    return None


# --------------------------------------------------------------------------
# Weak crypto


SECURITY_PREFIXES = (
    "passw",
    "pwd",
    "secret",
    "token",
    "auth",
    "sign",
    "session",
    "salt",
    "hmac",
    "credential",
    "otp",
    "csrf",
    "jwt",
    "apikey",
    "cookie",
)
RANDOM_PREFIXES = (
    "passw",
    "pwd",
    "secret",
    "token",
    "salt",
    "nonce",
    "otp",
    "csrf",
    "apikey",
    "invite",
    "keygen",
    "reset",
    "verification",
    "sessionid",
    "sessionkey",
)
RANDOM_CALLS = {
    "random",
    "randint",
    "choice",
    "choices",
    "randrange",
    "getrandbits",
    "sample",
    "shuffle",
}
WEAK_CIPHERS = {"DES": "DES", "ARC4": "RC4", "Blowfish": "Blowfish", "ARC2": "RC2"}


def _words(text: str) -> set[str]:
    """Lower-case words of the identifiers in some text (snake_case and camelCase split)."""
    found = [w.lower() for w in re.findall(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])", text)]
    return set(found) | {a + b for a, b in itertools.pairwise(found)}  # api_key -> apikey


def _mentions(text: str, prefixes: tuple[str, ...]) -> bool:
    for word in _words(text):
        if word.startswith(("author", "signal", "tokeniz")) and not word.startswith("authoriz"):
            continue
        if word.startswith(prefixes):
            return True
    return False


def _weak_hash(node: ast.Call, qualified: str) -> str | None:
    if qualified in {"hashlib.md5", "hashlib.sha1"}:
        return qualified
    algorithm = (str_value(node.args[0]) or "").lower() if node.args else ""
    if qualified == "hashlib.new" and algorithm in {"md5", "sha1"}:
        return f"hashlib.new('{algorithm}')"
    return None


def _weak_cipher(node: ast.AST) -> str | None:
    if isinstance(node, ast.Attribute) and node.attr == "MODE_ECB":
        return "ECB mode"
    if not isinstance(node, ast.Call):
        return None
    parts = call_name(node).split(".")
    if len(parts) >= 2 and parts[-1] == "new" and parts[-2] in WEAK_CIPHERS:
        return WEAK_CIPHERS[parts[-2]]
    if len(parts) >= 2 and parts[-2] == "algorithms" and parts[-1] in {"ARC4", "Blowfish"}:
        return parts[-1]
    return "ECB mode" if parts[-2:] == ["modes", "ECB"] else None


def _cipher_hit(module: PyModule, node: ast.AST) -> CheckHit | None:
    cipher = _weak_cipher(node)
    parent = module.parents.get(node)
    if cipher is None or (cipher == "ECB mode" and parent is not None and _weak_cipher(parent)):
        return None  # DES.new(key, DES.MODE_ECB) is reported once, for the cipher
    return CheckHit(
        getattr(node, "lineno", 1),
        f"Broken cipher {cipher} used {module.where(node)}",
        "ECB encrypts equal blocks to equal ciphertext, so patterns in the data show through."
        if cipher == "ECB mode"
        else f"{cipher} has a small key or block size and practical attacks; treat what it protects as readable.",
        "Use authenticated encryption: cryptography's Fernet, or AESGCM with a fresh random nonce per message.",
    )


def _texts(module: PyModule, function: ast.FunctionDef | ast.AsyncFunctionDef | None) -> str:
    """The string literals of a function: what it says about the data it handles ("passwordFile.txt")."""
    if function is None:
        return ""
    return module.memo(
        ("string literals", function),
        lambda: " ".join(
            n.value for n in walk_function(function) if isinstance(n, ast.Constant) and isinstance(n.value, str)
        ),
    )


def _hash_hit(module: PyModule, node: ast.Call, qualified: str, context: str) -> CheckHit | None:
    weak = _weak_hash(node, qualified)
    if weak is None:
        return None
    if not _mentions(context, SECURITY_PREFIXES):
        return CheckHit(
            node.lineno,
            f"{weak} used {module.where(node)}",
            "MD5/SHA-1 are broken for security; fine for checksums and cache keys.",
            "If this is a checksum, pass usedforsecurity=False to say so; else use hashlib.sha256.",
            severity="P3",
        )
    return CheckHit(
        node.lineno,
        f"{weak} protects a secret {module.where(node)}",
        "MD5 and SHA-1 collisions are cheap and both are fast to brute-force, so hashes of "
        "passwords, tokens or signed data can be forged or reversed.",
        "Use hmac with hashlib.sha256 for signatures and a slow salted KDF (hashlib.scrypt, "
        "argon2, bcrypt) for passwords.",
    )


def _random_hit(module: PyModule, node: ast.Call, qualified: str, context: str) -> CheckHit | None:
    module_call = qualified.startswith("random.") and "()" not in qualified  # not SystemRandom()
    if not module_call or name_tail(qualified) not in RANDOM_CALLS:
        return None
    if not _mentions(context, RANDOM_PREFIXES):
        return None
    return CheckHit(
        node.lineno,
        f"{call_name(node)}() makes a secret value {module.where(node)}",
        "The random module is a Mersenne Twister: after about 600 observed outputs every later "
        "token or password it makes can be predicted.",
        "Use the secrets module (secrets.token_urlsafe(32), secrets.choice) or os.urandom.",
    )


@python_check(
    "py-weak-crypto",
    tag="security",
    severity="P1",
    summary="MD5/SHA-1, DES/RC4/Blowfish, ECB mode or `random` used where security depends on it",
    match=[
        example("""
            import hashlib
            def store(value):
                digest = hashlib.new("md5", value.encode()).hexdigest()
                with open("passwordFile.txt", "a") as fh:
                    fh.write(digest)
        """),
        example("""
            import hashlib

            def hash_password(password, salt):
                return hashlib.md5((salt + password).encode()).hexdigest()
        """),
        example("""
            from Crypto.Cipher import DES

            def encrypt(key, data):
                return DES.new(key, DES.MODE_ECB).encrypt(data)
        """),
        example("""
            import random, string

            def new_reset_token():
                return "".join(random.choice(string.ascii_letters) for _ in range(32))
        """),
        example("""
            import hashlib

            def etag(body):
                return hashlib.sha1(body).hexdigest()
        """),
    ],
    no_match=[
        example("""
            import hashlib

            def etag(body):
                return hashlib.md5(body, usedforsecurity=False).hexdigest()
        """),
        example("""
            import secrets

            def new_reset_token():
                return secrets.token_urlsafe(32)
        """),
        example("""
            import random

            def roll_dice():
                return random.randint(1, 6)
        """),
        example("""
            import hashlib

            def hash_password(password, salt):
                return hashlib.scrypt(password.encode(), salt=salt, n=2**14, r=8, p=1)
        """),
    ],
    nodes=(ast.Attribute, ast.Call),
)
def weak_crypto(module: PyModule, node: ast.Attribute | ast.Call) -> Iterator[CheckHit]:
    imports = module.imports
    hit = _cipher_hit(module, node)
    if hit is None and isinstance(node, ast.Call):
        qualified = qualified_name(node, imports)
        if not qualified.startswith(("hashlib.", "random.")):
            return
        if is_literal(keyword(node, "usedforsecurity"), False):
            return
        function = module.enclosing_function(node)
        context = f"{function.name if function else ''} {module.line_text(node.lineno)}"
        hit = _hash_hit(module, node, qualified, f"{context} {_texts(module, function)}")
        hit = hit or _random_hit(module, node, qualified, context)
    if hit and not (hit.severity == "P3" and module.is_test_module()):
        yield hit
