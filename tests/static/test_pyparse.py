"""Python 3.12-3.14 syntax is analyzed on the interpreter that runs fluxdrive (3.11 in CI).

The snippets are the shapes real code takes (OWASP BenchmarkPython's cases
read request values inside f-strings with the same quotes); each is parsed by
:func:`parse_python` and the tree is checked for what the checks need.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

from fluxdrive.runtimes.static.checks.engine.pyparse import downgrade, parse_python
from tests.conftest import run_fluxdrive

PEP_701 = 'name = request.args.get("name")\nsql = f"SELECT * FROM users WHERE name = \'{request.args["name"]}\'"\n'


def _names(tree: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}


def test_same_quotes_inside_a_replacement_field() -> None:
    tree = parse_python(PEP_701)
    joined = tree.body[1].value  # type: ignore[attr-defined]
    assert isinstance(joined, ast.JoinedStr)
    field = joined.values[1]
    assert isinstance(field, ast.FormattedValue)
    assert ast.unparse(field.value) == "request.args['name']", "the subscript survives with its key"


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ('s = f"{"\\n".join(rows)}"\n', "chr(10).join(rows)"),  # a backslash inside the field: chr() spells it
        ('s = f"{f"{x}"}"\n', "f'{x}'"),  # nested f-string, same quotes
        ('s = f"{\n    a\n    + b  # why\n}"\n', "a + b"),  # a field over several lines, with a comment
        ('s = t"hello {user}"\n', "user"),  # PEP 750 template string, read as an f-string
    ],
)
def test_newer_fstrings_keep_their_expressions(source: str, expected: str) -> None:
    tree = parse_python(source)
    joined = tree.body[0].value  # type: ignore[attr-defined]
    assert isinstance(joined, ast.JoinedStr)
    fields = [ast.unparse(v.value) for v in joined.values if isinstance(v, ast.FormattedValue)]
    assert expected in fields[0] or fields[0] == expected, fields


def test_type_parameters_aliases_and_except_without_parentheses() -> None:
    source = (
        "def first[T](items: list[T]) -> T:\n"
        "    return items[0]\n"
        "class Box[T]:\n"
        "    pass\n"
        "type Pair = tuple[int, int]\n"
        "try:\n"
        "    first([])\n"
        "except IndexError, KeyError:\n"
        "    pass\n"
    )
    tree = parse_python(source)
    kinds = [type(node).__name__ for node in tree.body]
    assert kinds[:3] == ["FunctionDef", "ClassDef", "Assign"]
    handler = tree.body[3].handlers[0]  # type: ignore[attr-defined]
    assert ast.unparse(handler.type) == "(IndexError, KeyError)"


def test_lines_stay_where_they_were() -> None:
    source = 'a = 1\nb = f"{d["k"]}"\n\n\nc = f"{\n  x\n}"\nexec(b)\n'
    rewritten = downgrade(source)
    assert rewritten.count("\n") == source.count("\n")
    tree = parse_python(source)
    call = next(n for n in ast.walk(tree) if isinstance(n, ast.Call))
    assert call.lineno == 8, "a finding points at the line the user wrote"


def test_what_really_does_not_parse_still_fails() -> None:
    with pytest.raises(SyntaxError):
        parse_python("def broken(:\n    pass\n")
    with pytest.raises(SyntaxError):
        parse_python('s = f"{x\n')


def test_plain_code_is_left_alone() -> None:
    source = 's = "a {b} c"\nr = rb"\\x00"\nq = f"{x!r:>{width}}"  # {not a field}\n'
    assert downgrade(source) == source


def test_a_static_review_finds_the_injection_in_pep701_code(tmp_path: Path) -> None:
    """End to end on this interpreter: the file is analyzed, not skipped as 'not valid Python'."""
    root = tmp_path / "app"
    root.mkdir()
    (root / "views.py").write_text(
        "import sqlite3\n"
        "from flask import Flask, request\n\n"
        "app = Flask(__name__)\n\n\n"
        '@app.route("/user")\n'
        "def user():\n"
        "    db = sqlite3.connect('app.db')\n"
        '    return str(db.execute(f"SELECT * FROM users WHERE name = \'{request.args["name"]}\'").fetchall())\n'
    )
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    done = run_fluxdrive("review", "views.py", "--yes", "--output-dir", tmp_path / "out", cwd=root)
    assert done.code == 1, done.out + done.err
    findings = json.loads((tmp_path / "out" / "findings.json").read_text())
    sql = [f for f in findings["findings"] if "SQL" in f["title"] and f["severity"] == "P0"]
    assert sql and sql[0]["locations"][0] == "views.py:10", findings["findings"]
    assert "not valid Python" not in (tmp_path / "out" / "summary.md").read_text()
    assert sys.version_info >= (3, 8)
