"""Regular expressions that backtrack for ages on the wrong input (ReDoS, CWE-1333).

A backtracking engine (Python's ``re``, JavaScript's irregexp, ``regex``) tries
the ways a pattern can match one after another. When a repeated part can match
the same text in several ways, a string that almost matches makes it try them
all: exponentially many for ``(a+)+b``, quadratically many for ``a*a*b``. This
module finds those patterns statically, without running them, so a check can
report the pattern together with what reaches it.

How: the pattern is parsed with Python's own parser (``re._parser``; JavaScript
syntax is translated first, and each alternative gets an inert marker so the
parser's Python-only merging of ``\\w|\\d`` into one class does not hide what
V8 will run). From the tree we build a position (Glushkov) automaton whose edges
count the distinct ways the pattern reaches them, so the nested loops of
``(a+)+`` give the edge ``a -> a`` two ways. Then, the classic criteria of
Weideman et al. ("Analyzing matching time behavior of backtracking regular
expression matchers by using ambiguous NFA", 2016):

- exponential (EDA): inside one loop of the automaton an edge can be taken two
  ways, or the product automaton has a cycle through ``(p, p)`` and ``(q, r)``
  with ``q != r`` (two different paths around the loop over the same text);
- polynomial (IDA): two different loops over a common character with a path
  between them over that character (``\\s*\\w*\\s*x``); only runs of one
  character are tried, which catches the cases seen in advisories.

Each is reported only when the input can still fail after the loop: a loop the
match can end in (``(a+)+`` searched, not full-matched) succeeds at once.

Limits, chosen for precision (a false alarm costs more than a miss):
lookarounds and ``\\b`` are treated as matching nothing and always passing, and
their contents are not analyzed; backreferences match nothing; atomic groups
and possessive repeats take part in no ambiguity; a repeat bounded by at most
10 is unrolled, a larger bound counts as unbounded; the quadratic cost of an
unanchored search retrying at every offset (``\\s+$``) is not reported; a
pattern that does not parse, or grows past a few hundred positions or
product states, yields nothing. Character sets are compared on a sample
alphabet (ASCII, a few non-ASCII letters, digits and spaces, and every
character the pattern names).
"""

from __future__ import annotations

import importlib
import re
import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Literal

from fluxdrive.core.graphs import strongly_connected

_parser: Any = importlib.import_module("re._parser")  # no stubs; the same parser ``re`` compiles with
_c: Any = importlib.import_module("re._constants")

Flavor = Literal["python", "javascript"]

UNROLL = 10  # a repeat bounded by more than this counts as unbounded
MAX_POSITIONS = 400
MAX_PAIRS = 20_000
MAX_PATTERN = 4_000
_MARK = 0xE000  # private-use characters mark JavaScript alternatives (inert lookaheads)


@dataclass(frozen=True, slots=True)
class Ambiguity:
    """A part of a pattern that can match the same text in several ways, and what that costs."""

    kind: Literal["exponential", "polynomial"]
    fragment: str
    why: str


def ambiguities(pattern: str, flavor: Flavor, flags: str = "", *, full: bool = False) -> tuple[Ambiguity, ...]:
    """The ambiguous repeats of ``pattern`` that input can make backtrack (empty when none, or unparsable).

    ``flags``: letters as written in either language (``i``, ``m``, ``s``, ``x``, ``a``, ``u``).
    ``full``: the pattern must match the whole input (``re.fullmatch``), so nothing after it lets a match end early.
    """
    if len(pattern) > MAX_PATTERN:
        return ()
    translated = _translate(pattern, flavor) if flavor == "javascript" else pattern
    if translated is None:
        return ()
    try:
        with warnings.catch_warnings():  # "possible nested set" and the like: the pattern's owner hears them
            warnings.simplefilter("ignore")
            tree = _parser.parse(translated, _re_flags(flags, flavor))
        automaton = _Automaton(flavor, _alphabet(tree), tree.state.flags)
        root = automaton.sequence(tree, tree.state.flags, ())
    except (re.error, RecursionError, OverflowError, ValueError, IndexError, TypeError, _TooBigError):
        return ()
    return tuple(_Analysis(automaton, root, full).run())


