"""What the flow engine knows about a value: where its data came from, what it is, what text it holds.

A :class:`Value` is a set of :class:`Taint` (each an origin with a label, and
the sink classes a sanitizer or a check has made it safe for), a few tags
(``request``: the incoming request object itself; ``function``; ``archive``:
an archive reader or one of its entries), the canonical name it stands for
when it is a module or a function (``child_process.exec`` for ``run`` after
``const { exec: run } = require('child_process')``), and the constant text
it is built from, with ``\\0`` where a part is not constant (so a SQL sink
can tell ``"SELECT ... " + id`` from a cache key, and a redirect can tell
``"/home/" + x`` from ``x``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace

from fluxdrive.runtimes.static.provenance import Origin

HOLE = "\0"  # a non-constant part inside a value's text
WHOLE_OBJECT_SINKS = frozenset({"template", "nosql", "deserialize"})
DATA_TAGS = frozenset({"request", "archive"})  # kinds of data a joined value still holds; other tags are shapes
RANK = {"outside": 4, "parameter": 3, "command line": 2, "unknown": 1}


@dataclass(frozen=True, slots=True)
class Taint:
    """One origin a value carries: ``outside`` (label: where), ``parameter``, ``command line``, ``unknown``.

    ``param`` is the analysed function's parameter it came from (for summaries), or -1.
    """

    kind: str
    label: str
    param: int = -1
    cleaned: frozenset[str] = frozenset()
    at: int = 0  # report at this line instead of the sink's (an archive entry's name joined into a path)
    whole: bool = False  # the request object itself, not a field read from it

    def reaches(self, sink: str) -> bool:
        """Whether this origin still counts at a sink of class ``sink``.

        The request object itself counts only where a whole object does harm (rendering options,
        a query object); a path or a command built from "the request" is a field read the engine
        lost track of (gin keeps the request in its context and redirects to its cleaned URL).
        """
        if self.whole and sink not in WHOLE_OBJECT_SINKS:
            return False
        return not (self.cleaned & {sink, "all"})


@dataclass(frozen=True, slots=True)
class Value:
    taints: frozenset[Taint] = frozenset()
    tags: frozenset[str] = frozenset()
    alias: str | None = None
    text: str | None = None

    def cleaned(self, classes: Iterable[str]) -> Value:
        """This value made safe for the sink classes named (``all``: every one)."""
        extra = frozenset(classes)
        if not extra:
            return self
        return replace(self, taints=frozenset(replace(t, cleaned=t.cleaned | extra) for t in self.taints))

    def origin(self, sink: str) -> tuple[Origin, Taint | None]:
        """The strongest origin that still counts at a sink of class ``sink``, and its taint."""
        live = [t for t in self.taints if t.reaches(sink)]
        if not live:
            return Origin("clean"), None
        best = max(live, key=lambda t: (RANK.get(t.kind, 0), t.label))
        return Origin(best.kind, best.label), best  # type: ignore[arg-type]

    @property
    def params(self) -> frozenset[int]:
        return frozenset(t.param for t in self.taints if t.param >= 0)


CLEAN = Value()


def text_of(value: Value) -> str:
    """The value's text, a hole when it is not known."""
    return value.text if value.text is not None else HOLE


def join(values: Iterable[Value], *, text: str | None = None) -> Value:
    """A value made of all of ``values`` (a branch's alternatives, an object's fields)."""
    items = list(values)
    if not items:
        return Value(text=text)
    if len(items) == 1 and text is None:
        return items[0]
    taints: set[Taint] = set()
    tags: set[str] = set()
    shapes = set.intersection(*(set(item.tags - DATA_TAGS) for item in items))  # a module only if all are
    for item in items:
        taints |= item.taints
        tags |= item.tags & DATA_TAGS
    tags |= shapes
    aliases = {item.alias for item in items if item.alias}
    texts = {item.text for item in items}
    joined_text = text if text is not None else (texts.pop() if len(texts) == 1 else None)
    return Value(frozenset(taints), frozenset(tags), aliases.pop() if len(aliases) == 1 else None, joined_text)


def unknown(label: str) -> Value:
    """A value the engine cannot see into (a global, an unknown call's result)."""
    return Value(frozenset({Taint("unknown", label)}))
