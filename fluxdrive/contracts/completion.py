"""The completion signal: how an agent's report becomes visible, atomically.

PROTOCOL.md section 7. An agent (or the runtime on its behalf) writes
``<agent>.md.partial``, appends the sentinel ``<!-- flux-drive:complete -->``
last, fsyncs, and renames to ``<agent>.md``. The orchestrator only ever
synthesizes ``.md`` files, so a reader never sees half a report.

Nothing else in fluxdrive writes agent output: runtimes call
:func:`write_agent_output` (or stream through :class:`AgentOutputWriter`),
failures end in :func:`write_error_stub`, and after a timeout the
orchestrator calls :func:`settle` to apply the table below and guarantee
exactly one ``.md`` per launched agent.

===========================  =====================================  ==========
situation (after timeout)    action                                 state
===========================  =====================================  ==========
``.md`` with sentinel        complete                               COMPLETE
``.md`` without sentinel     accept, log a warning                  UNSIGNED
``.partial`` with sentinel   the rename failed: finish it           RENAME_PENDING
``.partial`` w/o sentinel    keep as malformed, ``partial: true``   TRUNCATED
``.partial`` empty           error stub                             EMPTY_PARTIAL
neither file                 error stub ("never started")           NEVER_STARTED
===========================  =====================================  ==========
"""

from __future__ import annotations

import contextlib
import enum
import hashlib
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

from fluxdrive.contracts.findings_index import render_error_stub
from fluxdrive.core.atomic import fsync_directory
from fluxdrive.core.masking import scrub

SENTINEL = "<!-- flux-drive:complete -->"
PARTIAL_MARKER = "<!-- flux-drive:partial -->"
PARTIAL_SUFFIX = ".md.partial"


class CompletionState(enum.Enum):
    """Where an agent's output stands, per the section 7 table."""

    COMPLETE = "complete"
    UNSIGNED = "unsigned"
    RENAME_PENDING = "rename-pending"
    TRUNCATED = "truncated"
    EMPTY_PARTIAL = "empty-partial"
    NEVER_STARTED = "never-started"

    @property
    def finished(self) -> bool:
        """True when the agent's ``.md`` exists and may be synthesized."""
        return self in (CompletionState.COMPLETE, CompletionState.UNSIGNED)


@dataclass(frozen=True, slots=True)
class Completion:
    """The observed state of one agent's output files."""

    agent: str
    state: CompletionState
    path: Path
    partial: bool = False
    warning: str | None = None


def output_path(output_dir: Path, agent: str) -> Path:
    """``OUTPUT_DIR/<agent>.md``."""
    return Path(output_dir) / f"{agent}.md"


def partial_path(output_dir: Path, agent: str) -> Path:
    """``OUTPUT_DIR/<agent>.md.partial``."""
    return Path(output_dir) / f"{agent}{PARTIAL_SUFFIX}"


def has_sentinel(text: str) -> bool:
    """True when the sentinel appears on a line of its own."""
    return any(line.strip() == SENTINEL for line in text.splitlines())


def is_partial_recovery(text: str) -> bool:
    """True for an ``.md`` that :func:`settle` built from a truncated partial."""
    return any(line.strip() == PARTIAL_MARKER for line in text.splitlines())