# --------------------------------------------------------------------------
# JavaScript -> Python syntax


def _re_flags(flags: str, flavor: Flavor) -> int:
    value = 0
    for letter, flag in (("i", re.I), ("m", re.M), ("s", re.S), ("x", re.X), ("a", re.A)):
        if letter in flags and not (letter == "x" and flavor == "javascript"):
            value |= flag
    return value


def _translate(pattern: str, flavor: Flavor) -> str | None:
    """JavaScript syntax Python's parser reads the same way; each alternative starts with an inert marker."""
    marks = iter(range(_MARK, _MARK + 0x1000))

    def mark() -> str:
        return f"(?=\\u{next(marks):04x}{{0}})"

    out = [mark()]
    i, in_class, n = 0, False, len(pattern)
    while i < n:
        ch = pattern[i]
        if ch == "\\" and i + 1 < n:
            step = _escape(pattern, i, in_class)
            if step is None:
                return None
            out.append(step[0])
            i = step[1]
        elif in_class:
            out.append("\\[" if ch == "[" else ch)
            in_class = ch != "]"
            i += 1
        elif ch == "[":
            text, i, in_class = _open_class(pattern, i)
            out.append(text)
        elif ch == "(":
            head = re.match(r"\(\?(?:<(?![=!])([A-Za-z_$][\w$]*)>|[:=!]|<[=!])?", pattern[i:])
            opener = head.group(0) if head else "("
            name = head.group(1) if head else None
            out.append((f"(?P<{name}>" if name else opener) + mark())
            i += len(opener)
        else:
            out.append("|" + mark() if ch == "|" else ch)
            i += 1
    return "".join(out)


def _open_class(pattern: str, i: int) -> tuple[str, int, bool]:
    """``[``, ``[^``, or JavaScript's ``[^]`` (anything) and ``[]`` (nothing): text, next index, inside a class."""
    if pattern.startswith("[^]", i):
        return r"[\s\S]", i + 3, False
    if pattern.startswith("[]", i):
        return "(?!)", i + 2, False
    if pattern.startswith("[^", i):
        return "[^", i + 2, True
    return "[", i + 1, True


def _escape(pattern: str, i: int, in_class: bool) -> tuple[str, int] | None:
    """A JavaScript escape at ``i`` as Python writes it, and the index after it (None: malformed)."""
    nxt = pattern[i + 1]
    braced = pattern[i + 2 : i + 3] == "{"
    if (nxt in "upP" and braced) or (nxt == "k" and pattern[i + 2 : i + 3] == "<"):
        end = pattern.find(">" if nxt == "k" else "}", i)
        if end < 0:
            return None
        inside = pattern[i + 3 : end]
        if nxt == "k":
            return f"(?P={inside})", end + 1
        if nxt == "u":
            return f"\\U{int(inside or '0', 16):08x}", end + 1
        return _property(inside.split("=")[-1], nxt == "P", in_class), end + 1
    if nxt == "c" and pattern[i + 2 : i + 3].isalpha():
        return f"\\x{ord(pattern[i + 2]) % 32:02x}", i + 3
    return ("/" if nxt == "/" else pattern[i : i + 2]), i + 2


def _property(name: str, negated: bool, in_class: bool) -> str:
    """A Unicode property escape (``\\p{L}``) as the nearest class Python knows."""
    if name in {"N", "Nd"}:
        return r"\D" if negated else r"\d"
    if name in {"L", "Letter", "Alphabetic"} and not in_class:  # classes do not nest: \w stands in there
        return r"[\W\d_]" if negated else r"[^\W\d_]"
    return r"\W" if negated else r"\w"


