"""A run's suggested fixes as a unified diff, and written back to the project when asked (``fluxdrive fix``).

Why it refuses rather than guesses: a fix is an edit of lines as the review read them. When those lines
changed since (their digest differs), or a file is outside the project root (symlinks resolved), or
two fixes overlap, applying anyway could corrupt the file - so the whole run is refused with one line
naming the first such place (exit 2), before anything is written. Only the files a fix changes are
written, each atomically (temp sibling, fsync, rename) and keeping its permissions. Fixes ruff marks
``safe`` are applied by default; ``unsafe`` ones (and fluxdrive's rewrites) only when asked.
"""

from __future__ import annotations

import difflib
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from fluxdrive.core.atomic import atomic_write_text
from fluxdrive.core.confine import confine
from fluxdrive.core.paths import read_regular
from fluxdrive.errors import InputError
from fluxdrive.fixes.attach import MAX_FILE, digest
from fluxdrive.reports.findings_json import SuggestionOut
from fluxdrive.runs.directory import RunDirectory


@dataclass
class FixPlan:
    """What ``fluxdrive fix`` would do: new text per file (old, new), the fixes used and those left aside."""

    files: dict[str, tuple[str, str]] = field(default_factory=dict)
    applied: list[SuggestionOut] = field(default_factory=list)
    left: list[tuple[SuggestionOut, str]] = field(default_factory=list)  # (fix, why it is not applied)

    def diff(self) -> str:
        """The unified diff of every change (``a/path`` -> ``b/path``), files in order."""
        out: list[str] = []
        for path, (old, new) in sorted(self.files.items()):
            out += difflib.unified_diff(
                old.splitlines(keepends=True), new.splitlines(keepends=True), f"a/{path}", f"b/{path}"
            )
        return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in out)


def _file(root: Path, path: str) -> tuple[Path, str]:
    """The real path of the project file ``path`` and its text; one line (exit 2) for anything else."""
    if Path(path).is_absolute():
        raise InputError(f"fix for {path}: not a path inside the project", hint="review the project again")
    real = confine(root / path, root, "file to fix")
    try:
        return real, read_regular(real, "file to fix", limit=MAX_FILE).decode("utf-8")
    except UnicodeDecodeError:
        raise InputError(f"{path} is not UTF-8 text; its fixes are not applied") from None


def _ending(lines: list[str], index: int) -> str:
    line = lines[index] if 0 <= index < len(lines) else "\n"
    return "\r\n" if line.endswith("\r\n") else "\n" if line.endswith("\n") else ""


def plan_fixes(run_dir: Path, root: Path, *, unsafe: bool = False) -> FixPlan:
    """The fixes of the run in ``run_dir`` against the files under ``root`` (see the module docstring)."""
    document = RunDirectory(Path(run_dir)).findings()
    by_file: dict[str, list[SuggestionOut]] = {}
    plan = FixPlan()
    for finding in document.findings:
        for suggestion in finding.suggestions:
            if suggestion.applicability != "safe" and not unsafe:
                plan.left.append((suggestion, f"{suggestion.applicability} (--unsafe applies it)"))
                continue
            by_file.setdefault(suggestion.path, []).append(suggestion)
    for path, suggestions in sorted(by_file.items()):
        _real, text = _file(Path(root), path)
        lines = text.splitlines(keepends=True)
        taken: list[SuggestionOut] = []
        for suggestion in sorted(suggestions, key=lambda s: (s.start, s.end, s.source)):
            where = f"{path}:{suggestion.start}" + (f"-{suggestion.end}" if suggestion.end != suggestion.start else "")
            if suggestion.end > len(lines) or digest(lines[suggestion.start - 1 : suggestion.end]) != suggestion.digest:
                raise InputError(
                    f"{where} changed since the review; no fix was applied",
                    hint="review again, then run fluxdrive fix on the new run",
                )
            if taken and suggestion.start <= taken[-1].end:
                plan.left.append((suggestion, f"overlaps the fix of {path}:{taken[-1].start}"))
                continue
            taken.append(suggestion)
        for suggestion in reversed(taken):
            end = _ending(lines, suggestion.end - 1)
            lines[suggestion.start - 1 : suggestion.end] = [line + end for line in suggestion.lines]
        new = "".join(lines)
        if new != text:
            plan.files[path] = (text, new)
        plan.applied += taken
    return plan


def write_fixes(plan: FixPlan, root: Path) -> list[str]:
    """Write every changed file of ``plan`` atomically (confined again just before); the paths written."""
    written = []
    for path, (old, new) in sorted(plan.files.items()):
        real, now = _file(Path(root), path)
        if now != old:
            raise InputError(f"{path} changed while the fixes were prepared; nothing more was written")
        atomic_write_text(real, new, mode=stat.S_IMODE(os.stat(real).st_mode))
        written.append(path)
    return written
