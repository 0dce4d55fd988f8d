"""The MCP server: fluxdrive's functions as tools for coding assistants (``fluxdrive mcp``).

Why: an assistant that reviews through MCP must not flood its own context
(PROTOCOL.md 11). Every tool answers with a verdict summary and pointers to
files - a whole review costs well under 1,000 tokens to read - and the
assistant drills into one finding, one agent's report page, the verdict
records or the peer channel only when it needs to. The tools call the same
library functions as the CLI: reviews are non-interactive (the plan as triage
computed it, the recommended expansion) and run in a worker thread, so the
server keeps answering while agents work.

Imported only by ``fluxdrive mcp`` (the SDK costs about a second to import).
Paths are taken relative to the server's root (the project it was started
in, or ``--root``) and must stay inside it: an assistant cannot point the
server at files the project does not hold. A bad request is a tool error
carrying the one line the CLI would print; nothing is ever written to
stdout, which is the protocol's channel.
"""

from __future__ import annotations

import contextlib
import json
import re
import threading
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Literal, TypeVar

import anyio
import anyio.from_thread
import anyio.to_thread
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ToolAnnotations

from fluxdrive.errors import FluxdriveError

if TYPE_CHECKING:
    from fluxdrive.launch.progress import Progress
    from fluxdrive.synthesis import Synthesis

SUMMARY_BUDGET_CHARS = 2_000
PAGE_CHARS = 8_000
_AGENT_NAME = re.compile(r"^[a-z0-9][a-z0-9-]{0,63}$")
_FINDING_ID = re.compile(r"^(P[0-3]-\d{1,5}|IMP-\d{1,5})$")
T = TypeVar("T")

INSTRUCTIONS = (
    "fluxdrive reviews code, documents and diffs with a team of specialist agents and merges their findings "
    "into one verdict (safe, needs-changes, risky). Call review (or triage to see the plan first); it returns "
    "a short summary and the output directory. Drill down with finding (one finding in full), report (an "
    "agent's report, a page at a time), verdicts and peer_findings. remember stores what you learn about the "
    "project for later sessions. Paths are relative to the project root."
)


class _Root:
    """The project the server serves; every path an assistant passes must resolve inside it."""

    def __init__(self, root: Path) -> None:
        self.path = root.resolve()

    def inside(self, value: str, what: str) -> Path:
        from fluxdrive.errors import InputError

        candidate = Path(value).expanduser()
        resolved = (candidate if candidate.is_absolute() else self.path / candidate).resolve()
        if not resolved.is_relative_to(self.path):
            raise InputError(f"{what} {value!r} is outside the project root {self.path}")
        return resolved

    def relative(self, path: Path) -> str:
        """``path`` as the assistant should pass it back: relative to the root when inside it."""
        resolved = path.resolve()
        return str(resolved.relative_to(self.path)) if resolved.is_relative_to(self.path) else str(resolved)

    def output_dir(self, value: str) -> Path:
        from fluxdrive.errors import InputError

        directory = self.inside(value, "output directory")
        if not directory.is_dir():
            raise InputError(f"no output directory at {value!r}", hint="pass the directory a review reported")
        return directory


class _ToolProgress:
    """Review progress as MCP progress notifications: agents finished out of agents launched, with a message.

    The review runs in a worker thread; each event is handed to the server's
    event loop with ``anyio.from_thread``. A notification that cannot be sent
    is dropped - progress must never break a review.
    """

    def __init__(self, send: Callable[[float, float | None, str], None]) -> None:
        self.send = send
        self.launched = 0
        self.done = 0

    def _report(self, message: str) -> None:
        with contextlib.suppress(Exception):  # a lost notification costs nothing
            self.send(float(self.done), float(self.launched) if self.launched else None, message)

    def phase(self, text: str) -> None:
        self._report(text)

    def stage(self, stage: int, agents: Sequence[str]) -> None:
        self.launched += len(agents)
        self._report(f"Stage {stage}: {', '.join(agents)}")

    def started(self, agent: str) -> None:
        pass

    def retrying(self, agent: str, reason: str) -> None:
        self._report(f"{agent}: retrying ({reason})")

    def finished(self, agent: str, outcome: str, seconds: float, summary: str) -> None:
        self.done += 1
        self._report(f"{agent} {outcome} in {seconds:.1f} s: {summary}"[:200])

    def suspend(self) -> None:
        pass

    def close(self) -> None:
        pass