def _is_mark(op: Any, av: Any) -> bool:
    """The inert lookahead :func:`_translate` puts at the head of each JavaScript alternative."""
    if op is not _c.ASSERT or len(av[1].data) != 1:
        return False
    inner_op, inner = av[1].data[0]
    body = inner[2].data if inner_op is _c.MAX_REPEAT and inner[1] == 0 else []
    return len(body) == 1 and body[0][0] is _c.LITERAL and body[0][1] >= _MARK


# --------------------------------------------------------------------------
# Character sets as bit masks over a sample alphabet


_SAMPLE = "\x85\xa0éßΩжſ٣\u2028\u2029\u3000中\u212a\U0001f600"
_BASE = tuple(sorted({chr(c) for c in range(128)} | set(_SAMPLE)))


def _alphabet(tree: Any) -> tuple[str, ...]:
    """ASCII, a few telling non-ASCII characters, and every character the pattern names."""
    named: set[int] = set()
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, _parser.SubPattern):
            stack.extend(av for _op, av in node.data)
        elif isinstance(node, tuple | list):
            for item in node:
                if isinstance(item, tuple) and len(item) == 2 and item[0] in (_c.LITERAL, _c.NOT_LITERAL):
                    named.add(item[1])
                elif isinstance(item, tuple) and len(item) == 2 and item[0] is _c.RANGE:
                    named.update(item[1])
                else:
                    stack.append(item)
        elif isinstance(node, int) and not isinstance(node, bool) and 0 <= node < 0x110000:
            named.add(node)
    extra = {chr(c) for c in named if c < _MARK or c > _MARK + 0xFFF} - set(_BASE)
    return _BASE + tuple(sorted(extra))


def _category(name: Any, ch: str, ascii_only: bool, flavor: Flavor) -> bool:
    narrow = ascii_only or flavor == "javascript"
    if name in (_c.CATEGORY_DIGIT, _c.CATEGORY_NOT_DIGIT):
        found = "0" <= ch <= "9" if narrow else ch.isdecimal()
        return found == (name is _c.CATEGORY_DIGIT)
    if name in (_c.CATEGORY_WORD, _c.CATEGORY_NOT_WORD):
        found = (ch.isascii() or not narrow) and (ch.isalnum() or ch == "_")
        return found == (name is _c.CATEGORY_WORD)
    if name in (_c.CATEGORY_SPACE, _c.CATEGORY_NOT_SPACE):
        found = ch in " \t\n\r\f\v" if ascii_only else ch.isspace() or (flavor == "javascript" and ch == "\ufeff")
        return found == (name is _c.CATEGORY_SPACE)
    if name in (_c.CATEGORY_LINEBREAK, _c.CATEGORY_NOT_LINEBREAK):
        return (ch == "\n") == (name is _c.CATEGORY_LINEBREAK)
    return True


class _TooBigError(Exception):
    """The pattern unrolls into more positions than a quick analysis should handle."""


@dataclass
class _Frag:
    """First and last positions of a sub-pattern (with how many ways reach each) and its ways to match nothing."""

    first: dict[int, int]
    last: dict[int, int]
    empty: int


Key = tuple[int, int]  # (id of a SubPattern, index of an item in it)


def _add(a: dict[int, int], b: dict[int, int], times: int = 1) -> dict[int, int]:
    out = dict(a)
    if times:
        for p, n in b.items():
            out[p] = min(out.get(p, 0) + n * times, 2)
    return out


