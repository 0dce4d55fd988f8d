"""Build the effective configuration from its layers, remembering who set what.

Layers, later wins (ARCHITECTURE.md "Configuration"):

1. built-in defaults (the numbers of PROTOCOL.md),
2. the user file ``$XDG_CONFIG_HOME/fluxdrive/config.toml``
   (``~/.config/fluxdrive/config.toml``),
3. the project file ``PROJECT_ROOT/.fluxdrive/config.toml`` (for a diff, as
   of its base commit), less the privileged settings a reviewed repository
   may not make unless the user trusts it (:mod:`fluxdrive.config.trust`),
4. environment variables ``FLUXDRIVE_<SECTION>__<KEY>`` (value parsed as a
   TOML literal, else taken as a string),
5. flags given to a command (``--set section.key=value`` and options such as
   ``--max-concurrency``).

Every leaf value remembers the layer that set it, so ``fluxdrive config
show`` can print its source and an invalid value is reported as one line
naming the file (or variable), the key and the problem.
"""

from __future__ import annotations

import difflib
import os
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, get_origin

from pydantic import BaseModel, ValidationError

from fluxdrive.config.model import Config
from fluxdrive.config.trust import Ignored, is_trusted, split_project_layer
from fluxdrive.core import git as _git
from fluxdrive.core.confine import is_inside
from fluxdrive.core.paths import UnreadableFileError, read_regular
from fluxdrive.errors import ConfigError, InputError

ENV_PREFIX = "FLUXDRIVE_"
PROJECT_CONFIG = ".fluxdrive/config.toml"
DEFAULT_SOURCE = "default"
MAX_CONFIG_BYTES = 16 * 1024 * 1024  # a settings file, not a disk image


@dataclass(frozen=True, slots=True)
class Layer:
    """One configuration layer as consulted: its name, where, and if present."""

    name: str
    location: str
    present: bool


@dataclass(frozen=True, slots=True)
class LoadedConfig:
    """The effective config, each leaf key's source, and the layers consulted."""

    config: Config
    sources: Mapping[str, str]
    layers: tuple[Layer, ...]
    ignored: tuple[Ignored, ...] = ()

    def notes(self) -> list[str]:
        """One line per privileged setting the project tried to make (what a run says with its verdict)."""
        return [item.note() for item in self.ignored]

    def source_of(self, key: str) -> str:
        """The layer that set ``key`` (a dotted path), or 'default'."""
        probe = key
        while probe:
            if probe in self.sources:
                return self.sources[probe]
            probe = probe.rpartition(".")[0]
        return DEFAULT_SOURCE

    def items(self) -> list[tuple[str, Any, str]]:
        """(dotted key, value, source) for every leaf, in model order."""
        rows: list[tuple[str, Any, str]] = []
        for key, value in _leaves(self.config.model_dump(mode="json")):
            rows.append((key, value, self.source_of(key)))
        return rows


def _leaves(data: Mapping[str, Any], prefix: str = "") -> list[tuple[str, Any]]:
    out: list[tuple[str, Any]] = []
    for key, value in data.items():
        dotted = f"{prefix}{key}"
        if isinstance(value, Mapping) and value:
            out.extend(_leaves(value, dotted + "."))
        else:
            out.append((dotted, value))
    return out


def user_config_path(env: Mapping[str, str]) -> Path:
    """``$XDG_CONFIG_HOME/fluxdrive/config.toml`` (default ``~/.config``)."""
    base = env.get("XDG_CONFIG_HOME") or str(Path(env.get("HOME", "~")).expanduser() / ".config")
    return Path(base) / "fluxdrive" / "config.toml"


def project_config_path(project_root: Path) -> Path:
    """``PROJECT_ROOT/.fluxdrive/config.toml``."""
    return Path(project_root) / PROJECT_CONFIG


def _read_toml(path: Path) -> dict[str, Any]:
    """One config file's tables; a FIFO, device or directory in its place is one ConfigError, never a hang."""
    if path.is_dir():
        raise ConfigError(source=str(path), key=None, problem="is a directory, not a TOML file")
    try:
        data = read_regular(path, "config file", limit=MAX_CONFIG_BYTES)
    except UnreadableFileError as exc:
        raise ConfigError(source=str(path), key=None, problem=exc.problem, hint="make it a TOML file") from None
    return _parse_toml(data, str(path))


def _parse_toml(data: bytes, source: str) -> dict[str, Any]:
    try:
        return tomllib.loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise ConfigError(source=source, key=None, problem="is not UTF-8 text") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(source=source, key=None, problem=f"invalid TOML: {exc}", hint="fix the syntax") from None
    except RecursionError:
        raise ConfigError(source=source, key=None, problem="nests arrays or tables too deeply to read") from None
    except ValueError:  # an integer past Python's int-string limit (4,300 digits), raised from inside tomllib
        raise ConfigError(source=source, key=None, problem="holds a number with too many digits to read") from None


