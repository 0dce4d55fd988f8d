"""The ``static`` runtime: review agents executed by real analyzers, offline.

Every review agent maps (through its definition's ``static`` section) to
analyzer hits; the analysis of one content is shared by all agents, so each
analyzer runs once. The agent's report goes through the completion contract,
its P0s go on the peer channel as ``blocking`` and its P1s as ``notable``,
and before writing it reads the channel and acknowledges peers' blocking
findings - the same checkpoint an LLM agent performs.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Sequence
from pathlib import Path

from fluxdrive.agents import AgentDefinition, load_roster
from fluxdrive.config import Config
from fluxdrive.contracts import Report, render_report, write_agent_output
from fluxdrive.core.masking import mask_text
from fluxdrive.core.threads import in_daemon_thread
from fluxdrive.core.version import __version__
from fluxdrive.errors import ChannelError, UsageError
from fluxdrive.exchange import channel
from fluxdrive.runtimes.base import AgentResult, AgentTask, Backend, Outcome, Provenance, Runtime, Usage
from fluxdrive.runtimes.static.agent_section import static_section
from fluxdrive.runtimes.static.analysis import Analysis
from fluxdrive.runtimes.static.analyzers import registry as analyzers
from fluxdrive.runtimes.static.analyzers.base import AnalyzerContext, AnalyzerOutput
from fluxdrive.runtimes.static.bounds import skip_of
from fluxdrive.runtimes.static.checks.engine import registry as checks
from fluxdrive.runtimes.static.compose import (
    MAX_SHARED,
    Finding,
    FunctionAt,
    build_entries,
    select_hits,
    summarize,
)
from fluxdrive.runtimes.static.evidence import candidates
from fluxdrive.runtimes.static.ownership import Ownership
from fluxdrive.runtimes.static.shards import BackendShards, Placed
from fluxdrive.runtimes.static.snippets import examples_only
from fluxdrive.synthesis.evidence import Candidate

SEVERITY_TO_CHANNEL = {"P0": "blocking", "P1": "notable"}


class StaticRuntime(Runtime):
    """Offline runtime: ruff, ast-grep rules, lizard, detect-secrets and fluxdrive checks."""

    name = "static"
    offline = True
    costs_tokens = False
    reads_prompt = False
    supplies_evidence = True
    description = "offline analyzers as reviewers (no API key, no network)"

    def __init__(self) -> None:
        self._analyses: dict[tuple[object, ...], Analysis] = {}
        self._lock = threading.Lock()
        self._backend: Backend | None = None  # where the per-file pass runs when not on this machine
        self._placed = Placed()

    def provenance(self, task: AgentTask) -> Provenance:
        return Provenance("static", "static", f"fluxdrive-static-{__version__}")

    def can_run(self, agent: AgentDefinition) -> bool:
        """Agents whose definition says they need a model cannot run offline."""
        return not agent.needs_model

    def check(self, config: Config, root: Path, agent: AgentDefinition | None = None) -> None:
        """``[static.checks.<name>]`` must name installed checks and the options they take, and ``agent``'s
        ``static:`` section must be one this runtime reads (one line, exit 2)."""
        if agent is not None:
            static_section(agent)
        configured = {name: settings.options for name, settings in config.static.checks.items()}
        errors = checks.config_errors(configured) if configured else []
        if errors:
            raise UsageError(
                "; ".join(errors),
                hint="`fluxdrive rules list` names every check; a check's options are those its module declares",
            )

    def distribute(self, backend: Backend, model: str | None) -> Runtime:
        """Keep the agents here and send the per-file pass to ``backend``.

        Why not ship the agents themselves: they all read the one shared
        analysis, and an agent's own work once that exists takes
        milliseconds; what is worth distributing is the analysis.
        """
        self._backend = backend
        return self

    def notes(self) -> list[str]:
        """Check modules and analyzers that did not load (a broken plugin), for run.json."""
        return [*checks.load_notes(), *analyzers.load_notes()]

    def placement(self) -> list[str]:
        """Where the analysis ran, when it ran on a backend."""
        note = self._placed.note()
        return [note] if note is not None else []

    def analysis_for(self, task: AgentTask) -> Analysis:
        """The shared analysis of the task's content (created on first use)."""
        content = task.content
        changed = tuple(sorted((k, tuple(sorted(v))) for k, v in (content.changed_lines or {}).items()))
        key = (
            str(Path(content.root).resolve()),
            content.files,
            changed,
            task.config.static.model_dump_json(),
            content.settings_revision,
        )
        with self._lock:
            if key not in self._analyses:
                roster = load_roster(content.root, revision=content.settings_revision)
                ownership = Ownership.from_agents(roster)
                mapper = None
                if self._backend is not None:
                    mapper = BackendShards(self._backend, task.config.dispatch.shard_min_lines, self._placed)
                self._analyses[key] = Analysis(content, task.config.static, ownership, mapper)
            return self._analyses[key]

    def evidence(self, task: AgentTask) -> list[Candidate]:
        """What this agent's static review would report, as candidates for the same agent on a model.

        The shared analysis of the task's content (each analyzer once per content, bounded as a static
        review is), selected exactly as :meth:`run` selects its report; nothing is written.
        """
        agent = task.agent
        if agent.kind != "review" or not self.can_run(agent):
            return []
        self.check(task.config, Path(task.content.root), agent)
        analysis = self.analysis_for(task)
        outputs = analysis.ensure(analysis.ownership.analyzers_for(agent))
        context = analysis.context()
        outputs = examples_only(outputs, context.sources)
        findings = select_hits(
            agent, outputs, analysis.ownership, task.config.static, task.content, _function_at(context)
        )
        entries, _details = build_entries(agent, findings, context.mask)
        return candidates(findings, entries)

    async def run(self, task: AgentTask) -> AgentResult:
        started = time.monotonic()
        agent = task.agent
        if agent.kind != "review":
            raise UsageError(
                f"{agent.name} is a research agent",
                hint="research agents answer questions between review stages; they are not run on a path",
            )
        self.check(task.config, Path(task.content.root))  # also when no plan checked first (``agent run``)
        analysis = self.analysis_for(task)
        names = analysis.ownership.analyzers_for(agent)
        analysis.request(names)
        await asyncio.sleep(0)  # let agents launched with this one announce theirs: one analysis pass for all
        token = analysis.waiter(task.activity)  # the heartbeat and progress bar hear how far the pass is
        try:
            outputs = await in_daemon_thread(analysis.ensure, names, token)
        except asyncio.CancelledError:  # the analysis's thread outlives this agent: stop what only it waited for
            analysis.withdraw(token)
            raise
        context = analysis.context()
        outputs = examples_only(outputs, context.sources)  # code in a document is an example (snippets.py)
        settings, function_at = task.config.static, _function_at(context)
        findings = select_hits(agent, outputs, analysis.ownership, settings, task.content, function_at)
        entries, details = build_entries(agent, findings, context.mask)
        notes = [
            *context.loaded.notes,
            *[n for o in outputs for n in o.notes if not n.startswith("import graph")],
        ]
        summary = summarize(
            agent,
            task.content,
            len([s for s in context.sources if s.block_of is None]),
            context.loaded.lines,
            entries,
            outputs,
            notes,
        )
        report = Report(entries, summary, details, _acknowledge(task, findings))
        write_agent_output(task.output_dir, agent.name, render_report(report))
        _share(task, agent, findings)
        return AgentResult(
            agent.name,
            Outcome.COMPLETED,
            task.output_dir / f"{agent.name}.md",
            self.provenance(task),
            Usage(wall_s=time.monotonic() - started),
            notes=tuple(f"{o.name} did not run: {o.error}" for o in outputs if o.error),
            skipped=_skipped(context.loaded.skipped, outputs),
        )


