"""Sources, sanitizers and sinks of JavaScript/TypeScript and Go data flow, declared as data.

The shipped declarations are ``fluxdrive/data/taint/javascript.yaml`` and
``go.yaml``; a project teaches the engine its own framework in
``.fluxdrive/taint-javascript.yaml`` / ``.fluxdrive/taint-go.yaml`` (same
shape: lists are extended, tables merged), so that ``ctx.state.input`` being
a request or ``runQuery()`` taking SQL needs no code. Reading the tables in
one place also keeps them reviewable: every name the engine trusts or fears
is written down here, not spread through code.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

import yaml

from fluxdrive.runtimes.static.flows.syntax import FLOW_LANGUAGES
from fluxdrive.runtimes.static.redos import ambiguities

ORIGINS = ("outside", "parameter", "unknown", "dangerous")
ARGUMENT_MODES = ("text", "sql", "object", "whole", "rest")


class FlowSpecError(ValueError):
    """A declaration file that does not have the documented shape (one readable line)."""


@dataclass(frozen=True, slots=True)
class Argument:
    """Which argument a sink watches, and when it counts.

    ``position``: 0-based, ``-1`` the last, ``None`` every argument. ``mode``:
    ``text`` only a text value (not a callback), ``sql`` only text that reads as
    SQL or is request data, ``object`` and ``whole`` only data passed as it came
    (not an object literal built around it).
    """

    position: int | None
    mode: str = ""


@dataclass(frozen=True, slots=True)
class MethodSink:
    """A sink named by its method: which arguments, on which receivers, unless an option makes it safe."""

    arguments: tuple[Argument, ...]
    receivers: frozenset[str] = frozenset()
    safe_options: frozenset[str] = frozenset()  # res.sendFile(name, { root }): confined to root


@dataclass(frozen=True, slots=True)
class SinkClass:
    """One kind of dangerous place (a shell, a file path, a redirect) and how to report it."""

    name: str
    rule: str
    cwe: str
    title: str
    why: str
    fix: str
    severity: Mapping[str, str]
    calls: Mapping[str, tuple[Argument, ...]]
    methods: Mapping[str, MethodSink]
    properties: frozenset[str] = frozenset()
    dangerous: frozenset[str] = frozenset()
    safe_prefix: re.Pattern[str] | None = None
    writers: frozenset[str] = frozenset()  # calls count only when their first argument is one of these
    sanitized_as: str = ""  # the sanitizers and checks that apply are those of this class (response: html)
    when_options: frozenset[str] = frozenset()  # calls count only with one of these options on ({ noent: true })

    @property
    def kind(self) -> str:
        """The class whose sanitizers and checks clear a value for this sink."""
        return self.sanitized_as or self.name


@dataclass(frozen=True)
class FlowSpec:
    """Everything the engine knows about one language's frameworks."""

    language: str
    request_names: frozenset[str]
    request_types: frozenset[str]
    request_fields: Mapping[str, str]
    request_nested: frozenset[str]
    request_methods: Mapping[str, str]
    handler_methods: frozenset[str]
    handler_receivers: frozenset[str]
    decorators: Mapping[str, str]
    globals: Mapping[str, str]
    calls: Mapping[str, str]
    clean: frozenset[str]
    pure: frozenset[str]
    pure_methods: frozenset[str]
    sanitize_all: frozenset[str]
    sanitize_words: Mapping[str, tuple[str, ...]]
    tags: Mapping[str, frozenset[str]]
    guards: Mapping[str, frozenset[str]]
    sinks: Mapping[str, SinkClass]
    binders: frozenset[str] = frozenset()
    guard_words: tuple[str, ...] = ()
    not_fields: Mapping[str, frozenset[str]] = field(default_factory=dict)
    archive: Mapping[str, frozenset[str]] = field(default_factory=dict)
    raw: Mapping[str, Any] = field(default_factory=dict, compare=False)

    @functools.cached_property
    def modules(self) -> frozenset[str]:
        """Modules some sink names by call (``child_process``): their functions are not method sinks."""
        return frozenset(callee.split(".")[0] for sink in self.sinks.values() for callee in sink.calls if "." in callee)

    def cleaned_by(self, callee: str) -> frozenset[str]:
        """The sink classes a call to ``callee`` makes its result safe for (``all``: every class)."""
        memo = self._cleaned_memo
        found = memo.get(callee)
        if found is None:
            found = memo[callee] = self._cleaned(callee)
        return found

    def _cleaned(self, callee: str) -> frozenset[str]:
        if callee in self.sanitize_all:
            return frozenset({"all"})
        low = callee.rsplit(".", 1)[-1].lower()
        return frozenset(
            kind
            for kind, words in self.sanitize_words.items()
            if any(word == callee or ("." not in word and word.lower() in low) for word in words)
        )

    @functools.cached_property
    def _cleaned_memo(self) -> dict[str, frozenset[str]]:
        return {}

    @functools.cached_property
    def sinks_by_call(self) -> dict[str, tuple[SinkClass, ...]]:
        """The sink classes naming each canonical call (one lookup per call, not one per class)."""
        return _index(self.sinks.values(), lambda sink: sink.calls)

    @functools.cached_property
    def sinks_by_method(self) -> dict[str, tuple[SinkClass, ...]]:
        """The sink classes naming each method."""
        return _index(self.sinks.values(), lambda sink: sink.methods)


