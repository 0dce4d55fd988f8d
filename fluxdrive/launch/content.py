"""What each agent's runtime receives: the files, the diff's changed lines, and its slice.

Prompt-based runtimes read the content file (shared, or the agent's slice);
the static runtime reads the files themselves. Both must agree on what the
agent saw, so a slice becomes a ``focus`` on the shared content: the
analyzers still run once over everything, and each agent reports only what
its slice covered (synthesis counts convergence the same way, from run.json).

For a diff, the files are the changed files present in the working tree and
findings are limited to the added lines (in the new file's numbering).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from fluxdrive.core.confine import why_unreadable
from fluxdrive.launch.slicing import ContentPlan
from fluxdrive.runtimes import ReviewContent
from fluxdrive.workspace import Target, list_files


def added_lines(diff_text: str) -> dict[str, frozenset[int]]:
    """Each changed file's added line numbers (new-file numbering); deleted files are left out."""
    from unidiff.patch import PatchSet

    added: dict[str, frozenset[int]] = {}
    for patched in PatchSet(diff_text.splitlines(keepends=True)):
        if patched.is_removed_file or patched.is_binary_file:
            continue
        lines = {line.target_line_no for hunk in patched for line in hunk if line.is_added and line.target_line_no}
        added[patched.path] = frozenset(lines)
    return dict(sorted(added.items()))


def hunk_lines(diff_text: str) -> dict[str, frozenset[int]]:
    """Each changed file's hunk lines, context included (new-file numbering): ``--filter diff_context``."""
    from unidiff.patch import PatchSet

    lines: dict[str, frozenset[int]] = {}
    for patched in PatchSet(diff_text.splitlines(keepends=True)):
        if patched.is_removed_file or patched.is_binary_file:
            continue
        lines[patched.path] = frozenset(
            line.target_line_no for hunk in patched for line in hunk if not line.is_removed and line.target_line_no
        )
    return dict(sorted(lines.items()))


class ContentBuilder:
    """Builds every agent's :class:`ReviewContent` for one target (the file listing is shared)."""

    def __init__(self, target: Target, plan: ContentPlan, line_filter: str = "added") -> None:
        self.target = target
        self.plan = plan
        self.line_filter = line_filter
        self.root = Path(target.root).resolve()
        self.notes: list[str] = []
        self.skipped: list[tuple[str, str]] = []  # (file, why): left out before any agent saw it
        self._files: tuple[str, ...] | None = None
        self._changed: dict[str, frozenset[int]] | None = None

    @property
    def files(self) -> tuple[str, ...]:
        """The reviewed files, relative to the project root."""
        if self._files is None:
            if self.target.kind == "diff":
                changed = self.changed
                present = []
                for name in changed:
                    if not os.path.lexists(self.root / name):
                        continue
                    reason = why_unreadable(name, self.root)
                    if reason is None:
                        present.append(name)
                    else:
                        self.skipped.append((name, reason))
                missing = sorted(set(changed) - set(present) - {n for n, _ in self.skipped})
                if missing:
                    shown = ", ".join(missing[:5]) + (f" and {len(missing) - 5} more" if len(missing) > 5 else "")
                    self.notes.append(f"not in the working tree, so not analyzed offline: {shown}")
                self._files = tuple(present)
            elif self.target.files:  # the paths given (already listed and confined)
                self._files = self.target.files
            else:
                assert self.target.path is not None
                listed = list_files(self.target.path, self.root)
                self.skipped.extend(listed.skipped)
                self._files = listed.files
        return self._files

    @property
    def changed(self) -> dict[str, frozenset[int]]:
        """For a diff: added lines per file (empty otherwise)."""
        if self._changed is None:
            text = self.target.diff_text or ""
            self._changed = added_lines(text) if self.target.kind == "diff" else {}
        return self._changed

    def for_agent(self, agent: str) -> ReviewContent:
        """The content ``agent`` reviews."""
        piece = self.plan.slices.get(agent)
        focus: Mapping[str, frozenset[int] | None] | None = None
        content_file = self.plan.shared_path
        if piece is not None:
            content_file = piece.content_path
            if piece.mode == "sliced":
                focus = dict(piece.lines) if piece.lines is not None else dict.fromkeys(piece.files)
        input_type = "diff" if self.target.kind == "diff" else self.target.kind
        return ReviewContent(
            root=self.root,
            files=self.files,
            input_type=input_type,
            content_file=content_file,
            changed_lines={p: self.changed.get(p, frozenset()) for p in self.files}
            if self.target.kind == "diff"
            else None,
            label=self.target.label,
            focus=focus,
            settings_revision=self.target.settings_revision,
            shown_lines=self._shown() if self.target.kind == "diff" else None,
        )

    def _shown(self) -> Mapping[str, frozenset[int] | None] | None:
        """The lines a finding may be reported on under the diff's ``--filter`` (None: ``changed_lines``)."""
        if self.line_filter == "diff_context":
            hunks = hunk_lines(self.target.diff_text or "")
            return {p: hunks.get(p, frozenset()) for p in self.files}
        if self.line_filter in ("file", "nofilter"):
            return dict.fromkeys(self.files)
        return None