def _function_at(context: AnalyzerContext) -> FunctionAt:
    """The Python function holding a reported line (from the analysis's cached trees), for grouping hits."""
    python = {s.path: s for s in context.sources if s.language == "python" and s.block_of is None}

    def function_at(path: str, line: int) -> str | None:
        source = python.get(path)
        return context.function_at(source, line) if source is not None else None

    return function_at


def _skipped(loaded: tuple[tuple[str, str], ...], outputs: Sequence[AnalyzerOutput]) -> tuple[tuple[str, str], ...]:
    """Files the agent could not review: not loaded (size, binary, outside the root), not parseable, or skipped
    by an analyzer (over a per-file bound, or its analyzer failed on it)."""
    found = dict(loaded)
    for output in outputs:
        for note in output.notes:
            path, _, rest = note.partition(": not valid Python")
            if rest and path not in found and ".block" not in path:  # a snippet in a document may be partial
                found[path] = "not valid Python: Python checks skipped"
            skip = skip_of(note)  # an analyzer's per-file bound (bounds.py) or failure: that file was not covered
            if skip is not None and skip[0] not in found and ".block" not in skip[0]:
                found[skip[0]] = skip[1]
    return tuple(sorted(found.items()))


def _acknowledge(task: AgentTask, findings: list[Finding]) -> tuple[str, ...]:
    """The checkpoint: acknowledge every blocking finding other agents shared so far."""
    try:
        peers = channel.read(task.channel_path, severity="blocking").findings
    except Exception:  # an unreadable channel must not cost the agent its report
        return ()
    own = {f"{f.hit.path}:{f.hit.line}" for f in findings} | {f.hit.path for f in findings}
    lines = []
    for peer in channel.timeline(peers):
        if peer.agent == task.agent.name:
            continue
        overlap = [ref for ref in peer.file_refs if ref in own or ref.split(":", 1)[0] in own]
        stance = (
            f"corroborated: this agent also reports {', '.join(sorted(set(overlap)))}"
            if overlap
            else "outside what this agent's checks cover; not contradicted"
        )
        lines.append(f"{peer.agent} ({peer.category}): {peer.summary} - {stance}.")
    return tuple(lines)


def _share(task: AgentTask, agent: AgentDefinition, findings: list[Finding]) -> None:
    """P0 -> blocking, P1 -> notable on the peer channel (at most MAX_SHARED)."""
    worthy = [f for f in findings if f.hit.severity in SEVERITY_TO_CHANNEL]
    for finding in worthy[:MAX_SHARED]:
        hit = finding.hit
        refs = [hit.location, *([hit.also] if hit.also else [])]
        try:
            channel.append(
                task.channel_path,
                SEVERITY_TO_CHANNEL[hit.severity],
                agent.name,
                _category(hit.category),
                mask_text(f"{hit.title} ({hit.location})"),
                refs,
            )
        except ChannelError:
            continue
    if len(worthy) > MAX_SHARED:
        channel.append(
            task.channel_path,
            "notable",
            agent.name,
            "more-findings",
            f"{len(worthy) - MAX_SHARED} more P0/P1 findings in {agent.name}.md",
        )


def _category(text: str) -> str:
    words = "".join(ch.lower() if ch.isalnum() else "-" for ch in text).strip("-")
    while "--" in words:
        words = words.replace("--", "-")
    return words or "static-finding"
