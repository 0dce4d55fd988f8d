"""Shared fixtures. See tests/README.md for what is real and what is faked."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from fluxdrive.cli import main
from fluxdrive.cli.examples import clean_copy

REPO = Path(__file__).resolve().parent.parent

# A suite started in the background by a non-interactive shell (``make test &``, some CI runners) inherits
# SIGINT and SIGQUIT ignored, and every process a test starts inherits that in turn: Ctrl-C sent to a
# review under test went nowhere and three tests waited out their two-minute timeouts. The tests that
# interrupt a review need the signals a terminal user has, so they are put back once, here.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)
if signal.getsignal(signal.SIGQUIT) == signal.SIG_IGN:
    signal.signal(signal.SIGQUIT, signal.SIG_DFL)
# No real model calls: without these, a test can only reach the fake provider it configures itself.
PROVIDER_VARIABLES = frozenset(
    {
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_BASE_URL",
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
        "OPENROUTER_API_KEY",
        "OLLAMA_BASE_URL",
        "BRAVE_SEARCH_API_KEY",
        "BRAVE_API_KEY",
        "TAVILY_API_KEY",
    }
)


@pytest.hookimpl(trylast=True)  # after the tmp_path plugin has set up the session's temp directory
def pytest_configure(config: pytest.Config) -> None:
    """Hypothesis keeps its examples and the constants it collects in ./.hypothesis, from collection on:
    under the session's temp directory instead, so the suite leaves nothing in the checkout it runs in."""
    from hypothesis.configuration import set_hypothesis_home_dir

    factory: pytest.TempPathFactory = config._tmp_path_factory  # type: ignore[attr-defined]
    set_hypothesis_home_dir(factory.getbasetemp() / "hypothesis")


# What a review, a triage or a research run writes into the project it works on. A test must work on a
# project of its own (a temp copy): in the checkout the suite runs from, these stay as they were.
PROJECT_STATE = (".fluxdrive", "docs/research/flux-drive", "docs/research/flux-research", ".hypothesis")
_BEFORE = {name: (REPO / name).exists() for name in PROJECT_STATE}


@pytest.fixture(autouse=True)
def leaves_the_checkout_alone() -> Iterator[None]:
    """Fail the test that wrote project state into this checkout (a domain cache, a run directory), by name."""
    yield
    written = [name for name in PROJECT_STATE if not _BEFORE[name] and (REPO / name).exists()]
    _BEFORE.update(dict.fromkeys(written, True))  # said once, by the test that wrote it, not by every later one
    assert not written, f"this test wrote {', '.join(written)} into the repository the suite runs from"


@pytest.fixture(autouse=True)
def isolated_state(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Point every state and config directory at a fresh temp dir.

    No test may read the developer's ~/.config/fluxdrive, be steered by a
    FLUXDRIVE_* variable from the calling shell, or find a provider's key.
    """
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / ".local" / "share"))
    for name in list(os.environ):
        if name.startswith("FLUXDRIVE_") or name in PROVIDER_VARIABLES:
            monkeypatch.delenv(name)
    yield home


def git(root: Path, *args: str) -> str:
    """``git ARGS`` in ``root`` as the tests' own author (no user config needed); its output, stripped."""
    done = subprocess.run(
        ["git", "-c", "user.email=tests@fluxdrive.invalid", "-c", "user.name=fluxdrive tests", *args],
        cwd=root,
        check=True,
        capture_output=True,
        text=True,
    )
    return done.stdout.strip()


def commit_all(root: Path) -> Path:
    """``root`` as a git repository with everything in it committed once (reviews find their root by .git)."""
    for args in (("init", "-q", "-b", "main"), ("add", "-A"), ("commit", "-q", "-m", "initial")):
        git(root, *args)
    return root


def committed_copy(source: Path, destination: Path) -> Path:
    """A copy of a fixture project as a git repository with one commit."""
    clean_copy(source, destination)
    return commit_all(destination)


_HOLD_LOCK = """
import sys, time
from pathlib import Path
from fluxdrive.workspace import run_lock
with run_lock(Path(sys.argv[1]), command="test holder"):
    print("locked", flush=True)
    time.sleep(120)
"""


@contextlib.contextmanager
def hold_lock(directory: Path) -> Iterator[subprocess.Popen[str]]:
    """Another process holding the run lock on ``directory``; killed (-9, by pid) when the block ends."""
    holder = subprocess.Popen([sys.executable, "-c", _HOLD_LOCK, str(directory)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        yield holder
    finally:
        holder.kill()
        holder.wait()
        if holder.stdout is not None:
            holder.stdout.close()


@dataclass
class CliResult:
    code: int
    out: str
    err: str


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str]):  # type: ignore[no-untyped-def]
    """Run the CLI in-process: ``cli("findings", "read", path)``."""

    def run(*args: str | Path) -> CliResult:
        capsys.readouterr()
        code = main([str(a) for a in args])
        captured = capsys.readouterr()
        return CliResult(code, captured.out, captured.err)

    return run


def user_config_file() -> Path:
    """The user's own config file (under the test's XDG_CONFIG_HOME): where privileged settings belong.

    A project's .fluxdrive/config.toml may not choose runtimes, models, commands or addresses
    (README "Security model"), so tests that need them configure the user, as a person would.
    """
    path = Path(os.environ["XDG_CONFIG_HOME"]) / "fluxdrive" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


def run_fluxdrive(
    *args: str | Path, cwd: Path | None = None, input: str | None = None, timeout: float = 300
) -> CliResult:
    """Run the installed ``fluxdrive`` console script as a real subprocess."""
    exe = Path(sys.executable).parent / "fluxdrive"
    proc = subprocess.run(
        [str(exe), *[str(a) for a in args]],
        capture_output=True,
        text=True,
        cwd=cwd,
        input=input,
        timeout=timeout,  # a hang guard: a 2 MB file takes ~90 s alone, more beside the Ray cluster test
        check=False,
    )
    return CliResult(proc.returncode, proc.stdout, proc.stderr)


# The adversarial suite's figures (secrets planted / found raw, bad inputs handled), printed at the end of a
# run. Under xdist (make test runs ``-n 2 --dist loadfile``: a module runs whole in one worker) each worker
# hands its figures to the controller, which prints them; without xdist they are printed directly.
_FIGURES: dict[str, list[str]] = {}


def _own_figures() -> dict[str, list[str]]:
    from tests.adversarial.conftest import figures

    return figures() if "tests.adversarial.conftest" in sys.modules else {}


def pytest_sessionfinish(session: pytest.Session) -> None:
    output = getattr(session.config, "workeroutput", None)
    if output is not None:
        output["fluxdrive_figures"] = _own_figures()


def pytest_testnodedown(node: Any, error: Any) -> None:
    _FIGURES.update(getattr(node, "workeroutput", {}).get("fluxdrive_figures", {}))


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    for title, lines in sorted({**_own_figures(), **_FIGURES}.items()):
        terminalreporter.section(title)
        for line in lines:
            terminalreporter.write_line(line)
