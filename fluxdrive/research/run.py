"""``fluxdrive research QUESTION``: triage the question, run the research agents, synthesize one answer.

The story, in order:

1. the project root and the scope (confined to the root) and the question
   (one line, bounded);
2. triage: the question's type and each research agent's affinity score
   (:mod:`fluxdrive.research.query`); agents scoring 2 or more are chosen;
3. who can answer: offline, repo-research, git-history and learnings do real
   work on the project (:mod:`fluxdrive.research.offline`); framework-docs
   and best-practices need the web or a model and are skipped with a note
   unless a model is given, when they run on it (with web search when a
   search key is in the environment);
4. launch: every chosen agent at once through the review's dispatcher
   (:func:`fluxdrive.launch.dispatcher.run_stage`), so each has exactly one
   report and one verdict record, crashes become error stubs;
5. synthesis: ``synthesis.md`` and ``research.json`` in the output directory
   (default ``docs/research/flux-research/<stem>-<hash>/``), written
   atomically; a run replaces only what an earlier run there wrote.
"""

from __future__ import annotations

import asyncio
import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

from fluxdrive.agents import AgentDefinition, load_roster
from fluxdrive.config import Config, load_config
from fluxdrive.core.atomic import atomic_write_json, atomic_write_text
from fluxdrive.core.masking import known_secrets, mask_text, scrub, scrub_tree
from fluxdrive.core.project import find_project_root, project_directory
from fluxdrive.core.secret_values import collect as collect_secrets
from fluxdrive.errors import InputError, UsageError
from fluxdrive.knowledge import Store
from fluxdrive.launch.dispatcher import Launch, run_stage
from fluxdrive.launch.progress import Progress, Recorder
from fluxdrive.launch.research.model import OFFLINE_NOTE, ResearchExecutor
from fluxdrive.research.offline import history_search, lessons_executor, repo_search
from fluxdrive.research.query import AgentChoice, choose_agents
from fluxdrive.research.runtime import ResearchRuntime
from fluxdrive.research.synthesis import AgentRun, Synthesis, render_markdown, research_record, synthesize
from fluxdrive.runtimes.base import AgentResult, AgentTask, ReviewContent
from fluxdrive.runtimes.registry import require_llm_extra
from fluxdrive.workspace import claim_output_dir, run_lock, runs_root

RUNS_DIR = Path("docs") / "research" / "flux-research"
MAX_QUESTION = 1000
DEPTH_TIMEOUT_S = {"quick": 30.0, "standard": 120.0, "deep": 300.0}  # the reference's research depths
MODEL_AGENTS = ("framework-docs", "best-practices")


@dataclass(frozen=True, slots=True)
class ResearchResult:
    """What a research run produced: the merged answer and where its files are."""

    question: str
    query_type: str
    output_dir: Path
    choices: tuple[AgentChoice, ...]
    runs: tuple[AgentRun, ...]
    synthesis: Synthesis

    @property
    def synthesis_path(self) -> Path:
        return self.output_dir / "synthesis.md"


def _stem(question: str) -> str:
    words = re.findall(r"[a-z0-9]+", question.lower())
    stem = "-".join(words)[:50].strip("-")
    return stem or "question"


def default_output_dir(root: Path, question: str, scope: str) -> Path:
    """``docs/research/flux-research/<question-stem>-<sha256(question, scope)[:8]>``."""
    digest = hashlib.sha256(f"{question}\0{scope}".encode()).hexdigest()[:8]
    return runs_root(root, RUNS_DIR) / f"{_stem(question)}-{digest}"


def _question(text: str) -> str:
    question = " ".join(text.split())
    if not question:
        raise UsageError("the question is empty", hint='fluxdrive research "how does this project handle retries?"')
    if len(question) > MAX_QUESTION:
        raise UsageError(f"the question is {len(question)} characters long; at most {MAX_QUESTION}")
    return mask_text(question)


def _scope(root: Path, scope: Path | None) -> str:
    if scope is None:
        return "."
    resolved = Path(scope).resolve()
    if not resolved.exists():
        raise InputError(f"scope not found: {scope}", hint="pass a file or directory inside the project")
    if resolved != root and not resolved.is_relative_to(root):
        raise InputError(f"the scope {scope} is outside the project root {root}")
    return "." if resolved == root else resolved.relative_to(root).as_posix()


