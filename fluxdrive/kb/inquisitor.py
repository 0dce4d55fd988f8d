"""Investigating one knowledge item against the code as it is now (stage 2's worker).

The offline inquisitor checks what an item points at - its ``refs``: a path,
``path:symbol`` or ``path:line`` - and decides:

- **valid**: every reference still resolves;
- **outdated**, fixed automatically: a file moved (git saw the rename since
  the last analysis, or exactly one file of that name exists elsewhere) or a
  line number runs past the end of its file;
- **stale**, for a person: a referenced file is gone and nothing replaces it;
- **conflicting**, for a person: the file is there but the symbol the item
  names is not - the knowledge and the code disagree.

Inquisitors are plain functions ``(item, root) -> Investigation``, so a
model-backed one can replace this without the orchestrator noticing.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from fluxdrive.core.walk import walk
from fluxdrive.kb.model import Action, Item

Outcome = Literal["valid", "stale", "conflicting", "outdated"]
_SYMBOL = re.compile(r"^[A-Za-z_][A-Za-z0-9_.]*(\(\))?$")
MAX_FILES = 50_000


@dataclass(frozen=True, slots=True)
class Investigation:
    """What an inquisitor found about one item."""

    item_id: str
    outcome: Outcome
    detail: str
    fix: Action | None = None  # a mechanical fix: applied without asking
    suggestion: Action | None = None  # a proposed change a person must accept
    moves: tuple[tuple[str, Action], ...] = ()  # a file that may have moved to one of several places: which?
    tokens: int = 0  # what a model-backed inquisitor spent

    @property
    def severity(self) -> Literal["none", "auto_fix", "needs_review"]:
        """valid -> none; outdated with a fix -> auto_fix; anything else -> needs_review."""
        if self.outcome == "valid":
            return "none"
        return "auto_fix" if self.fix is not None else "needs_review"


# (item, project root, files git saw renamed since the last analysis: old -> new)
Inquisitor = Callable[[Item, Path, Mapping[str, str]], Investigation]


def _split(ref: str) -> tuple[str, str | None]:
    path, sep, rest = ref.partition(":")
    return path.strip(), rest.strip() if sep and rest.strip() else None


def _by_name(root: Path, name: str) -> list[str]:
    """The files called ``name`` among the first :data:`MAX_FILES` under ``root`` (the one walk's skip policy;
    ignored files included, dot-directories not)."""
    files = itertools.islice(walk(root, gitignore=False, hidden_dirs=False), MAX_FILES)
    return sorted(path for path in files if path.rpartition("/")[2] == name)


MAX_MOVES = 4  # candidate new places offered to the person for a file that moved


def _replaced(refs: list[str], old: str, path: str, detail: str | None) -> list[str]:
    """``refs`` with ``old`` pointing at ``path`` instead (its symbol or line kept)."""
    new = path + (f":{detail}" if detail else "")
    return [new if r == old else r for r in refs]


def static_inquisitor(item: Item, root: Path, renamed: Mapping[str, str] | None = None) -> Investigation:
    """Check every reference of ``item`` under ``root`` (``renamed``: what git saw move since the last run)."""
    renamed = renamed or {}
    root = Path(root)
    refs: list[str] = []
    moved: list[str] = []
    for ref in item.refs:
        path, detail = _split(ref)
        target = (root / path).resolve()
        if not target.is_relative_to(root.resolve()):
            return Investigation(item.id, "stale", f"{ref} points outside the project")
        if not target.is_file():
            candidates = [renamed[path]] if path in renamed else _by_name(root, Path(path).name)
            if len(candidates) != 1:
                where = f"{len(candidates)} files of that name" if candidates else "no file of that name"
                moves = tuple(
                    (f"update the reference to {c}", Action(kind="update", refs=_replaced(item.refs, ref, c, detail)))
                    for c in sorted(candidates)[:MAX_MOVES]
                )
                return Investigation(item.id, "stale", f"{path} no longer exists ({where} elsewhere)", moves=moves)
            new = candidates[0] + (f":{detail}" if detail else "")
            moved.append(f"{ref} -> {new}")
            refs.append(new)
            continue
        if detail is not None and detail.isdigit():
            lines = target.read_text(encoding="utf-8", errors="replace").count("\n") + 1
            if int(detail) > lines:
                moved.append(f"{ref} -> {path} (the file has {lines} lines now)")
                refs.append(path)
                continue
        elif detail is not None and _SYMBOL.match(detail):
            name = detail.removesuffix("()").rsplit(".", 1)[-1]
            text = target.read_text(encoding="utf-8", errors="replace")
            if not re.search(rf"\b{re.escape(name)}\b", text):
                return Investigation(item.id, "conflicting", f"{path} no longer mentions {name}")
        refs.append(ref)
    if moved:
        return Investigation(item.id, "outdated", "; ".join(moved), Action(kind="update", refs=refs))
    return Investigation(item.id, "valid", "every reference resolves" if item.refs else "nothing to check")
