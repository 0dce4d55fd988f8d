"""Clavain interop (fluxdrive.reports.clavain), checked against Clavain's real ``hooks/lib-verdict.sh``.

The script is stored unchanged under tests/data/clavain/ (SOURCE.md: repository,
commit, MIT license). The tests run it with bash and jq, the way Clavain's
sprint and quality-gate steps do: from the project root, with the default
``.clavain/verdicts`` directory.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from fluxdrive.core.confine import OutsideRootError
from fluxdrive.exchange import verdicts
from fluxdrive.reports import clavain
from tests.conftest import committed_copy, run_fluxdrive

LIB = Path(__file__).resolve().parent / "data" / "clavain" / "lib-verdict.sh"
CLAVAIN_KEYS = [
    "type",
    "status",
    "model",
    "tokens_spent",
    "files_changed",
    "findings_count",
    "summary",
    "detail_path",
    "timestamp",
    "session_id",
]
SQL_INJECTION = '''"""Users."""

import sqlite3


def find_user(conn: sqlite3.Connection, name: str) -> list[tuple[str, ...]]:
    """The users called ``name``."""
    cursor = conn.cursor()
    cursor.execute("SELECT * FROM users WHERE name = '" + name + "'")
    return cursor.fetchall()
'''

pytestmark = pytest.mark.skipif(
    shutil.which("bash") is None or shutil.which("jq") is None, reason="lib-verdict.sh needs bash and jq"
)


def _bash(cwd: Path, script: str) -> str:
    """Run ``script`` in bash after sourcing lib-verdict.sh, from ``cwd`` (Clavain runs from the project root)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("CLAVAIN_")}
    done = subprocess.run(
        ["bash", "-c", f'source "$1"\n{script}', "bash", str(LIB)],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def _sections(text: str) -> dict[str, list[str]]:
    """``--- name`` separated output of one bash run."""
    sections: dict[str, list[str]] = {}
    current = ""
    for line in text.splitlines():
        if line.startswith("--- "):
            current = line[4:]
            sections[current] = []
        else:
            sections[current].append(line)
    return sections


@pytest.fixture
def project(tmp_path: Path) -> Path:
    source = tmp_path / "source"
    source.mkdir()
    (source / "users.py").write_text(SQL_INJECTION)
    return committed_copy(source, tmp_path / "shop")


def test_stored_script_is_the_recorded_one() -> None:
    import hashlib

    source = (LIB.parent / "SOURCE.md").read_text()
    digest = hashlib.sha256(LIB.read_bytes()).hexdigest()
    assert f"`{digest}`" in source
    assert "MIT License" in source and "Permission is hereby granted" in source


def test_review_writes_records_clavains_own_functions_read(project: Path) -> None:
    """(a) A real offline review with --verdicts-format clavain; lib-verdict.sh parses and counts what it wrote."""
    agents = "fd-safety,fd-quality"
    plain = run_fluxdrive("review", "users.py", "--yes", "--agents", agents, "--fail-on", "never", "-q", cwd=project)
    assert plain.code == 0, plain.err
    assert not (project / ".clavain").exists(), "the default format writes no Clavain records"

    done = run_fluxdrive(
        "review", "users.py", "--yes", "--agents", agents, "--fail-on", "never", "-q",
        "--verdicts-format", "clavain", "--output-dir", "run", cwd=project,
    )  # fmt: skip
    assert done.code == 0, done.err
    assert "Clavain" not in done.err, done.err  # no note: everything was written

    run = verdicts.load_verdicts(project / "run")
    assert [r.agent for r in run.records] == ["fd-quality", "fd-safety", "synthesis"]
    ours = verdicts.VerdictSet(tuple(r for r in run.records if r.agent != "synthesis"))  # the review agents
    records = {p.stem: json.loads(p.read_text()) for p in sorted((project / ".clavain" / "verdicts").glob("*.json"))}
    assert sorted(records) == ["fd-quality", "fd-safety"], "one record per review agent, none for the synthesis"

    safety = records["fd-safety"]
    assert list(safety) == CLAVAIN_KEYS, "the keys verdict_write writes, in its order (no phase: none set)"
    assert safety["type"] == "verdict"
    assert safety["status"] == "NEEDS_ATTENTION", "a P0 is NEEDS_ATTENTION in Clavain, never BLOCKED"
    assert safety["model"].startswith("fluxdrive-static-")
    assert safety["tokens_spent"] == 0 and safety["files_changed"] == []
    assert isinstance(safety["findings_count"], int) and safety["findings_count"] >= 1
    # the report of this very run (its own directory), not the "run" link that the next review moves
    detail = project / safety["detail_path"]
    assert detail.is_file() and detail.samefile(project / "run" / "fd-safety.md"), safety["detail_path"]
    assert ".fluxdrive-runs/run/" in safety["detail_path"]
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", safety["timestamp"])
    assert isinstance(safety["session_id"], str)
    by_agent = {r.agent: r for r in ours.records}
    assert safety["summary"] == by_agent["fd-safety"].summary and "P0" in safety["summary"]
    assert records["fd-quality"]["status"] == by_agent["fd-quality"].status

    out = _sections(
        _bash(
            project,
            "echo '--- parse'; verdict_parse_all || true\n"  # returns 1 after the last record (its final [[ ]])
            "echo '--- count'; verdict_count_by_status\n"
            "echo '--- attention'; verdict_get_attention\n"
            "echo '--- read'; verdict_read fd-safety\n"
            "echo '--- tokens'; verdict_total_tokens\n",
        )
    )
    assert out["parse"] == [f"{r.status}\t{r.agent}\t{r.summary}" for r in ours.records]
    assert out["count"] == [verdicts.count_by_status(ours.records)]
    assert "1 NEEDS_ATTENTION" in out["count"][0] or "2 NEEDS_ATTENTION" in out["count"][0]
    attention = [line.split("\t") for line in out["attention"]]
    assert ["fd-safety", str(safety["findings_count"]), safety["detail_path"]] in attention
    assert out["read"] == [f"NEEDS_ATTENTION\t{safety['model']}\t{safety['summary']}"]
    assert out["tokens"] == ["0"]

    back = json.loads(run_fluxdrive("verdicts", project / ".clavain" / "verdicts", "--json").out)
    assert [(v["agent"], v["status"], v["source"]) for v in back["verdicts"]] == [
        (r.agent, r.status, "clavain") for r in ours.records
    ]
    assert back["verdicts"][1]["findings_count"] == safety["findings_count"]


def _clavain_writes(project: Path) -> None:
    """Records written by lib-verdict.sh's own verdict_write."""
    _bash(
        project,
        'verdict_write fd-safety verdict NEEDS_ATTENTION sonnet "2 P1: token logged in auth.py:12" "" "[]" 2 1200\n'
        'verdict_write fd-perf verdict BLOCKED haiku "cannot run: no access to the benchmark host" "" "[]" 0 300\n'
        'verdict_write fd-quality verdict CLEAN opus "no issues" "" "[]" 0 900\n'
        'verdict_write fd-arch verdict ERROR codex "agent failed: timeout" "" "[]" 0 0\n'
        'verdict_write resolver implementation COMPLETE sonnet "fixed 2 comments" "" \'["a.go"]\' 0 50\n',
    )


def test_records_clavain_wrote_are_read_with_their_statuses(project: Path, cli) -> None:  # type: ignore[no-untyped-def]
    """(b) verdict_write's records, BLOCKED included, through ``fluxdrive verdicts DIR --json`` and the table."""
    _clavain_writes(project)
    directory = project / ".clavain" / "verdicts"
    assert json.loads((directory / "fd-perf.json").read_text())["status"] == "BLOCKED"

    listed = cli("verdicts", directory, "--json")
    assert listed.code == 0, listed.err
    assert listed.err == "", "every record Clavain wrote is readable"
    data = json.loads(listed.out)
    assert [(v["agent"], v["status"]) for v in data["verdicts"]] == [
        ("fd-arch", "ERROR"),
        ("fd-perf", "BLOCKED"),
        ("fd-quality", "CLEAN"),
        ("fd-safety", "NEEDS_ATTENTION"),
        ("resolver", "COMPLETE"),
    ]
    safety = data["verdicts"][3]
    assert safety["summary"] == "2 P1: token logged in auth.py:12"
    assert (safety["source"], safety["model"], safety["findings_count"], safety["tokens"]) == (
        "clavain",
        "sonnet",
        2,
        1200,
    )
    assert safety["detail_path"] == ".clavain/verdicts/fd-safety.md"  # verdict_write's default
    assert data["total_tokens"] == 1200 + 300 + 900 + 50
    clavain_count = _bash(project, "verdict_count_by_status").strip()
    assert clavain_count == "1 CLEAN, 1 NEEDS_ATTENTION, 1 BLOCKED, 1 ERROR, 1 COMPLETE"
    assert data["counts"] == clavain_count, "the same line from either tool"

    table = cli("verdicts", project / ".clavain")  # the folder above verdicts/ works too
    assert table.code == 0, table.err
    rows = [line.split(maxsplit=2) for line in table.out.splitlines()[1:-1]]
    assert ["BLOCKED", "fd-perf", "cannot run: no access to the benchmark host"] in rows
    assert table.out.splitlines()[-1].startswith(f"{clavain_count} | 2,450 tokens")
    attention = cli("verdicts", directory, "--attention")
    agents = {line.split()[1] for line in attention.out.splitlines()[1:-1]}
    assert agents == {"fd-arch", "fd-perf", "fd-safety"}, "BLOCKED and ERROR need attention; COMPLETE does not"


def test_verdicts_write_accepts_blocked(tmp_path: Path, cli) -> None:  # type: ignore[no-untyped-def]
    """(c) ``fluxdrive verdicts write DIR AGENT BLOCKED SUMMARY``."""
    done = cli("verdicts", "write", tmp_path, "fd-perf", "BLOCKED", "no access to the benchmark host")
    assert done.code == 0, done.err
    assert done.out.strip() == "BLOCKED fd-perf: no access to the benchmark host"
    on_disk = json.loads((tmp_path / "verdicts" / "fd-perf.json").read_text())
    assert on_disk["status"] == "BLOCKED" and set(on_disk) == set(verdicts.RECORD_KEYS)
    assert cli("verdicts", "write", tmp_path, "fd-x", "partial", "half done").code == 0
    listed = cli("verdicts", tmp_path)
    assert listed.out.splitlines()[-1].startswith("1 BLOCKED, 1 PARTIAL | 0 tokens")
    wrong = cli("verdicts", "write", tmp_path, "fd-perf", "STUCK", "s")
    assert wrong.code == 2
    assert "unknown status 'STUCK'" in wrong.err and "BLOCKED" in wrong.err and "Traceback" not in wrong.err
    with pytest.raises(verdicts.VerdictError, match="unknown status 'BLOCKED'") as refused:
        verdicts.make_record("fd-a", "BLOCKED", "s")  # the library's default vocabulary is unchanged
    assert refused.value.hint == "use CLEAN, NEEDS_ATTENTION or ERROR"


def test_malformed_clavain_records_are_one_line_each(project: Path) -> None:
    """(d) Broken or foreign records: one readable line each, the rest still listed, no traceback."""
    _clavain_writes(project)
    directory = project / ".clavain" / "verdicts"
    (directory / "broken.json").write_text("{not json")
    (directory / "nostatus.json").write_text(json.dumps({"type": "verdict", "summary": "?"}))
    (directory / "odd.json").write_text(json.dumps({"type": "verdict", "status": "clean", "summary": "lower case"}))
    skipped = {"agent": "fd-sec", "status": "SKIPPED_SHIP_CLASS", "findings_count": 0, "model": "none", "reason": "x"}
    (directory / "fd-sec.json").write_text(json.dumps(skipped))  # what quality-gates.md writes by hand

    listed = run_fluxdrive("verdicts", directory)
    assert listed.code == 0, listed.err
    assert "Traceback" not in listed.err
    warnings = listed.err.splitlines()
    assert len(warnings) == 4 and all(w.startswith("fluxdrive: warning: ") for w in warnings), warnings
    assert any("broken.json: unreadable verdict record" in w for w in warnings)
    assert any("nostatus.json" in w and "without a status" in w for w in warnings)
    assert any("odd.json" in w and "'clean'" in w for w in warnings)
    assert any("fd-sec.json" in w and "SKIPPED_SHIP_CLASS" in w for w in warnings)
    assert listed.out.splitlines()[-1].startswith("1 CLEAN, 1 NEEDS_ATTENTION, 1 BLOCKED, 1 ERROR, 1 COMPLETE |")
    # Clavain's own count agrees: it counts none of the four either.
    assert (
        _bash(project, "verdict_count_by_status").strip()
        == "1 CLEAN, 1 NEEDS_ATTENTION, 1 BLOCKED, 1 ERROR, 1 COMPLETE"
    )


def test_bad_verdicts_format_is_a_usage_error(project: Path) -> None:
    done = run_fluxdrive("review", "users.py", "--yes", "--verdicts-format", "xml", cwd=project)
    assert done.code == 2
    assert done.err.strip().splitlines() == [
        "fluxdrive: error: unknown --verdicts-format 'xml' (hint: use fluxdrive, clavain or both)"
    ]


def test_writer_is_confined_masks_and_updates(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    (root / ".git").mkdir(parents=True)
    token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    record = verdicts.make_record("fd-safety", "NEEDS_ATTENTION", f"1 P0: token {token} in ci.yml")
    assert token not in record.summary
    first = clavain.write_records(root, [record], models={"fd-safety": "opus"}, findings={"fd-safety": 1})
    (path,) = first.paths
    data = json.loads(path.read_text())
    assert token not in path.read_text() and data["model"] == "opus" and data["findings_count"] == 1
    assert data["detail_path"] == ".clavain/verdicts/fd-safety.md"
    (root / ".clavain" / "verdicts" / "plan-conformance.json").write_text('{"type": "verdict", "status": "CLEAN"}')
    again = verdicts.make_record("fd-safety", "CLEAN", "fixed")
    clavain.write_records(root, [again])
    assert json.loads(path.read_text())["status"] == "CLEAN", "the same agent again is an update"
    assert (root / ".clavain" / "verdicts" / "plan-conformance.json").is_file(), "other agents' records stay"
    assert not [p for p in path.parent.iterdir() if p.name.startswith(".")], "no temporary file left"

    outside = tmp_path / "elsewhere"
    outside.mkdir()
    other = tmp_path / "other"
    (other / ".git").mkdir(parents=True)
    (other / ".clavain").symlink_to(outside)
    with pytest.raises(OutsideRootError):
        clavain.write_records(other, [record])
    assert list(outside.iterdir()) == [], "nothing written outside the project"


def test_phase_is_written_when_clavain_sets_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLAVAIN_PHASE", "quality-gates")
    record = verdicts.make_record("fd-safety", "CLEAN", "ok", timestamp="2026-11-24T13:40:05.123Z")
    data = clavain.to_clavain(record, current_phase=clavain.phase())
    assert list(data) == [*CLAVAIN_KEYS, "phase"] and data["phase"] == "quality-gates"
    assert data["timestamp"] == "2026-11-24T13:40:05Z"