def parse_value(raw: str) -> Any:
    """A TOML literal (``3``, ``0.5``, ``true``, ``["a", "b"]``) or the string itself."""
    try:
        return tomllib.loads(f"value = {raw}")["value"]
    except tomllib.TOMLDecodeError:
        return raw
    except RecursionError:
        raise ConfigError(source="--set", key=None, problem="the value nests too deeply to read") from None
    except ValueError:  # an integer past Python's int-string limit (4,300 digits), raised from inside tomllib
        raise ConfigError(source="--set", key=None, problem=f"the value has too many digits ({len(raw):,})") from None


def _nest(dotted: str, value: Any) -> dict[str, Any]:
    parts = [p for p in dotted.split(".") if p]
    if not parts:
        raise ValueError("empty key")
    node: dict[str, Any] = {parts[-1]: value}
    for part in reversed(parts[:-1]):
        node = {part: node}
    return node


def env_layer(env: Mapping[str, str]) -> tuple[dict[str, Any], dict[str, str]]:
    """Config values from ``FLUXDRIVE_SECTION__KEY`` variables, and their names."""
    data: dict[str, Any] = {}
    names: dict[str, str] = {}
    for name in sorted(env):
        if not name.startswith(ENV_PREFIX) or "__" not in name:
            continue
        dotted = name[len(ENV_PREFIX) :].lower().replace("__", ".")
        value = coerce_for_key(dotted, parse_value(env[name]))
        _merge(data, _nest(dotted, value), {}, lambda _k: "")
        names[dotted] = f"env {name}"
    return data, names


def flag_layer(assignments: Mapping[str, Any]) -> dict[str, Any]:
    """Nested config from dotted ``key: value`` pairs given as flags."""
    data: dict[str, Any] = {}
    for dotted, value in assignments.items():
        _merge(data, _nest(dotted, coerce_for_key(dotted, value)), {}, lambda _k: "")
    return data


def with_flags(config: Config, flags: Mapping[str, Any]) -> Config:
    """An already loaded ``config`` (a library caller's) with dotted ``flags`` on top, validated the way
    :func:`load_config` validates its flag layer (one ConfigError naming the key)."""
    if not flags:
        return config
    merged = config.model_dump()
    _merge(merged, flag_layer(flags), {}, lambda _k: "")
    try:
        return Config.model_validate(merged)
    except ValidationError as exc:
        error = exc.errors()[0]
        key = ".".join(str(p) for p in error["loc"])
        problem, hint = _problem(error)
        raise ConfigError(source=f"flag {key}", key=key or None, problem=problem, hint=hint) from None


def _merge(
    base: dict[str, Any],
    layer: Mapping[str, Any],
    sources: dict[str, str],
    label: Callable[[str], str],
    prefix: str = "",
) -> None:
    for key, value in layer.items():
        dotted = f"{prefix}{key}"
        if isinstance(value, Mapping) and isinstance(base.get(key), dict):
            _merge(base[key], value, sources, label, dotted + ".")
        else:
            base[key] = dict(value) if isinstance(value, Mapping) else value
            sources[dotted] = label(dotted)
            for known in [k for k in sources if k.startswith(dotted + ".")]:
                sources[known] = label(dotted)


def _annotation_at(loc: tuple[str, ...]) -> Any:
    """The type annotation of the config field at ``loc`` (None if unknown)."""
    annotation: Any = Config
    for part in loc:
        if not (isinstance(annotation, type) and issubclass(annotation, BaseModel)):
            return None
        field = annotation.model_fields.get(part)
        if field is None:
            return None
        annotation = field.annotation
    return annotation


def _model_fields_at(loc: tuple[str, ...]) -> list[str]:
    model = _annotation_at(loc)
    if isinstance(model, type) and issubclass(model, BaseModel):
        return list(model.model_fields)
    return []


def coerce_for_key(dotted: str, value: Any) -> Any:
    """Let a list-typed key take a comma-separated string (``a,b``)."""
    if isinstance(value, str) and get_origin(_annotation_at(tuple(dotted.split(".")))) is list:
        return [item.strip() for item in value.split(",") if item.strip()]
    return value


def _problem(error: Mapping[str, Any]) -> tuple[str, str | None]:
    loc = tuple(str(p) for p in error["loc"])
    if error["type"] == "extra_forbidden":
        known = _model_fields_at(loc[:-1])
        close = difflib.get_close_matches(loc[-1], known, n=1)
        hint = f"did you mean '{'.'.join((*loc[:-1], close[0]))}'?" if close else None
        return "unknown key", hint
    message = str(error["msg"])
    value = error.get("input")
    if not isinstance(value, Mapping) and error["type"] not in ("missing", "value_error"):
        message = f"{message} (got {value!r})"
    return message.removeprefix("Value error, "), None


def _constant(label: str) -> Callable[[str], str]:
    """A label function that names one file for every key it sets."""
    return lambda _key: label