def _executors(
    root: Path, config: Config, roster: dict[str, AgentDefinition], model: str | None
) -> dict[str, ResearchExecutor]:
    store = None
    if config.knowledge.enabled:
        directory = project_directory(root, config.knowledge.directory, "knowledge.directory")
        store = Store.load(directory) if directory.is_dir() else None
    table: dict[str, ResearchExecutor] = {
        "repo-research": repo_search,
        "git-history": history_search,
        "learnings": lessons_executor(store),
    }
    if model:
        require_llm_extra()
        from fluxdrive.launch.research.on_model import model_executor
        from fluxdrive.runtimes.llm.web import WebCache

        cache = WebCache()  # one per run, shared: the two web agents often search the same thing
        for name in (n for n in MODEL_AGENTS if n in roster):
            table[name] = model_executor(roster[name], model, config, web_cache=cache)
    return table


def research(
    question: str,
    *,
    scope: Path | None = None,
    project: Path | None = None,
    output_dir: Path | None = None,
    model: str | None = None,
    depth: str = "standard",
    config: Config | None = None,
    progress: Progress | None = None,
) -> ResearchResult:
    """Answer ``question`` about the project from its research agents; the library call behind the CLI and MCP.

    ``model`` (``provider:model``) lets framework-docs and best-practices run
    on a model; without it they are skipped with a note. ``depth`` sets each
    agent's timeout (quick 30 s, standard 120 s, deep 300 s).
    """
    text = _question(question)
    if depth not in DEPTH_TIMEOUT_S:
        raise UsageError(f"unknown depth {depth!r}", hint="use quick, standard or deep")
    start = Path(project or Path.cwd()).resolve()
    root = find_project_root(start if start.is_dir() else start.parent)  # the scope never picks the project
    where = _scope(root, scope)
    config = config or load_config(root).config
    roster = {a.name: a for a in load_roster(root, trusted=config.trust.project_config).of_kind("research")}
    kind, choices = choose_agents(text, sorted(roster))
    executors = _executors(root, config, roster, model)
    # each run writes a fresh directory, and ``target`` (kept lexical) becomes a link to it: see workspace.run_lock
    target = claim_output_dir(Path(output_dir) if output_dir is not None else default_output_dir(root, text, where))
    progress = progress or Recorder()
    runtime = ResearchRuntime(executors, text, kind, None if where == "." else where)
    chosen = [c for c in choices if c.launched]
    launches = [
        Launch(_task(roster[c.agent], text, root, target, config, DEPTH_TIMEOUT_S[depth]), runtime)
        for c in chosen
        if c.agent in executors
    ]
    # the project's secret values are masked in every answer, file and record of this run
    with run_lock(target, command="research"), known_secrets(collect_secrets(root)):
        progress.phase(f"Research: {kind} question; agents " + ", ".join(f"{c.agent} ({c.score})" for c in chosen))
        results: dict[str, AgentResult] = {}
        if launches:
            stage = asyncio.run(
                run_stage(
                    1,
                    launches,
                    concurrency=config.dispatch.max_concurrency,
                    retries=config.dispatch.retries,
                    progress=progress,
                )
            )
            results = stage.results
        runs = tuple(_run(c, results, runtime, model) for c in chosen)
        merged = synthesize(runs)
        extra = {"scope": where, "depth": depth, "model": model, "output_dir": str(target)}
        atomic_write_text(target / "synthesis.md", scrub(render_markdown(text, kind, runs, merged)))
        record = research_record(text, kind, choices, runs, merged, extra)
        atomic_write_json(target / "research.json", scrub_tree(record))
    return ResearchResult(text, kind, target, tuple(choices), runs, merged)


def _task(
    agent: AgentDefinition, question: str, root: Path, output_dir: Path, config: Config, timeout: float
) -> AgentTask:
    content = ReviewContent(root=root, files=(), input_type="question", label=question)
    return AgentTask(agent, question, content, output_dir, output_dir / "peer-findings.jsonl", config, timeout)


def _run(choice: AgentChoice, results: dict[str, AgentResult], runtime: ResearchRuntime, model: str | None) -> AgentRun:
    result = results.get(choice.agent)
    if result is None:
        note = OFFLINE_NOTE if choice.agent in MODEL_AGENTS and not model else "no executor for this agent"
        return AgentRun(choice.agent, choice.score, "skipped", note)
    status = result.outcome.value
    note = result.error or ("answered" if status == "completed" else status)
    answer = runtime.answers.get(choice.agent) if status == "completed" else None
    return AgentRun(choice.agent, choice.score, status, note, result.output_path.name, answer)