class _Automaton:
    """The position automaton of a parsed pattern, its edges counting the ways to take them."""

    def __init__(self, flavor: Flavor, alphabet: tuple[str, ...], flags: int) -> None:
        self.flavor = flavor
        self.alphabet = alphabet
        self.masks: list[int] = []
        self.atomic: list[bool] = []
        self.paths: list[tuple[Key, ...]] = []
        self.edges: dict[tuple[int, int], list[Any]] = {}  # (p, q) -> [ways, loops that made it]
        self.loops: set[Key] = set()
        self.unrolled: set[Key] = set()
        self.items: dict[Key, tuple[Any, Any]] = {}
        self.flags = flags

    # building

    def sequence(self, seq: Any, flags: int, path: tuple[Key, ...], atomic: bool = False) -> _Frag:
        acc = _Frag({}, {}, 1)
        for index, (op, av) in enumerate(seq.data):
            key = (id(seq), index)
            self.items[key] = (op, av)
            acc = self._concat(acc, self.item(op, av, flags, (*path, key), atomic))
        return acc

    def _concat(self, a: _Frag, b: _Frag, loop: Key | None = None) -> _Frag:
        self._link(a.last, b.first, loop)
        return _Frag(_add(a.first, b.first, a.empty), _add(b.last, a.last, b.empty), min(a.empty * b.empty, 2))

    def _link(self, last: dict[int, int], first: dict[int, int], loop: Key | None) -> None:
        for p, m in last.items():
            for q, n in first.items():
                edge = self.edges.setdefault((p, q), [0, set()])
                edge[0] = min(edge[0] + m * n, 2)
                if loop is not None:
                    edge[1].add(loop)

    def _position(self, mask: int, path: tuple[Key, ...], atomic: bool) -> _Frag:
        if len(self.masks) >= MAX_POSITIONS:
            raise _TooBigError
        self.masks.append(mask)
        self.atomic.append(atomic)
        self.paths.append(path)
        p = len(self.masks) - 1
        return _Frag({p: 1}, {p: 1}, 0)

    def item(self, op: Any, av: Any, flags: int, path: tuple[Key, ...], atomic: bool) -> _Frag:
        if op in (_c.LITERAL, _c.NOT_LITERAL, _c.ANY, _c.IN):
            return self._position(self.mask(op, av, flags), path, atomic)
        if op is _c.SUBPATTERN:
            return self.sequence(av[3], (flags | av[1]) & ~av[2], path, atomic)
        if op is _c.ATOMIC_GROUP:
            return self.sequence(av, flags, path, True)
        if op is _c.BRANCH:
            frags = [self.sequence(alt, flags, path, atomic) for alt in av[1]]
            return _Frag(_sum(f.first for f in frags), _sum(f.last for f in frags), min(sum(f.empty for f in frags), 2))
        if op in (_c.MAX_REPEAT, _c.MIN_REPEAT, _c.POSSESSIVE_REPEAT):
            return self.repeat(av, flags, path, atomic or op is _c.POSSESSIVE_REPEAT)
        if op is _c.AT and (av is _c.AT_END_STRING or (av is _c.AT_END and not flags & re.M)):
            return _Frag({}, {}, 0)  # the end: nothing before it can end a match elsewhere
        if op is _c.GROUPREF:
            return self._position(0, path, atomic)
        if op is _c.GROUPREF_EXISTS:
            yes = self.sequence(av[1], flags, path, atomic)
            no = self.sequence(av[2], flags, path, atomic) if av[2] is not None else _Frag({}, {}, 1)
            return _Frag(_sum((yes.first, no.first)), _sum((yes.last, no.last)), min(yes.empty + no.empty, 2))
        return _Frag({}, {}, 1)  # anchors, \b, lookarounds: pass without consuming

    def repeat(self, av: Any, flags: int, path: tuple[Key, ...], atomic: bool) -> _Frag:
        low, high, body = av
        if high == 0:
            return _Frag({}, {}, 1)
        if high is _c.MAXREPEAT or high > UNROLL:
            key = path[-1]
            self.loops.add(key)
            inner = self.sequence(body, flags, path, atomic)
            self._link(inner.last, inner.first, key)
            return _Frag(inner.first, inner.last, 1 if low == 0 else inner.empty)
        self.unrolled.add(path[-1])
        copies = [self.sequence(body, flags, path, atomic) for _ in range(high)]
        acc = _Frag({}, {}, 1)
        for copy in copies[:low]:
            acc = self._concat(acc, copy)
        tail: _Frag | None = None
        for copy in reversed(copies[low:]):
            joined = copy if tail is None else self._concat(copy, tail)
            tail = _Frag(joined.first, joined.last, min(joined.empty + 1, 2))
        return self._concat(acc, tail) if tail is not None else acc

    def mask(self, op: Any, av: Any, flags: int) -> int:
        """The characters of the alphabet one position matches (the shared ASCII part is computed once)."""
        relevant = flags & (re.I | re.A | re.S)
        key = (str(op), repr(av), relevant, self.flavor)
        base = _BASE_MASKS.get(key)
        if base is None:
            if len(_BASE_MASKS) > 4096:
                _BASE_MASKS.clear()
            base = _BASE_MASKS[key] = _compute(op, av, relevant, self.flavor, _BASE)
        extra = self.alphabet[len(_BASE) :]
        return base | (_compute(op, av, relevant, self.flavor, extra) << len(_BASE) if extra else 0)


