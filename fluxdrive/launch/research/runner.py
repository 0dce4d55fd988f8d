"""Running the triggered research agents: one after another, each in a worker thread with a timeout.

Which agent runs, is skipped or stands in for another is decided here, and
here the answer file is written atomically when an agent completes and
removed otherwise, so the file exists exactly when the outcome is ``completed``.
Every agent that ran also gets a write-behind verdict record (PROTOCOL.md
section 11) in ``OUTPUT_DIR/research/verdicts/``: the research directory is
this dispatch's output directory, so the review's own table stays its
reviewers' (``fluxdrive verdicts OUTPUT_DIR/research`` lists these).
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import dataclasses
import re
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from fluxdrive.agents.definition import NAME_PATTERN
from fluxdrive.core.atomic import atomic_write_text
from fluxdrive.core.masking import mask_text
from fluxdrive.exchange.verdicts import write_verdict
from fluxdrive.launch.research.git_history import git_history
from fluxdrive.launch.research.model import (
    OFFLINE_NOTE,
    RESEARCH_DIR,
    RESEARCH_TIMEOUT_S,
    ResearchAnswer,
    ResearchExecutor,
    ResearchOutcome,
    ResearchRequest,
    ResearchStatus,
    ResearchTimeout,
)
from fluxdrive.launch.research.render import render_answer
from fluxdrive.launch.research.repo_research import repo_research
from fluxdrive.launch.research.triggers import FALLBACK_AGENT, Trigger, one_line
from fluxdrive.runtimes.base import Usage

STAND_IN_FOR: frozenset[str] = frozenset({"framework-docs", "best-practices"})
NEEDS_STORE: frozenset[str] = frozenset({"learnings"})

STORE_NOTE = "the knowledge store is not available yet"
RUNTIME_NOTE = "LLM research runs through the runtime"

EXECUTORS: dict[str, ResearchExecutor] = {"git-history": git_history, "repo-research": repo_research}


def _skip_note(agent: str, offline: bool) -> str:
    if agent in NEEDS_STORE:
        return STORE_NOTE
    return OFFLINE_NOTE if offline else RUNTIME_NOTE


def _output_path(output_dir: Path, agent: str) -> tuple[str, Path]:
    relative = f"{RESEARCH_DIR}/{agent}.md"
    return relative, Path(output_dir) / RESEARCH_DIR / f"{agent}.md"


def _discard(output_dir: Path, agent: str) -> None:
    """No stale answer from an earlier run may stand in for this one."""
    if re.fullmatch(NAME_PATTERN, agent):
        with contextlib.suppress(OSError):
            _output_path(output_dir, agent)[1].unlink(missing_ok=True)


def in_worker(
    executor: ResearchExecutor, request: ResearchRequest, *, name: str
) -> concurrent.futures.Future[ResearchAnswer]:
    """Start ``executor(request)`` in a daemon worker thread and return its future.

    A daemon thread, not a ThreadPoolExecutor: an executor still running after
    its timeout must not keep the process alive at exit (built-in executors
    stop themselves at the deadline; a plugged-in one might not).
    """
    future: concurrent.futures.Future[ResearchAnswer] = concurrent.futures.Future()

    def work() -> None:
        if not future.set_running_or_notify_cancel():
            return
        try:
            future.set_result(executor(request))
        except BaseException as exc:  # handed to the waiting caller
            future.set_exception(exc)

    threading.Thread(target=work, name=name, daemon=True).start()
    return future


def _run_one(
    agent: str,
    trigger: Trigger,
    executor: ResearchExecutor,
    *,
    root: Path,
    output_dir: Path,
    timeout_s: float,
    stand_in_for: str | None = None,
) -> ResearchOutcome:
    start = time.monotonic()

    def outcome(
        status: ResearchStatus, note: str, output: str | None = None, answer: ResearchAnswer | None = None
    ) -> ResearchOutcome:
        if status != "completed":
            _discard(output_dir, agent)
        seconds = round(time.monotonic() - start, 3)
        provenance, usage = (answer.provenance, answer.usage) if answer is not None else (None, None)
        if re.fullmatch(NAME_PATTERN, agent):
            _record(output_dir, agent, status, note, usage)
        return ResearchOutcome(
            agent, trigger.question, output, status, note, seconds, trigger.finding_id, provenance, usage
        )

    if not re.fullmatch(NAME_PATTERN, agent):
        return outcome("error", f"invalid research agent name {agent!r}")
    request = ResearchRequest(trigger, root, start + timeout_s, stand_in_for)
    try:
        answer = in_worker(executor, request, name=f"fluxdrive-research-{agent}").result(timeout=timeout_s)
    except (TimeoutError, ResearchTimeout):
        return outcome("timeout", f"no answer within {timeout_s:g} s; nothing written")
    except Exception as exc:  # a crashed researcher is recorded as an error, never raised
        return outcome("error", one_line(mask_text(f"{type(exc).__name__}: {exc}"), 200))
    if stand_in_for is not None:
        gap = f"the {stand_in_for} question needs the web or a model; this answer comes from the repository only"
        answer = dataclasses.replace(answer, gaps=(gap, *answer.gaps))
    relative, path = _output_path(output_dir, agent)
    try:
        atomic_write_text(path, render_answer(trigger, agent, answer, stand_in_for=stand_in_for))
    except OSError as exc:
        return outcome("error", f"could not write {relative}: {exc.strerror or exc}")
    note = f"stood in for {stand_in_for} ({OFFLINE_NOTE})" if stand_in_for else "answered offline from the repository"
    if answer.how and not stand_in_for:
        note = answer.how
    return outcome("completed", note, relative, answer)


_VERDICT_STATUS = {"completed": "CLEAN", "timeout": "NEEDS_ATTENTION", "error": "ERROR"}


def _record(output_dir: Path, agent: str, status: ResearchStatus, note: str, usage: Usage | None) -> None:
    """The agent's verdict record next to its answer; a disk that refuses it does not fail the research."""
    with contextlib.suppress(OSError):
        write_verdict(
            Path(output_dir) / RESEARCH_DIR,
            agent,
            _VERDICT_STATUS.get(status, "NEEDS_ATTENTION"),
            f"{status}: {note}",
            detail_path=f"{agent}.md" if status == "completed" else None,
            tokens=usage.tokens if usage is not None else 0,
            cost_usd=usage.cost_usd if usage is not None else 0.0,
        )


