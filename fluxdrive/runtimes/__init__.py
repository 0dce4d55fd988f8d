"""Agent runtimes: the protocol, the registry, the guard, and the built-ins."""

from fluxdrive.runtimes.base import (
    AgentResult,
    AgentTask,
    Backend,
    Outcome,
    Provenance,
    ReviewContent,
    Runtime,
    Usage,
)
from fluxdrive.runtimes.guard import run_guarded
from fluxdrive.runtimes.registry import available, register, runtime_class

__all__ = [
    "AgentResult",
    "AgentTask",
    "Backend",
    "Outcome",
    "Provenance",
    "ReviewContent",
    "Runtime",
    "Usage",
    "available",
    "register",
    "run_guarded",
    "runtime_class",
]
