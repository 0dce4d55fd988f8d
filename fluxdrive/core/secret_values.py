"""The secret values present in a reviewed tree, collected once per run so every output can mask them by value.

Shape-based masking (:mod:`fluxdrive.core.masking`) catches what *looks* like a
credential; a model quoting an AWS secret key in prose, a Redis password
from a URL or an ``ENCRYPTION_KEY`` from ``.env`` does not look like one
once it is out of context. So at the start of a run the tree itself is
searched, and each value found is masked wherever it appears afterwards:

- every regular file under the root, ignored ones included (symlinks,
  FIFOs, the directories every walk skips -
  :data:`fluxdrive.core.walk.SKIPPED_DIRS` - and files over
  :data:`MAX_FILE_BYTES` are skipped - the collector must never block,
  follow a link out, or take longer than the review);
- on the lines that could hold one (the same cheap prefilter the masking
  uses), detect-secrets' line plugins with the real file name (so ``.env``,
  YAML and INI get its keyword rules), plus the masking's own rules: key
  shapes, assigned and unquoted secrets, passwords in URLs, webhook paths,
  prose ("the password is ..."), and every body line of a PEM private key.

Placeholders (``changeme``, ``xxxx``, ``${VAR}``, ``<token>``, ``your-key``),
code (``os.environ.get``), paths and plain words are not collected: they
would mask ordinary text in every report.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import re
import stat
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from fluxdrive.core import masking as m
from fluxdrive.core.walk import walk

MAX_FILE_BYTES = 1_000_000
MAX_FILES = 20_000
MAX_TOTAL_BYTES = 100_000_000
# fluxdrive's own output trees: already masked, and a previous run's text is not the project's secrets
SKIPPED_PATHS = ("docs/research/flux-drive", "docs/research/flux-research")

_PLACEHOLDER = re.compile(
    r"(?i)^(?:\$\{?\w+\}?|<[^>]*>|\{\{.*\}\}|%\(?\w+\)?s?|\*+|x+|\.+|-+|_+|0+)$"
    r"|changeme|change_me|change-me|placeholder|example|your[_-]|dummy|redacted|replace[_-]?me|todo|fixme|sample"
)
# A path: a file name with an extension, a relative path, or an absolute one whose first part is a
# lowercase directory name (/etc, /srv/app). Not any value that starts with "/": base64 secrets do,
# one in 64 of them (an AWS secret access key "/JeP...+52B6..." went unmasked).
_PATH_LIKE = re.compile(r"^[\w.-]+(?:/[\w.-]+)*\.[A-Za-z]{1,5}$|^(?:\./|\.\./|~/)|^/[a-z0-9_.-]*(?:/|$)")
Detector = Callable[[list[tuple[int, str]], str], set[str]]

# Lines that could hold a value: a secret-ish name, a key prefix, credentials in a URL, a webhook, a key block.
_CANDIDATE = re.compile(
    r"(?i:pass|pwd|secret|token|api.?key|_key\b|auth|cred|private|hooks\.slack|webhook)"
    r"|://[^/\s@]*:[^/\s@]+@|AKIA|ASIA|gh[pousr]_|github_pat_|glpat-|sk_live|rk_live|sk-|xox[abpr]-|eyJ|AIza|MII"
)
# Words and versions detect-secrets' keyword rule picks up that would mask ordinary text everywhere.
_WORDS = re.compile(
    r"^[\^=~<>!]*\d+(?:\.\d+)+\w*$|^[\d_.,:]+$|==|[\s,:]$|\s"
    r"|^[\w.+-]+@[\w-]+\.[\w.-]+$"  # an e-mail address (an author, a contact) is not a secret
)
# Letters that read as a name: snake, kebab or upper case (AWS_SECRET_ACCESS_KEY, hard-coded) or
# camel case whose humps are short syllables (getUserName, AWSSecretKey). Not a random mixed-case
# run (VeYdIyfHTosIpOcDyBxFMG): a password drawn from [A-Za-z0-9] is all letters one time in
# fifty at 22 characters, and such a password went unmasked when any run of letters was a word.
_ONE_CASE = re.compile(r"^(?:[a-z]+|[A-Z]+|[A-Z][a-z]+)(?:[_-](?:[a-z]+|[A-Z]+|[A-Z][a-z]+))*$")
_CAMEL = re.compile(r"^[a-z]*(?:[A-Z]{2,}(?=[A-Z][a-z]))?(?:[A-Z][a-z]{2,}(?:[A-Z]{2,}(?=[A-Z][a-z]|$))?)*[A-Z]{0,3}$")
_HUMP = re.compile(r"[a-z]+")
_VOWEL = re.compile(r"[aeiouy]")
_PEM_BODY = re.compile(r"^[A-Za-z0-9+/=]{16,}$")
_WEBHOOK_TOKEN = re.compile(r"[A-Za-z0-9_-]{8,}")


def collect(root: Path, *, extra_texts: Iterable[str] = ()) -> frozenset[str]:
    """Every secret value in the regular files under ``root`` (and in ``extra_texts``, e.g. a stdin diff).

    Bounded (:data:`MAX_FILES` files, :data:`MAX_TOTAL_BYTES` read, in name
    order, so the same tree always gives the same set): a review of a home
    directory must not read all of it first.
    """
    texts: list[tuple[str, str]] = []
    budget = MAX_TOTAL_BYTES
    for path, name in itertools.islice(_files(Path(root)), MAX_FILES):
        text = _read(path)
        budget -= len(text)
        if budget < 0:
            break
        if text:
            texts.append((name, text))
    texts += [(f"input-{number}.txt", text) for number, text in enumerate(extra_texts) if text]
    with _detector() as detect:
        found = [values_in(text, name, detect) for name, text in texts]
    return frozenset().union(*found)


def values_in(text: str, name: str = "text", detect: Detector | None = None) -> set[str]:
    """The secret values in one file's ``text`` (``name`` picks detect-secrets' file-type rules)."""
    found: set[str] = set()
    key_lines: set[str] = set()  # base64, not words: a line may start with "/" and still be the key
    if "PRIVATE KEY" in text:
        for block in m._PRIVATE_KEY.finditer(text):
            key_lines |= {line.strip() for line in block.group(0).splitlines() if _PEM_BODY.match(line.strip())}
    lines = [(n, line) for n, line in enumerate(text.splitlines(), start=1) if _CANDIDATE.search(line)]
    for _number, line in lines:
        found |= _by_rules(line)
    if detect is not None and lines:
        found |= detect(lines, name)
    return {value.strip() for value in found if _worth_masking(value)} | key_lines


def _by_rules(line: str) -> set[str]:
    """The masking's own rules, run to extract instead of replace."""
    found = {match.group(0) for match in m._CREDENTIAL_SHAPES.finditer(line)}
    found |= {match.group(3) for match in m._ASSIGNED_SECRET.finditer(line)}
    found |= {match.group(2) for match in m._UNQUOTED_SECRET.finditer(line) if not m._CODE_LIKE.search(match.group(2))}
    for rule in (m._INLINE_SECRET, m._PROSE_SECRET):
        for match in rule.finditer(line):
            value = match.group(2).rstrip(".")
            if not m._CODE_LIKE.search(value) and m._SECRET_LOOKING.search(value):
                found.add(value)
    found |= {match.group(2) for match in m._URL_PASSWORD.finditer(line)}
    for match in m._WEBHOOK.finditer(line):
        found.add(match.group(2))
        found |= set(_WEBHOOK_TOKEN.findall(match.group(2))[-1:])  # the last segment is the token itself
    return found


