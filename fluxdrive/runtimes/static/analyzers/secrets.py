"""detect-secrets: hard-coded credentials, reported by location and type only.

Only lines that could hold a credential (a keyword, a long quoted token, a
known key prefix) are handed to detect-secrets' file-aware line scanner, which
keeps the scan fast on large trees. A keyword, entropy or basic-auth guess
inside a Python docstring or comment is documentation (P2); a key in a
provider's own format is P0 wherever it is. Every value found is registered with the
analysis's :class:`~fluxdrive.runtimes.static.hits.SecretMask`, so no output
ever shows it.
"""

from __future__ import annotations

import ast
import re
import time
from pathlib import PurePosixPath
from typing import Any

from fluxdrive.core.masking import DETECT_SECRETS_LOCK
from fluxdrive.runtimes.static.analyzers.base import Analyzer, AnalyzerContext, AnalyzerOutput, hit_at
from fluxdrive.runtimes.static.hits import Claim, Hit
from fluxdrive.runtimes.static.placement import below, place_of
from fluxdrive.runtimes.static.source import Source

CANDIDATE = re.compile(
    r"(?i:pass|pwd|secret|token|api.?key|auth|cred|private|BEGIN)"
    r"|[\"'][A-Za-z0-9+/=_\-.]{20,}[\"']|AKIA|gh[pousr]_|sk_live|xox[abpr]-|eyJ|AIza"
    r"|://[^/\s:@]+:[^/\s@]+@"  # credentials in a URL (detect-secrets' basic-auth detector)
)
SKIP_NAMES = {
    "package-lock.json",
    "yarn.lock",
    "pnpm-lock.yaml",
    "poetry.lock",
    "go.sum",
    "Cargo.lock",
    "uv.lock",
}
SKIP_SUFFIXES = {".lock", ".svg", ".min.js", ".map"}
ENTROPY_TYPES = {"Base64 High Entropy String", "Hex High Entropy String"}
# Detectors that guess from a keyword or from randomness, not from a provider's key format.
HEURISTIC_TYPES = {*ENTROPY_TYPES, "Secret Keyword", "Basic Auth Credentials"}
TEST_HINTS = ("test", "spec", "fixture", "example", "sample", "mock")
SECRET_WORDS = re.compile(r"(?i)pass|pwd|secret|token|api.?key|private|credential|auth")
# Characters in order (an alphabet for hashids or base62, a keyboard row): chosen to be seen, not secret.
RUNS = ("abcdef", "ghijkl", "mnopqr", "uvwxyz", "ABCDEF", "GHIJKL", "UVWXYZ", "012345", "456789", "qwerty")
# Values people write where a password goes in examples, CI service containers and local defaults.
PLACEHOLDER = re.compile(r"^(?:[A-Z]+_?)+$|^(.)\1+$|^x+$|^\*+$|^<[^>]*>$|^\$\{?\w+\}?$|^\{\{.*\}\}$")
PLACEHOLDER_WORDS = re.compile(
    r"password|passwd|secret|changeme|change_me|postgres|mysql|admin|root|test|example|sample|dummy|demo|"
    r"default|foo|bar|baz|fake|mock|placeholder|your|mine|token|guest|letmein|qwerty|pass|user|local|dev",
    re.IGNORECASE,
)

# detect-secrets keeps its settings in module globals: one scan at a time.
_SCAN_LOCK = DETECT_SECRETS_LOCK


def _skipped(path: str) -> bool:
    name = PurePosixPath(path).name
    return name in SKIP_NAMES or any(name.endswith(s) for s in SKIP_SUFFIXES)


def _scan(source: Source, process: Any) -> list[Any]:
    lines = [(n, text) for n, text in enumerate(source.text.splitlines(), start=1) if CANDIDATE.search(text)]
    return list(process(lines, source.name)) if lines else []


def _best_per_line(found: list[Any]) -> dict[int, list[Any]]:
    by_line: dict[int, list[Any]] = {}
    for secret in found:
        by_line.setdefault(int(secret.line_number), []).append(secret)
    return by_line


def _prose_lines(context: AnalyzerContext, source: Source) -> set[int]:
    """Lines of a Python file that are documentation: docstrings (any bare string statement) and comments."""
    lines = {n for n, text in enumerate(source.text.splitlines(), start=1) if text.lstrip().startswith("#")}
    tree = context.python_tree(source) if source.language == "python" else None
    if tree is None:
        return lines
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        for statement in body if isinstance(body, list) else ():
            value = statement.value if isinstance(statement, ast.Expr) else None
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                lines.update(range(statement.lineno, (statement.end_lineno or statement.lineno) + 1))
    return lines