def run_research(
    triggers: Sequence[Trigger],
    *,
    root: Path,
    output_dir: Path,
    timeout_s: float = RESEARCH_TIMEOUT_S,
    offline: bool = True,
    executors: Mapping[str, ResearchExecutor] | None = None,
) -> list[ResearchOutcome]:
    """Run each trigger's research agent in turn, each bounded by ``timeout_s``; never raises for one agent.

    ``executors`` maps agent names to functions (default :data:`EXECUTORS`, the
    offline ones); an agent without one is skipped with the reason. Offline, a
    skipped ``framework-docs`` or ``best-practices`` question is answered by
    ``repo-research`` instead when no trigger uses repo-research. Outcomes
    follow the triggers' order, a stand-in right after the agent it replaces.
    """
    table = EXECUTORS if executors is None else executors
    root = Path(root).resolve()
    reserved = {t.research_agent for t in triggers}
    answered: dict[str, str] = {}
    outcomes: list[ResearchOutcome] = []

    def run(agent: str, trigger: Trigger, executor: ResearchExecutor, stand_in_for: str | None = None) -> None:
        where = {"root": root, "output_dir": Path(output_dir)}
        outcomes.append(_run_one(agent, trigger, executor, timeout_s=timeout_s, stand_in_for=stand_in_for, **where))

    for trigger in triggers:
        agent = trigger.research_agent
        if agent in answered:
            note = f"already answered for {answered[agent]}"
            outcomes.append(ResearchOutcome(agent, trigger.question, None, "skipped", note, 0.0, trigger.finding_id))
            continue
        answered[agent] = trigger.finding_id
        executor = table.get(agent)
        if executor is not None:
            run(agent, trigger, executor)
            continue
        _discard(Path(output_dir), agent)
        note = _skip_note(agent, offline)
        outcomes.append(ResearchOutcome(agent, trigger.question, None, "skipped", note, 0.0, trigger.finding_id))
        stand_in = table.get(FALLBACK_AGENT)
        free = FALLBACK_AGENT not in reserved and FALLBACK_AGENT not in answered
        if offline and agent in STAND_IN_FOR and stand_in is not None and free:
            answered[FALLBACK_AGENT] = trigger.finding_id
            run(FALLBACK_AGENT, trigger, stand_in, stand_in_for=agent)
    return outcomes
