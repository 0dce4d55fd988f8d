"""The seed's ten-case integration test (seed 001, Task 5), against our CLI.

Every step runs the installed ``fluxdrive`` console script as a subprocess,
exactly as an agent would call the reference's helper script.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import CliResult, run_fluxdrive


@pytest.fixture(scope="module")
def flow(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Steps 2 and 3 of the seed: one blocking and one notable finding."""
    directory = tmp_path_factory.mktemp("findings-test")
    findings = directory / "peer-findings.jsonl"
    step2 = run_fluxdrive(
        "findings",
        "write",
        findings,
        "blocking",
        "fd-correctness",
        "api-conflict",
        "POST /api/agents already exists with incompatible semantics",
        "internal/http/handlers.go:34",
    )
    lines_after_2 = len(findings.read_text().splitlines())
    step3 = run_fluxdrive(
        "findings",
        "write",
        findings,
        "notable",
        "fd-safety",
        "auth-bypass",
        "No authentication on admin endpoints",
        "internal/http/router.go:89",
        "internal/http/middleware.go:12",
    )
    return {
        "dir": directory,
        "file": findings,
        "step2": step2,
        "step3": step3,
        "lines_after_2": lines_after_2,
    }


def _array(result: CliResult) -> list[dict[str, Any]]:
    assert result.code == 0, result.err
    data = json.loads(result.out)
    assert isinstance(data, list)
    return data


def _records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_1_empty_file_read(flow: dict[str, Any]) -> None:
    result = run_fluxdrive("findings", "read", flow["dir"] / "nonexistent.jsonl")
    assert result.code == 0
    assert result.out.strip() == "[]"


def test_2_write_blocking_finding(flow: dict[str, Any]) -> None:
    assert flow["step2"].code == 0, flow["step2"].err
    assert flow["lines_after_2"] == 1


def test_3_write_notable_finding(flow: dict[str, Any]) -> None:
    assert flow["step3"].code == 0, flow["step3"].err
    assert len(_records(flow["file"])) == 2


def test_4_read_all_findings(flow: dict[str, Any]) -> None:
    assert len(_array(run_fluxdrive("findings", "read", flow["file"]))) == 2


def test_5_read_blocking_only(flow: dict[str, Any]) -> None:
    blocking = _array(run_fluxdrive("findings", "read", flow["file"], "--severity", "blocking"))
    assert [f["agent"] for f in blocking] == ["fd-correctness"]


def test_6_read_notable_only(flow: dict[str, Any]) -> None:
    notable = _array(run_fluxdrive("findings", "read", flow["file"], "--severity", "notable"))
    assert [f["agent"] for f in notable] == ["fd-safety"]


def test_7_schema_validation(flow: dict[str, Any]) -> None:
    first = _records(flow["file"])[0]
    for key in ("severity", "agent", "category", "summary", "file_refs", "timestamp"):
        assert key in first, key
    assert first["timestamp"].endswith("Z")


def test_8_file_refs_is_an_array(flow: dict[str, Any]) -> None:
    assert isinstance(_records(flow["file"])[0]["file_refs"], list)


def test_9_multiple_file_refs(flow: dict[str, Any]) -> None:
    assert len(_records(flow["file"])[1]["file_refs"]) == 2


def test_10_concurrent_appends(flow: dict[str, Any]) -> None:
    exe = Path(sys.executable).parent / "fluxdrive"
    writers = [
        subprocess.Popen(
            [
                str(exe),
                "findings",
                "write",
                str(flow["file"]),
                "notable",
                f"fd-agent-{i}",
                f"test-{i}",
                f"Concurrent finding {i}",
            ],
        )
        for i in range(1, 6)
    ]
    assert [w.wait(timeout=60) for w in writers] == [0] * 5
    lines = flow["file"].read_text().splitlines()
    assert sum(1 for line in lines if line.startswith("{")) == 7
    assert [line for line in lines if line and not line.startswith("{")] == []
    assert len(_array(run_fluxdrive("findings", "read", flow["file"]))) == 7
