"""Load agent definitions: built-ins from the package, overrides from the project.

Built-in agents live in ``fluxdrive/data/agents/*.md``; project agents in
``PROJECT_ROOT/.fluxdrive/agents/*.md`` win on a name clash. A definition's
body may include shared text with ``{{> partial-name}}`` (from
``fluxdrive/data/agents/_shared/``) and use ``{{name}}``, ``{{prefix}}``;
other ``{{placeholders}}`` (output path, channel path, ...) are left for the
prompt renderer to fill at launch.

Any problem is an :class:`AgentDefinitionError` naming the file and field.
"""

from __future__ import annotations

import difflib
import functools
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from fluxdrive.agents.definition import AgentDefinition, Origin
from fluxdrive.config.trust import PRIVILEGED_AGENT_FIELDS, TRUST_HINT
from fluxdrive.core import git as _git
from fluxdrive.core.confine import is_inside
from fluxdrive.core.paths import UnreadableFileError, decode_utf8, read_regular
from fluxdrive.core.structured import TooDeepError, load_yaml
from fluxdrive.errors import AgentDefinitionError, InputError, UsageError

PROJECT_AGENTS_DIR = Path(".fluxdrive") / "agents"
UNPRIVILEGED_SECTION = "static"  # the one runtime section an untrusted project's agent keeps
MAX_DEFINITION_BYTES = 4 * 1024 * 1024  # a prompt, not a disk image
SHARED_DIR = "_shared"

_FRONT_MATTER = re.compile(r"\A\ufeff?---[ \t]*\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|\Z)", re.S)
_PARTIAL = re.compile(r"\{\{>\s*([a-z0-9-]+)\s*\}\}")
_FIELD_NAMES = {"instructions": "body"}


def builtin_agents_dir() -> Path:
    """The directory of built-in definitions inside the installed package."""
    return Path(str(resources.files("fluxdrive") / "data" / "agents"))


def _expand(body: str, path: Path, values: Mapping[str, str]) -> str:
    shared = builtin_agents_dir() / SHARED_DIR

    def include(match: re.Match[str]) -> str:
        target = shared / f"{match.group(1)}.md"
        if not target.is_file():
            raise AgentDefinitionError(
                path=str(path), field="body", problem=f"unknown partial {{{{> {match.group(1)}}}}}"
            )
        return target.read_text(encoding="utf-8").strip("\n")

    text = _PARTIAL.sub(include, body)
    for key, value in values.items():
        text = text.replace("{{" + key + "}}", value)
    return text.strip() + "\n"


def _loc(error: Mapping[str, Any]) -> str:
    parts = [str(p) for p in error["loc"]]
    if parts and parts[0] in _FIELD_NAMES:
        parts[0] = _FIELD_NAMES[parts[0]]
    return ".".join(parts)


def parse_definition(text: str, path: Path, origin: Origin) -> AgentDefinition:
    """Validate one definition's text; ``path`` is named in every error."""
    text = text.replace("\r\n", "\n")
    match = _FRONT_MATTER.match(text)
    if not match:
        raise AgentDefinitionError(
            path=str(path),
            field=None,
            problem="no YAML front matter",
            hint="start the file with a '---' line, the fields, and another '---' line",
        )
    try:
        meta = load_yaml(match.group(1), "front matter")
    except TooDeepError as exc:
        raise AgentDefinitionError(path=str(path), field=None, problem=str(exc)) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 2}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or "syntax error"
        raise AgentDefinitionError(
            path=str(path), field=None, problem=f"invalid YAML front matter{where}: {problem}"
        ) from None
    if not isinstance(meta, dict):
        raise AgentDefinitionError(path=str(path), field=None, problem="front matter is not a mapping")
    for reserved in ("instructions", "origin", "source"):
        if reserved in meta:
            raise AgentDefinitionError(path=str(path), field=reserved, problem="is set by the loader, not the file")
    meta.setdefault("category", "builtin" if origin == "builtin" else "project")
    values = {k: str(meta[k]) for k in ("name", "prefix", "description") if k in meta}
    body = _expand(text[match.end() :], path, values)
    try:
        agent = AgentDefinition.model_validate({**meta, "instructions": body, "origin": origin, "source": path})
    except ValidationError as exc:
        error = exc.errors()[0]
        raise AgentDefinitionError(path=str(path), field=_loc(error), problem=str(error["msg"])) from None
    if agent.name != path.stem:
        raise AgentDefinitionError(
            path=str(path),
            field="name",
            problem=f"'{agent.name}' does not match the file name '{path.stem}.md'",
        )
    return agent


def load_definition(path: Path, origin: Origin, data: bytes | None = None) -> AgentDefinition:
    """Validate the definition file at ``path`` (read from disk unless its ``data`` is given)."""
    if data is None:
        try:  # a FIFO or device named <agent>.md is refused at once, never waited on
            data = read_regular(path, "agent definition", limit=MAX_DEFINITION_BYTES)
        except UnreadableFileError as exc:
            raise AgentDefinitionError(path=str(path), field=None, problem=exc.problem) from None
    try:
        text = decode_utf8(data, path, "agent definition")
    except InputError as exc:
        raise AgentDefinitionError(path=str(path), field=None, problem=exc.message) from None
    return parse_definition(text, path, origin)


def _definition_files(directory: Path, root: Path | None = None) -> list[Path]:
    """The definitions in ``directory``; with ``root``, one that a symlink takes outside it is an error."""
    if not directory.is_dir():
        return []
    found = sorted(p for p in directory.glob("*.md") if not p.name.startswith("_") and p.name != "README.md")
    outside = [path for path in found if root is not None and not is_inside(path, root)]
    if outside:
        raise AgentDefinitionError(
            path=str(outside[0]), field=None, problem="leads outside the project (a symlink)", hint="remove the link"
        )
    return found


