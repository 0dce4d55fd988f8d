"""The ``llm`` runtime: a reviewer is a language model with read-only tools and the peer channel.

One agent run is a tool-using conversation (pydantic-ai's agent loop): the
rendered prompt is the instruction, the model reads the project through
``read_file`` / ``list_files`` / ``grep`` (confined to the project root),
shares P0/P1-grade findings with ``share_finding`` and reads its peers'
with ``read_peer_findings``. Before its answer counts, two turns may follow:

- the **checkpoint** - blocking findings other agents shared that this one
  has not seen are shown to it, and it must acknowledge them and answer again;
- one **repair** turn - an answer that is not a valid Findings Index is sent
  back once with the reason; whatever comes back is kept (synthesis reads a
  malformed report with its prose fallback).

Turns and output tokens are bounded per agent; usage comes from the
provider and cost from ``llm.prices``. The report is written through the
completion contract like every other runtime's.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from fluxdrive.contracts import OutputStatus, classify_text, write_agent_output, write_error_stub
from fluxdrive.errors import UsageError
from fluxdrive.runtimes.base import AgentResult, AgentTask, Outcome, Provenance, Reply, Runtime, Usage
from fluxdrive.runtimes.llm.backoff import (
    RETRY_LISTENER,
    BackoffTransport,
    EndpointUnreachable,
    client_for,
    limiter_for,
)
from fluxdrive.runtimes.llm.limiter import Limiter
from fluxdrive.runtimes.llm.models import ModelSpec, build_model, parse_model
from fluxdrive.runtimes.llm.spend import CostCeilingError, SpendMeter
from fluxdrive.runtimes.llm.tools import PeerChannel, Workspace

if TYPE_CHECKING:
    import httpx2
    from pydantic_ai import Agent, AgentRunResult
    from pydantic_ai.messages import ModelMessage
    from pydantic_ai.models import Model

    from fluxdrive.agents import AgentDefinition
    from fluxdrive.config import Config
    from fluxdrive.exchange.channel import PeerFinding
    from fluxdrive.runtimes.llm.toolset import Tools

ModelFactory = Callable[[ModelSpec, "httpx2.AsyncClient"], "Model"]

START = (
    "Review the input described in your instructions now. Use the tools to read what you need, share "
    "blocking or notable findings with share_finding as soon as you are sure of them, and check "
    "read_peer_findings before you finish. You cannot write files: your final reply IS your report, and it "
    "must start with '### Findings Index'."
)
CHECKPOINT = (
    "Checkpoint before your final report. Other reviewers shared these blocking findings that you have not "
    "acknowledged:\n{findings}\n\nAdd a '### Peer Findings Acknowledged' section that names each one and says "
    "whether it changes your analysis (dispute it with evidence if you disagree), adjust your findings if it "
    "affects your area, and reply with your complete final report again, starting with '### Findings Index'."
)
REACT = (
    "React to your peers' findings listed in your instructions now. Read the code you cite with the tools; "
    "reply with one line per finding as your instructions say, and nothing else."
)
REPAIR = (
    "Your reply is not a valid Findings Index ({reason}). Reply with the complete report again. It must start "
    "with exactly '### Findings Index', then one line per finding as "
    "'- P1 | {prefix}-001 | \"Section\" | Title | path/file.py:42', then the line 'Verdict: safe', "
    "'Verdict: needs-changes' or 'Verdict: risky' (P0 -> risky, P1 -> needs-changes, else safe)."
)


class LlmRuntime(Runtime):
    """Agents as tool-using language models (Anthropic, OpenAI, OpenAI-compatible servers)."""

    name: ClassVar[str] = "llm"
    offline: ClassVar[bool] = False
    remote: ClassVar[bool] = True
    reacts: ClassVar[bool] = True
    description: ClassVar[str] = "language models with read-only tools (anthropic, openai, ollama, openrouter)"

    def __init__(self, model: str | None = None, *, model_factory: ModelFactory | None = None) -> None:
        self.default_model = model
        self.model_factory = model_factory or build_model
        self.limiter: Limiter | None = None  # this process's cap, shared by every model of the review
        self._fleet: dict[str, Limiter] = {}  # with dispatch.rate_limit_url: one per provider key, fleet-wide
        self._models: dict[str, tuple[ModelSpec, Model]] = {}
        self._clients: list[httpx2.AsyncClient] = []
        self._transports: list[BackoffTransport] = []
        self._shared: Agent[Tools, str] | None = None
        self.meter: SpendMeter | None = None  # the run's money meter (budget.max_usd), shared by every model call

    def bind_meter(self, meter: SpendMeter) -> None:
        """Charge every model request of this runtime to the run's ``meter`` (the launch binds one per run)."""
        self.meter = meter

    # ------------------------------------------------------------------ models

    def model_name(self, task: AgentTask) -> str:
        """``provider:model`` for this agent: config per agent, then its definition, then --model, then llm.model."""
        override = task.config.agents.get(task.agent.name)
        chosen = (override.model if override else None) or task.agent.model or self.default_model
        chosen = chosen or task.config.llm.model
        if not chosen:
            raise UsageError(
                f"no model for {task.agent.name} on the llm runtime",
                hint="pass --model provider:model (e.g. anthropic:claude-sonnet-4-6) or set llm.model in config",
            )
        return chosen

    @classmethod
    def create(cls, model: str | None = None) -> LlmRuntime:
        """The review's instance, on the command line's model."""
        return cls(model)

    def check(self, config: Config, root: Path, agent: AgentDefinition | None = None) -> None:
        """Fail before dispatch when a model string is wrong or its key is missing (one line, exit 2).

        With no agent (before triage): the command line's (or config's) model, when one is given.
        """
        if agent is None:
            chosen = self.default_model or config.llm.model
            if chosen:
                parse_model(chosen)
            return
        override = config.agents.get(agent.name)
        chosen = (override.model if override else None) or agent.model or self.default_model or config.llm.model
        if not chosen:
            raise UsageError(
                f"no model for {agent.name} on the llm runtime",
                hint="pass --model provider:model (e.g. anthropic:claude-sonnet-4-6) or set llm.model in config",
            )
        parse_model(chosen)

    def _model(self, task: AgentTask) -> tuple[ModelSpec, Model]:
        name = self.model_name(task)
        if name not in self._models:
            config = task.config
            spec = parse_model(name)
            client, transport = client_for(config, self._limiter(config, spec))
            self._clients.append(client)
            self._transports.append(transport)
            self._models[name] = (spec, self.model_factory(spec, client))
        return self._models[name]

    def _limiter(self, config: Config, spec: ModelSpec) -> Limiter:
        """The process's limiter, or the fleet's for this provider key (``dispatch.rate_limit_url``)."""
        if config.dispatch.rate_limit_url:
            identity = f"{spec.provider}\0{spec.base_url}\0{spec.key}"
            if identity not in self._fleet:
                self._fleet[identity] = limiter_for(config, spec)
            return self._fleet[identity]
        if self.limiter is None:
            self.limiter = limiter_for(config)
        return self.limiter

    def provenance(self, task: AgentTask) -> Provenance:
        try:
            return parse_model(self.model_name(task), env={"ANTHROPIC_API_KEY": "-", "OPENAI_API_KEY": "-",
                                                          "OPENROUTER_API_KEY": "-"}).provenance  # fmt: skip
        except UsageError:
            return Provenance("llm", "unknown", "unknown")

    # ------------------------------------------------------------------ a run

    def _agent(self) -> Agent[Tools, str]:
        """One pydantic-ai agent for the whole review: tools and schemas built once, the task passed per run."""
        if self._shared is None:
            from pydantic_ai import Agent

            from fluxdrive.runtimes.llm.toolset import TOOLS, Tools

            self._shared = Agent(deps_type=Tools, tools=TOOLS, output_type=str)
        return self._shared

    async def run(self, task: AgentTask) -> AgentResult:
        from pydantic_ai import ModelAPIError, ModelHTTPError, UsageLimitExceeded, UsageLimits
        from pydantic_ai.settings import ModelSettings

        started = time.monotonic()
        spec, model = self._model(task)
        config: Config = task.config
        model = self._metered(model, spec, task)
        workspace = _workspace(task, started)
        peers = PeerChannel(task.channel_path, task.agent.name)
        from fluxdrive.runtimes.llm.toolset import Tools

        agent = self._agent()
        deps = Tools(workspace, peers)
        limits = UsageLimits(request_limit=config.llm.max_turns)
        settings = ModelSettings(max_tokens=config.llm.max_output_tokens, timeout=config.llm.request_timeout_s)
        tokens_in = tokens_out = 0

        async def turn(prompt: str, history: list[ModelMessage] | None = None) -> AgentRunResult[str]:
            """One turn of this agent's conversation (same model, instructions, tools and limits), counted."""
            nonlocal tokens_in, tokens_out
            answer = await agent.run(
                prompt,
                message_history=history,
                model=model,
                instructions=task.prompt,
                deps=deps,
                usage_limits=limits,
                model_settings=settings,
            )
            tokens_in, tokens_out = tokens_in + answer.usage.input_tokens, tokens_out + answer.usage.output_tokens
            return answer

        RETRY_LISTENER.set(task.notify)  # this agent's task only: contextvars are per asyncio task
        try:
            result = await turn(START)
            unseen = peers.unseen_blocking()
            if unseen:
                peers.mark_seen(unseen)
                result = await turn(CHECKPOINT.format(findings=_listing(unseen)), result.all_messages())
            verdict = classify_text(result.output)
            if verdict.status is not OutputStatus.VALID and not verdict.usable_index:
                result = await turn(
                    REPAIR.format(reason=verdict.reason, prefix=task.agent.prefix), result.all_messages()
                )
            text = result.output
        except CostCeilingError as exc:  # stopped at this turn: an honest stub, never a silent "no findings"
            usage = Usage(tokens_in, tokens_out, cost_of(config, spec, tokens_in, tokens_out)[0])
            return _stopped(task, spec, exc.stop.reason, usage, started)
        except UsageLimitExceeded as exc:
            raise RuntimeError(f"{spec.label} stopped: {exc} (llm.max_turns = {config.llm.max_turns})") from None
        except ModelHTTPError as exc:
            raise RuntimeError(f"{spec.label} answered HTTP {exc.status_code}: {_short(exc)}") from None
        except ModelAPIError as exc:
            unreachable = _cause(exc, EndpointUnreachable)
            raise RuntimeError(f"{spec.label}: {_short(unreachable or exc)}") from None
        write_agent_output(task.output_dir, task.agent.name, text if text.endswith("\n") else text + "\n")
        cost, note = cost_of(config, spec, tokens_in, tokens_out)
        notes = tuple(n for n in (note, *(f"refused tool path {p!r}" for p in workspace.refusals)) if n)
        return AgentResult(
            task.agent.name,
            Outcome.COMPLETED,
            task.output_dir / f"{task.agent.name}.md",
            spec.provenance,
            Usage(tokens_in, tokens_out, cost, time.monotonic() - started),
            notes=notes,
        )

    def _metered(self, model: Model, spec: ModelSpec, task: AgentTask) -> Model:
        """``model`` behind the run's meter when a cap applies (``budget.max_usd``), else as it is."""
        config: Config = task.config
        if self.meter is None:  # run outside a launch (the library, a test): the config's cap still holds
            self.meter = SpendMeter(config.budget.max_usd)
        return metered(model, self.meter, task.agent.name, config, spec)

    async def react(self, task: AgentTask) -> Reply:
        """The reaction round's answer: the agent's model with the read tools only (to cite code of its own),
        ``task.prompt`` as its instructions; the peer channel is not touched and nothing is written."""
        from pydantic_ai import Agent, UsageLimits
        from pydantic_ai.settings import ModelSettings

        from fluxdrive.runtimes.llm.toolset import READ_TOOLS, Tools

        started = time.monotonic()
        spec, model = self._model(task)
        config: Config = task.config
        model = self._metered(model, spec, task)
        workspace = _workspace(task, started)
        reader: Agent[Tools, str] = Agent(deps_type=Tools, tools=READ_TOOLS, output_type=str)
        RETRY_LISTENER.set(task.notify)
        result = await reader.run(
            REACT,
            model=model,
            instructions=task.prompt,
            deps=Tools(workspace, PeerChannel(Path(os.devnull), "")),
            usage_limits=UsageLimits(request_limit=config.llm.max_turns),
            model_settings=ModelSettings(max_tokens=config.llm.max_output_tokens, timeout=config.llm.request_timeout_s),
        )
        tokens_in, tokens_out = result.usage.input_tokens, result.usage.output_tokens
        cost, _note = cost_of(config, spec, tokens_in, tokens_out)
        return Reply(result.output, Usage(tokens_in, tokens_out, cost, time.monotonic() - started), spec.provenance)

    async def aclose(self) -> None:
        """Close the HTTP clients (the review calls this when its stages are done)."""
        for client in self._clients:
            await client.aclose()
        self._clients.clear()

    def notes(self) -> list[str]:
        """What rate limiting did to the concurrency cap."""
        limiters = [*([self.limiter] if self.limiter is not None else []), *self._fleet.values()]
        return [event for limiter in limiters for event in limiter.events]

    @property
    def retried_requests(self) -> int:
        """HTTP requests retried after a 429/5xx/connection failure, over the whole run."""
        return sum(t.retried for t in self._transports)


