"""fluxdrive: a team of specialist reviewers, one deterministic verdict.

The public API is listed in ``__all__``; ``tests/test_repository.py`` fails
when it changes by accident. Names are imported lazily (PEP 562) so that
light entry points - an agent appending to the peer channel through the CLI
dozens of times per run - do not pay for pydantic models they never use.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from fluxdrive import contracts
    from fluxdrive.agents import AgentDefinition, load_roster
    from fluxdrive.api import (
        Interaction,
        ReviewOptions,
        ReviewPlan,
        ReviewSettings,
        approve,
        execute,
        plan_review,
        review,
    )
    from fluxdrive.config import Config, load_config
    from fluxdrive.contracts import IndexEntry, ParsedIndex
    from fluxdrive.errors import FluxdriveError
    from fluxdrive.exchange import channel, verdicts
    from fluxdrive.exchange.channel import PeerFinding
    from fluxdrive.exchange.verdicts import VerdictRecord
    from fluxdrive.runs.directory import RunDirectory
    from fluxdrive.synthesis import Synthesis, synthesize
    from fluxdrive.triage import Triage, triage_target

from fluxdrive.core.version import __version__

_LAZY = {
    "AgentDefinition": "fluxdrive.agents",
    "Config": "fluxdrive.config",
    "FluxdriveError": "fluxdrive.errors",
    "IndexEntry": "fluxdrive.contracts",
    "ParsedIndex": "fluxdrive.contracts",
    "PeerFinding": "fluxdrive.exchange.channel",
    "Interaction": "fluxdrive.api",
    "ReviewOptions": "fluxdrive.api",
    "ReviewPlan": "fluxdrive.api",
    "ReviewSettings": "fluxdrive.api",
    "RunDirectory": "fluxdrive.runs.directory",
    "approve": "fluxdrive.api",
    "execute": "fluxdrive.api",
    "plan_review": "fluxdrive.api",
    "Triage": "fluxdrive.triage",
    "VerdictRecord": "fluxdrive.exchange.verdicts",
    "load_config": "fluxdrive.config",
    "load_roster": "fluxdrive.agents",
    "review": "fluxdrive.api",
    "synthesize": "fluxdrive.synthesis",
    "triage_target": "fluxdrive.triage",
    "Synthesis": "fluxdrive.synthesis",
}
_MODULES = {
    "channel": "fluxdrive.exchange.channel",
    "contracts": "fluxdrive.contracts",
    "verdicts": "fluxdrive.exchange.verdicts",
}

__all__ = [
    "AgentDefinition",
    "Config",
    "FluxdriveError",
    "IndexEntry",
    "Interaction",
    "ParsedIndex",
    "PeerFinding",
    "ReviewOptions",
    "ReviewPlan",
    "ReviewSettings",
    "RunDirectory",
    "Synthesis",
    "Triage",
    "VerdictRecord",
    "__version__",
    "approve",
    "channel",
    "contracts",
    "execute",
    "load_config",
    "load_roster",
    "plan_review",
    "review",
    "synthesize",
    "triage_target",
    "verdicts",
]


def __getattr__(name: str) -> Any:
    if name in _MODULES:
        return importlib.import_module(_MODULES[name])
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'fluxdrive' has no attribute {name!r}")
