"""A pydantic-ai model that asks the run's :class:`~fluxdrive.runtimes.llm.spend.SpendMeter` before every request.

The ceiling is a wrapper, not a special case in the agent loop: the llm
runtime hands pydantic-ai this model instead of the provider's, and every
request of every turn (tool calls, the checkpoint, the repair) passes
through :meth:`MeteredModel.request`. A refused request raises
:class:`~fluxdrive.runtimes.llm.spend.CostCeilingError` before anything is
sent, so the agent stops at its next turn and no request starts that could
pass the cap.

The worst case of a request is its input tokens - estimated as the
serialized conversation and tool schemas at four characters a token, which
overestimates the provider's count (the wire format is terser than
pydantic-ai's message JSON) - plus ``llm.max_output_tokens``, at the model's
prices. This module imports pydantic-ai at import time: the runtime imports
it only when a model is about to run.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

from pydantic_ai.messages import ModelMessage, ModelMessagesTypeAdapter, ModelResponse
from pydantic_ai.models import Model, ModelRequestParameters, StreamedResponse
from pydantic_ai.models.wrapper import WrapperModel
from pydantic_ai.settings import ModelSettings

from fluxdrive.runtimes.llm.spend import SpendMeter

CHARS_PER_TOKEN = 4
Price = Callable[[int, int], float]  # (input tokens, output tokens) -> US dollars


def input_tokens(messages: list[ModelMessage], parameters: ModelRequestParameters) -> int:
    """A deterministic, generous estimate of a request's input tokens."""
    size = len(ModelMessagesTypeAdapter.dump_json(messages))
    for tool in [*parameters.function_tools, *parameters.output_tools]:
        size += len(tool.name) + len(tool.description or "") + len(json.dumps(tool.parameters_json_schema))
    return size // CHARS_PER_TOKEN + 1


class MeteredModel(WrapperModel):
    """``wrapped`` for one agent, charging ``meter`` and refusing a request whose worst case passes the cap."""

    def __init__(self, wrapped: Model, meter: SpendMeter, agent: str, price: Price, max_output_tokens: int) -> None:
        super().__init__(wrapped)
        self.meter, self.agent, self.price, self.max_output_tokens = meter, agent, price, max_output_tokens

    def _worst_case(self, messages: list[ModelMessage], parameters: ModelRequestParameters) -> float:
        return self.price(input_tokens(messages, parameters), self.max_output_tokens)

    async def request(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
    ) -> ModelResponse:
        held = self.meter.reserve(self.agent, self._worst_case(messages, model_request_parameters))
        actual = 0.0
        try:
            response = await self.wrapped.request(messages, model_settings, model_request_parameters)
            actual = self.price(response.usage.input_tokens, response.usage.output_tokens)
            return response
        finally:
            self.meter.settle(held, actual)

    @asynccontextmanager
    async def request_stream(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
        run_context: Any = None,
    ) -> AsyncIterator[StreamedResponse]:
        held = self.meter.reserve(self.agent, self._worst_case(messages, model_request_parameters))
        actual = 0.0
        try:
            async with self.wrapped.request_stream(
                messages, model_settings, model_request_parameters, run_context
            ) as stream:
                yield stream
                usage = stream.usage
                actual = self.price(usage.input_tokens, usage.output_tokens)
        finally:
            self.meter.settle(held, actual)
