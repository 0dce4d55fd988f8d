"""Sources, sanitizers and sinks of taint tracking, declared as data.

The shipped declarations live in ``fluxdrive/data/taint/python.yaml``; a
project adds its framework's in ``.fluxdrive/taint.yaml`` (same shape, every
list and table added to the shipped ones), which the static runtime merges in
with :func:`extend`. Keeping them as data means a user can teach the checks
that ``ctx.params`` is a request or that ``render_raw()`` writes HTML without
touching code, and that the checks' own tables are reviewable in one place.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from importlib import resources
from typing import Any

import yaml

SINK_KINDS = ("ldap", "redirect", "html", "path", "path_object", "sql")


@dataclass(frozen=True, slots=True)
class Sink:
    """Where outside data must not arrive: call names (last part, or dotted), and which argument."""

    calls: frozenset[str]
    argument: int | None = 0
    keywords: tuple[str, ...] = ()
    cwe: str = ""
    what: str = ""
    why: str = ""
    fix: str = ""

    def value(self, args: list[Any], keywords: Mapping[str, Any]) -> Any:
        """The argument this sink watches, from a call's positional and keyword arguments."""
        if self.argument is not None and len(args) > self.argument:
            return args[self.argument]
        return next((keywords[k] for k in self.keywords if k in keywords), None)


@dataclass(frozen=True, slots=True)
class TaintSpec:
    """Everything taint tracking needs to know about a framework, as data."""

    objects: frozenset[str]
    fields: frozenset[str]
    calls: Mapping[str, str]
    methods: Mapping[str, str]
    clean: frozenset[str]
    cleaners: Mapping[str, tuple[str, ...]]
    sinks: Mapping[str, Sink]
    safe_fields: frozenset[str] = frozenset()
    results: frozenset[str] = frozenset()
    lookups: frozenset[str] = frozenset()
    custom: tuple[Sink, ...] = field(default=())

    def cleaners_for(self, kind: str) -> tuple[str, ...]:
        """Words in a callee's name that make its result safe for sinks of ``kind``."""
        return self.cleaners.get(kind, ())


class TaintSpecError(ValueError):
    """A taint declaration file that does not have the documented shape."""


def _strings(value: object, where: str) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise TaintSpecError(f"{where}: expected a list of strings")
    return value


def _table(value: object, where: str) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
        raise TaintSpecError(f"{where}: expected a table of name: label")
    return value


def _sink(data: object, where: str) -> Sink:
    if not isinstance(data, dict):
        raise TaintSpecError(f"{where}: expected a table")
    calls = data.get("calls", [data["call"]] if "call" in data else None)
    argument = data.get("argument", 0)
    if argument is not None and not isinstance(argument, int):
        raise TaintSpecError(f"{where}.argument: expected a number")
    texts = {k: data.get(k, "") for k in ("cwe", "what", "why", "fix")}
    if not all(isinstance(v, str) for v in texts.values()):
        raise TaintSpecError(f"{where}: cwe, what, why and fix are text")
    return Sink(
        frozenset(_strings(calls, f"{where}.calls")),
        argument,
        tuple(_strings(data.get("keywords"), f"{where}.keywords")),
        **texts,
    )


def parse(data: object, where: str) -> TaintSpec:
    """A spec from one parsed YAML document (``where`` names it in errors)."""
    if not isinstance(data, dict):
        raise TaintSpecError(f"{where}: expected a table with sources, sanitizers and sinks")
    sources = data.get("sources") or {}
    sanitizers = data.get("sanitizers") or {}
    sinks = data.get("sinks") or {}
    if not all(isinstance(part, dict) for part in (sources, sanitizers, sinks)):
        raise TaintSpecError(f"{where}: sources, sanitizers and sinks are tables")
    custom = sinks.get("calls") or []
    if not isinstance(custom, list):
        raise TaintSpecError(f"{where}: sinks.calls: expected a list")
    return TaintSpec(
        objects=frozenset(_strings(sources.get("objects"), f"{where}: sources.objects")),
        fields=frozenset(_strings(sources.get("fields"), f"{where}: sources.fields")),
        calls=_table(sources.get("calls"), f"{where}: sources.calls"),
        methods=_table(sources.get("methods"), f"{where}: sources.methods"),
        clean=frozenset(_strings(sanitizers.get("all"), f"{where}: sanitizers.all")),
        safe_fields=frozenset(_strings(sources.get("safe_fields"), f"{where}: sources.safe_fields")),
        results=frozenset(_strings(sanitizers.get("results"), f"{where}: sanitizers.results")),
        lookups=frozenset(_strings(sanitizers.get("lookups"), f"{where}: sanitizers.lookups")),
        cleaners={
            kind: tuple(_strings(words, f"{where}: sanitizers.{kind}"))
            for kind, words in sanitizers.items()
            if kind not in {"all", "results", "lookups"}
        },
        sinks={kind: _sink(sinks[kind], f"{where}: sinks.{kind}") for kind in SINK_KINDS if kind in sinks},
        custom=tuple(_sink(item, f"{where}: sinks.calls[{i}]") for i, item in enumerate(custom)),
    )


def extend(base: TaintSpec, extra: TaintSpec) -> TaintSpec:
    """``base`` with everything ``extra`` declares added (a project's file on top of the shipped one)."""
    sinks = dict(base.sinks)
    for kind, sink in extra.sinks.items():
        mine = sinks.get(kind)
        sinks[kind] = sink if mine is None else replace(mine, calls=mine.calls | sink.calls)
    kinds = {*base.cleaners, *extra.cleaners}
    return TaintSpec(
        objects=base.objects | extra.objects,
        fields=base.fields | extra.fields,
        calls={**base.calls, **extra.calls},
        methods={**base.methods, **extra.methods},
        clean=base.clean | extra.clean,
        safe_fields=base.safe_fields | extra.safe_fields,
        results=base.results | extra.results,
        lookups=base.lookups | extra.lookups,
        cleaners={k: base.cleaners.get(k, ()) + extra.cleaners.get(k, ()) for k in sorted(kinds)},
        sinks=sinks,
        custom=base.custom + extra.custom,
    )


@functools.cache
def shipped() -> TaintSpec:
    """The declarations fluxdrive ships (``fluxdrive/data/taint/python.yaml``)."""
    text = (resources.files("fluxdrive") / "data" / "taint" / "python.yaml").read_text(encoding="utf-8")
    return parse(yaml.safe_load(text), "fluxdrive/data/taint/python.yaml")