class AgentOutputWriter:
    """Stream an agent report into ``<agent>.md.partial``; finish atomically.

    ``complete()`` appends the sentinel, fsyncs and renames to ``<agent>.md``.
    Leaving the ``with`` block without completing leaves the ``.partial``
    behind, exactly as a crashed agent would, so the orchestrator's timeout
    handling sees the truth.
    """

    def __init__(self, output_dir: Path, agent: str) -> None:
        self.output_dir = Path(output_dir)
        self.agent = agent
        self.partial = partial_path(self.output_dir, agent)
        self.final = output_path(self.output_dir, agent)
        self._handle: int | None = None
        self._last = b""

    def __enter__(self) -> AgentOutputWriter:
        self.output_dir.mkdir(parents=True, exist_ok=True)
        self._handle = os.open(self.partial, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
        return self

    def write(self, text: str) -> None:
        """Append ``text`` to the partial file."""
        if self._handle is None:
            raise RuntimeError("writer is not open")
        data = text.encode("utf-8")
        view = memoryview(data)
        while view:
            written = os.write(self._handle, view)
            view = view[written:]
        if data:
            self._last = data[-1:]

    def complete(self) -> Path:
        """Scrub the report, append the sentinel, fsync, and rename the partial into place.

        The scrub happens here because every report passes here - a model's,
        a CLI's, a static agent's, an error stub: credentials it quotes and
        terminal escapes it holds never reach ``<agent>.md``.
        """
        if self._handle is None:
            raise RuntimeError("writer is not open")
        self._scrub()
        if self._last not in (b"", b"\n"):
            self.write("\n")
        self.write(SENTINEL + "\n")
        os.fsync(self._handle)
        os.close(self._handle)
        self._handle = None
        os.replace(self.partial, self.final)
        fsync_directory(self.output_dir)
        return self.final

    def _scrub(self) -> None:
        assert self._handle is not None
        size = os.fstat(self._handle).st_size
        raw = os.pread(self._handle, size, 0)
        text = raw.decode("utf-8", errors="replace")
        clean = scrub(text, detect=True)
        if clean != text or raw.decode("utf-8", errors="ignore") != text:
            data = clean.encode("utf-8")
            os.ftruncate(self._handle, 0)
            os.pwrite(self._handle, data, 0)
            os.lseek(self._handle, len(data), os.SEEK_SET)
            self._last = data[-1:]

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._handle is not None:
            with contextlib.suppress(OSError):
                os.close(self._handle)
            self._handle = None


def write_agent_output(output_dir: Path, agent: str, text: str) -> Path:
    """Write a whole report through the partial -> sentinel -> rename path."""
    with AgentOutputWriter(output_dir, agent) as writer:
        writer.write(text)
        return writer.complete()


FROZEN_DIR = ".reports"


def frozen_path(output_dir: Path, agent: str) -> Path:
    """``OUTPUT_DIR/.reports/<agent>.md``: the report as it was when the agent's run ended."""
    return Path(output_dir) / FROZEN_DIR / f"{agent}.md"


def freeze_report(output_dir: Path, agent: str) -> str | None:
    """Keep a private copy of the agent's finished report; return its sha256 (None without a report).

    Why: a tool's grandchild that escaped its process group could still
    rewrite ``<agent>.md`` after the agent was done - even after the verdict
    was printed. Synthesis reads the copy made here (when run.json's
    ``report_sha256`` matches it), so a late writer cannot change a
    finished verdict; it can only earn a note.
    """
    final = output_path(output_dir, agent)
    try:
        data = final.read_bytes()
    except OSError:
        return None
    copy = frozen_path(output_dir, agent)
    copy.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{copy.name}.", suffix=".tmp", dir=copy.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, copy)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    return hashlib.sha256(data).hexdigest()


def write_error_stub(output_dir: Path, agent: str, message: str) -> Path:
    """Write the section 6 error stub as the agent's completed output."""
    return write_agent_output(output_dir, agent, render_error_stub(message))


def _read(path: Path) -> str:
    return path.read_bytes().decode("utf-8", errors="replace")


def inspect(output_dir: Path, agent: str) -> Completion:
    """Classify the agent's files without changing anything."""
    final = output_path(output_dir, agent)
    partial = partial_path(output_dir, agent)
    if final.is_file():
        text = _read(final)
        if has_sentinel(text):
            return Completion(agent, CompletionState.COMPLETE, final, partial=is_partial_recovery(text))
        return Completion(
            agent,
            CompletionState.UNSIGNED,
            final,
            partial=is_partial_recovery(text),
            warning=f"{final.name} has no completion sentinel; accepted as complete",
        )
    if partial.is_file():
        text = _read(partial)
        if not text.strip():
            return Completion(agent, CompletionState.EMPTY_PARTIAL, partial)
        if has_sentinel(text):
            return Completion(agent, CompletionState.RENAME_PENDING, partial)
        return Completion(agent, CompletionState.TRUNCATED, partial, partial=True)
    return Completion(agent, CompletionState.NEVER_STARTED, final)


def settle(output_dir: Path, agent: str, *, reason: str = "timed out") -> Completion:
    """Apply the section 7 table after a timeout so exactly one ``.md`` exists.

    Returns the completion as it stands afterwards; ``partial`` is True when
    the ``.md`` holds a truncated report (synthesis tags its findings).
    """
    found = inspect(output_dir, agent)
    final = output_path(output_dir, agent)
    partial = partial_path(output_dir, agent)
    if found.state.finished:
        with contextlib.suppress(FileNotFoundError):
            partial.unlink()
        return found
    if found.state is CompletionState.RENAME_PENDING:
        os.replace(partial, final)
        fsync_directory(Path(output_dir))
        return Completion(agent, CompletionState.COMPLETE, final)
    if found.state is CompletionState.TRUNCATED:
        text = _read(partial)
        body = text if text.endswith("\n") else text + "\n"
        write_agent_output(output_dir, agent, body + PARTIAL_MARKER)
        return Completion(
            agent,
            CompletionState.COMPLETE,
            final,
            partial=True,
            warning=f"{agent} {reason} mid-write; its partial report is kept, tagged partial",
        )
    message = (
        f"agent {reason} before writing any output"
        if found.state is CompletionState.EMPTY_PARTIAL
        else f"agent never started ({reason})"
    )
    write_error_stub(output_dir, agent, message)
    with contextlib.suppress(FileNotFoundError):
        partial.unlink()
    return Completion(agent, CompletionState.COMPLETE, final, warning=message)
