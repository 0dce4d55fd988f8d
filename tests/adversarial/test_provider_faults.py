"""Providers that never answer, or cannot be reached: bounded by the agent's deadline, and said on the live line.

A silent provider used to take about 40 minutes to reach ERROR with the
default settings (per-request timeouts times retries times the agent retry),
and a refused localhost connection was retried for 53 s with no sign on the
progress line. Real ``fluxdrive`` processes talk HTTP to the wire-level fake
provider (a Slow step that never answers in time) or to a port nobody
listens on.
"""

from __future__ import annotations

import io
import json
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from fluxdrive.launch.progress import LiveProgress
from tests.adversarial._support import review_dir
from tests.conftest import committed_copy, run_fluxdrive
from tests.fakes.llm_server import FakeProvider, Slow, Text

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "projects" / "py-webapp"
KEY = "sk-test-PROVIDERFAULTS0123456789ab"
CLEAN = "### Findings Index\nVerdict: safe\n"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return committed_copy(FIXTURE, tmp_path / "shop")


@pytest.fixture
def fast_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("FLUXDRIVE_DISPATCH__BACKOFF_BASE_S", "0.05")
    monkeypatch.setenv("FLUXDRIVE_DISPATCH__BACKOFF_MAX_S", "0.2")


@pytest.fixture
def silent(monkeypatch: pytest.MonkeyPatch, fast_backoff: None) -> Iterator[FakeProvider]:
    with FakeProvider(default=Slow(3600, Text(CLEAN))) as fake:
        monkeypatch.setenv("OPENAI_BASE_URL", fake.base_url_openai)
        yield fake


def test_a_silent_provider_is_bounded_by_the_agent_deadline(project: Path, silent: FakeProvider) -> None:
    """Twenty retries of a 1 s request with backoff would take half a minute and more; the 4 s deadline ends the agent instead."""
    done = run_fluxdrive(
        "review", "shop/db.py", "--yes", "--runtime", "llm", "--model", "openai:gpt-4o", "--agents", "safety",
        "--timeout", "4", "--set", "llm.request_timeout_s=1", "--set", "llm.http_retries=20", cwd=project,
    )  # fmt: skip
    assert done.code == 3, done.err  # the only agent timed out: no verdict, said in one place
    run = json.loads((review_dir(project) / "run.json").read_text())
    safety = run["agents"]["fd-safety"]
    assert safety["outcome"] == "timeout" and "timed out after 4 s" in safety["error"]
    assert "retrying once" not in done.err, "the deadline covers every attempt: a timed-out agent is not rerun"
    requests = silent.count(route="default")
    assert 1 <= requests < 21, f"{requests} requests: the retries were cut by the deadline"
    assert "retrying (no answer within the request timeout), attempt 2 of 21" in done.err


def test_a_refused_connection_is_said_on_the_progress_line(
    project: Path, fast_backoff: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    with socket.socket() as probe:  # a loopback port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    monkeypatch.setenv("OPENAI_BASE_URL", f"http://127.0.0.1:{port}/v1")
    done = run_fluxdrive(
        "review", "shop/db.py", "--yes", "--runtime", "llm", "--model", "openai:gpt-4o", "--agents", "safety",
        "--set", "llm.http_retries=3", cwd=project,
    )  # fmt: skip
    assert done.code == 3, done.err
    assert "fd-safety: retrying (connection refused), attempt 2 of 4" in done.err
    assert "fd-safety: retrying (connection refused), attempt 4 of 4" in done.err
    assert "cannot reach" in done.out + done.err and "Traceback" not in done.err


def test_the_live_table_shows_the_retry_on_the_agents_row() -> None:
    stream = io.StringIO()
    live = LiveProgress(stream)
    live.stage(1, ["fd-safety"])
    live.started("fd-safety")
    live.waiting("fd-safety", "retrying (connection refused), attempt 2 of 6 in 4 s")
    live.close()
    from rich.console import Console

    console = Console(file=io.StringIO(), width=140)
    console.print(live._render())
    shown = console.file.getvalue()  # type: ignore[attr-defined]
    assert "fd-safety" in shown and "retrying (connection refused)" in shown