def _hit(source: Source, line: int, secrets: list[Any], lines: list[str], in_prose: bool, reviewed: str) -> Hit:
    specific = [s for s in secrets if s.type not in ENTROPY_TYPES] or secrets
    kind = sorted({str(s.type) for s in specific})[0]
    local = below(source.path, reviewed)
    in_test = any(hint in local.lower() for hint in TEST_HINTS) or place_of(local) != "code"
    # A docstring's `https://user:pass@host` or `{'password': 'bar'}` is an example; a key with
    # a provider's own format (AKIA..., ghp_..., a PEM block) is real wherever it is pasted.
    # A guessed value that is words ("base64 encoded random bytes", "your key here") is a placeholder in prose,
    # not a credential: credentials have no spaces.
    guessed = all(str(s.type) in HEURISTIC_TYPES for s in secrets)
    values = [str(getattr(s, "secret_value", "") or "").strip() for s in secrets]
    placeholder = guessed and all(_placeholder(value) for value in values)
    # A hex or base64 run with no word saying it is a key is as often a checksum, a commit, an ETag or a UUID.
    unnamed = all(str(s.type) in ENTROPY_TYPES for s in secrets) and not SECRET_WORDS.search(lines[line - 1])
    example = (in_prose and guessed) or placeholder or unnamed
    example_where = (
        " (in a docstring or comment)"
        if in_prose
        else " (a placeholder value)"
        if placeholder
        else " (a random-looking value no name calls a secret)"
    )
    where = " (test/example file)" if in_test else example_where if example else ""
    return hit_at(
        source,
        line,
        lines,
        rule=f"detect-secrets:{kind.lower().replace(' ', '-')}",
        claim=Claim("secrets", "secrets"),
        severity="P2" if in_test or example else "P0",
        title=f"Hard-coded {kind} in {source.path}{where}",
        why=(
            "A credential committed to the repository is readable by everyone with access to it, "
            "forever (history keeps it), and cannot be rotated without a code change."
        ),
        fix="Remove it, rotate the credential, and load it from the environment or a secrets manager.",
        category="hardcoded-secret",
    )


def _placeholder(value: str) -> bool:
    """A value made of words, one repeated character, an alphabet or a template variable: not a credential."""
    if " " in value or PLACEHOLDER.match(value) or any(run in value for run in RUNS):
        return True
    # a lowercase word with a placeholder in it (mypassword, postgres, test123); not correcthorsebattery
    return bool(re.fullmatch(r"[a-z_-]+\d{0,4}", value)) and bool(PLACEHOLDER_WORDS.search(value))


def run(context: AnalyzerContext) -> AnalyzerOutput:
    """Scan every text source; register each secret value with the mask."""
    started = time.monotonic()
    try:
        from detect_secrets.core.scan import _process_line_based_plugins
        from detect_secrets.settings import default_settings
    except ImportError:
        return AnalyzerOutput("secrets", error="detect-secrets is not installed (pip install detect-secrets)")
    hits: list[Hit] = []
    notes: list[str] = []
    with _SCAN_LOCK, default_settings():
        for source in context.sources:
            # A document is scanned whole (credentials get pasted into plans), so
            # its code blocks are not scanned a second time.
            if source.block_of is not None or _skipped(source.path):
                continue
            try:
                found = _scan(source, _process_line_based_plugins)
            except Exception as exc:  # a plugin failing on odd input must not stop the scan
                notes.append(f"detect-secrets skipped {source.name}: {type(exc).__name__}")
                continue
            lines = source.text.splitlines()
            prose = _prose_lines(context, source) if found else set()
            for line, secrets in sorted(_best_per_line(found).items()):
                path, reported, _also = source.location(line)
                for secret in secrets:
                    context.mask.add(path, reported, getattr(secret, "secret_value", None))
                hits.append(_hit(source, line, secrets, lines, line in prose, context.loaded.reviewed))
    return AnalyzerOutput("secrets", tuple(hits), tuple(notes), time.monotonic() - started)


ANALYZER = Analyzer("secrets", run, per_file=True)