_BASE_MASKS: dict[tuple[str, str, int, str], int] = {}


def _compute(op: Any, av: Any, flags: int, flavor: Flavor, alphabet: tuple[str, ...]) -> int:
    """Bit i set when ``alphabet[i]`` matches the position (with ``re.I``, in either case)."""
    fold = bool(flags & re.I)
    ascii_only = bool(flags & re.A)
    test: Callable[[str], bool]
    if op is _c.ANY:
        stops = "\n" if flavor == "python" else "\n\r\u2028\u2029"
        test = (lambda ch: True) if flags & re.S else (lambda ch: ch not in stops)
    elif op is _c.LITERAL:
        test = lambda ch: ord(ch) == av  # noqa: E731
    elif op is _c.NOT_LITERAL:
        test = lambda ch: ord(ch) != av  # noqa: E731
    else:
        test = lambda ch: _in_set(av, ch, ascii_only, flavor)  # noqa: E731
    mask = 0
    for i, ch in enumerate(alphabet):
        variants = {ch, ch.lower(), ch.upper()} if fold else (ch,)
        if any(len(v) == 1 and test(v) for v in variants):
            mask |= 1 << i
    if fold and op is _c.NOT_LITERAL:  # [^a] with i: neither a nor A
        mask = 0
        for i, ch in enumerate(alphabet):
            if ch.lower() != chr(av).lower():
                mask |= 1 << i
    return mask


def _in_set(items: Any, ch: str, ascii_only: bool, flavor: Flavor) -> bool:
    negate = False
    found = False
    code = ord(ch)
    for op, av in items:
        if op is _c.NEGATE:
            negate = True
        elif op is _c.LITERAL:
            found = found or code == av
        elif op is _c.RANGE:
            found = found or av[0] <= code <= av[1]
        elif op is _c.CATEGORY:
            found = found or _category(av, ch, ascii_only, flavor)
    return found != negate


def _sum(parts: Iterable[dict[int, int]]) -> dict[int, int]:
    out: dict[int, int] = {}
    for part in parts:
        out = _add(out, part)
    return out


# --------------------------------------------------------------------------
# Ambiguity


def _sccs(nodes: Iterable[Any], succ: dict[Any, list[Any]]) -> list[list[Any]]:
    """Strongly connected components of the automaton (``succ``: a node's successors)."""
    return strongly_connected(nodes, lambda node: succ.get(node, ()))