def _stopped(task: AgentTask, spec: ModelSpec, reason: str, usage: Usage, started: float) -> AgentResult:
    """The cost ceiling stopped this agent before a request: an error stub that says so, and what it spent."""
    path = write_error_stub(task.output_dir, task.agent.name, reason)
    usage = Usage(usage.tokens_in, usage.tokens_out, usage.cost_usd, time.monotonic() - started)
    return AgentResult(task.agent.name, Outcome.ERROR, path, spec.provenance, usage, error=reason, retryable=False)


def _workspace(task: AgentTask, started: float) -> Workspace:
    """The agent's read-only view of the project, its tools bounded by the agent's deadline."""
    config: Config = task.config
    return Workspace(
        Path(task.content.root),
        max_bytes=config.llm.max_file_bytes,
        deadline=started + task.deadline_s if task.deadline_s is not None else None,
        tool_timeout_s=config.llm.tool_timeout_s,
    )


def _listing(findings: list[PeerFinding]) -> str:
    return "\n".join(
        f"- {f.agent} ({f.category}): {f.summary}" + (f" [{', '.join(f.file_refs)}]" if f.file_refs else "")
        for f in findings
    )


def _cause(exc: BaseException, kind: type[BaseException]) -> BaseException | None:
    """The first exception of ``kind`` in ``exc``'s cause/context chain (the SDKs wrap transport errors)."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, kind):
            return current
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return None


def _short(exc: BaseException) -> str:
    return " ".join(str(exc).split())[:300]


def metered(model: Model, meter: SpendMeter | None, caller: str, config: Config, spec: ModelSpec) -> Model:
    """``model`` behind the run's ``meter`` when it has a cap (``budget.max_usd``), else as it is: the agents'
    calls and the run's other model calls (validation's checker) charge the same meter."""
    if meter is None or meter.cap is None:
        return model
    from fluxdrive.runtimes.llm.metered import MeteredModel

    def price(tokens_in: int, tokens_out: int) -> float:
        return cost_of(config, spec, tokens_in, tokens_out)[0]

    return MeteredModel(model, meter, caller, price, config.llm.max_output_tokens)


def cost_of(config: Config, spec: ModelSpec, tokens_in: int, tokens_out: int) -> tuple[float, str | None]:
    """US dollars from ``llm.prices`` (0 with a note for a model the table does not list)."""
    price = config.llm.prices.get(spec.label)
    if price is None:
        return 0.0, f"no price for {spec.label} in llm.prices: cost recorded as 0"
    cost = tokens_in / 1e6 * price.input_per_mtok + tokens_out / 1e6 * price.output_per_mtok
    return round(cost, 6), None
