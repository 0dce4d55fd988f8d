"""``decisions.jsonl``: every decision a run took, with the inputs it took it from.

Why: a verdict is only as good as the choices before it - which agents were
picked and staged, which Stage 2 candidates dropout removed, what the
expansion recommended and what was chosen. The run directory held the
results of those choices (triage.json, run.json) but not their reasons in
one place, so a surprising run could not be explained, nor replayed against
a changed formula. Each line is one decision::

    {"seq": 3, "kind": "dropout", "decision": {...}, "inputs": {...}}

``seq`` orders them; there is no clock in a line, so the same inputs give the
same file, byte for byte (the protocol's deterministic core). A line is
appended with one ``write`` to a file opened for appending: a reader never
sees half a line, and what was decided before a crash stays on the record.
"""

from __future__ import annotations

import dataclasses
import json
import os
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

FILE_NAME = "decisions.jsonl"
KINDS = (
    "triage",
    "staging",
    "dropout",
    "expansion",
    "choice",
    "model-floor",
    "validation",
    "reaction-gate",
    "reaction-budget",
    "evidence",
    "cost-estimate",
    "cost-ceiling",
)


class DecisionLog:
    """Appends decisions to ``OUTPUT_DIR/decisions.jsonl`` (the run's locked directory)."""

    def __init__(self, output_dir: Path) -> None:
        self.path = Path(output_dir) / FILE_NAME
        self._seq = 0
        self._lock = threading.Lock()

    def record(self, kind: str, decision: Mapping[str, Any], inputs: Mapping[str, Any]) -> None:
        """One decision of ``kind`` (one of :data:`KINDS`), what was decided and from what."""
        if kind not in KINDS:
            raise ValueError(f"unknown decision kind {kind!r}")
        with self._lock:
            self._seq += 1
            line = json.dumps(
                {"seq": self._seq, "kind": kind, "decision": plain(decision), "inputs": plain(inputs)},
                ensure_ascii=False,
                sort_keys=True,
            )
            descriptor = os.open(
                self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o644
            )
            try:
                os.write(descriptor, (line + "\n").encode("utf-8"))
            finally:
                os.close(descriptor)


def read(output_dir: Path) -> list[dict[str, Any]]:
    """The decisions of a run, in order ([] when it recorded none)."""
    path = Path(output_dir) / FILE_NAME
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def plain(value: Any) -> Any:
    """``value`` as JSON data: dataclasses and config models as dicts, tuples and sets as (sorted) lists."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, set | frozenset):
        return sorted(plain(v) for v in value)
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    if isinstance(value, str | int | float | bool) or value is None:
        return value
    dump = getattr(value, "model_dump", None)  # a pydantic model (a config section)
    if callable(dump):
        return plain(dump(mode="json"))
    return str(value)