class _Analysis:
    def __init__(self, automaton: _Automaton, root: _Frag, full: bool) -> None:
        self.a = automaton
        self.ends = set() if full else set(root.last)
        usable = [p for p, m in enumerate(automaton.masks) if m and not automaton.atomic[p]]
        self.usable = set(usable)
        self.succ: dict[int, list[int]] = {p: [] for p in usable}
        for p, q in sorted(automaton.edges):
            if p in self.usable and q in self.usable:
                self.succ[p].append(q)
        self.reached = self._reachable(root)
        self.found: dict[str, Ambiguity] = {}
        self.exponential_loops: set[Key] = set()

    def _reachable(self, root: _Frag) -> set[int]:
        every: dict[int, list[int]] = {p: [] for p in range(len(self.a.masks))}
        for p, q in self.a.edges:
            if self.a.masks[q]:
                every[p].append(q)
        return _reach({p for p in root.first if self.a.masks[p]}, every)

    def run(self) -> list[Ambiguity]:
        for component in _sccs(sorted(self.usable), self.succ):
            self._exponential(set(component))
        self._polynomial()
        return _tightest(list(self.found.values()))

    def _cyclic(self, component: set[int]) -> bool:
        return len(component) > 1 or any(p in self.succ[p] for p in component)

    def _exponential(self, component: set[int]) -> None:
        if not self._cyclic(component) or component & self.ends or not component & self.reached:
            return
        doubled = [
            (p, q) for p in sorted(component) for q in self.succ[p] if q in component and self.a.edges[(p, q)][0] >= 2
        ]
        if doubled:
            loops = set().union(*(self.a.edges[e][1] for e in doubled))
            self._report_exponential({p for e in doubled for p in e}, loops)
            return
        witness = self._product(component)
        if witness:
            self._report_exponential(witness, set())

    def _product(self, component: set[int]) -> set[int]:
        """Positions of a product cycle through (p, p) and (q, r), q != r: two paths over the same text."""
        masks = self.a.masks
        inside = {p: [q for q in self.succ[p] if q in component] for p in component}
        start = [(p, p) for p in sorted(component)]
        succ: dict[tuple[int, int], list[tuple[int, int]]] = {}
        todo = list(start)
        seen = set(start)
        while todo:
            p, q = todo.pop()
            nxt = [(x, y) for x in inside[p] for y in inside[q] if masks[x] & masks[y]]
            succ[(p, q)] = nxt
            for pair in nxt:
                if pair not in seen:
                    if len(seen) >= MAX_PAIRS:
                        return set()
                    seen.add(pair)
                    todo.append(pair)
        for scc in _sccs(start, succ):
            if len(scc) > 1 and any(p == q for p, q in scc) and any(p != q for p, q in scc):
                return {p for pair in scc for p in pair}
        return set()

    def _report_exponential(self, positions: set[int], loops: set[Key]) -> None:
        key = self._enclosing_loop(positions, loops)
        if key is None:
            return
        self.exponential_loops.add(key)
        fragment = _render_item(self.a.items[key])
        char = _example(self.a, positions)
        self.found.setdefault(
            fragment,
            Ambiguity(
                "exponential",
                fragment,
                f"`{fragment}` can match the same text in more than one way and is repeated, so a run of {char} "
                "that fails to match at its end makes the engine try every split: 30 characters take about 2^30 steps",
            ),
        )

    def _enclosing_loop(self, positions: set[int], loops: set[Key]) -> Key | None:
        """The outermost loop that doubled an edge, else the innermost loop holding every position."""
        paths = [self.a.paths[p] for p in sorted(positions)]
        common = paths[0]
        for path in paths[1:]:
            cut = next((i for i, (k, j) in enumerate(zip(common, path, strict=False)) if k != j), None)
            common = common[: min(len(common), len(path)) if cut is None else cut]
        if loops:
            return next((k for k in paths[0] if k in loops), None)
        held = [k for k in common if k in self.a.loops]
        return held[-1] if held else None

    def _polynomial(self) -> None:
        masks = self.a.masks
        blocks = _partition({masks[p] for p in self.usable})
        for block in blocks:
            nodes = {p for p in self.usable if masks[p] & block and p in self.reached}
            succ = {p: [q for q in self.succ[p] if q in nodes] for p in nodes}
            loops = [set(c) for c in _sccs(sorted(nodes), succ) if len(c) > 1 or c[0] in succ[c[0]]]
            loops = [c for c in loops if not c & self.ends]
            if len(loops) < 2:
                continue
            for first in loops:
                later = _reach(first, succ) - first
                for second in loops:
                    if second is not first and second & later:
                        self._report_polynomial(first, second, block)
                        break

    def _report_polynomial(self, first: set[int], second: set[int], block: int) -> None:
        a, b = self.a.paths[min(first)], self.a.paths[min(second)]
        if any(k in self.exponential_loops for k in a) and any(k in self.exponential_loops for k in b):
            return
        cut = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))
        copies = [k for k in a[:cut] if k in self.a.unrolled]
        if copies:  # two copies of one bounded repeat: `(\w+){1,3}`
            fragment = _render_item(self.a.items[copies[-1]])
        elif cut >= min(len(a), len(b)):
            return
        elif a[cut][0] != b[cut][0]:  # different alternatives of one branch: report the branch
            fragment = _render_item(self.a.items[a[cut - 1]]) if cut else ""
        else:
            seq_items = [self.a.items[(a[cut][0], i)] for i in range(a[cut][1], b[cut][1] + 1)]
            fragment = "".join(f"(?:{_render_item(i)})" if i[0] is _c.BRANCH else _render_item(i) for i in seq_items)
        if not fragment or fragment in self.found:
            return
        char = _example_char(self.a.alphabet, block)
        self.found[fragment] = Ambiguity(
            "polynomial",
            fragment,
            f"two repeats in `{fragment}` can both match a run of {char}, so a long run that fails to match "
            "at its end makes the engine try every way to share it out: time grows with the square of its length",
        )


