"""What may leave fluxdrive: credentials masked, configured keys scrubbed, terminal controls stripped.

Every text that crosses a boundary goes through :func:`scrub` (or
:func:`mask_text` where control characters are already impossible): what a
tool returns to a model, every report as it comes in (an agent's, a CLI's,
another orchestrator's), and every writer - the channel, verdict records,
findings.json, summary.md, SARIF, run.json, the history, stdout and stderr.
One function, so no output can forget a rule.

- **Credential shapes**: AWS keys, GitHub/GitLab/Slack/Stripe/npm/PyPI/
  Hugging Face/Google tokens, ``sk-`` keys, JWTs, whole PEM private-key
  blocks, passwords in connection strings (``postgres://u:PASS@h``),
  ``Authorization: Bearer ...`` values.
- **Assigned secrets**: quoted literals assigned to secret-looking names in
  any language, and unquoted values in ``.env``, shell, INI and YAML lines
  (``DB_PASSWORD=hunter2``, ``api_key: abc123``) - but not code such as
  ``token = get_token()``.
- **detect-secrets** (``detect=True``, for raw content coming in): its line
  plugins find what the patterns miss (Twilio, SendGrid, Azure, basic-auth
  URLs...); the high-entropy and public-IP plugins are left out because
  hashes and addresses in reports are not secrets.
- **Configured keys**: the value of every environment variable that holds a
  key, token, secret or password (``ANTHROPIC_API_KEY``, ``OPENAI_API_KEY``,
  ``GITHUB_TOKEN``...) is replaced wherever it appears - a provider that
  echoes the key in an error message must not put it on disk.
- **Known values**: the secret values found in the reviewed tree at the start
  of a run (:mod:`fluxdrive.core.secret_values` collects them: ``.env``, YAML,
  settings, URLs with credentials, key bodies) are replaced wherever they
  appear, whatever their shape - a model quoting an AWS secret in prose, or
  a tool result carrying a Slack webhook, cannot put it on disk or on the
  wire. They live in :func:`known_secrets` scopes: a run opens one, adds its
  values, and closes it when it ends; an MCP server running several reviews
  at once masks the union of the open scopes (over-masking another run's
  value is harmless, forgetting one is not). One regex, built as a trie when
  a scope changes, keeps this linear in the text's length.
- **Terminal controls**: escape sequences (colour, title, clear-screen,
  hyperlinks) and other C0/C1 control characters are removed, so a file
  name or a report cannot drive the terminal of whoever reads the output.

The value is replaced by ``****``; where it was - the file and line around
it - stays, so a finding still points at the secret.

A leaf module: the contracts, the LLM tools and the CLI may all import it.
"""

from __future__ import annotations

import contextlib
import os
import re
import threading
from collections.abc import Iterable, Iterator
from typing import Any

MASK = "****"