def _guarded(call: Callable[[], T]) -> T:
    """Run ``call``; fluxdrive's own errors become tool errors with their one line."""
    try:
        return call()
    except FluxdriveError as exc:
        raise ToolError(exc.one_line()) from None


def _summary(result: Synthesis, files: list[Path], seconds: dict[str, float] | None = None) -> str:
    from fluxdrive.reports import render_console
    from fluxdrive.reports.console import agent_lines

    text = render_console(result, files, budget=SUMMARY_BUDGET_CHARS, agents=agent_lines(result, seconds))
    return text + "Drill down: finding(output_dir, id), report(output_dir, agent), verdicts(output_dir).\n"


def _review(
    root: _Root,
    target: str,
    diff_ref: str | None,
    agents: list[str] | None,
    runtime: str,
    model: str | None,
    expand: Literal["recommended", "all", "none"],
    over_budget: bool,
    progress: Progress,
) -> str:
    from fluxdrive.launch.review import ReviewOptions, run_review

    path = root.inside(target, "target")
    options = ReviewOptions(
        yes=True,
        expand=expand,
        agents=agents,
        runtime=runtime,
        model=model,
        over_budget=over_budget,
        diff_ref=diff_ref,
        cwd=root.path,
        progress=progress,
    )
    run = run_review(path, options)
    if run.synthesis is None:
        reason = "interrupted" if run.interrupted else "no agent report was written"
        return f"No verdict: {reason}. Output directory: {run.output_dir}\n"
    seconds = {n: r.usage.wall_s for n, r in (run.manifest.agents.items() if run.manifest else []) if r.usage}
    return f"Output directory: {root.relative(run.output_dir)}\n" + _summary(run.synthesis, run.files, seconds)


def _triage(root: _Root, target: str, diff_ref: str | None) -> str:
    from fluxdrive.config import load_config
    from fluxdrive.triage import render_table, triage_target, write_outputs
    from fluxdrive.workspace import claim_output_dir, output_dir_for, resolve_target, run_lock

    resolved = resolve_target(str(root.inside(target, "target")), diff_ref=diff_ref, cwd=root.path)
    config = load_config(resolved.root).config
    directory = claim_output_dir(output_dir_for(resolved, None), resolved)
    with run_lock(directory, command="triage"):
        result = triage_target(resolved, config)
        write_outputs(result, directory)
    notes = "".join(f"note: {n}\n" for n in result.notes)
    written = f"Written: {root.relative(directory)}/triage.json, triage-table.md, input-profile.json"
    return f"{render_table(result)}\n{notes}{written}\n"


def _synthesize(root: _Root, output_dir: str) -> str:
    from fluxdrive._project import find_project_root
    from fluxdrive.config import load_config
    from fluxdrive.reports import write_reports
    from fluxdrive.synthesis import synthesize

    directory = root.output_dir(output_dir)
    result = synthesize(directory, load_config(find_project_root(directory)).config)
    return _summary(result, write_reports(result))


def _finding(root: _Root, output_dir: str, finding_id: str) -> str:
    from fluxdrive.errors import InputError, UsageError

    if not _FINDING_ID.match(finding_id):
        raise UsageError(f"not a finding id: {finding_id!r}", hint="ids look like P0-1 or IMP-2")
    path = root.output_dir(output_dir) / "findings.json"
    if not path.is_file():
        raise InputError(f"no findings.json in {output_dir!r}", hint="run review or synthesize first")
    document = json.loads(path.read_text(encoding="utf-8"))
    for item in [*document.get("findings", []), *document.get("improvements", [])]:
        if item.get("id") == finding_id:
            return json.dumps(item, indent=2, sort_keys=True) + "\n"
    known = ", ".join(f["id"] for f in document.get("findings", [])[:20]) or "none"
    raise UsageError(f"no finding {finding_id} in {output_dir!r}", hint=f"known ids: {known}")


