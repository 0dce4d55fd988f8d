"""fluxdrive's own Python and document checks, one module per agent area."""

from __future__ import annotations

import importlib

MODULES = (
    "safety_injection",
    "safety_arguments",
    "safety_paths",
    "safety_crypto",
    "safety_settings",
    "safety_http",
    "safety_web",
    "safety_declared",
    "safety_xml",
    "safety_tokens",
    "safety_templates",
    "safety_eval_wrappers",
    "safety_signing_keys",
    "safety_redos",
    "correctness_values",
    "correctness_errors",
    "correctness_concurrency",
    "quality",
    "performance_loops",
    "performance_io",
    "game",
    "product",
    "documents",
    "doc_decisions",
    "doc_people",
    "doc_resilience",
    "doc_perception",
    "doc_systems",
)


def load_all() -> None:
    """Import every check module so its checks register themselves."""
    for name in MODULES:
        importlib.import_module(f"fluxdrive.runtimes.static.checks.{name}")