# Each shape starts a token (``task-management-dashboard`` holds no ``sk-`` key), and ``sk-`` keys carry digits.
_CREDENTIAL_SHAPES = re.compile(
    r"(?<![A-Za-z0-9_-])(?:"
    r"(?:AKIA|ASIA)[0-9A-Z]{16}\b"
    r"|gh[pousr]_[A-Za-z0-9]{20,}"
    r"|github_pat_[A-Za-z0-9_]{20,}"
    r"|glpat-[A-Za-z0-9_-]{20,}"
    r"|xox[abpres]-[A-Za-z0-9-]{10,}"
    r"|(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{10,}"
    r"|sk-(?=[A-Za-z0-9_-]*[0-9])[A-Za-z0-9_-]{20,}"
    r"|npm_[A-Za-z0-9]{36}"
    r"|pypi-[A-Za-z0-9_-]{50,}"
    r"|hf_[A-Za-z0-9]{30,}"
    r"|AIza[0-9A-Za-z_-]{30,}"
    r"|SG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}"
    r"|eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{5,}"
    r"|MII[A-Za-z0-9+/]{40,}={0,2}"  # a DER key or certificate body quoted without its BEGIN/END lines
    r")"
)
# The secret part of a Slack (or Discord) webhook URL: whoever holds the path can post as the workspace.
_WEBHOOK = re.compile(
    r"(?i)(\bhooks\.slack\.com/(?:services|workflows|triggers)/|\bdiscord(?:app)?\.com/api/webhooks/)([A-Za-z0-9/_-]{8,})"
)
# Prose: "the admin password is Tr0ub4dor&3", "password was: hunter22" (a value, not "is stored in vault").
_PROSE_SECRET = re.compile(
    r"(?i)(\b(?:password|passphrase|passwd|pwd|secret|token|api[ _-]?key)s?\s+(?:is|was|are|=)\s*:?\s*[\"'`]?)"
    r"([^\s\"'`,;)]{6,})"
)
_PRIVATE_KEY = re.compile(
    r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----.*?(?:-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\Z)",
    re.S,
)
_SECRET_NAME = (
    r"(?:password|passwd|passphrase|pwd|secret|token|api[_-]?key|access[_-]?key|private[_-]?key|auth|credential"  # noqa: S105
    r"|(?:encryption|master|signing|session|hmac|jwt|cipher|crypt|enc|license)[_-]?key)"
)
_ASSIGNED_SECRET = re.compile(
    rf"(?i)({_SECRET_NAME}[\w-]*[\"']?\s*(?::=|[:=]|=>)\s*[bru]?)([\"'])([^\"'\s${{}}%?]{{3,}})\2"
)
# .env / shell / INI / YAML: KEY=value, export KEY=value, key: value (a value, not an expression)
_UNQUOTED_SECRET = re.compile(
    rf"(?im)^(\s*(?:export\s+|-\s+)?[\w.-]*{_SECRET_NAME}[\w.-]*(?:\s*=\s*|=|:\s+))"
    r"(?![\"'$<{*&|>\[(])([^\s\"'#;]{3,})(?=\s*(?:#.*)?$)"
)
# the same names mid-line, in prose or a title: "leaked password=hunter2xyz", "DB_PASSWORD=... is readable"
_INLINE_SECRET = re.compile(
    rf"(?i)(\b[\w.-]*{_SECRET_NAME}[\w.-]*\s*(?:=|:\s)\s*)(?![\"'$<{{*&|>\[(=])([^\s\"'`,;)}}\]&]{{6,}})"
)
_SECRET_LOOKING = re.compile(r"\d|[^\w.]|^.{20,}$")  # a digit or a symbol (not a bare identifier), or long
_CODE_LIKE = re.compile(r"^(?:[A-Za-z_]\w*\.)+[A-Za-z_]\w*$|[()\[\]{}]|^(?:none|null|true|false|nil|undefined)$", re.I)
# user:PASS@ and :PASS@ (redis://:PASS@host has no user)
_URL_PASSWORD = re.compile(r"(\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s:/@'\"]*:)([^\s@/'\"]+)(@)")
_AUTHORIZATION = re.compile(r"(?i)\b((?:bearer|basic)\s+)([A-Za-z0-9._~+/=-]{16,})")
_SECRET_ENV_NAME = re.compile(r"(?i)(api_?key|token|secret|passw|credential|private_key|auth)")
_MIN_ENV_SECRET = 8

# Terminal controls: CSI, OSC (to BEL or ST), other two-byte escapes, C1, and C0 but tab and newline.
_CONTROLS = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"
    r"|\x1b[PX^_][^\x1b]*(?:\x1b\\)?"
    r"|\x1b[@-Z\\-_]?"
    r"|[\x00-\x08\x0b-\x1f\x7f-\x9f]"
)

_JSON_CONTROL = re.compile(r"\\u00(?:0[0-8bcef]|1[0-9a-f]|7f|[89][0-9a-f])", re.I)

_ANY_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")

# detect-secrets keeps its settings in module globals: one scan at a time (the static analyzer shares this).
DETECT_SECRETS_LOCK = threading.Lock()
_DETECT_CANDIDATE = re.compile(
    r"(?i:pass|pwd|secret|token|api.?key|auth|cred|private|BEGIN|://)"
    r"|[A-Za-z0-9+=_\-]{20,}|AKIA|gh[pousr]_|sk_live|xox[abpr]-|eyJ|AIza"  # a token, not a path or a sentence
)
_SKIPPED_PLUGINS = ("Base64HighEntropyString", "HexHighEntropyString", "IPPublicDetector")