def _tightest(found: list[Ambiguity]) -> list[Ambiguity]:
    """Each exponential repeat, and the polynomial ones that neither hold nor repeat another report's text."""
    kept: list[Ambiguity] = []
    for one in found:
        others = [o for o in found if o is not one]
        if one.kind == "polynomial" and any(
            o.fragment in one.fragment and (o.kind == "exponential" or len(o.fragment) < len(one.fragment))
            for o in others
        ):
            continue
        kept.append(one)
    return kept


def _reach(start: set[int], succ: dict[int, list[int]]) -> set[int]:
    seen = set(start)
    todo = list(start)
    while todo:
        for q in succ[todo.pop()]:
            if q not in seen:
                seen.add(q)
                todo.append(q)
    return seen


def _partition(masks: set[int]) -> list[int]:
    """The alphabet cut into blocks no mask splits (each mask holds a block whole or not at all)."""
    blocks = [~0]
    for mask in sorted(masks):
        blocks = [part for block in blocks for part in (block & mask, block & ~mask) if part]
    return [b for b in blocks if b > 0] or []


def _example(automaton: _Automaton, positions: set[int]) -> str:
    masks = [automaton.masks[p] for p in sorted(positions)]
    common = masks[0]
    for mask in masks[1:]:
        common &= mask
    return _example_char(automaton.alphabet, common or masks[0])


def _example_char(alphabet: tuple[str, ...], mask: int) -> str:
    chars = [alphabet[i] for i in range(len(alphabet)) if mask >> i & 1]
    if " " in chars and not any(c.isalnum() for c in chars):
        return "spaces"
    shown = (
        [c for c in chars if c.isascii() and c.islower()]
        or [c for c in chars if c.isascii() and c.isalpha()]
        or [c for c in chars if c.isascii() and c.isalnum()]
        or [c for c in chars if c.isprintable()]
        or chars
    )
    return f"`{shown[0]}`" if shown and shown[0].isprintable() else f"`{shown[0]!r}`" if shown else "characters"


# --------------------------------------------------------------------------
# Rendering a parsed item back to pattern text (for titles)

_CATEGORIES = {
    "CATEGORY_DIGIT": r"\d",
    "CATEGORY_NOT_DIGIT": r"\D",
    "CATEGORY_WORD": r"\w",
    "CATEGORY_NOT_WORD": r"\W",
    "CATEGORY_SPACE": r"\s",
    "CATEGORY_NOT_SPACE": r"\S",
}
_AT = {"AT_BEGINNING": "^", "AT_END": "$", "AT_BEGINNING_STRING": r"\A", "AT_END_STRING": r"\Z", "AT_BOUNDARY": r"\b"}
_AT |= {"AT_NON_BOUNDARY": r"\B"}


