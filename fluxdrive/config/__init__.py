"""Layered, typed configuration: every protocol number is a key."""

from fluxdrive.config.loader import (
    Layer,
    LoadedConfig,
    load_config,
    parse_assignments,
    project_config_path,
    user_config_path,
)
from fluxdrive.config.model import Config

__all__ = [
    "Config",
    "Layer",
    "LoadedConfig",
    "load_config",
    "parse_assignments",
    "project_config_path",
    "user_config_path",
]
