"""Synthesis: merge agent reports into findings, convergence, a timeline and a verdict."""

from fluxdrive.synthesis.engine import PROTOCOL_VERSION, Synthesis, synthesize
from fluxdrive.synthesis.model import AgentOutput, Conflict, Finding, RawFinding, TimelineEvent

__all__ = [
    "PROTOCOL_VERSION",
    "AgentOutput",
    "Conflict",
    "Finding",
    "RawFinding",
    "Synthesis",
    "TimelineEvent",
    "synthesize",
]
