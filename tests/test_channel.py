"""The peer-findings channel library: validation, limits, safe reads, stress."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fluxdrive.core.masking import scrub
from fluxdrive.errors import ChannelError, InputError
from fluxdrive.exchange import channel


def test_append_writes_one_complete_line(tmp_path: Path) -> None:
    path = tmp_path / "peer-findings.jsonl"
    result = channel.append(path, "blocking", "fd-safety", "sql-injection", "Query built\nfrom input", ["a.py:3"])
    data = path.read_bytes()
    assert data.count(b"\n") == 1 and data.endswith(b"\n")
    record = json.loads(data)
    assert record["summary"] == "Query built from input"
    assert record["schema_version"] == 1
    assert result.adjustments == ()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("critical", "fd-a", "cat", "s"), "unknown severity"),
        (("blocking", "", "cat", "s"), "invalid agent name"),
        (("blocking", "fd a", "cat", "s"), "invalid agent name"),
        (("blocking", "fd-a", "Not_Kebab", "s"), "not kebab-case"),
        (("blocking", "fd-a", "", "s"), "not kebab-case"),
        (("blocking", "fd-a", "cat", "   "), "summary is empty"),
    ],
)
def test_validation_on_write(tmp_path: Path, args: tuple[str, ...], message: str) -> None:
    path = tmp_path / "c.jsonl"
    with pytest.raises(ChannelError, match=message):
        channel.append(path, *args)
    assert not path.exists(), "nothing is written when validation fails"


def test_over_long_summary_is_truncated_to_fit_pipe_buf(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    result = channel.append(path, "notable", "fd-a", "cat", "é" * 5000, [f"f.py:{i}" for i in range(40)])
    line = path.read_bytes()
    assert len(line) <= channel.PIPE_BUF
    record = json.loads(line)
    assert record["summary"].endswith("\u2026")
    assert len(record["file_refs"]) == channel.MAX_FILE_REFS
    assert any("file_refs" in a for a in result.adjustments)
    assert any("summary truncated" in a for a in result.adjustments)


def test_long_refs_are_dropped_before_the_summary_is_gutted(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    refs = ["d/" * 150 + f"f.py:{i}" for i in range(20)]
    result = channel.append(path, "notable", "fd-a", "cat", "A short but complete summary.", refs)
    record = json.loads(path.read_bytes())
    assert record["summary"] == "A short but complete summary."
    assert 0 < len(record["file_refs"]) < 20
    assert any("dropped file_refs" in a for a in result.adjustments)


def test_reader_skips_partial_and_corrupt_lines_and_counts_them(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    channel.append(path, "blocking", "fd-a", "cat", "first")
    with path.open("ab") as handle:
        handle.write(b"not json\n")
        handle.write(
            b'{"severity": "info", "agent": "x", "category": "c", "summary": "s", "timestamp": "2026-01-01T00:00:00Z"}\n'
        )
        handle.write(b'{"ts": 1, "agent": "x", "kind": "stall"}\n')
        handle.write(b"\xff\xfe garbage\n")
    channel.append(path, "notable", "fd-b", "cat", "second")
    with path.open("ab") as handle:
        handle.write(b'{"severity": "blocking", "agent": "fd-c", "cat')  # torn trailing line
    result = channel.read(path)
    assert [f.agent for f in result.findings] == ["fd-a", "fd-b"]
    assert result.skipped == 5


def test_read_filters_by_severity_and_agent(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    channel.append(path, "blocking", "fd-a", "cat", "one")
    channel.append(path, "notable", "fd-a", "cat", "two")
    channel.append(path, "notable", "fd-b", "cat", "three")
    assert [f.summary for f in channel.read(path, severity="notable").findings] == ["two", "three"]
    assert [f.summary for f in channel.read(path, agent="fd-a").findings] == ["one", "two"]
    assert [f.summary for f in channel.read(path, severity="notable", agent="fd-a").findings] == ["two"]
    with pytest.raises(ChannelError):
        channel.read(path, severity="critical")


def test_timeline_orders_by_time_and_keeps_file_order_for_ties(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    rows = [
        ("fd-late", "2026-02-22T10:25:00Z"),
        ("fd-early", "2026-02-22T10:23:00Z"),
        ("fd-tie-1", "2026-02-22T10:24:00.000Z"),
        ("fd-tie-2", "2026-02-22T10:24:00Z"),
    ]
    with path.open("w") as handle:
        for agent, ts in rows:
            record = {
                "severity": "notable",
                "agent": agent,
                "category": "c",
                "summary": "s",
                "file_refs": [],
                "timestamp": ts,
            }
            handle.write(json.dumps(record) + "\n")
    ordered = channel.timeline(channel.read(path).findings)
    assert [f.agent for f in ordered] == ["fd-early", "fd-tie-1", "fd-tie-2", "fd-late"]


def test_missing_channel_is_empty_and_bad_paths_are_input_errors(tmp_path: Path) -> None:
    assert channel.read(tmp_path / "none.jsonl").findings == ()
    with pytest.raises(InputError, match="directory"):
        channel.read(tmp_path)
    with pytest.raises(InputError, match="directory"):
        channel.append(tmp_path, "blocking", "fd-a", "cat", "s")
    with pytest.raises(InputError, match="does not exist"):
        channel.append(tmp_path / "missing" / "c.jsonl", "blocking", "fd-a", "cat", "s")
    binary = tmp_path / "bin.jsonl"
    binary.write_bytes(b"\x00\x01\x02\xff\n")
    with pytest.raises(InputError, match="not UTF-8"):
        channel.read(binary)


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=2000))
def test_parse_lines_never_raises(data: bytes) -> None:
    result = channel.parse_lines(data)
    assert result.skipped >= 0


@settings(max_examples=100, deadline=None)
@given(
    summary=st.text(min_size=1, max_size=6000).filter(lambda s: scrub(s).strip()),
    refs=st.lists(st.text(min_size=1, max_size=300).filter(lambda s: s.strip()), max_size=30),
)
def test_every_appended_line_fits_and_reads_back(
    tmp_path_factory: pytest.TempPathFactory, summary: str, refs: list[str]
) -> None:
    path = tmp_path_factory.mktemp("prop") / "c.jsonl"
    channel.append(path, "notable", "fd-a", "cat", summary, refs)
    data = path.read_bytes()
    assert len(data) <= channel.PIPE_BUF
    (finding,) = channel.read(path).findings
    assert finding.agent == "fd-a"
    assert "\x1b" not in finding.summary and all("\x1b" not in ref for ref in finding.file_refs)


WRITER = """
import sys
from fluxdrive.exchange import channel
path, agent = sys.argv[1], sys.argv[2]
for i in range(200):
    channel.append(path, "notable", agent, "stress-test", f"finding {i} from {agent} " + "x" * (i % 50), [f"f.py:{i}"])
"""


@pytest.mark.slow
def test_fifty_writer_processes_lose_and_corrupt_nothing(tmp_path: Path) -> None:
    path = tmp_path / "peer-findings.jsonl"
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(path), f"fd-writer-{n:02d}"]) for n in range(50)]
    assert [p.wait(timeout=240) for p in procs] == [0] * 50
    lines = path.read_bytes().split(b"\n")
    assert lines[-1] == b""
    records = [json.loads(line) for line in lines[:-1]]  # raises on any corrupted line
    assert len(records) == 10_000
    per_writer: dict[str, list[int]] = {}
    for record in records:
        per_writer.setdefault(record["agent"], []).append(int(record["summary"].split()[1]))
    assert len(per_writer) == 50
    assert all(sequence == list(range(200)) for sequence in per_writer.values())
    assert channel.read(path).skipped == 0
