"""Agent definitions: the format, the loader and the roster."""

from fluxdrive.agents.definition import AgentDefinition, Prefilter, Routing
from fluxdrive.agents.loader import (
    PROJECT_AGENTS_DIR,
    Roster,
    builtin_agents,
    builtin_agents_dir,
    load_definition,
    load_roster,
    parse_definition,
)

__all__ = [
    "PROJECT_AGENTS_DIR",
    "AgentDefinition",
    "Prefilter",
    "Roster",
    "Routing",
    "builtin_agents",
    "builtin_agents_dir",
    "load_definition",
    "load_roster",
    "parse_definition",
]
