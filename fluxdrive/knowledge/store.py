"""The project's knowledge store: entry files under ``PROJECT_ROOT/.fluxdrive/knowledge/``, archive beside them.

Plain files so that people can read, edit and commit them, and so that a
review never depends on a database: an absent store means a review runs
without knowledge. Every write is atomic; archiving moves a file into
``archive/`` (never deletes it) and restoring moves it back. Only ``retract``
deletes, and only when a person asks. A file that does not parse is reported
as a problem and left alone - one bad entry never stops a review.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

from fluxdrive.core.atomic import atomic_write_text
from fluxdrive.core.paths import read_regular
from fluxdrive.errors import InputError, UsageError
from fluxdrive.knowledge.entries import ID_PATTERN, Entry, parse_entry, render_entry

ARCHIVE = "archive"
MAX_ENTRY_BYTES = 4 * 1024 * 1024  # a note, not a disk image: a FIFO or device here is a problem, not a wait


@dataclass
class Store:
    """The entries of one project (active and archived), loaded from ``directory``."""

    directory: Path
    active: dict[str, Entry] = field(default_factory=dict)
    archived: dict[str, Entry] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)

    @classmethod
    def load(cls, directory: Path) -> Store:
        """Read every entry; unreadable ones become ``problems``."""
        store = cls(Path(directory))
        for target, folder in ((store.active, store.directory), (store.archived, store.directory / ARCHIVE)):
            if not folder.is_dir():
                continue
            for path in sorted(folder.glob("*.md")):
                try:
                    text = read_regular(path, "knowledge entry", limit=MAX_ENTRY_BYTES).decode("utf-8")
                    target[path.stem] = parse_entry(path.stem, text, str(path))
                except (InputError, OSError, UnicodeDecodeError) as exc:
                    message = exc.one_line() if isinstance(exc, InputError) else f"{path}: {exc}"
                    store.problems.append(message)
        return store

    def path(self, entry_id: str, *, archived: bool = False) -> Path:
        """Where entry ``entry_id`` lives."""
        if not ID_PATTERN.match(entry_id):
            raise UsageError(f"{entry_id!r} is not an entry id", hint="see: fluxdrive knowledge list")
        return (self.directory / ARCHIVE if archived else self.directory) / f"{entry_id}.md"

    def get(self, entry_id: str) -> Entry:
        """An active entry, or a UsageError saying where it is instead."""
        if entry_id in self.active:
            return self.active[entry_id]
        where = " (it is archived: fluxdrive knowledge restore)" if entry_id in self.archived else ""
        raise UsageError(f"no active knowledge entry {entry_id!r}{where}", hint="fluxdrive knowledge list")

    def save(self, entry: Entry) -> None:
        """Write an active entry atomically."""
        atomic_write_text(self.path(entry.id), render_entry(entry))
        self.active[entry.id] = entry

    def archive(self, entry_id: str) -> None:
        """Move an active entry to ``archive/`` (never delete)."""
        entry = self.get(entry_id)
        target = self.path(entry_id, archived=True)
        target.parent.mkdir(parents=True, exist_ok=True)
        os.replace(self.path(entry_id), target)
        del self.active[entry_id]
        self.archived[entry_id] = entry

    def restore(self, entry_id: str, today: date) -> Entry:
        """Bring an archived entry back, counted as confirmed today by the person restoring it."""
        if entry_id not in self.archived:
            raise UsageError(f"no archived knowledge entry {entry_id!r}", hint="fluxdrive knowledge list --archived")
        entry = self.archived.pop(entry_id).confirmed(today)
        self.save(entry)
        self.path(entry_id, archived=True).unlink(missing_ok=True)
        return entry

    def confirm(self, entry_id: str, today: date) -> Entry:
        """A person confirms the entry: lastConfirmed today, provenance independent."""
        entry = self.get(entry_id).confirmed(today)
        self.save(entry)
        return entry

    def retract(self, entry_id: str) -> None:
        """Delete an entry (active or archived) because a person says it is wrong."""
        for archived in (False, True):
            path = self.path(entry_id, archived=archived)
            if path.exists():
                path.unlink()
                (self.archived if archived else self.active).pop(entry_id, None)
                return
        raise UsageError(f"no knowledge entry {entry_id!r}", hint="fluxdrive knowledge list --archived")
