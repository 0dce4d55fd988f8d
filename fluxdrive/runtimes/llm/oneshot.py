"""One bounded question to a model with a validated, typed answer (used by ``--llm-triage``).

The same model strings, keys, HTTP client and backoff as the agents use; no
tools; at most two requests (pydantic-ai retries once when the answer does
not validate). Any failure raises, and callers fall back to what they would
have done without the model.
"""

from __future__ import annotations

import time
from typing import TypeVar

from fluxdrive.config.model import Config
from fluxdrive.runtimes.base import Usage
from fluxdrive.runtimes.llm.backoff import client_for, limiter_for
from fluxdrive.runtimes.llm.models import ModelSpec, build_model, parse_model
from fluxdrive.runtimes.llm.runtime import ModelFactory, cost_of

T = TypeVar("T")


async def ask(
    model_name: str,
    instructions: str,
    question: str,
    output_type: type[T],
    config: Config,
    *,
    model_factory: ModelFactory | None = None,
) -> tuple[T, ModelSpec, Usage]:
    """The model's answer as ``output_type``, the model spec, and what it cost (tokens, dollars, seconds)."""
    from pydantic_ai import Agent, UsageLimits
    from pydantic_ai.settings import ModelSettings

    started = time.monotonic()
    spec = parse_model(model_name)
    client, _transport = client_for(config, limiter_for(config))
    async with client:
        model = (model_factory or build_model)(spec, client)
        agent = Agent(model, instructions=instructions, output_type=output_type)
        result = await agent.run(
            question,
            usage_limits=UsageLimits(request_limit=2),
            model_settings=ModelSettings(max_tokens=2000, timeout=config.llm.request_timeout_s),
        )
    tokens_in, tokens_out = result.usage.input_tokens, result.usage.output_tokens
    cost, _note = cost_of(config, spec, tokens_in, tokens_out)
    return result.output, spec, Usage(tokens_in, tokens_out, cost, time.monotonic() - started)
