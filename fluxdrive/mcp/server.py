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
carrying the one line the CLI would print - and so is anything
unexpected, because the SDK would answer a crash with a bare "Error
executing tool" and log its traceback on stderr. Files the drill-downs read
are confined to the root too (a report, channel, verdict or findings file
symlinked out of the project is refused, a FIFO is not waited on). Nothing is
ever written to stdout, which is the protocol's channel.
"""

from __future__ import annotations

import contextlib
import functools
import json
import re
import threading
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeVar

import anyio
import anyio.from_thread
import anyio.to_thread
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult, InputRequiredResult, ToolAnnotations
from pydantic import ValidationError

from fluxdrive.core.confine import confine, read_confined
from fluxdrive.core.interrupt import Interrupt
from fluxdrive.core.masking import scrub
from fluxdrive.errors import FluxdriveError, InputError, UsageError
from fluxdrive.runs.directory import RunDirectory

if TYPE_CHECKING:
    from fluxdrive.launch.progress import Progress
    from fluxdrive.synthesis import Synthesis

SUMMARY_BUDGET_CHARS = 2_000
PAGE_CHARS = 8_000
MAX_ARG_CHARS = 4_096  # a path or a name: PATH_MAX on Linux
MAX_TEXT_CHARS = 100_000  # what remember() may store at once
MAX_ITEMS = 100  # agents of a review, refs of a remembered item
MAX_READ_BYTES = 128 * 1024 * 1024  # a report or findings.json, read whole to page through it
MAX_ERROR_CHARS = 1_000
STOP_WAIT_S = 5.0  # a cancelled review's time to write its agents' stubs and synthesize what finished
_AGENT_NAME = re.compile(r"^[a-z0-9][a-z0-9-]{0,63}$")
_FINDING_ID = re.compile(r"^(P[0-3]-\d{1,5}|IMP-\d{1,5})$")
T = TypeVar("T")

_FETCH_PEER_FINDINGS = (
    "Fetch peer findings from a flux-drive review session. Use to inspect what findings agents have shared "
    "during a parallel review. output_dir: the review's output directory; severity: blocking, notable or all "
    "(the default). One line per finding, in time order."
)
# The tool and its alias, one function behind both (see build_server).
PEER_FINDINGS_TOOLS = {
    "fetch_peer_findings": _FETCH_PEER_FINDINGS,
    "peer_findings": f"{_FETCH_PEER_FINDINGS} (An alias of fetch_peer_findings.)",
}

INSTRUCTIONS = (
    "fluxdrive reviews code, documents and diffs with a team of specialist agents and merges their findings "
    "into one verdict (safe, needs-changes, risky; incomplete when a reviewer did not finish). Call review "
    "(or triage to see the plan first); it returns a short summary and the output directory. Drill down with "
    "finding (one finding in full), report (an agent's report, a page at a time), verdicts and fetch_peer_findings. "
    "remember stores what you learn about the project for later sessions. Paths are relative to the project root."
)


def _short(value: str, what: str, limit: int = MAX_ARG_CHARS) -> str:
    """``value`` if it has at most ``limit`` characters and no NUL byte; else one UsageError line.

    Why: a 1 MB path or a NUL byte handed on to ``os`` or ``pathlib`` fails deep
    inside with an exception that names neither the argument nor the fix.
    """
    if len(value) > limit:
        raise UsageError(f"{what} is {len(value):,} characters long (at most {limit:,})")
    if "\0" in value:
        raise UsageError(f"{what} contains a NUL byte", hint="pass plain text")
    return value


class _Root:
    """The project the server serves: every path an assistant passes, and every file a tool reads, stays in it."""

    def __init__(self, root: Path) -> None:
        self.path = root.resolve()

    def inside(self, value: str, what: str) -> Path:
        candidate = Path(_short(value, what))
        with contextlib.suppress(RuntimeError):  # "~nobody/x": no such user, so the path is taken as it is
            candidate = candidate.expanduser()
        resolved = (candidate if candidate.is_absolute() else self.path / candidate).resolve()
        if not resolved.is_relative_to(self.path):
            raise InputError(f"{what} {value!r} is outside the project root {self.path}")
        return resolved

    def relative(self, path: Path) -> str:
        """``path`` as the assistant should pass it back: relative to the root when inside it."""
        resolved = path.parent.resolve() / path.name  # a run's link itself, not the directory it points at now
        return str(resolved.relative_to(self.path)) if resolved.is_relative_to(self.path) else str(resolved)

    def output_dir(self, value: str) -> Path:
        directory = self.inside(value, "output directory")
        if not directory.is_dir():
            raise InputError(f"no output directory at {value!r}", hint="pass the directory a review reported")
        return directory

    def read(self, path: Path, what: str) -> bytes:
        """The bytes of a regular file whose real path is inside the root (a symlink out, a FIFO: one line)."""
        return read_confined(path, self.path, what, limit=MAX_READ_BYTES)

    def check_inputs(self, directory: Path, patterns: Sequence[str]) -> None:
        """Refuse ``directory`` if an entry a library reader will open there escapes the root or is no file.

        Why here: synthesis and the verdict loader confine what they read to
        the project they find from the directory (its ``.git``), which may
        lie above the root this server was given; and a FIFO must be refused
        before a reader waits on it.
        """
        for pattern in patterns:
            for path in sorted(directory.glob(pattern)):
                what = f"{path.relative_to(directory)} in {self.relative(directory)}"
                real = confine(path, self.path, what)
                if not (real.is_file() or real.is_dir()):
                    raise InputError(f"{what} is not a regular file", hint="remove it, then call again")


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
            self.send(float(self.done), float(self.launched) if self.launched else None, scrub(message))

    def phase(self, text: str) -> None:
        self._report(text)

    def stage(self, stage: int, agents: Sequence[str]) -> None:
        self.launched += len(agents)
        self._report(f"Stage {stage}: {', '.join(agents)}")

    def started(self, agent: str) -> None:
        pass

    def retrying(self, agent: str, reason: str) -> None:
        self._report(f"{agent}: retrying ({reason})")

    def waiting(self, agent: str, reason: str) -> None:
        self._report(f"{agent}: {reason}"[:200])

    def working(self, agent: str, what: str, done: int, total: int) -> None:
        pass  # a notification per analyzed chunk would be noise; the finished events carry the progress

    def finished(self, agent: str, outcome: str, seconds: float, summary: str) -> None:
        self.done += 1
        self._report(f"{agent} {outcome} in {seconds:.1f} s: {summary}"[:200])

    def suspend(self) -> None:
        pass

    def close(self) -> None:
        pass


async def _interruptible(call: Callable[[Interrupt], str]) -> str:
    """``call(interrupt)`` in a worker thread; when the tool call is cancelled, the review in it is interrupted.

    Why: a review runs in a thread that no signal reaches. Awaited the usual way, a cancel - the client's,
    Ctrl-C, SIGTERM - waited for the whole review to finish (over 40 s). Now the cancel interrupts it as
    Ctrl-C would (stubs for the agents, what finished synthesized) and waits at most STOP_WAIT_S for that.
    """
    interrupt = Interrupt()
    ended = threading.Event()

    def work() -> str:
        try:
            return _guarded(partial(call, interrupt))
        finally:
            ended.set()

    try:
        return await anyio.to_thread.run_sync(work, abandon_on_cancel=True)
    except anyio.get_cancelled_exc_class():
        interrupt.interrupt()
        with anyio.CancelScope(shield=True):
            await anyio.to_thread.run_sync(ended.wait, STOP_WAIT_S)
        raise


def _one_line(text: str) -> str:
    """``text`` as one scrubbed line of at most MAX_ERROR_CHARS characters (an error may quote a huge argument)."""
    line = scrub(" ".join(text.split()))
    return line if len(line) <= MAX_ERROR_CHARS else line[: MAX_ERROR_CHARS - 1] + "\u2026"


def _guarded(call: Callable[[], T]) -> T:
    """Run ``call``; every exception becomes a ToolError carrying one line, as the CLI's error boundary prints it.

    Why every exception: the SDK answers anything but a ToolError with a bare
    "Error executing tool <name>" and logs it with its traceback on stderr.
    A ToolError is logged at INFO, below the server's WARNING level, so a bad
    request costs one readable line and nothing else. ``from None``: no
    chained traceback travels with it.
    """
    try:
        return call()
    except FluxdriveError as exc:
        line = exc.one_line()
    except OSError as exc:  # the machine, not fluxdrive: a full disk, a permission, a name too long
        where = f": {exc.filename}" if exc.filename else ""
        line = f"{exc.strerror or str(exc) or type(exc).__name__}{where}"
    except Exception as exc:
        line = f"internal error: {type(exc).__name__}: {exc} (please report it)"
    raise ToolError(_one_line(line)) from None


class _Server(MCPServer[Any]):
    """MCPServer whose every tool error is one line, the SDK's own argument checks included.

    Why: a wrong argument type is rejected by the SDK before a tool runs, with
    pydantic's multi-line report; the assistant gets ``review: argument target:
    Input should be a valid string`` instead. A tool's own error reaches the
    assistant as the line the CLI would print, without the SDK's "Error
    executing tool <name>:" in front. Crashes never get here as such:
    :func:`_guarded` turned them into ToolErrors already.
    """

    async def run_stdio_async(self) -> None:
        """The SDK's stdio loop, except that a request it cannot read is answered with an error, not dropped,
        and that stdin is read in daemon threads, so that a stopped server does not wait for the next line.

        (:mod:`fluxdrive.mcp.unreadable`: a ``tools/call`` nesting past 200 levels left the client waiting;
        :mod:`fluxdrive.mcp.stdin`: SIGTERM did not end a server whose client kept stdin open.)
        """
        from mcp.server.stdio import stdio_server

        from fluxdrive.mcp.stdin import claimed_stdin
        from fluxdrive.mcp.unreadable import AnswerUnreadable

        lowlevel = self._lowlevel_server  # what MCPServer.run_stdio_async drives, with the same options
        # stdin read in daemon threads (fluxdrive.mcp.stdin): SIGTERM ends the server while the client waits
        with claimed_stdin() as lines:
            async with stdio_server(stdin=lines) as (read_stream, write_stream):  # type: ignore[arg-type]
                guarded = AnswerUnreadable(read_stream, write_stream)
                await lowlevel.run(guarded, write_stream, lowlevel.create_initialization_options())

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> CallToolResult | InputRequiredResult:
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            cause, line = exc.__cause__, str(exc)
            if isinstance(cause, ValidationError):
                problem = cause.errors()[0]
                line = f"{name}: argument {'.'.join(str(p) for p in problem['loc'])}: {problem['msg']}"
            elif isinstance(cause, ToolError):  # ours, wrapped as "Error executing tool <name>: <our line>"
                line = str(cause)
            raise ToolError(_one_line(line)) from None


def _summary(result: Synthesis, files: list[Path], seconds: dict[str, float] | None = None) -> str:
    from fluxdrive.reports import render_console
    from fluxdrive.reports.console import agent_lines

    text = render_console(result, files, budget=SUMMARY_BUDGET_CHARS, agents=agent_lines(result, seconds))
    return text + "Drill down: finding(output_dir, id), report(output_dir, agent), verdicts(output_dir).\n"


def _target(root: _Root, target: str, diff_ref: str | None) -> str | None:
    """What resolve_target gets for ``target``: an absolute path inside the root, or None for a diff_ref review.

    Why: with diff_ref the diff is the input, so the default "." means "no
    target"; made absolute it would look like a TARGET passed as well. A real
    target is handed on as given, and resolve_target refuses the combination
    with the CLI's own line.
    """
    if diff_ref is not None:
        _short(diff_ref, "diff_ref")
        return None if target in ("", ".") else _short(target, "target")
    return str(root.inside(target, "target"))


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
    interrupt: Interrupt | None = None,
    import_sarif: list[str] | None = None,
) -> str:
    from fluxdrive import api

    path = _target(root, target, diff_ref)
    if agents is not None and len(agents) > MAX_ITEMS:
        raise UsageError(f"{len(agents):,} agents requested (at most {MAX_ITEMS})")
    if import_sarif is not None and len(import_sarif) > MAX_ITEMS:
        raise UsageError(f"{len(import_sarif):,} SARIF files given (at most {MAX_ITEMS})")
    # inside the project only: the caller is a model, and a file elsewhere must not reach the reports
    sarif = [root.inside(p, "import_sarif file") for p in import_sarif or []]
    for value, what in [(runtime, "runtime"), (model or "", "model"), *((a, "agent name") for a in agents or [])]:
        _short(value, what)
    settings = api.ReviewSettings(
        yes=True,
        expand=expand,
        agents=tuple(agents or ()),
        runtime=runtime,
        model=model,
        over_budget=over_budget,
        diff_ref=diff_ref,
        cwd=root.path,
        import_sarif=tuple(sarif),
    )
    run = api.run(path, settings, api.Interaction(progress=progress, interrupt=interrupt))
    if run.synthesis is None:
        reason = "interrupted" if run.interrupted else "no agent report was written"
        return f"No verdict: {reason}. Output directory: {root.relative(run.output_dir)}\n"
    seconds = {n: r.usage.wall_s for n, r in (run.manifest.agents.items() if run.manifest else []) if r.usage}
    notes = "".join(f"note: {n}\n" for n in run.notes)
    return f"Output directory: {root.relative(run.output_dir)}\n" + _summary(run.synthesis, run.files, seconds) + notes


def _research(root: _Root, question: str, scope: str, model: str | None, depth: str) -> str:
    from fluxdrive.research import research

    _short(question, "question")
    if model is not None:
        _short(model, "model")
    result = research(question, scope=root.inside(scope, "scope"), project=root.path, model=model, depth=depth)
    text = result.synthesis_path.read_text(encoding="utf-8")
    return f"Output directory: {root.relative(result.output_dir)}\n{text}"


def _triage(root: _Root, target: str, diff_ref: str | None) -> str:
    """The plan ``review`` would run (the same planning steps as the CLI's ``triage``), written, not run."""
    from fluxdrive.api import ReviewSettings, plan_review
    from fluxdrive.launch.execute import write_plan
    from fluxdrive.triage import render_table

    settings = ReviewSettings(diff_ref=diff_ref, cwd=root.path, over_budget=True, yes=True)
    plan = plan_review(_target(root, target, diff_ref), settings, check_runtimes=False)
    directory = write_plan(plan, command="triage")
    budget = [s for s in plan.steps if s.startswith("Budget:")]
    notes = "".join(f"note: {n}\n" for n in [*plan.notes, *budget])
    written = f"Written: {root.relative(directory)}/triage.json, triage-table.md, input-profile.json"
    return f"{render_table(plan.triage)}\n{notes}{written}\n"


# What synthesis opens in an output directory: agent reports (and their .partial), the run manifest, the peer
# channel, the frozen copies of finished reports (.reports/) and the verdict records.
_SYNTHESIS_READS = ("*.md", "*.md.partial", "run.json", "peer-findings.jsonl", ".reports", ".reports/*", "verdicts")


def _synthesize(root: _Root, output_dir: str) -> str:
    from fluxdrive.api import synthesize_run

    directory = root.output_dir(output_dir)
    root.check_inputs(directory, _SYNTHESIS_READS)
    result, files, _config = synthesize_run(directory)
    return _summary(result, files)


def _run(root: _Root, output_dir: str) -> RunDirectory:
    """The run at ``output_dir``, every read confined to the served root and named as the assistant passed it."""
    return RunDirectory(root.output_dir(output_dir), root=root.path, label=repr(output_dir), limit=MAX_READ_BYTES)


def _finding(root: _Root, output_dir: str, finding_id: str) -> str:
    if not _FINDING_ID.match(_short(finding_id, "finding_id")):
        raise UsageError(f"not a finding id: {finding_id!r}", hint="ids look like P0-1 or IMP-2")
    document = _run(root, output_dir).findings()
    found = {f.id: f.model_dump(mode="json") for f in document.findings}
    found |= {f.id: f.model_dump(mode="json") for f in document.improvements}
    if finding_id in found:
        return json.dumps(found[finding_id], indent=2, sort_keys=True) + "\n"
    known = ", ".join(f.id for f in document.findings[:20]) or "none"
    raise UsageError(f"no finding {finding_id} in {output_dir!r}", hint=f"known ids: {known}")


def _report(root: _Root, output_dir: str, agent: str, offset: int, max_chars: int) -> str:
    if not _AGENT_NAME.match(_short(agent, "agent")):
        raise UsageError(f"not an agent name: {agent!r}", hint="agent names look like fd-safety")
    if offset < 0 or not 1 <= max_chars <= 50_000:
        raise UsageError("offset must be >= 0 and max_chars between 1 and 50,000")
    run = _run(root, output_dir)
    path = run.report_file(agent, partial=True)
    text = run.report(agent, partial=True)
    page = text[offset : offset + max_chars]
    end = offset + len(page)
    more = f"[{len(text) - end:,} more characters: report(..., offset={end})]\n" if end < len(text) else ""
    return f"{path.name if path else agent}, characters {offset:,}-{end:,} of {len(text):,}\n{page}\n{more}"


def _verdicts(root: _Root, output_dir: str, attention_only: bool) -> str:
    from fluxdrive.exchange.verdicts import attention, count_by_status, render_table, total_tokens

    run = _run(root, output_dir)
    root.check_inputs(run.path, ("verdicts", "verdicts/*.json"))  # records directly in it: load_verdicts confines
    found = run.verdicts()
    records = attention(found.records) if attention_only else found.records
    notes = "".join(f"note: {_one_line(p)}\n" for p in found.problems)
    if not records:
        return notes + ("No agent needs attention.\n" if attention_only else "No verdict records yet.\n")
    tokens = total_tokens(found.records)
    return f"{render_table(records)}\n{count_by_status(found.records)}; {tokens:,} tokens\n{notes}"


def _peer_findings(root: _Root, output_dir: str, severity: Literal["blocking", "notable", "all"]) -> str:
    run = _run(root, output_dir)
    root.check_inputs(run.path, ("peer-findings.jsonl",))
    channel = run.peer_findings(severity)
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


@functools.lru_cache(maxsize=4)
def _tree_secrets(root: str) -> frozenset[str]:
    """The project's secret values, collected once per server (a remember call must stay quick)."""
    from fluxdrive.core.secret_values import collect

    return collect(Path(root))


def _remember(processor: _Processor, root: Path, title: str, content: str, category: str, refs: list[str]) -> str:
    from fluxdrive.core.masking import known_secrets
    from fluxdrive.kb import remember

    if len(refs) > MAX_ITEMS:
        raise UsageError(f"{len(refs):,} refs given (at most {MAX_ITEMS})")
    for value, what in [(title, "title"), (category, "category"), *((r, "ref") for r in refs)]:
        _short(value, what)
    _short(content, "content", MAX_TEXT_CHARS)
    with known_secrets(_tree_secrets(str(root))):  # a secret of the project quoted by the caller is not stored
        path = remember(processor.kb_dir, title, content, category, refs, source="mcp")
    processor.kick()
    return f"Queued {path.name}; it is checked for duplicates and conflicts and filed in the background.\n"


def build_server(root: Path) -> MCPServer:
    """The server for the project at ``root``, with every tool registered."""
    from fluxdrive.core.version import __version__

    project = _Root(root)
    from fluxdrive.config import load_config
    from fluxdrive.core.project import project_directory

    processor = _Processor(
        project_directory(project.path, load_config(project.path).config.kb.directory, "kb.directory")
    )
    # INFO would log every anticipated tool error (a wrong path) with a banner on stderr
    server = _Server("fluxdrive", version=__version__, instructions=INSTRUCTIONS, log_level="WARNING")
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
        import_sarif: list[str] | None = None,
    ) -> str:
        """Review a file, document, directory or diff file, or the changes since a git ref (diff_ref).

        Runs triage, the agents in two stages and synthesis, non-interactively (progress is reported as agents
        finish); returns the verdict, findings
        by severity (short), one line per agent and the output directory for drill-down. runtime: static
        (offline analyzers, the default), llm (with model, e.g. anthropic:claude-sonnet-4-6) or cli-agent.
        agents: exactly these reviewers, e.g. ["safety", "correctness"]. import_sarif: SARIF files of other
        analyzers inside the project (e.g. ["semgrep.sarif"]), merged into the findings as evidence.
        """

        def send(done: float, total: float | None, message: str) -> None:
            anyio.from_thread.run(ctx.report_progress, done, total, message)

        progress = _ToolProgress(send)
        call = partial(_review, project, target, diff_ref, agents, runtime, model, expand, over_budget, progress)
        return await _interruptible(lambda interrupt: call(interrupt=interrupt, import_sarif=import_sarif))

    @server.tool(annotations=ToolAnnotations(read_only_hint=False, open_world_hint=False))
    async def triage(target: str = ".", diff_ref: str | None = None) -> str:
        """Plan a review without running it: detected domains, every agent's score, the slot ceiling, stages."""
        return await anyio.to_thread.run_sync(partial(_guarded, partial(_triage, project, target, diff_ref)))

    @server.tool(annotations=ToolAnnotations(read_only_hint=False, open_world_hint=False))
    async def research(
        question: str,
        scope: str = ".",
        model: str | None = None,
        depth: Literal["quick", "standard", "deep"] = "standard",
    ) -> str:
        """Answer a question about the project with the research agents (flux-research).

        Offline, repo-research, git-history and learnings search the project (scope: a file or directory);
        with model (e.g. anthropic:claude-sonnet-4-6) framework-docs and best-practices answer too. Returns
        synthesis.md: the answer first, then evidence with file:line, commit and URL citations, disagreements,
        confidence and gaps; research.json and one report per agent are in the output directory.
        """
        call = partial(_research, project, question, scope, model, depth)
        return await anyio.to_thread.run_sync(partial(_guarded, call))

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

    def fetch_peer_findings(output_dir: str, severity: Literal["blocking", "notable", "all"] = "all") -> str:
        return _guarded(partial(_peer_findings, project, output_dir, severity))

    # The seeds' name (seed 000, and 001 Task 4's fetch-findings command: output_dir, severity defaulting to
    # all); peer_findings, the name served before it, stays as an alias that runs the same function.
    for name, description in PEER_FINDINGS_TOOLS.items():
        server.tool(name=name, description=description, annotations=reads)(fetch_peer_findings)

    @server.tool(annotations=ToolAnnotations(read_only_hint=False, open_world_hint=False))
    def remember(title: str, content: str, category: str = "patterns", refs: list[str] | None = None) -> str:
        """Remember something about this project for later reviews and sessions; returns at once.

        category: architecture, patterns, dependencies, workflows or gotchas. refs: the files or symbols it is
        about (path or path:symbol), so later analysis can tell when it goes stale.
        """
        return _guarded(partial(_remember, processor, project.path, title, content, category, list(refs or [])))

    return server


def serve(root: Path) -> None:
    """Serve the project at ``root`` over stdio until the client disconnects."""
    build_server(root).run("stdio")