def strip_controls(text: str) -> str:
    """``text`` without terminal escape sequences or control characters (tab and newline stay)."""
    if not _ANY_CONTROL.search(text):
        return text
    return _CONTROLS.sub("", text.replace("\r\n", "\n"))


def _env_secrets() -> list[str]:
    """The values of environment variables that hold keys, tokens, secrets or passwords (longest first)."""
    values = {
        value
        for name, value in os.environ.items()
        if len(value) >= _MIN_ENV_SECRET and _SECRET_ENV_NAME.search(name) and not value.startswith(("/", "."))
    }
    return sorted(values, key=len, reverse=True)


# --- known values: the run's own secrets, masked by value -------------------------------------------------

MIN_KNOWN = 6  # shorter values are words and numbers more often than secrets


class KnownSecrets:
    """One run's secret values (a :func:`known_secrets` scope): add to it as they are found."""

    def __init__(self) -> None:
        self._values: set[str] = set()

    def add(self, values: Iterable[str]) -> None:
        """Mask ``values`` (those of :data:`MIN_KNOWN` characters or more) from now on, in every output."""
        fresh = {v for v in values if len(v) >= MIN_KNOWN and v != MASK} - self._values
        if fresh:
            with _REGISTRY.lock:
                self._values |= fresh
                _REGISTRY.rebuild()

    @property
    def values(self) -> frozenset[str]:
        return frozenset(self._values)


