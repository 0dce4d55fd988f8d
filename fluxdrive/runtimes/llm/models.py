"""From ``provider:model`` to a pydantic-ai model, its HTTP client and its provenance.

Providers:

- ``anthropic:<model>`` - key ``ANTHROPIC_API_KEY``; ``ANTHROPIC_BASE_URL`` for a proxy;
- ``openai:<model>`` - key ``OPENAI_API_KEY``; with ``OPENAI_BASE_URL`` any
  OpenAI-compatible server (vLLM, llama.cpp server, LM Studio), key optional;
- ``ollama:<model>`` - ``OLLAMA_BASE_URL`` (default ``http://localhost:11434/v1``), no key;
- ``openrouter:<model>`` - key ``OPENROUTER_API_KEY``.

Keys come only from the environment, are handed to the SDK client and
nowhere else (no prompt, log, report or history row holds one). A missing key
is a :class:`~fluxdrive.errors.UsageError` naming the variable, raised
before any agent starts. Every client goes through
:class:`~fluxdrive.runtimes.llm.backoff.BackoffTransport`; the SDKs' own
retries are switched off so retries are counted once.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from fluxdrive.errors import UsageError
from fluxdrive.runtimes.base import Provenance
from fluxdrive.runtimes.families import model_family

if TYPE_CHECKING:
    import httpx2
    from pydantic_ai.models import Model

PROVIDERS = ("anthropic", "openai", "ollama", "openrouter")
OLLAMA_DEFAULT = "http://localhost:11434/v1"
OPENROUTER_URL = "https://openrouter.ai/api/v1"


@dataclass(frozen=True, slots=True)
class ModelSpec:
    """A parsed ``provider:model`` with where it is served."""

    provider: str
    name: str
    base_url: str | None
    key_variable: str | None
    key: str | None

    @property
    def label(self) -> str:
        """``provider:model`` as given (the price table's key)."""
        return f"{self.provider}:{self.name}"

    @property
    def provenance(self) -> Provenance:
        """Who answers: provider (``openai-compatible`` behind a custom URL), model family, model id."""
        provider = self.provider
        if provider == "openai" and self.base_url:
            provider = "openai-compatible"
        return Provenance(provider, model_family(self.name), self.name)


def parse_model(value: str, env: Mapping[str, str] | None = None) -> ModelSpec:
    """Parse and check ``provider:model``; a missing key or unknown provider is one clear UsageError."""
    env = os.environ if env is None else env
    provider, sep, name = (value or "").partition(":")
    if not sep or not name or provider not in PROVIDERS:
        raise UsageError(f"unknown model {value!r}", hint=_suggestion(value or ""))
    if provider == "anthropic":
        return _keyed(provider, name, "ANTHROPIC_API_KEY", env.get("ANTHROPIC_BASE_URL"), env)
    if provider == "openrouter":
        return _keyed(provider, name, "OPENROUTER_API_KEY", OPENROUTER_URL, env)
    if provider == "ollama":
        return ModelSpec(provider, name, env.get("OLLAMA_BASE_URL") or OLLAMA_DEFAULT, None, "ollama")
    base_url = env.get("OPENAI_BASE_URL") or None
    if base_url:  # a local or self-hosted server: a key only if it wants one
        return ModelSpec(provider, name, base_url, "OPENAI_API_KEY", env.get("OPENAI_API_KEY") or "unused")
    return _keyed(provider, name, "OPENAI_API_KEY", None, env)


_FAMILY_PROVIDER = {"claude": "anthropic", "gpt": "openai"}


def _suggestion(value: str) -> str:
    """Did-you-mean for a model string: a misspelt provider, or a bare model name without one."""
    provider, sep, name = value.partition(":")
    if sep and name:
        close = difflib.get_close_matches(provider, PROVIDERS, n=1, cutoff=0.6)
        if close:
            return f"did you mean {close[0]}:{name}?"
    elif value:
        guess = _FAMILY_PROVIDER.get(model_family(value))
        if guess:
            return f"models are named provider:model - did you mean {guess}:{value}?"
    return f"use provider:model with provider one of {', '.join(PROVIDERS)}, e.g. anthropic:claude-sonnet-4-6"


def _keyed(provider: str, name: str, variable: str, base_url: str | None, env: Mapping[str, str]) -> ModelSpec:
    key = env.get(variable)
    if not key:
        raise UsageError(
            f"{variable} is not set",
            hint=f"export {variable}=... to run agents on {provider}:{name} (keys are read only from the environment)",
        )
    return ModelSpec(provider, name, base_url, variable, key)


def build_model(spec: ModelSpec, http_client: httpx2.AsyncClient) -> Model:
    """The pydantic-ai model for ``spec``, talking through ``http_client``."""
    if spec.provider == "anthropic":
        from anthropic import AsyncAnthropic
        from pydantic_ai.models.anthropic import AnthropicModel
        from pydantic_ai.providers.anthropic import AnthropicProvider

        anthropic_client = AsyncAnthropic(
            api_key=spec.key, base_url=spec.base_url, max_retries=0, http_client=http_client
        )
        return AnthropicModel(spec.name, provider=AnthropicProvider(anthropic_client=anthropic_client))
    from openai import AsyncOpenAI
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    openai_client = AsyncOpenAI(api_key=spec.key, base_url=spec.base_url, max_retries=0, http_client=http_client)
    return OpenAIChatModel(spec.name, provider=OpenAIProvider(openai_client=openai_client))
