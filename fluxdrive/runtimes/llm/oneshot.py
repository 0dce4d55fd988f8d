"""One bounded question to a model with a validated, typed answer (``--llm-triage``, research, kb inquisitors).

The same model strings, keys, HTTP client and backoff as the agents use.
Without ``root`` the model has no tools and at most two requests (pydantic-ai
retries once when the answer does not validate); with ``root`` it also gets
the read-only project tools (``read_file``, ``list_files``, ``grep``, confined
to ``root``) and up to ``max_requests`` turns. Any failure raises, and callers
fall back to what they would have done without the model. The answer comes
with what it cost, so every token is accounted for.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TypeVar

from fluxdrive.config.model import Config
from fluxdrive.runtimes.base import Usage
from fluxdrive.runtimes.llm.backoff import client_for, limiter_for
from fluxdrive.runtimes.llm.models import ModelSpec, build_model, parse_model
from fluxdrive.runtimes.llm.runtime import ModelFactory, cost_of, metered
from fluxdrive.runtimes.llm.spend import SpendMeter

T = TypeVar("T")


async def ask(
    model_name: str,
    instructions: str,
    question: str,
    output_type: type[T],
    config: Config,
    *,
    root: Path | None = None,
    max_requests: int = 2,
    model_factory: ModelFactory | None = None,
    extra_tools: Sequence[Any] = (),
    deadline: float | None = None,
    meter: SpendMeter | None = None,
    caller: str = "",
) -> tuple[T, ModelSpec, Usage]:
    """The model's answer as ``output_type``, the model spec, and what it cost (tokens, dollars, seconds).

    With ``root`` the model may read the project (the read tools only, never
    the peer channel); ``extra_tools`` adds more (research's web search and
    fetch); ``deadline`` (monotonic) bounds the tools' work; ``meter`` is the run's money meter
    (``budget.max_usd``), charged as ``caller``: no request starts that could pass its cap.
    """
    from pydantic_ai import Agent, UsageLimits
    from pydantic_ai.settings import ModelSettings

    started = time.monotonic()
    spec = parse_model(model_name)
    client, _transport = client_for(config, limiter_for(config))
    async with client:
        model = metered((model_factory or build_model)(spec, client), meter, caller or model_name, config, spec)
        settings = ModelSettings(max_tokens=config.llm.max_output_tokens, timeout=config.llm.request_timeout_s)
        limits = UsageLimits(request_limit=max_requests)
        if root is None:
            agent: Agent[Any, T] = Agent(model, instructions=instructions, output_type=output_type)
            result = await agent.run(question, usage_limits=limits, model_settings=settings)
        else:
            from fluxdrive.runtimes.llm.tools import PeerChannel, Workspace
            from fluxdrive.runtimes.llm.toolset import READ_TOOLS, Tools

            reader: Agent[Tools, T] = Agent(
                model,
                deps_type=Tools,
                tools=[*READ_TOOLS, *extra_tools],
                instructions=instructions,
                output_type=output_type,
            )
            workspace = Workspace(
                Path(root),
                max_bytes=config.llm.max_file_bytes,
                deadline=deadline,
                tool_timeout_s=config.llm.tool_timeout_s,
            )
            # only the read (and extra) tools are registered: the channel is never touched
            deps = Tools(workspace, PeerChannel(Path(os.devnull), ""))
            result = await reader.run(question, deps=deps, usage_limits=limits, model_settings=settings)
    tokens_in, tokens_out = result.usage.input_tokens, result.usage.output_tokens
    cost, _note = cost_of(config, spec, tokens_in, tokens_out)
    return result.output, spec, Usage(tokens_in, tokens_out, cost, time.monotonic() - started)
