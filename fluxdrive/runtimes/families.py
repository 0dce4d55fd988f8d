"""Model families: which models count as independent for cross-family convergence.

Why one table: synthesis trusts a finding more when reviewers of different
families agree (and flags single-family P0/P1s for verification), so every
runtime must name families the same way - ``claude-sonnet-4-6`` from the
Anthropic API and ``claude-sonnet-4-6`` reported by the Claude Code CLI are
one family, ``qwen2.5-coder:32b`` on Ollama and ``Qwen/Qwen2.5-Coder`` on
vLLM are one family. Unknown models fall back to their leading letters.
"""

from __future__ import annotations

import re

PROVIDER_PREFIXES = frozenset(
    {"anthropic", "openai", "google", "google-gla", "google-vertex", "bedrock", "ollama", "openrouter"}
)
# (prefix of the model id, family), first match wins
_FAMILIES = (
    ("claude", "claude"),
    ("opus", "claude"),
    ("sonnet", "claude"),
    ("haiku", "claude"),
    ("gpt", "gpt"),
    ("chatgpt", "gpt"),
    ("codex", "gpt"),
    ("codellama", "llama"),
    ("llama", "llama"),
    ("qwen", "qwen"),
    ("mistral", "mistral"),
    ("mixtral", "mistral"),
    ("codestral", "mistral"),
    ("devstral", "mistral"),
    ("gemini", "gemini"),
    ("gemma", "gemini"),
    ("deepseek", "deepseek"),
    ("phi", "phi"),
    ("grok", "grok"),
)


def model_family(model: str) -> str:
    """``claude``, ``gpt``, ``llama``, ``qwen``, ... from a model id, with or without provider and tag."""
    name = model.strip().lower().rsplit("/", 1)[-1]  # openrouter and Hugging Face ids: vendor/model
    head, _, tail = name.partition(":")
    while tail and head in PROVIDER_PREFIXES:  # anthropic:claude-..., ollama:qwen2.5:32b
        head, _, tail = tail.partition(":")
    name = head  # what follows a colon is a tag (qwen2.5:32b)
    for prefix, family in _FAMILIES:
        if name.startswith(prefix):
            return family
    if "claude" in name:
        return "claude"
    if "codex" in name or re.match(r"o\d", name):  # gpt-5-codex, o1, o3-mini, o4-mini
        return "gpt"
    match = re.match(r"[a-z]+", name)
    return match.group(0) if match else (name or "unknown")