def _label(names: Mapping[str, str], key: str, fallback: str) -> str:
    """The name of the variable or flag that set ``key`` or a key below it."""
    if key in names:
        return names[key]
    below = [names[k] for k in sorted(names) if k.startswith(key + ".")]
    return below[0] if below else fallback


def _error_source(key: str, sources: Mapping[str, str]) -> str:
    probe = key
    while probe:
        if probe in sources:
            return sources[probe]
        probe = probe.rpartition(".")[0]
    below = sorted(v for k, v in sources.items() if k.startswith(key + ".") or not key)
    return below[-1] if below else DEFAULT_SOURCE


def load_config(
    project_root: Path | None = None,
    *,
    env: Mapping[str, str] | None = None,
    flags: Mapping[str, Any] | None = None,
    flag_labels: Mapping[str, str] | None = None,
    revision: str | None = None,
) -> LoadedConfig:
    """Merge every layer and validate; raise ConfigError naming source and key.

    ``flags`` maps dotted keys to values given on the command line;
    ``flag_labels`` optionally names the flag that set each key (for
    ``config show`` and error messages), default ``flag``. ``revision``
    reads the project file from that git commit instead of the work tree
    (a diff is reviewed under the settings of its base, never its own).
    The project file's privileged settings are dropped unless the user
    trusts the project (:mod:`fluxdrive.config.trust`).
    """
    env = os.environ if env is None else env
    merged: dict[str, Any] = Config().model_dump()
    sources: dict[str, str] = {}
    layers = [Layer("defaults", "built in", True)]

    user_path = user_config_path(env)
    user_data = _read_toml(user_path) if user_path.exists() else {}
    layers.append(Layer("user", str(user_path), user_path.exists()))
    _merge(merged, user_data, sources, _constant(str(user_path)))

    env_data, env_names = env_layer(env)
    flag_data = flag_layer(flags or {})
    ignored: list[Ignored] = []
    trusted = False
    if project_root is not None:
        trusted = _trusts(project_root, user_data, env_data, flag_data)
        project_data, location = _project_layer(Path(project_root), revision)
        layers.append(Layer("project", location, project_data is not None))
        if project_data is not None:
            if not trusted:
                project_data, ignored = split_project_layer(project_data, location)
            _merge(merged, project_data, sources, _constant(location))

    layers.append(Layer("env", f"{ENV_PREFIX}<SECTION>__<KEY>", bool(env_data)))
    _merge(merged, env_data, sources, lambda k: _label(env_names, k, "env"))

    labels = dict(flag_labels or {})
    layers.append(Layer("flags", "command line", bool(flag_data)))
    _merge(merged, flag_data, sources, lambda k: _label(labels, k, "flag"))

    try:
        config = Config.model_validate(merged)
    except ValidationError as exc:
        error = exc.errors()[0]
        key = ".".join(str(p) for p in error["loc"])
        problem, hint = _problem(error)
        raise ConfigError(source=_error_source(key, sources), key=key or None, problem=problem, hint=hint) from None
    if trusted and not config.trust.project_config:  # trusted through trust.projects: say so downstream
        config = config.model_copy(update={"trust": config.trust.model_copy(update={"project_config": True})})
    return LoadedConfig(config, dict(sources), tuple(layers), tuple(ignored))


def _project_layer(root: Path, revision: str | None) -> tuple[dict[str, Any] | None, str]:
    """The project file's settings (None when absent) and where they were read: the work tree or a commit."""
    path = project_config_path(root)
    if revision is None:
        if not (path.exists() or path.is_symlink()):
            return None, str(path)
        if not is_inside(path, root):
            raise ConfigError(
                source=str(path),
                key=None,
                problem="leads outside the project (a symlink)",
                hint="a project's settings are read only from inside it",
            )
        return _read_toml(path), str(path)
    location = f"{path} at {revision[:12]}"
    data = _git.show_file(root, revision, PROJECT_CONFIG)
    return (None if data is None else _parse_toml(data, location)), location


def _trusts(root: Path, *layers: Mapping[str, Any]) -> bool:
    """Whether the user's own layers (user file, environment, flags) trust the project at ``root``."""
    project_config, projects = False, []
    for layer in layers:
        section = layer.get("trust")
        if not isinstance(section, Mapping):
            continue
        if isinstance(section.get("project_config"), bool):
            project_config = section["project_config"]
        if isinstance(section.get("projects"), list):
            projects = [str(p) for p in section["projects"]]
    return is_trusted(root, project_config=project_config, projects=projects)


def parse_assignments(pairs: list[str]) -> dict[str, Any]:
    """``["dispatch.max_concurrency=4"]`` -> ``{"dispatch.max_concurrency": 4}``."""
    out: dict[str, Any] = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        if not sep or not key.strip():
            raise InputError(
                f"--set expects KEY=VALUE, got {pair!r}",
                hint="e.g. --set dispatch.max_concurrency=4",
            )
        out[key.strip()] = parse_value(raw.strip())
    return out
