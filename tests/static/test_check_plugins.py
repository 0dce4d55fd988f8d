"""Checks are plugins: found through the ``fluxdrive.checks`` entry points, configured per check.

A plugin here is real packaging metadata: a ``*.dist-info`` directory with an
``entry_points.txt`` on ``PYTHONPATH``, which ``importlib.metadata`` reads
exactly as it reads an installed wheel's, and the reviews run in a real
``fluxdrive`` process (so the plugin's checks never join this process's
registry).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from fluxdrive.agents import builtin_agents_dir
from fluxdrive.config import Config
from fluxdrive.errors import UsageError
from fluxdrive.runtimes.static import StaticRuntime
from fluxdrive.runtimes.static.checks.engine.registry import config_errors, registered_checks
from tests.static.test_static_runtime import _copy, _review

PLUGIN = '''
"""A third-party check module: a call to a configured function name."""
import ast

from fluxdrive.runtimes.static.checks.engine.registry import CheckHit, python_check


@python_check(
    "demo-named-call",
    tag="quality",
    severity="P2",
    summary="a call to the configured function",
    match=("print('x')",),
    no_match=("log('x')",),
    nodes=(ast.Call,),
    options={"function": "print"},
)
def named_call(module, node, options):
    if isinstance(node.func, ast.Name) and node.func.id == options["function"]:
        yield CheckHit(
            line=node.lineno,
            title=f"{options['function']}() called {module.where(node)}",
            why="The demo plugin reports it.",
            fix="Call something else.",
        )
'''


def _plugin_path(tmp_path: Path) -> Path:
    """A directory holding a check plugin (and a broken one), declared through dist-info entry points."""
    plugins = tmp_path / "plugins"
    info = plugins / "demo_checks-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: demo-checks\nVersion: 1.0\n", encoding="utf-8")
    (info / "entry_points.txt").write_text(
        "[fluxdrive.checks]\ndemo = demo_checks\nbroken = broken_checks\n", encoding="utf-8"
    )
    (plugins / "demo_checks.py").write_text(PLUGIN, encoding="utf-8")
    (plugins / "broken_checks.py").write_text('raise ImportError("needs yaml2, not installed")\n', encoding="utf-8")
    return plugins


def _project(tmp_path: Path, config: str) -> Path:
    """A project whose fd-quality agent (a project override of the built-in) also claims the plugin's check."""
    root = tmp_path / "project"
    agents = root / ".fluxdrive" / "agents"
    agents.mkdir(parents=True)
    definition = (builtin_agents_dir() / "fd-quality.md").read_text(encoding="utf-8")
    claimed = definition.replace("  checks:\n", "  checks:\n    - demo-named-call\n", 1)
    assert claimed != definition
    (agents / "fd-quality.md").write_text(claimed, encoding="utf-8")
    (root / "app.py").write_text('"""App."""\n\nprint("hello")\nshow("there")\n', encoding="utf-8")
    (root / ".fluxdrive" / "config.toml").write_text(textwrap.dedent(config), encoding="utf-8")
    return root


def _fluxdrive(plugins: Path, root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(plugins), os.environ.get("PYTHONPATH", "")])}
    command = [sys.executable, "-m", "fluxdrive", "review", str(root), "--agents", "fd-quality", "--yes", "-q"]
    return subprocess.run(
        [*command, "--output-dir", str(root.parent / "out"), *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=240,
        check=False,
    )


def test_a_plugin_check_reports_in_a_real_review_with_its_options_and_a_broken_plugin_is_a_note(
    tmp_path: Path,
) -> None:
    plugins = _plugin_path(tmp_path)
    root = _project(tmp_path, '[static.checks.demo-named-call]\nfunction = "show"\n')
    done = _fluxdrive(plugins, root, "--format", "json")
    assert done.returncode in (0, 1), done.stderr
    report = (tmp_path / "out" / "fd-quality.md").read_text(encoding="utf-8")
    assert "show() called at module level" in report  # the configured option, not the default "print"
    assert "print() called" not in report
    run = json.loads((tmp_path / "out" / "run.json").read_text(encoding="utf-8"))
    broken = [note for note in run["notes"] if "check module broken did not load" in note]
    assert broken and "ImportError: needs yaml2, not installed" in broken[0], run["notes"]


def test_an_unknown_check_or_option_in_config_is_one_line_and_exit_2(tmp_path: Path) -> None:
    plugins = _plugin_path(tmp_path)
    root = _project(
        tmp_path,
        """
        [static.checks.demo-named-cal]
        enabled = false

        [static.checks.demo-named-call]
        function = 3
        colour = "red"
        """,
    )
    done = _fluxdrive(plugins, root)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert "static.checks.demo-named-cal: no such check (did you mean demo-named-call?)" in done.stderr
    assert "static.checks.demo-named-call.colour: the check takes no such option" in done.stderr
    assert "static.checks.demo-named-call.function: expected a str, got 3" in done.stderr
    assert not (tmp_path / "out" / "fd-quality.md").exists()  # refused before anything ran


def test_enabled_false_turns_one_check_off_and_nothing_else(tmp_path: Path) -> None:
    root = _copy("py-webapp", tmp_path)
    assert "py-query-in-loop" in registered_checks()
    before = _review(root, ["fd-performance"])["fd-performance"]
    assert any("n+1" in title.lower() for _s, _loc, title in before)
    config = Config.model_validate({"static": {"checks": {"py-query-in-loop": {"enabled": False}}}})
    shutil.rmtree(root.parent / f"{root.name}-out")
    after = _review(root, ["fd-performance"], config)["fd-performance"]
    assert after == [f for f in before if "n+1" not in f[2].lower()]


def test_config_errors_name_what_does_not_fit() -> None:
    assert config_errors({"py-query-in-loop": {}}) == []
    assert config_errors({"py-query-in-lop": {}}) == [
        "static.checks.py-query-in-lop: no such check (did you mean py-query-in-loop?)"
    ]
    assert config_errors({"py-query-in-loop": {"depth": 2}}) == [
        "static.checks.py-query-in-loop.depth: the check takes no such option (it takes: none)"
    ]


def test_an_agent_run_without_a_plan_refuses_an_unknown_check_too(tmp_path: Path) -> None:
    """``agent run`` calls no ``check`` first: the agent's run refuses the config (an error stub), never ignores it."""
    root = _copy("py-webapp", tmp_path)
    config = Config.model_validate({"static": {"checks": {"no-such-check": {"enabled": False}}}})
    with pytest.raises(UsageError, match=r"static\.checks\.no-such-check: no such check"):
        StaticRuntime().check(config, root)
    with pytest.raises(AssertionError, match="fd-performance"):  # the report is the guard's error stub
        _review(root, ["fd-performance"], config)
    stub = (tmp_path / "py-webapp-out" / "fd-performance.md").read_text(encoding="utf-8")
    assert "static.checks.no-such-check: no such check" in stub
