"""Which finding gets which fix: ruff's own edits for ruff's findings, the known rewrites for fluxdrive's.

Why after synthesis: a finding reaches findings.json through the agents' reports (prose), so the edits
are worked out once the findings are merged, from the files as the review read them. Each place of a
finding that has a fix gets one :class:`~fluxdrive.synthesis.model.Suggestion` (a grouped finding -
three unused imports - has three), with the digest of the lines it replaces so ``fluxdrive fix``
refuses once they changed. Only regular files inside the project root are read; a file that is not
UTF-8, or too big, gets no suggestion. Deterministic: the same files give the same suggestions.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Sequence
from pathlib import Path

from fluxdrive.core.confine import read_confined, why_unreadable
from fluxdrive.errors import FluxdriveError
from fluxdrive.fixes.rewrites import rewrite
from fluxdrive.reports.diff_filter import place_of
from fluxdrive.runtimes.static.analyzers.ruff import fix_items, fix_lines
from fluxdrive.synthesis import Finding, Synthesis
from fluxdrive.synthesis.model import Suggestion

MAX_FILE = 4 * 1024 * 1024
RUFF = "ruff:"


def digest(lines: Sequence[str]) -> str:
    """sha256 of ``lines`` (line ends dropped), joined by newlines: what a suggestion replaces."""
    return hashlib.sha256("\n".join(line.rstrip("\r\n") for line in lines).encode("utf-8")).hexdigest()


def _read(root: Path, path: str, cache: dict[str, list[str] | None]) -> list[str] | None:
    """The file's lines with their ends, or None when it may not or cannot be read."""
    if path not in cache:
        lines: list[str] | None = None
        if not Path(path).is_absolute() and why_unreadable(path, root) is None:
            try:
                lines = read_confined(root / path, root, limit=MAX_FILE).decode("utf-8").splitlines(keepends=True)
            except (FluxdriveError, OSError, UnicodeDecodeError):
                lines = None
        cache[path] = lines
    return cache[path]


def _ruff_fixes(root: Path, findings: Sequence[Finding]) -> dict[tuple[str, int, str], dict[str, object]]:
    """(path, row, code) -> ruff's item with a fix, for the places of ruff's findings."""
    wanted = {
        (place_of(x)[0], rule[len(RUFF) :])
        for f in findings
        for rule in f.rules
        if rule.startswith(RUFF)
        for x in f.locations
    }
    files = sorted({p for p, _ in wanted if p.endswith(".py") and not Path(p).is_absolute()})
    files = [p for p in files if why_unreadable(p, root) is None]
    codes = sorted({c for _, c in wanted})
    found: dict[tuple[str, int, str], dict[str, object]] = {}
    base = root.resolve()
    for item in fix_items(root, files, codes):
        if not item.get("fix") or not isinstance(item.get("location"), dict):
            continue
        name = Path(str(item.get("filename") or ""))
        try:
            relative = (name if name.is_absolute() else base / name).resolve().relative_to(base).as_posix()
        except ValueError:
            continue
        found.setdefault((relative, int(item["location"]["row"]), str(item.get("code"))), item)
    return found


def _suggestions(
    finding: Finding,
    root: Path,
    ruff: dict[tuple[str, int, str], dict[str, object]],
    cache: dict[str, list[str] | None],
) -> list[Suggestion]:
    made: dict[tuple[str, int], Suggestion] = {}
    for location in finding.locations:
        path, start, _end = place_of(location)
        lines = _read(root, path, cache) if start else None
        if lines is None or start > len(lines):
            continue
        for rule in finding.rules:
            suggestion = None
            item = ruff.get((path, start, rule[len(RUFF) :])) if rule.startswith(RUFF) else None
            if item is not None:
                fixed = fix_lines(item, lines)
                if fixed is not None and fixed[3] != "display-only":  # ruff shows it, never applies it
                    first, last, replacement, applicability = fixed
                    suggestion = Suggestion(
                        path, first, last, replacement, rule, applicability, digest(lines[first - 1 : last])
                    )
            elif not rule.startswith(RUFF):
                line = lines[start - 1].rstrip("\r\n")
                found = rewrite(rule, line)
                if found is not None:
                    suggestion = Suggestion(path, start, start, (found[0],), rule, found[1], digest([line]))
            if suggestion is not None:
                made.setdefault((suggestion.path, suggestion.start), suggestion)
                break
    return [made[k] for k in sorted(made)]


def attach_suggestions(synthesis: Synthesis, root: Path) -> Synthesis:
    """A new synthesis whose findings carry their suggested fixes (see the module docstring)."""
    root = Path(root)
    if not synthesis.findings:
        return synthesis
    ruff = _ruff_fixes(root, synthesis.findings)
    cache: dict[str, list[str] | None] = {}
    findings = [dataclasses.replace(f, suggestions=_suggestions(f, root, ruff, cache)) for f in synthesis.findings]
    return dataclasses.replace(synthesis, findings=findings)
