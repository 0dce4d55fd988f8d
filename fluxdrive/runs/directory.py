"""A review's output directory, read back through one typed, confined reader.

Why one reader: findings.json, run.json, the agents' reports, the verdict
records and the peer channel are read by baselines, publishing, feedback, the
evaluation harness and the MCP server. Each used to parse them by hand, with
its own size limit, its own idea of a valid file and its own confinement (or
none). Here every read

* resolves inside ``root`` (default: the project the directory belongs to,
  found by its ``.git``): a report or findings.json linked out of it is
  refused with confine's one line, a link elsewhere inside it keeps working;
* is a regular file at most ``limit`` bytes (a FIFO never blocks a reader);
* is validated by the model that wrote it (findings.json:
  :class:`~fluxdrive.reports.findings_json.FindingsDocument`, older schemas
  upgraded by :func:`~fluxdrive.reports.findings_json.read_document`; run.json:
  :class:`~fluxdrive.contracts.run_manifest.RunManifest`);
* fails as one :class:`~fluxdrive.errors.InputError` line naming the file;
* happens once per instance: a file read twice is served from memory.

``label`` is how messages name the directory (the MCP server names it as the
assistant passed it). Nothing is read until a method asks.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from pydantic import ValidationError

from fluxdrive.contracts.run_manifest import MAX_MANIFEST_BYTES, RUN_FILE, RunManifest
from fluxdrive.core.confine import confine, read_confined
from fluxdrive.core.paths import AGENT_NAME
from fluxdrive.core.project import find_project_root
from fluxdrive.core.structured import load_json
from fluxdrive.errors import InputError, UsageError
from fluxdrive.exchange.channel import CHANNEL_FILE, ChannelRead
from fluxdrive.exchange.channel import read as read_channel
from fluxdrive.exchange.verdicts import VerdictSet, load_verdicts
from fluxdrive.reports.findings_json import FindingsDocument, read_document

FINDINGS_FILE = "findings.json"
MAX_RUN_FILE_BYTES = 256 * 1024 * 1024  # findings.json of a huge review, or an agent's report
SHAPE_HINT = "fluxdrive schema findings shows its shape; synthesize the run again to rewrite it"
RUN_HINT = "pass the output directory of a finished review (fluxdrive review ...), or synthesize it first"


def _first_error(exc: ValidationError) -> str:
    error = exc.errors()[0]
    where = ".".join(str(p) for p in error["loc"])
    return f"{where}: {error['msg']}" if where else str(error["msg"])


class RunDirectory:
    """One run's output directory (see the module docstring)."""

    def __init__(
        self,
        path: Path,
        *,
        root: Path | None = None,
        label: str | None = None,
        limit: int = MAX_RUN_FILE_BYTES,
        findings_file: str = FINDINGS_FILE,
    ) -> None:
        self.path = Path(path)
        self.label = label if label is not None else str(self.path)
        self.limit = limit
        self.findings_file = findings_file
        self._root = Path(root) if root is not None else None
        self._bytes: dict[str, bytes] = {}
        self._findings: FindingsDocument | None = None
        self._manifest: RunManifest | None = None

    @classmethod
    def open(
        cls, path: Path, *, root: Path | None = None, label: str | None = None, limit: int = MAX_RUN_FILE_BYTES
    ) -> RunDirectory:
        """The run at ``path``; one :class:`InputError` line when it is not a directory."""
        if not Path(path).is_dir():
            raise InputError(f"{path} is not a run directory (no such directory)", hint=RUN_HINT)
        return cls(path, root=root, label=label, limit=limit)

    @classmethod
    def of_findings(cls, file: Path, *, limit: int = MAX_RUN_FILE_BYTES) -> RunDirectory:
        """The run a findings file (any name: ``findings.json`` or a copy) belongs to: its directory."""
        file = Path(file)
        return cls(file.parent, label=str(file.parent), limit=limit, findings_file=file.name)

    @property
    def root(self) -> Path:
        """What every read must stay inside."""
        if self._root is None:
            self._root = find_project_root(self.path)
        return self._root

    def _read(self, name: str, what: str, limit: int | None = None) -> bytes:
        if name not in self._bytes:
            self._bytes[name] = read_confined(self.path / name, self.root, what, limit=limit or self.limit)
        return self._bytes[name]

    # --- findings.json -------------------------------------------------------------------------------------------

    def has_findings(self) -> bool:
        """True when the findings file exists (a link counts: reading it decides whether it may be followed)."""
        return os.path.lexists(self.path / self.findings_file)

    def findings(self) -> FindingsDocument:
        """findings.json, validated; a missing, unreadable, non-JSON or foreign file is one InputError line."""
        if self._findings is not None:
            return self._findings
        name = self.findings_file
        if not self.has_findings():
            raise InputError(f"no {name} in {self.label}", hint=RUN_HINT)
        data = self._read(name, f"{name} in {self.label}")
        try:
            raw = load_json(data.decode("utf-8"), name)
        except (UnicodeDecodeError, ValueError) as exc:  # not UTF-8, not JSON, nested too deep
            reason = exc.msg if isinstance(exc, json.JSONDecodeError) else str(exc)
            raise InputError(f"{name} in {self.label} is not valid JSON ({reason})", hint=SHAPE_HINT) from None
        if not isinstance(raw, dict):
            raise InputError(
                f"{name} in {self.label} is not a JSON object: it is not a fluxdrive findings.json", hint=SHAPE_HINT
            )
        try:
            self._findings = read_document(raw)
        except ValidationError as exc:
            raise InputError(
                f"{name} in {self.label} is not a fluxdrive findings.json ({_first_error(exc)})", hint=SHAPE_HINT
            ) from None
        return self._findings

    # --- run.json ------------------------------------------------------------------------------------------------

    def manifest(self) -> RunManifest:
        """run.json, validated; an empty manifest when the run has none (reports synthesized without a review)."""
        if self._manifest is not None:
            return self._manifest
        path = self.path / RUN_FILE
        if not os.path.lexists(path):
            self._manifest = RunManifest()
            return self._manifest
        data = self._read(RUN_FILE, RUN_FILE, MAX_MANIFEST_BYTES)
        fix = f"fix or remove {path}: the review writes it"
        try:
            raw = load_json(data.decode("utf-8"), RUN_FILE)
        except (UnicodeDecodeError, ValueError) as exc:
            raise InputError(f"{path} is not valid JSON: {exc}", hint=fix) from None
        try:
            self._manifest = RunManifest.model_validate(raw)
        except ValidationError as exc:
            raise InputError(f"{path}: field {_first_error(exc)}", hint=fix) from None
        return self._manifest

    # --- agents' reports, verdicts, the channel ------------------------------------------------------------------

    def report_file(self, agent: str, *, partial: bool = False) -> Path | None:
        """``<agent>.md`` (else, with ``partial``, ``<agent>.md.partial``) when it exists; the name is checked."""
        if not AGENT_NAME.match(agent):
            raise UsageError(f"not an agent name: {agent!r}", hint="agent names look like fd-safety")
        names = (f"{agent}.md", f"{agent}.md.partial") if partial else (f"{agent}.md",)
        return next((self.path / n for n in names if os.path.lexists(self.path / n)), None)

    def report(self, agent: str, *, partial: bool = False) -> str:
        """The agent's report text (undecodable bytes replaced); InputError when there is none."""
        path = self.report_file(agent, partial=partial)
        if path is None:
            raise InputError(f"no report for {agent} in {self.label}", hint="verdicts(output_dir) lists the agents")
        return self._read(path.name, "report").decode("utf-8", errors="replace")

    def verdicts(self) -> VerdictSet:
        """The write-behind verdict records (``verdicts/``); load_verdicts confines each record itself."""
        return load_verdicts(self.path)

    def peer_findings(self, severity: str = "all") -> ChannelRead:
        """The peer channel (``peer-findings.jsonl``), the file confined first; empty when there is none."""
        path = self.path / CHANNEL_FILE
        if os.path.lexists(path):
            confine(path, self.root, f"{CHANNEL_FILE} in {self.label}")
        return read_channel(path, severity=severity)