def _report(root: _Root, output_dir: str, agent: str, offset: int, max_chars: int) -> str:
    from fluxdrive.errors import InputError, UsageError

    if not _AGENT_NAME.match(agent):
        raise UsageError(f"not an agent name: {agent!r}", hint="agent names look like fd-safety")
    if offset < 0 or not 1 <= max_chars <= 50_000:
        raise UsageError("offset must be >= 0 and max_chars between 1 and 50,000")
    directory = root.output_dir(output_dir)
    path = next((p for p in (directory / f"{agent}.md", directory / f"{agent}.md.partial") if p.is_file()), None)
    if path is None:
        raise InputError(f"no report for {agent} in {output_dir!r}", hint="verdicts(output_dir) lists the agents")
    text = path.read_text(encoding="utf-8", errors="replace")
    page = text[offset : offset + max_chars]
    end = offset + len(page)
    more = f"[{len(text) - end:,} more characters: report(..., offset={end})]\n" if end < len(text) else ""
    return f"{path.name}, characters {offset:,}-{end:,} of {len(text):,}\n{page}\n{more}"


def _verdicts(root: _Root, output_dir: str, attention_only: bool) -> str:
    from fluxdrive.verdicts import attention, count_by_status, load_verdicts, render_table, total_tokens

    found = load_verdicts(root.output_dir(output_dir))
    records = attention(found.records) if attention_only else found.records
    if not records:
        return "No agent needs attention.\n" if attention_only else "No verdict records yet.\n"
    tokens = total_tokens(found.records)
    return f"{render_table(records)}\n{count_by_status(found.records)}; {tokens:,} tokens\n"


def _peer_findings(root: _Root, output_dir: str, severity: Literal["blocking", "notable", "all"]) -> str:
    from fluxdrive.channel import read

    channel = read(root.output_dir(output_dir) / "peer-findings.jsonl", severity=severity)
    if not channel.findings:
        return "No peer findings shared.\n"
    lines = []
    for f in channel.findings:
        refs = [r for r in f.file_refs if r not in f.summary]
        lines.append(
            f"{f.timestamp} {f.agent} {f.severity} {f.category}: {f.summary}"
            + (f" ({', '.join(refs)})" if refs else "")
        )
    return "\n".join(lines) + "\n"


class _Processor:
    """Stage 1 of the knowledge base in the server: remember() returns at once, the queue drains behind it.

    One processor thread at a time per server; a call that arrives while it
    runs is picked up by the same thread's next pass, so nothing waits.
    """

    def __init__(self, kb_dir: Path) -> None:
        self.kb_dir = kb_dir
        self.lock = threading.Lock()
        self.wanted = threading.Event()

    def kick(self) -> None:
        self.wanted.set()
        if self.lock.acquire(blocking=False):
            threading.Thread(target=self._drain, name="fluxdrive-kb-processor", daemon=True).start()

    def _drain(self) -> None:
        from fluxdrive.kb import process_queue

        try:
            while self.wanted.is_set():
                self.wanted.clear()
                with contextlib.suppress(Exception):  # a failed pass leaves the queue file for the next one
                    process_queue(self.kb_dir)
        finally:
            self.lock.release()
        if self.wanted.is_set():  # a call slipped in after the last pass
            self.kick()


def _remember(processor: _Processor, title: str, content: str, category: str, refs: list[str]) -> str:
    from fluxdrive.kb import remember

    path = remember(processor.kb_dir, title, content, category, refs, source="mcp")
    processor.kick()
    return f"Queued {path.name}; it is checked for duplicates and conflicts and filed in the background.\n"