@contextlib.contextmanager
def _detector() -> Iterator[Detector | None]:
    """detect-secrets' line plugins, set up once for a whole collection (None when it is not installed).

    Entropy and public-IP plugins are left out, as in the masking: hashes and
    addresses are not secrets. Its settings are module globals, so the
    collection holds the lock the static analyzer shares.
    """
    try:
        from detect_secrets.core.scan import _process_line_based_plugins
        from detect_secrets.settings import default_settings, get_settings
    except ImportError:
        yield None
        return

    def detect(lines: list[tuple[int, str]], name: str) -> set[str]:
        try:
            found = (getattr(s, "secret_value", None) for s in _process_line_based_plugins(lines, name))
            return {value for value in found if isinstance(value, str)}
        except Exception:  # a plugin failing on odd input leaves the rules' values in place
            return set()

    with m.DETECT_SECRETS_LOCK, default_settings():
        settings = get_settings()
        for plugin in m._SKIPPED_PLUGINS:
            settings.disable_plugins(plugin)
        yield detect


def _worth_masking(value: str) -> bool:
    """A value to mask everywhere: long enough, secret-looking, not a placeholder, code, path or word."""
    value = value.strip()
    if len(value) < m.MIN_KNOWN or value == m.MASK or m.MASK in value:
        return False
    if _PLACEHOLDER.search(value) or _PATH_LIKE.search(value) or m._CODE_LIKE.search(value):
        return False
    if len(set(value)) < 4 or _WORDS.search(value) or _reads_as_name(value):  # aaaaaa, ^9.0.2, hard-coded
        return False
    return bool(m._SECRET_LOOKING.search(value))


def _reads_as_name(value: str) -> bool:
    """Letters only, in a shape people name things with (one in a thousand random 22-letter runs)."""
    if _ONE_CASE.match(value):
        return True
    if not _CAMEL.match(value) or sum(c.isupper() for c in value) > len(value) / 3 + 1:
        return False
    return all(_VOWEL.search(hump) for hump in _HUMP.findall(value))


def _files(root: Path) -> Iterator[tuple[Path, str]]:
    """Files under ``root`` (never through a symlink), with their path relative to it.

    The one walk and skip policy (:mod:`fluxdrive.core.walk`), but ignored
    files included: a ``.env`` is ignored precisely because it holds secrets.
    """
    for name in walk(root, gitignore=False, prune=SKIPPED_PATHS):
        yield root / name, name


def _read(path: Path) -> str:
    """A small regular file's text ("" for anything else: a link, a FIFO, a device, binary, too large)."""
    try:
        info = os.lstat(path)
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_FILE_BYTES:
            return ""
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0))
        with os.fdopen(descriptor, "rb") as handle:
            data = handle.read(MAX_FILE_BYTES + 1)
    except OSError:
        return ""
    if b"\0" in data[:8192]:
        return ""
    return data.decode("utf-8", errors="replace")
