"""The peer channel over a real redis-server: the seed's guarantees across processes, outages, the mirror.

Each test starts its own redis-server on a free loopback port (tests/servers.py) and ends it by pid.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from fluxdrive.errors import ChannelError
from fluxdrive.exchange import channel
from fluxdrive.exchange import stream as channel_stream
from tests.servers import RedisServer, alive, free_port, redis_server

pytestmark = pytest.mark.timeout(180)

WRITER = """
import sys
from fluxdrive.exchange import channel
path, agent = sys.argv[1], sys.argv[2]
for i in range(200):
    channel.append(path, "notable", agent, "stress-test", f"finding {i} from {agent} " + "x" * (i % 50), [f"f.py:{i}"])
"""


@pytest.fixture
def server(tmp_path: Path) -> Iterator[RedisServer]:
    with redis_server(tmp_path) as running:
        yield running


def test_redis_server_serves_streams_on_loopback_and_ends_by_pid(tmp_path: Path) -> None:
    with redis_server(tmp_path) as server:
        client = redis.Redis.from_url(server.url)
        first = client.xadd("fd:probe", {"line": "one"}, maxlen=10)
        client.xadd("fd:probe", {"line": "two"}, maxlen=10)
        assert [fields[b"line"] for _id, fields in client.xrange("fd:probe", min=first)] == [b"one", b"two"]
        assert client.config_get("bind")["bind"] == "127.0.0.1"
        client.close()
        pid = server.process.pid
    assert not alive(pid)


def _run_dir(tmp_path: Path) -> Path:
    run = tmp_path / "run"
    run.mkdir()
    return run


def test_fifty_writer_processes_through_redis_lose_and_tear_nothing(server: RedisServer, tmp_path: Path) -> None:
    run = _run_dir(tmp_path)
    binding = channel_stream.bind(run, server.url)
    path = run / "peer-findings.jsonl"
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(path), f"fd-writer-{n:02d}"]) for n in range(50)]
    assert [p.wait(timeout=120) for p in procs] == [0] * 50
    assert len(path.read_bytes().splitlines()) == 10_000  # every line went to the stream, and a copy to the file
    assert redis.Redis.from_url(server.url).xlen(binding.stream) == 10_000
    assert channel.read(path).skipped == 0 and len(channel.read(path).findings) == 10_000
    assert channel_stream.mirror(run) == []
    records = [json.loads(line) for line in path.read_bytes().split(b"\n")[:-1]]  # raises on any torn line
    assert len(records) == 10_000
    per_writer: dict[str, list[int]] = {}
    for record in records:
        per_writer.setdefault(record["agent"], []).append(int(record["summary"].split()[1]))
    assert len(per_writer) == 50
    assert all(sequence == list(range(200)) for sequence in per_writer.values())  # each writer's order kept


def test_a_consumer_reads_by_id_only_what_is_new(server: RedisServer, tmp_path: Path) -> None:
    run = _run_dir(tmp_path)
    binding = channel_stream.bind(run, server.url)
    path = run / "peer-findings.jsonl"
    channel.append(path, "blocking", "fd-a", "sql-injection", "query built from request input", ["a.py:1"])
    first, last = channel_stream.read_since(binding)
    assert len(first) == 1
    assert channel_stream.read_since(binding, last) == ([], last)
    channel.append(path, "notable", "fd-b", "slow-loop", "quadratic loop over every order", ["b.py:9"])
    (line,), newer = channel_stream.read_since(binding, last)
    assert json.loads(line)["agent"] == "fd-b" and newer != last
    assert [f.agent for f in channel.read(path, severity="blocking").findings] == ["fd-a"]


def test_the_stream_is_trimmed_to_about_maxlen(server: RedisServer, tmp_path: Path) -> None:
    run = _run_dir(tmp_path)
    binding = channel_stream.bind(run, server.url, maxlen=1000)
    for i in range(1500):
        assert channel_stream.add(binding, f'{{"n": {i}}}\n'.encode())
    length = redis.Redis.from_url(server.url).xlen(binding.stream)
    assert 1000 <= length < 1500  # approximate trimming (MAXLEN ~) keeps at least maxlen, never all


def test_a_redis_outage_mid_run_falls_back_to_the_file_with_one_warning(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    run = _run_dir(tmp_path)
    path = run / "peer-findings.jsonl"
    with redis_server(tmp_path) as server:
        channel_stream.bind(run, server.url)
        channel.append(path, "blocking", "fd-a", "auth-bypass", "admin route has no permission check", ["a.py:3"])
        port = server.port
    # The server is gone (ended by pid): appends go on, to the local file, with one warning.
    for i in range(3):
        channel.append(path, "notable", "fd-b", "n-plus-one", f"query per row in loop number {i}", [f"b.py:{i}"])
    warnings = [line for line in capfd.readouterr().err.splitlines() if "unreachable" in line]
    assert len(warnings) == 1 and f"127.0.0.1:{port}" in warnings[0]
    assert [f.agent for f in channel.read(path).findings] == ["fd-a"] + ["fd-b"] * 3  # its local copies
    # Redis comes back on the same port (empty: no persistence): the mirror keeps the local lines and says so.
    with redis_server_on(tmp_path, port):
        notes = channel_stream.mirror(run)
    assert notes == [
        "4 peer finding(s) were only in the local file (Redis was unreachable when they were written, or lost them)"
    ]
    assert [f.agent for f in channel.read(path).findings] == ["fd-a"] + ["fd-b"] * 3


def test_a_mirror_without_redis_keeps_the_file_and_says_what_is_missing(tmp_path: Path) -> None:
    run = _run_dir(tmp_path)
    path = run / "peer-findings.jsonl"
    with redis_server(tmp_path) as server:
        channel_stream.bind(run, server.url)
    channel.append(path, "notable", "fd-b", "n-plus-one", "query per row in the order loop", ["b.py:1"])
    (note,) = channel_stream.mirror(run)
    assert "could not be read at the end of the run" in note
    assert len(channel.read(path).findings) == 1


def test_binding_an_unreachable_redis_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(ChannelError) as raised:
        channel_stream.bind(_run_dir(tmp_path), f"redis://127.0.0.1:{free_port()}/0")
    assert "is unreachable" in raised.value.one_line() and "\n" not in raised.value.one_line()


def test_the_findings_cli_goes_through_the_stream(server: RedisServer, tmp_path: Path) -> None:
    run = _run_dir(tmp_path)
    binding = channel_stream.bind(run, server.url)
    path = run / "peer-findings.jsonl"
    fluxdrive = [sys.executable, "-m", "fluxdrive", "findings"]
    written = subprocess.run(
        [*fluxdrive, "write", str(path), "blocking", "fd-safety", "command-injection",
         "shell=True with a request parameter in the deploy hook", "deploy.py:12"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert written.returncode == 0, written.stderr
    assert len(path.read_bytes().splitlines()) == 1 and redis.Redis.from_url(server.url).xlen(binding.stream) == 1
    read = subprocess.run([*fluxdrive, "read", str(path)], capture_output=True, text=True, check=False)
    assert read.returncode == 0 and "command-injection" in read.stdout
    timeline = subprocess.run([*fluxdrive, "timeline", str(path)], capture_output=True, text=True, check=False)
    assert timeline.returncode == 0 and "fd-safety" in timeline.stdout


def test_the_password_is_never_written_to_disk(tmp_path: Path) -> None:
    with redis_server(tmp_path, args=("--requirepass", "s3cret-pw")) as server:
        url = f"redis://:s3cret-pw@127.0.0.1:{server.port}/0"
        run = _run_dir(tmp_path)
        channel_stream.bind(run, url)
        channel.append(run / "peer-findings.jsonl", "notable", "fd-a", "weak-hash", "md5 for passwords", ["a.py:1"])
        channel_stream.mirror(run)
    marker = (run / channel_stream.MARKER).read_text()
    assert "s3cret-pw" not in marker and f"127.0.0.1:{server.port}" in marker
    assert all("s3cret-pw" not in p.read_text() for p in run.iterdir())


def redis_server_on(directory: Path, port: int):  # type: ignore[no-untyped-def]
    """A redis-server on a given port (the one that went away)."""
    return redis_server(directory, port=port)