def build_server(root: Path) -> MCPServer:
    """The server for the project at ``root``, with every tool registered."""
    from fluxdrive import __version__

    project = _Root(root)
    from fluxdrive._project import project_directory
    from fluxdrive.config import load_config

    processor = _Processor(
        project_directory(project.path, load_config(project.path).config.kb.directory, "kb.directory")
    )
    # INFO would log every anticipated tool error (a wrong path) with a banner on stderr
    server: MCPServer = MCPServer("fluxdrive", version=__version__, instructions=INSTRUCTIONS, log_level="WARNING")
    reads = ToolAnnotations(read_only_hint=True, open_world_hint=False)

    @server.tool(annotations=ToolAnnotations(read_only_hint=False, open_world_hint=False))
    async def review(
        ctx: Context,
        target: str = ".",
        diff_ref: str | None = None,
        agents: list[str] | None = None,
        runtime: str = "static",
        model: str | None = None,
        expand: Literal["recommended", "all", "none"] = "recommended",
        over_budget: bool = False,
    ) -> str:
        """Review a file, document, directory or diff file, or the changes since a git ref (diff_ref).

        Runs triage, the agents in two stages and synthesis, non-interactively (progress is reported as agents
        finish); returns the verdict, findings
        by severity (short), one line per agent and the output directory for drill-down. runtime: static
        (offline analyzers, the default), llm (with model, e.g. anthropic:claude-sonnet-4-6) or cli-agent.
        agents: exactly these reviewers, e.g. ["safety", "correctness"].
        """

        def send(done: float, total: float | None, message: str) -> None:
            anyio.from_thread.run(ctx.report_progress, done, total, message)

        progress = _ToolProgress(send)
        call = partial(_review, project, target, diff_ref, agents, runtime, model, expand, over_budget, progress)
        return await anyio.to_thread.run_sync(partial(_guarded, call))

    @server.tool(annotations=ToolAnnotations(read_only_hint=False, open_world_hint=False))
    async def triage(target: str = ".", diff_ref: str | None = None) -> str:
        """Plan a review without running it: detected domains, every agent's score, the slot ceiling, stages."""
        return await anyio.to_thread.run_sync(partial(_guarded, partial(_triage, project, target, diff_ref)))

    @server.tool(annotations=ToolAnnotations(read_only_hint=False, open_world_hint=False))
    async def synthesize(output_dir: str) -> str:
        """Synthesize (again) the agent reports in output_dir into one verdict, findings.json and summary.md."""
        return await anyio.to_thread.run_sync(partial(_guarded, partial(_synthesize, project, output_dir)))

    @server.tool(annotations=reads)
    def finding(output_dir: str, finding_id: str) -> str:
        """One finding of a review in full (JSON): agents, locations, descriptions, fixes, convergence, timeline."""
        return _guarded(partial(_finding, project, output_dir, finding_id))

    @server.tool(annotations=reads)
    def report(output_dir: str, agent: str, offset: int = 0, max_chars: int = PAGE_CHARS) -> str:
        """One agent's full report (its prose), a page at a time: pass the offset the previous page gives."""
        return _guarded(partial(_report, project, output_dir, agent, offset, max_chars))

    @server.tool(annotations=reads)
    def verdicts(output_dir: str, attention_only: bool = False) -> str:
        """One line per agent (STATUS AGENT SUMMARY), counts by status and tokens used."""
        return _guarded(partial(_verdicts, project, output_dir, attention_only))

    @server.tool(annotations=reads)
    def peer_findings(output_dir: str, severity: Literal["blocking", "notable", "all"] = "all") -> str:
        """What the agents shared with each other mid-run on the peer-findings channel, in time order."""
        return _guarded(partial(_peer_findings, project, output_dir, severity))

    @server.tool(annotations=ToolAnnotations(read_only_hint=False, open_world_hint=False))
    def remember(title: str, content: str, category: str = "patterns", refs: list[str] | None = None) -> str:
        """Remember something about this project for later reviews and sessions; returns at once.

        category: architecture, patterns, dependencies, workflows or gotchas. refs: the files or symbols it is
        about (path or path:symbol), so later analysis can tell when it goes stale.
        """
        return _guarded(partial(_remember, processor, title, content, category, list(refs or [])))

    return server


def serve(root: Path) -> None:
    """Serve the project at ``root`` over stdio until the client disconnects."""
    build_server(root).run("stdio")
