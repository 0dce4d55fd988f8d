"""What a reviewed repository may configure, and what only the person running fluxdrive may.

fluxdrive's main use is reviewing code somebody else wrote, so the files
inside the reviewed tree are untrusted input. The trust model (README
"Security model") splits the settings in two:

- **Privileged** settings choose *what runs, where traffic goes or what the
  user's keys spend*: runtimes and models, the cli-agent command and
  executable, cluster, channel and rate-limit addresses, the environment
  forwarded to other machines, the search provider, budgets and prices, and
  trust itself. They come only from the user's config file, the environment
  and the command line.
- Everything else tunes *what is reported* (thresholds, rules, severities,
  exclusions) and may come from the project's ``.fluxdrive/config.toml``.

A privileged setting found in a project file is dropped before validation,
with one note naming it, unless the user trusts the project:
``--trust-project-config`` (``trust.project_config = true``) or a root listed
in ``trust.projects`` of the user's own config. The same rule covers the
``runtime:`` and ``model:`` fields of project agent definitions.

Pure functions over parsed TOML: no I/O here.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# Dotted key patterns ("*" matches one segment), each with the reason it is privileged.
PRIVILEGED: tuple[tuple[str, str], ...] = (
    ("cli_agent", "chooses a command to run"),
    ("agents.*.runtime", "chooses which runtime runs an agent"),
    ("agents.*.model", "chooses a model and its provider"),
    ("llm.model", "chooses a model and its provider"),
    ("llm.prices", "sets what the spending is counted at"),
    ("roles.floor_model", "chooses a model and its provider"),
    ("validation.checker", "chooses a model and its provider"),
    ("budget", "sets how much the review may spend"),
    ("dispatch.backend", "chooses where agents run"),
    ("dispatch.cluster", "chooses a host to connect to"),
    ("dispatch.rate_limit_url", "chooses a host to connect to"),
    ("dispatch.forward_env", "chooses which environment variables leave this machine"),
    ("channel.url", "chooses a host to connect to"),
    ("research.search_provider", "chooses where search queries go"),
    ("trust", "only you can trust a project"),
)

# Agent definition front-matter fields with the same power as agents.*.runtime / agents.*.model.
PRIVILEGED_AGENT_FIELDS: Mapping[str, str] = {
    "runtime": "chooses which runtime runs the agent",
    "model": "chooses a model and its provider",
}

TRUST_HINT = "pass --trust-project-config, or add the project to trust.projects in your own config"


@dataclass(frozen=True, slots=True)
class Ignored:
    """A setting a project file tried to make and was not allowed to."""

    key: str
    value: Any
    source: str
    reason: str

    def note(self) -> str:
        """One line for the run's notes and ``config show``."""
        return f"ignored {self.key} from {self.source}: it {self.reason} ({TRUST_HINT})"


def privilege_of(dotted: str) -> str | None:
    """Why ``dotted`` (a leaf key) is privileged, or None when a project may set it."""
    parts = dotted.split(".")
    for pattern, reason in PRIVILEGED:
        wanted = pattern.split(".")
        if len(parts) >= len(wanted) and all(w in ("*", p) for w, p in zip(wanted, parts, strict=False)):
            return reason
    return None


def split_project_layer(data: Mapping[str, Any], source: str) -> tuple[dict[str, Any], list[Ignored]]:
    """The project layer without its privileged settings, and what was taken out (in key order)."""
    kept: dict[str, Any] = {}
    ignored: list[Ignored] = []
    _split(data, "", kept, ignored, source)
    return kept, ignored


def _split(data: Mapping[str, Any], prefix: str, kept: dict[str, Any], ignored: list[Ignored], source: str) -> None:
    for key, value in data.items():
        dotted = f"{prefix}{key}"
        reason = privilege_of(dotted)
        if reason is not None and isinstance(value, Mapping) and value:
            _split(value, dotted + ".", {}, ignored, source)  # named leaf by leaf: every key below is privileged
        elif reason is not None:
            ignored.append(Ignored(dotted, value, source, reason))
        elif isinstance(value, Mapping):
            inner: dict[str, Any] = {}
            _split(value, dotted + ".", inner, ignored, source)
            kept[key] = inner
        else:
            kept[key] = value


def is_trusted(root: Path, *, project_config: bool, projects: list[str]) -> bool:
    """Whether ``root`` is trusted: trust.project_config, or a trust.projects entry equal to or above it."""
    if project_config:
        return True
    here = _real(root)
    for listed in projects:
        trusted = _real(Path(os.path.expanduser(listed)))
        if here == trusted or trusted in here.parents:
            return True
    return False


def _real(path: Path) -> Path:
    try:
        return path.resolve()
    except (OSError, RuntimeError):
        return path.absolute()
