"""Write-behind verdict records (seed 003) through the library and the CLI."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from fluxdrive.errors import VerdictError
from fluxdrive.exchange import verdicts


def _seed(directory: Path) -> None:
    verdicts.write_verdict(directory, "fd-safety", "NEEDS_ATTENTION", "1 P0: SQL injection in db.py:41", tokens=18_000)
    verdicts.write_verdict(directory, "fd-quality", "CLEAN", "no issues", tokens=9_000)
    verdicts.write_verdict(directory, "fd-architecture", "CLEAN", "layering holds", tokens=11_000)
    verdicts.write_verdict(directory, "fd-perf", "ERROR", "timed out after 300 s")


def test_record_shape_on_disk(tmp_path: Path) -> None:
    (tmp_path / "fd-safety.md").write_text("report")
    verdicts.write_verdict(tmp_path, "fd-safety", "needs_attention", "  one\nline  ", tokens=5, cost_usd=0.0123)
    data = json.loads((tmp_path / "verdicts" / "fd-safety.json").read_text())
    assert set(data) == {
        "schema_version",
        "agent",
        "status",
        "summary",
        "detail_path",
        "tokens",
        "cost_usd",
        "timestamp",
    }
    assert data["cost_usd"] == 0.0123
    assert verdicts.load_verdicts(tmp_path).records[0].cost_usd == 0.0123
    with pytest.raises(VerdictError, match="cost_usd"):
        verdicts.make_record("fd-safety", "CLEAN", "ok", cost_usd=-1)
    assert data["status"] == "NEEDS_ATTENTION"
    assert data["summary"] == "one line"
    assert data["detail_path"] == "fd-safety.md"
    assert data["timestamp"].endswith("Z")
    leftovers = [p for p in (tmp_path / "verdicts").iterdir() if p.name.startswith(".")]
    assert leftovers == [], "the atomic writer leaves no temp file behind"


def test_list_count_attention_and_tokens(tmp_path: Path) -> None:
    _seed(tmp_path)
    loaded = verdicts.load_verdicts(tmp_path)
    assert [r.agent for r in loaded.records] == [
        "fd-architecture",
        "fd-perf",
        "fd-quality",
        "fd-safety",
    ]
    assert verdicts.count_by_status(loaded.records) == "2 CLEAN, 1 NEEDS_ATTENTION, 1 ERROR"
    assert [r.agent for r in verdicts.attention(loaded.records)] == ["fd-perf", "fd-safety"]
    assert verdicts.total_tokens(loaded.records) == 38_000
    assert verdicts.count_by_status(()) == "0 verdicts"
    table = verdicts.render_table(loaded.records)
    assert table.splitlines()[0].split() == ["STATUS", "AGENT", "SUMMARY"]
    assert "NEEDS_ATTENTION  fd-safety        1 P0: SQL injection in db.py:41" in table


@pytest.mark.parametrize(
    ("agent", "status", "summary", "tokens", "message"),
    [
        ("../evil", "CLEAN", "s", 0, "invalid agent name"),
        ("fd-a", "BLOCKED", "s", 0, "unknown status"),
        ("fd-a", "CLEAN", "  ", 0, "summary is empty"),
        ("fd-a", "CLEAN", "s", -1, "non-negative"),
    ],
)
def test_validation(tmp_path: Path, agent: str, status: str, summary: str, tokens: int, message: str) -> None:
    with pytest.raises(VerdictError, match=message):
        verdicts.write_verdict(tmp_path, agent, status, summary, tokens=tokens)
    assert not (tmp_path / "verdicts").exists()


def test_corrupt_record_is_reported_not_fatal(tmp_path: Path) -> None:
    _seed(tmp_path)
    (tmp_path / "verdicts" / "broken.json").write_text("{not json")
    loaded = verdicts.load_verdicts(tmp_path / "verdicts")
    assert len(loaded.records) == 4
    assert loaded.problems and "broken.json" in loaded.problems[0]


def test_status_mapping_is_explicit() -> None:
    assert verdicts.STATUS_FOR_VERDICT == {
        "safe": "CLEAN",
        "needs-changes": "NEEDS_ATTENTION",
        "risky": "NEEDS_ATTENTION",
        "incomplete": "NEEDS_ATTENTION",
        "error": "ERROR",
    }


def test_cli_write_then_list(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    result = cli(
        "verdicts",
        "write",
        tmp_path,
        "fd-safety",
        "NEEDS_ATTENTION",
        "1 P0",
        "--tokens",
        "120",
        "--detail",
        "fd-safety.md",
    )
    assert result.code == 0, result.err
    cli("verdicts", "write", tmp_path, "fd-quality", "CLEAN", "nothing")
    listing = cli("verdicts", tmp_path)
    assert listing.code == 0
    assert listing.out.splitlines()[-1].startswith("1 CLEAN, 1 NEEDS_ATTENTION | 120 tokens")
    attention = cli("verdicts", tmp_path, "--attention")
    assert "fd-quality" not in attention.out
    assert "NEEDS_ATTENTION  fd-safety  fd-safety.md  1 P0" in attention.out
    data = json.loads(cli("verdicts", tmp_path / "verdicts", "--json").out)
    assert data["counts"] == "1 CLEAN, 1 NEEDS_ATTENTION"
    assert [v["agent"] for v in data["verdicts"]] == ["fd-quality", "fd-safety"]


def test_cli_finds_the_latest_run_without_dir(cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / ".git").mkdir()
    runs = tmp_path / "docs" / "research" / "flux-drive"
    for name, stamp, agent in (
        ("plan-aaaa1111", "20260101T000000.000000Z-aaaaaa", "fd-old"),
        ("plan-bbbb2222", "20260102T000000.000000Z-bbbbbb", "fd-new"),
    ):  # two runs as reviews leave them: a fresh directory each, the familiar path a link to it
        run = runs / ".fluxdrive-runs" / name / stamp
        verdicts.write_verdict(run, agent, "CLEAN", f"{agent} run")
        (runs / name).symlink_to(f".fluxdrive-runs/{name}/{stamp}")
    os.utime(runs / ".fluxdrive-runs" / "plan-bbbb2222" / "20260102T000000.000000Z-bbbbbb", (1, 1))  # stamps win
    monkeypatch.chdir(tmp_path / "docs")
    listing = cli("verdicts")
    assert listing.code == 0, listing.err
    assert "fd-new" in listing.out and "fd-old" not in listing.out


def test_cli_without_dir_and_without_runs_is_a_clear_error(
    cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.chdir(tmp_path)
    result = cli("verdicts")
    assert result.code == 2
    assert result.err.startswith("fluxdrive: error: no verdicts here")
