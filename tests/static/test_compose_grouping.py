"""Hits of one rule inside one Python function become one finding (compose.py)."""

from __future__ import annotations

from fluxdrive.runtimes.static.analyzers.base import function_spans
from fluxdrive.runtimes.static.checks.engine.pyparse import parse_python
from fluxdrive.runtimes.static.compose import _by_function
from fluxdrive.runtimes.static.hits import Claim, Hit

SOURCE = """\
import os

os.system(a)
os.system(b)


@decorator
def outer(x):
    os.system(x)

    def inner(y):
        os.system(y)
        os.system(y + 1)

    os.system(x + 1)


class Shop:
    async def handler(self, z):
        os.system(z)
        try:
            os.system(z)
        except OSError:
            def fallback():
                return 1


def typed[T](v: T) -> T:
    match v:
        case 1:
            def in_case():
                pass
    os.system(v)
    return v
"""
TREE = parse_python(SOURCE, "app.py")


def _hit(line: int, path: str = "app.py") -> Hit:
    return Hit("ruff:S605", Claim("ruff", "S605"), "P1", path, line, f"shell at {line}", "why", "fix")


def test_function_spans_include_decorators_nesting_and_new_syntax() -> None:
    assert [(name, start, end) for start, end, name in function_spans(TREE)] == [
        ("outer", 7, 15),
        ("outer.inner", 11, 13),
        ("Shop.handler", 19, 25),
        ("Shop.handler.fallback", 24, 25),
        ("typed", 28, 34),
        ("typed.in_case", 31, 32),
    ]


def _function_at(path: str, line: int) -> str | None:
    """What the runtime gives compose: the innermost function of app.py's parsed tree, nothing for other files."""
    if path != "app.py":
        return None
    inside = [span for span in function_spans(TREE) if span[0] <= line <= span[1]]
    return min(inside, key=lambda s: s[1] - s[0])[2] if inside else None


def test_hits_group_by_innermost_function() -> None:
    hits = [_hit(n) for n in (3, 4, 7, 9, 12, 13, 15, 20, 22, 33)]
    groups = {tuple(h.line for h in group): scope for group, scope in _by_function(hits, _function_at)}
    assert groups == {
        (3,): None,
        (4,): None,
        (7, 9, 15): "outer",
        (12, 13): "outer.inner",
        (20, 22): "Shop.handler",
        (33,): "typed",
    }


def test_files_without_a_tree_are_not_grouped() -> None:
    hits = [_hit(9, "other.py"), _hit(12, "other.py"), _hit(9)]
    assert [len(group) for group, _scope in _by_function(hits, _function_at)] == [1, 1, 1]
    assert [len(group) for group, _scope in _by_function(hits, None)] == [1, 1, 1]