def _char(code: int, in_class: bool = False) -> str:
    ch = chr(code)
    special = "\\]^-[" if in_class else "\\.^$*+?{}[]|()/"
    if ch in special:
        return "\\" + ch
    named = {"\n": r"\n", "\r": r"\r", "\t": r"\t", "\f": r"\f", "\v": r"\v"}
    if ch in named:
        return named[ch]
    if not ch.isprintable():
        return f"\\x{code:02x}" if code < 256 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"
    return ch


def _render_seq(seq: Any) -> str:
    """Pattern text of a sequence; an alternation among other items is grouped so it reads as one."""
    lone = len([item for item in seq.data if not _is_mark(*item)]) == 1
    parts = [_render_item(item) for item in seq.data]
    return "".join(
        f"(?:{text})" if item[0] is _c.BRANCH and not lone else text for item, text in zip(seq.data, parts, strict=True)
    )


def _render_item(item: tuple[Any, Any]) -> str:
    op, av = item
    if _is_mark(op, av):
        return ""
    if op in (_c.MAX_REPEAT, _c.MIN_REPEAT, _c.POSSESSIVE_REPEAT):
        return _render_repeat(op, *av)
    simple: dict[Any, Callable[[], str]] = {
        _c.LITERAL: lambda: _char(av),
        _c.NOT_LITERAL: lambda: f"[^{_char(av, True)}]",
        _c.ANY: lambda: ".",
        _c.IN: lambda: _render_set(av),
        _c.SUBPATTERN: lambda: f"({_render_seq(av[3])})" if av[0] is not None else f"(?:{_render_seq(av[3])})",
        _c.ATOMIC_GROUP: lambda: f"(?>{_render_seq(av)})",
        _c.BRANCH: lambda: "|".join(_render_seq(alt) for alt in av[1]),
        _c.AT: lambda: _AT.get(str(av), ""),
        _c.GROUPREF: lambda: f"\\{av}",
    }
    if op in simple:
        return simple[op]()
    if op in (_c.ASSERT, _c.ASSERT_NOT):
        sign = ("=" if op is _c.ASSERT else "!") if av[0] >= 0 else ("<=" if op is _c.ASSERT else "<!")
        return f"(?{sign}{_render_seq(av[1])})"
    return ""


def _render_repeat(op: Any, low: int, high: Any, body: Any) -> str:
    inner = _render_seq(body)
    if len(body.data) != 1 or body.data[0][0] in (_c.BRANCH, _c.MAX_REPEAT, _c.MIN_REPEAT, _c.POSSESSIVE_REPEAT):
        inner = f"(?:{inner})"
    if (low, high) == (0, _c.MAXREPEAT):
        quant = "*"
    elif (low, high) == (1, _c.MAXREPEAT):
        quant = "+"
    elif (low, high) == (0, 1):
        quant = "?"
    elif high is _c.MAXREPEAT:
        quant = f"{{{low},}}"
    else:
        quant = f"{{{low}}}" if low == high else f"{{{low},{high}}}"
    return inner + quant + ("?" if op is _c.MIN_REPEAT else "+" if op is _c.POSSESSIVE_REPEAT else "")


def _render_set(items: Any) -> str:
    parts: list[str] = []
    negate = False
    for op, av in items:
        if op is _c.NEGATE:
            negate = True
        elif op is _c.LITERAL:
            parts.append(_char(av, True))
        elif op is _c.RANGE:
            parts.append(f"{_char(av[0], True)}-{_char(av[1], True)}")
        elif op is _c.CATEGORY:
            parts.append(_CATEGORIES.get(str(av), ""))
    if not negate and len(parts) == 1 and parts[0].startswith("\\") and len(parts[0]) == 2:
        return parts[0]
    return f"[{'^' if negate else ''}{''.join(parts)}]"
