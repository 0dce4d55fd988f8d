"""One bounded question to a model with a validated, typed answer (used by ``--llm-triage``).

The same model strings, keys, HTTP client and backoff as the agents use; no
tools; at most two requests (pydantic-ai retries once when the answer does
not validate). Any failure raises, and callers fall back to what they would
have done without the model.
"""

from __future__ import annotations

from typing import TypeVar

from fluxdrive.config.model import Config
from fluxdrive.runtimes.llm.backoff import AdaptiveLimiter, Backoff, BackoffTransport
from fluxdrive.runtimes.llm.models import ModelSpec, build_model, parse_model
from fluxdrive.runtimes.llm.runtime import ModelFactory

T = TypeVar("T")


async def ask(
    model_name: str,
    instructions: str,
    question: str,
    output_type: type[T],
    config: Config,
    *,
    model_factory: ModelFactory | None = None,
) -> tuple[T, ModelSpec, int]:
    """The model's answer as ``output_type``, the model spec, and the tokens it cost."""
    import httpx2
    from pydantic_ai import Agent, UsageLimits
    from pydantic_ai.settings import ModelSettings

    spec = parse_model(model_name)
    limiter = AdaptiveLimiter(
        config.dispatch.max_concurrency, config.dispatch.min_concurrency, config.llm.halve_after_429
    )
    transport = BackoffTransport(
        httpx2.AsyncHTTPTransport(),
        limiter=limiter,
        retries=config.llm.http_retries,
        backoff=Backoff(config.dispatch.backoff_base_s, config.dispatch.backoff_factor, config.dispatch.backoff_max_s),
    )
    async with httpx2.AsyncClient(transport=transport, timeout=config.llm.request_timeout_s) as client:
        model = (model_factory or build_model)(spec, client)
        agent = Agent(model, instructions=instructions, output_type=output_type)
        result = await agent.run(
            question,
            usage_limits=UsageLimits(request_limit=2),
            model_settings=ModelSettings(max_tokens=2000, timeout=config.llm.request_timeout_s),
        )
    return result.output, spec, result.usage.input_tokens + result.usage.output_tokens