class _Registry:
    """The open scopes and their union as one regex (replaced whole, so a reader never sees half a rebuild)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.scopes: list[KnownSecrets] = []
        self.pattern: re.Pattern[str] | None = None

    def rebuild(self) -> None:
        """Call with :attr:`lock` held."""
        values = set().union(*(scope.values for scope in self.scopes)) if self.scopes else set()
        self.pattern = re.compile(_trie_pattern(values)) if values else None


_REGISTRY = _Registry()


@contextlib.contextmanager
def known_secrets(values: Iterable[str] = ()) -> Iterator[KnownSecrets]:
    """A run's scope of known secret values, masked everywhere until the block ends.

    Process-wide and thread-safe, because the writers, the tools and the
    worker threads of a run all call :func:`mask_text` without a run handle;
    scopes nest and overlap (an MCP server's concurrent reviews), and
    closing one forgets only its values.
    """
    scope = KnownSecrets()
    with _REGISTRY.lock:
        _REGISTRY.scopes.append(scope)
    try:
        scope.add(values)
        yield scope
    finally:
        with _REGISTRY.lock:
            _REGISTRY.scopes.remove(scope)
            _REGISTRY.rebuild()


def _trie_pattern(values: Iterable[str]) -> str:
    """An alternation of ``values`` as a trie: one pass, each position tries one branch, longest match first.

    A flat ``a|b|c`` of a thousand literals tries every literal at every
    position; the trie shares prefixes, so the work per character is bounded
    by the alphabet, not by the number of values.
    """
    trie: dict[str, Any] = {}
    for value in values:
        node = trie
        for char in value:
            node = node.setdefault(char, {})
        node[""] = {}
    return _node_pattern(trie)


def _node_pattern(node: dict[str, Any]) -> str:
    chain = ""
    while len(node) == 1 and "" not in node:  # a run of single children is a literal (no recursion per char)
        ((char, node),) = node.items()
        chain += re.escape(char)
    ends = "" in node
    branches = [re.escape(char) + _node_pattern(child) for char, child in sorted(node.items()) if char]
    if not branches:
        return chain
    body = branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"
    if ends:  # a value ends here and longer ones continue: try the longer first (greedy ?)
        return f"{chain}(?:{body})?"
    return chain + body


def mask_known(text: str) -> str:
    """``text`` with every known secret value of the open runs replaced by ``****``."""
    pattern = _REGISTRY.pattern
    return pattern.sub(MASK, text) if pattern is not None and text else text


def scrub_tree(value: Any) -> Any:
    """:func:`scrub` over every string in a JSON-shaped value (dict keys and values, lists), for payloads."""
    if isinstance(value, str):
        return scrub(value)
    if isinstance(value, dict):
        return {scrub_tree(k) if isinstance(k, str) else k: scrub_tree(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [scrub_tree(v) for v in value]
    return value


def _unquoted(match: re.Match[str]) -> str:
    value = match.group(2)
    if _CODE_LIKE.search(value) or value == MASK:
        return match.group(0)
    return f"{match.group(1)}{MASK}"


def _inline(match: re.Match[str]) -> str:
    value = match.group(2).rstrip(".")
    if value == MASK or _CODE_LIKE.search(value) or not _SECRET_LOOKING.search(value):
        return match.group(0)
    return f"{match.group(1)}{MASK}{match.group(2)[len(value) :]}"


def mask_text(text: str, *, aggressive: bool = False, detect: bool = False) -> str:
    """Mask credential-shaped values and configured keys in ``text``.

    ``aggressive`` also masks every quoted literal of six or more characters
    (used on a line already known to hold a secret); ``detect`` adds the
    detect-secrets plugins (for raw content coming in: tool results, reports).
    """
    if not text:
        return text
    text = mask_known(text)
    for value in _env_secrets():
        if value in text:
            text = text.replace(value, MASK)
    if "PRIVATE KEY" in text:
        text = _PRIVATE_KEY.sub(MASK, text)
    text = _CREDENTIAL_SHAPES.sub(MASK, text)
    text = _ASSIGNED_SECRET.sub(lambda m: f"{m.group(1)}{m.group(2)}{MASK}{m.group(2)}", text)
    text = _UNQUOTED_SECRET.sub(_unquoted, text)
    text = _INLINE_SECRET.sub(_inline, text)
    text = _PROSE_SECRET.sub(_inline, text)
    if "://" in text:
        text = _URL_PASSWORD.sub(lambda m: f"{m.group(1)}{MASK}{m.group(3)}", text)
    if "hook" in text:
        text = _WEBHOOK.sub(lambda m: f"{m.group(1)}{MASK}", text)
    text = _AUTHORIZATION.sub(lambda m: f"{m.group(1)}{MASK}", text)
    if aggressive:
        text = re.sub(r"([\"'])[^\"']{6,}\1", lambda m: f"{m.group(1)}{MASK}{m.group(1)}", text)
    if detect:
        text = _mask_detected(text)
    return text


def scrub(text: str, *, detect: bool = False) -> str:
    """What may leave fluxdrive: terminal controls stripped, then credentials and configured keys masked."""
    return mask_text(strip_controls(text), detect=detect)


def scrub_json(text: str) -> str:
    """:func:`scrub` for JSON text, also dropping control characters JSON spells as ``\u001b``.

    ``json.dumps`` turns an escape character into six harmless-looking
    characters that any JSON reader turns back into a live one.
    """
    return _JSON_CONTROL.sub("", scrub(text))


def scrub_all(texts: Iterable[str]) -> list[str]:
    """:func:`scrub` over several texts."""
    return [scrub(t) for t in texts]


def _mask_detected(text: str) -> str:
    """Mask the values detect-secrets' line plugins find (no-op when it is not installed)."""
    lines = [(n, line) for n, line in enumerate(text.splitlines(), start=1) if _DETECT_CANDIDATE.search(line)]
    if not lines:
        return text
    try:
        from detect_secrets.core.scan import _process_line_based_plugins
        from detect_secrets.settings import default_settings, get_settings
    except ImportError:
        return text
    values: set[str] = set()
    with DETECT_SECRETS_LOCK, default_settings():
        settings = get_settings()
        for name in _SKIPPED_PLUGINS:
            settings.disable_plugins(name)
        try:
            for secret in _process_line_based_plugins(lines, "text"):
                value = getattr(secret, "secret_value", None)
                if isinstance(value, str) and len(value) >= 4 and value != MASK:
                    values.add(value)
        except Exception:  # noqa: S110 - a plugin failing on odd input leaves the pattern masking in place
            pass
    for value in sorted(values, key=len, reverse=True):
        text = text.replace(value, MASK)
    return text