def _index(sinks: Iterable[SinkClass], names: Callable[[SinkClass], Iterable[str]]) -> dict[str, tuple[SinkClass, ...]]:
    table: dict[str, list[SinkClass]] = {}
    for sink in sinks:
        for name in names(sink):
            table.setdefault(name, []).append(sink)
    return {name: tuple(found) for name, found in table.items()}


def _strings(value: object, where: str) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise FlowSpecError(f"{where}: expected a list of names")
    return value


def _table(value: object, where: str) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(isinstance(k, str) for k in value):
        raise FlowSpecError(f"{where}: expected a table")
    return value


def _labels(value: object, where: str) -> dict[str, str]:
    table = _table(value, where)
    if not all(isinstance(v, str) for v in table.values()):
        raise FlowSpecError(f"{where}: expected a table of name: label")
    return table


def _argument(item: object, where: str) -> Argument:
    if isinstance(item, int) and not isinstance(item, bool):
        return Argument(item)
    if not isinstance(item, str):
        raise FlowSpecError(f"{where}: an argument is a position, '*', 'last' or '<mode> <position>'")
    mode, _, position = item.rpartition(" ")
    if mode and mode not in ARGUMENT_MODES:
        raise FlowSpecError(f"{where}: unknown argument mode {mode!r} (one of {', '.join(ARGUMENT_MODES)})")
    if position == "*":
        return Argument(None, mode)
    if position == "last":
        return Argument(-1, mode)
    if not position.isdigit():
        raise FlowSpecError(f"{where}: {item!r} is not a position")
    return Argument(int(position), mode)


def _arguments(value: object, where: str) -> tuple[Argument, ...]:
    if not isinstance(value, list) or not value:
        raise FlowSpecError(f"{where}: expected a list of argument positions")
    return tuple(_argument(item, where) for item in value)


def _pattern(value: object, where: str) -> re.Pattern[str] | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise FlowSpecError(f"{where}: expected a regular expression")
    try:
        compiled = re.compile(value)
    except re.error as exc:
        raise FlowSpecError(f"{where}: {exc}") from None
    found = ambiguities(value, "python")
    if found:  # it runs on text from the reviewed code: a project file must not be able to stall the review
        raise FlowSpecError(f"{where}: {found[0].fragment} can backtrack for a very long time; write it without")
    return compiled


def _sink(name: str, data: object, where: str) -> SinkClass:
    table = _table(data, where)
    texts = {k: table.get(k, "") for k in ("cwe", "title", "why", "fix")}
    rule = table.get("rule", name)
    if not isinstance(rule, str) or not re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", rule):
        raise FlowSpecError(f"{where}.rule: a lowercase name with dashes")
    if not all(isinstance(v, str) for v in texts.values()):
        raise FlowSpecError(f"{where}: cwe, title, why and fix are text")
    severity = _labels(table.get("severity"), f"{where}.severity")
    for origin, level in severity.items():
        if origin not in ORIGINS or level not in ("P0", "P1", "P2", "P3"):
            raise FlowSpecError(f"{where}.severity: {origin}: {level} (origins {', '.join(ORIGINS)}; levels P0-P3)")
    calls = {k: _arguments(v, f"{where}.calls.{k}") for k, v in _table(table.get("calls"), f"{where}.calls").items()}
    methods = {}
    for method, spec in _table(table.get("methods"), f"{where}.methods").items():
        entry = _table(spec, f"{where}.methods.{method}")
        methods[method] = MethodSink(
            _arguments(entry.get("args"), f"{where}.methods.{method}.args"),
            frozenset(_strings(entry.get("receivers"), f"{where}.methods.{method}.receivers")),
            frozenset(_strings(entry.get("safe_options"), f"{where}.methods.{method}.safe_options")),
        )
    return SinkClass(
        name=name,
        rule=rule,
        severity=severity,
        calls=calls,
        methods=methods,
        properties=frozenset(_strings(table.get("properties"), f"{where}.properties")),
        dangerous=frozenset(_strings(table.get("dangerous"), f"{where}.dangerous")),
        safe_prefix=_pattern(table.get("safe_prefix"), f"{where}.safe_prefix"),
        writers=frozenset(_strings(table.get("writers"), f"{where}.writers")),
        sanitized_as=str(table.get("sanitized_as", "")),
        when_options=frozenset(_strings(table.get("when_options"), f"{where}.when_options")),
        **texts,
    )


