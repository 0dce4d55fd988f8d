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
- **Terminal controls**: escape sequences (colour, title, clear-screen,
  hyperlinks) and other C0/C1 control characters are removed, so a file
  name or a report cannot drive the terminal of whoever reads the output.

The value is replaced by ``****``; where it was - the file and line around
it - stays, so a finding still points at the secret.

A leaf module: the contracts, the LLM tools and the CLI may all import it.
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Iterable

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
    r")"
)
_PRIVATE_KEY = re.compile(
    r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----.*?(?:-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\Z)",
    re.S,
)
_SECRET_NAME = (
    r"(?:password|passwd|passphrase|pwd|secret|token|api[_-]?key|access[_-]?key|private[_-]?key|auth|credential)"  # noqa: S105
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
_URL_PASSWORD = re.compile(r"(\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s:/@'\"]+:)([^\s@/'\"]+)(@)")
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
    for value in _env_secrets():
        if value in text:
            text = text.replace(value, MASK)
    if "PRIVATE KEY" in text:
        text = _PRIVATE_KEY.sub(MASK, text)
    text = _CREDENTIAL_SHAPES.sub(MASK, text)
    text = _ASSIGNED_SECRET.sub(lambda m: f"{m.group(1)}{m.group(2)}{MASK}{m.group(2)}", text)
    text = _UNQUOTED_SECRET.sub(_unquoted, text)
    text = _INLINE_SECRET.sub(_inline, text)
    if "://" in text:
        text = _URL_PASSWORD.sub(lambda m: f"{m.group(1)}{MASK}{m.group(3)}", text)
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