@functools.lru_cache(maxsize=1)
def builtin_agents() -> dict[str, AgentDefinition]:
    """Every built-in definition by name (validated once per process)."""
    return {a.name: a for a in map(lambda p: load_definition(p, "builtin"), _definition_files(builtin_agents_dir()))}


@dataclass(frozen=True, slots=True)
class Roster:
    """The agents available to a project: built-ins plus project overrides."""

    agents: Mapping[str, AgentDefinition]
    overridden: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()  # project settings that were ignored (an untrusted project's runtime/model)

    def get(self, name: str) -> AgentDefinition:
        """The agent called ``name``; a UsageError with a suggestion otherwise."""
        if name in self.agents:
            return self.agents[name]
        close = difflib.get_close_matches(name, list(self.agents), n=1)
        if not close and f"fd-{name}" in self.agents:
            close = [f"fd-{name}"]
        hint = f"did you mean '{close[0]}'?" if close else "run 'fluxdrive agents list'"
        raise UsageError(f"unknown agent {name!r}", hint=hint)

    def of_kind(self, kind: str) -> list[AgentDefinition]:
        """Agents of one kind (``review`` or ``research``), by name."""
        return [a for a in self.agents.values() if a.kind == kind]

    def __iter__(self) -> Any:
        return iter(self.agents.values())

    def __len__(self) -> int:
        return len(self.agents)


def _check_references(agents: Iterable[AgentDefinition]) -> None:
    known = {a.name: a for a in agents}
    prefixes: dict[str, str] = {}
    for agent in sorted(known.values(), key=lambda a: (a.origin != "builtin", a.name)):
        for neighbour in agent.overlaps:
            if neighbour not in known:
                raise AgentDefinitionError(
                    path=str(agent.source), field="overlaps", problem=f"unknown agent '{neighbour}'"
                )
        for neighbour in agent.adjacent:
            if neighbour not in known:
                raise AgentDefinitionError(
                    path=str(agent.source), field="adjacent", problem=f"unknown agent '{neighbour}'"
                )
            if neighbour == agent.name:
                raise AgentDefinitionError(
                    path=str(agent.source),
                    field="adjacent",
                    problem="an agent cannot be adjacent to itself",
                )
        owner = prefixes.setdefault(agent.prefix, agent.name)
        if owner != agent.name:
            raise AgentDefinitionError(
                path=str(agent.source),
                field="prefix",
                problem=f"'{agent.prefix}' is already used by {owner}",
                hint="finding ids must say which agent found them; pick another prefix",
            )


def load_roster(project_root: Path | None = None, *, trusted: bool = False, revision: str | None = None) -> Roster:
    """Built-in agents, with ``PROJECT_ROOT/.fluxdrive/agents`` overriding by name.

    ``revision`` reads the project's definitions from that git commit (a diff's base). Unless ``trusted``,
    a project definition's ``runtime:`` and ``model:`` are dropped with a note (README "Security model"):
    a reviewed repository may write its reviewers' instructions, not choose what runs them.
    """
    agents = dict(builtin_agents())
    overridden: list[str] = []
    notes: list[str] = []
    if project_root is not None:
        for path, data in _project_definitions(Path(project_root), revision):
            agent = load_definition(path, "project", data)
            if not trusted:
                agent, dropped = _untrusted(agent)
                notes += dropped
            if agent.name in agents:
                overridden.append(agent.name)
            agents[agent.name] = agent
    _check_references(agents.values())
    return Roster(dict(sorted(agents.items())), tuple(sorted(overridden)), tuple(notes))


def _project_definitions(root: Path, revision: str | None) -> list[tuple[Path, bytes | None]]:
    """Each project definition file with its bytes when read from a commit (None: read it from disk)."""
    directory = root / PROJECT_AGENTS_DIR
    if revision is None:
        return [(path, None) for path in _definition_files(directory, root)]
    found: list[tuple[Path, bytes | None]] = []
    for name in _git.list_files_at(root, revision, PROJECT_AGENTS_DIR.as_posix()):
        if name.endswith(".md") and not name.startswith("_") and name != "README.md":
            data = _git.show_file(root, revision, f"{PROJECT_AGENTS_DIR.as_posix()}/{name}")
            if data is not None:
                found.append((directory / name, data))
    return found


def _untrusted(agent: AgentDefinition) -> tuple[AgentDefinition, list[str]]:
    """``agent`` without the fields an untrusted project may not set, and a note for each one it had.

    Of the runtime sections only the static runtime's stays (which offline analyzers back the agent: what is
    reported, not what runs): a section for any other runtime would configure how that runtime runs.
    """
    dropped = {name: reason for name, reason in PRIVILEGED_AGENT_FIELDS.items() if getattr(agent, name)}
    notes = [
        f"ignored {name}: {getattr(agent, name)!r} of project agent {agent.name} ({agent.source}): it {reason} "
        f"({TRUST_HINT})"
        for name, reason in dropped.items()
    ]
    update: dict[str, object] = dict.fromkeys(dropped)
    others = sorted(set(agent.runtimes) - {UNPRIVILEGED_SECTION})
    if others:
        update["runtimes"] = {k: v for k, v in agent.runtimes.items() if k == UNPRIVILEGED_SECTION}
        notes += [
            f"ignored the {name} runtime section of project agent {agent.name} ({agent.source}): it configures "
            f"how a runtime runs ({TRUST_HINT})"
            for name in others
        ]
    return (agent.model_copy(update=update) if update else agent), notes
