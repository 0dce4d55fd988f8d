"""The one-walk runner: node checks dispatched by type give what each check finds alone."""

from __future__ import annotations

import ast
import importlib
import inspect
from collections.abc import Iterator
from pathlib import Path

import pytest

from fluxdrive.runtimes.static.checks import safety_injection
from fluxdrive.runtimes.static.checks.engine import registry
from fluxdrive.runtimes.static.checks.engine.pymodule import PyModule
from fluxdrive.runtimes.static.checks.engine.pyparse import parse_python
from fluxdrive.runtimes.static.checks.engine.registry import CheckHit, CheckSpec, registered_checks
from fluxdrive.runtimes.static.checks.engine.runner import run_python_checks
from fluxdrive.runtimes.static.checks.engine.syntax import walk

# Real code nobody wrote for these checks: the standard library's HTTP server, subprocess and
# tarfile modules (calls, handlers, loops, file and shell access), plus this project's own runner.
SAMPLES = [Path(inspect.getfile(importlib.import_module(name))) for name in ("http.server", "subprocess", "tarfile")]
SAMPLES.append(Path(safety_injection.__file__))


def _module(path: Path) -> PyModule:
    text = path.read_text(encoding="utf-8")
    return PyModule(path.name, text, parse_python(text))


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.name)
def test_one_walk_finds_what_each_check_finds_alone(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    notes: list[str] = []
    together = run_python_checks(path.name, text, None, notes)
    assert notes == []
    alone = [
        (spec.name, hit.line, hit.title)
        for spec in registered_checks().values()
        if spec.kind == "python"
        for hit in spec.run(_module(path))
    ]
    assert sorted((r.spec.name, r.hit.line, r.hit.title) for r in together) == sorted(alone)
    assert any(spec.nodes for spec in registered_checks().values())  # the dispatch path is exercised


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.name)
def test_single_walk_maps_match_ast_walk(path: Path) -> None:
    module = _module(path)
    markers = ast.expr_context  # Load/Store/Del: shared markers, never walked (child_nodes leaves them out)
    walked = [node for node in ast.walk(module.tree) if not isinstance(node, markers)]
    assert module.nodes == walked
    assert walk(module.tree) == walked
    expected_parents = {
        child: node for node in walked for child in ast.iter_child_nodes(node) if not isinstance(child, markers)
    }
    assert module.parents == expected_parents
    for node in module.nodes[:: max(1, len(module.nodes) // 500)]:
        nearest = next(
            (p for p in module.ancestors(node) if isinstance(p, ast.FunctionDef | ast.AsyncFunctionDef)), None
        )
        assert module.enclosing_function(node) is nearest


def test_a_check_that_raises_is_noted_once_and_the_others_still_run(monkeypatch: pytest.MonkeyPatch) -> None:
    def explode(module: PyModule, node: ast.Call) -> Iterator[CheckHit]:
        raise RuntimeError("boom")
        yield  # a generator, like every check

    broken = CheckSpec("py-test-explodes", "python", "quality", "P3", "x", explode, ("x",), ("y",), (ast.Call,))
    monkeypatch.setitem(registry._REGISTRY, broken.name, broken)
    code = "import subprocess\ndef run(cmd):\n    subprocess.run(cmd, shell=True)\n    print(cmd)\n"
    notes: list[str] = []
    ran = run_python_checks("job.py", code, [broken.name, "py-command-injection"], notes)
    assert [n for n in notes if "py-test-explodes" in n] == [
        "check py-test-explodes failed on job.py: RuntimeError: boom"
    ]
    assert [r.spec.name for r in ran] == ["py-command-injection"]


def test_node_checks_declare_concrete_node_types() -> None:
    for spec in registered_checks().values():
        for kind in spec.nodes:
            assert issubclass(kind, ast.AST) and not inspect.isabstract(kind)
            assert kind not in (ast.expr, ast.stmt, ast.AST), f"{spec.name}: dispatch is by exact type"