def parse(data: object, language: str, where: str) -> FlowSpec:
    """A spec from one parsed YAML document (``where`` names the file in errors)."""
    top = _table(data, where)
    sources = _table(top.get("sources"), f"{where}: sources")
    request = _table(sources.get("request"), f"{where}: sources.request")
    handlers = _table(sources.get("handlers"), f"{where}: sources.handlers")
    sanitizers = _table(top.get("sanitizers"), f"{where}: sanitizers")
    words = _table(sanitizers.get("words"), f"{where}: sanitizers.words")
    tags = _table(sanitizers.get("tags"), f"{where}: sanitizers.tags")
    guards = _table(sanitizers.get("guards"), f"{where}: sanitizers.guards")
    archive = _table(sources.get("archive"), f"{where}: sources.archive")
    return FlowSpec(
        language=language,
        request_names=frozenset(_strings(request.get("names"), f"{where}: sources.request.names")),
        request_types=frozenset(_strings(request.get("types"), f"{where}: sources.request.types")),
        request_fields=_labels(request.get("fields"), f"{where}: sources.request.fields"),
        request_nested=frozenset(_strings(request.get("nested"), f"{where}: sources.request.nested")),
        request_methods=_labels(request.get("methods"), f"{where}: sources.request.methods"),
        handler_methods=frozenset(_strings(handlers.get("methods"), f"{where}: sources.handlers.methods")),
        handler_receivers=frozenset(_strings(handlers.get("receivers"), f"{where}: sources.handlers.receivers")),
        decorators=_labels(sources.get("decorators"), f"{where}: sources.decorators"),
        globals=_labels(sources.get("globals"), f"{where}: sources.globals"),
        calls=_labels(sources.get("calls"), f"{where}: sources.calls"),
        not_fields={
            k: frozenset(_strings(v, f"{where}: sources.request.not_fields.{k}"))
            for k, v in _table(request.get("not_fields"), f"{where}: sources.request.not_fields").items()
        },
        binders=frozenset(_strings(sources.get("binders"), f"{where}: sources.binders")),
        guard_words=tuple(
            w.lower() for w in _strings(sanitizers.get("guard_words"), f"{where}: sanitizers.guard_words")
        ),
        archive={k: frozenset(_strings(v, f"{where}: sources.archive.{k}")) for k, v in archive.items()},
        clean=frozenset(_strings(top.get("clean"), f"{where}: clean")),
        pure=frozenset(_strings(top.get("pure"), f"{where}: pure")),
        pure_methods=frozenset(_strings(top.get("pure_methods"), f"{where}: pure_methods")),
        sanitize_all=frozenset(_strings(sanitizers.get("all"), f"{where}: sanitizers.all")),
        sanitize_words={k: tuple(_strings(v, f"{where}: sanitizers.words.{k}")) for k, v in words.items()},
        tags={k: frozenset(_strings(v, f"{where}: sanitizers.tags.{k}")) for k, v in tags.items()},
        guards={k: frozenset(_strings(v, f"{where}: sanitizers.guards.{k}")) for k, v in guards.items()},
        sinks={k: _sink(k, v, f"{where}: sinks.{k}") for k, v in _table(top.get("sinks"), f"{where}: sinks").items()},
        raw=top,
    )


def merge(base: object, extra: object) -> object:
    """``extra`` laid over ``base``: tables merged key by key, lists extended, other values replaced."""
    if isinstance(base, dict) and isinstance(extra, dict):
        out = dict(base)
        for key, value in extra.items():
            out[key] = merge(base[key], value) if key in base else value
        return out
    if isinstance(base, list) and isinstance(extra, list):
        return base + [item for item in extra if item not in base]
    return extra


def spec_file(language: str) -> str:
    """The shipped file of a language family (``javascript`` for typescript and tsx too)."""
    return FLOW_LANGUAGES[language]


@functools.cache
def shipped(family: str) -> FlowSpec:
    """The declarations fluxdrive ships for ``family`` (javascript or go)."""
    text = (resources.files("fluxdrive") / "data" / "taint" / f"{family}.yaml").read_text(encoding="utf-8")
    return parse(yaml.safe_load(text), family, f"fluxdrive/data/taint/{family}.yaml")


def project_spec(family: str, declared: tuple[bytes | None, str | None] = (None, None)) -> tuple[FlowSpec, str | None]:
    """The shipped spec with the project's ``.fluxdrive/taint-<family>.yaml`` (its bytes) merged in, and a note.

    The runtime reads the file (confined, and from the base commit when a diff is reviewed: a change
    must not declare its own input clean); a bad file never stops the review: the shipped spec is
    used and the reason is returned for the run's notes.
    """
    base = shipped(family)
    data, problem = declared
    name = f".fluxdrive/taint-{family}.yaml"
    if problem is not None:
        return base, f"{name} ignored: {problem}"
    if data is None:
        return base, None
    try:
        parsed = yaml.safe_load(data.decode("utf-8"))
        if parsed is None:
            return base, None
        return parse(merge(base.raw, parsed), family, name), None
    except (UnicodeDecodeError, yaml.YAMLError, FlowSpecError, RecursionError) as exc:
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        return base, f"{name} ignored: {reason}"
