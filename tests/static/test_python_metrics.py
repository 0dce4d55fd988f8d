"""Python functions measured from the parsed tree agree with lizard, which they replace for Python.

The oracle is lizard itself, run on real code: this repository's own modules
(every one of them) and one module of each of three installed libraries.
"""

from __future__ import annotations

import ast
import importlib
import textwrap
from pathlib import Path

from lizard import analyze_file

from fluxdrive.runtimes.static.analyzers.python_metrics import python_functions

REPOSITORY = Path(__file__).resolve().parents[2] / "fluxdrive"
LIBRARIES = ("pydantic.fields", "rich.console", "typer.main")


def _real_files() -> list[Path]:
    files = sorted(REPOSITORY.rglob("*.py"))
    files += [Path(importlib.import_module(name).__file__ or "") for name in LIBRARIES]
    return files


def test_complexity_and_parameters_match_lizard_and_lines_nearly_always() -> None:
    functions = same_lines = 0
    for path in _real_files():
        text = path.read_text(encoding="utf-8")
        ours = {f.start_line: f for f in python_functions(text, ast.parse(text))}
        for theirs in analyze_file.analyze_source_code(str(path), text).function_list:
            mine = ours.get(theirs.start_line)
            if mine is None:  # an @overload stub lizard measured
                continue
            functions += 1
            assert mine.cyclomatic_complexity == theirs.cyclomatic_complexity, (path, theirs.name)
            assert list(mine.parameters) == list(theirs.parameters), (path, theirs.name)
            same_lines += mine.nloc == theirs.nloc
    assert functions > 1500
    assert same_lines / functions >= 0.97, f"NLOC agrees on {same_lines} of {functions}"


def test_nested_functions_docstrings_and_branches() -> None:
    source = textwrap.dedent('''
        def outer(a, *rest, flag=False, **options):
            """Docstring lines
            are not code."""
            # a comment
            if a and flag or not rest:
                return [x for x in rest if x]

            def inner(b):
                while b:
                    b -= 1
                return b

            try:
                match a:
                    case 1:
                        pass
                    case _:
                        pass
            except ValueError:
                pass
            finally:
                inner(a)
            return 1 if a else 2
    ''')
    outer, inner = python_functions(source, ast.parse(source))
    assert (outer.name, outer.parameters) == ("outer", ("a", "rest", "flag", "options"))
    # 1 + if + and + or + comprehension for + its if + case + case + except + finally + conditional expression
    assert outer.cyclomatic_complexity == 11
    assert inner.name == "outer.inner" and inner.cyclomatic_complexity == 2 and inner.nloc == 4
    assert outer.nloc == 15  # the def, the body without the docstring, the comment, blanks and inner's body
