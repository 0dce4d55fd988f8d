"""The peer channel across machines: one Redis stream per run, mirrored to ``peer-findings.jsonl`` at the end.

Seed 001 deferred cross-machine sharing; config ``channel.url = "redis://..."``
is it. :func:`bind` gives the run a stream (``fluxdrive:peer-findings:<uuid>``)
and leaves a marker, ``OUTPUT_DIR/peer-findings.stream.json``, next to the
channel file. From then on :func:`fluxdrive.exchange.channel.append_finding` and
:func:`fluxdrive.exchange.channel.read` - and so every writer and reader: the static
runtime, the llm runtime's tools, ``fluxdrive findings write|read|timeline``
run by a CLI agent - find the marker and use the stream: ``XADD`` with
``MAXLEN ~`` for a write, ``XRANGE`` (by id, for a consumer that keeps its
place: :func:`read_since`) for a read. An agent on another node gets the
same marker in its scratch directory (:func:`attach`).

The seed's guarantees carry over. Each entry is the exact line the file
would get (``channel.fit_line``: under PIPE_BUF, masked), stored whole in one
field, so no entry is torn or interleaved whatever the number of writers,
and readers validate it with ``channel.parse_lines`` like a file line.

A Redis outage never fails a review: every append also keeps its line in
the local file (an append that cannot reach Redis goes there alone, with one
warning per process), and reads merge what the stream still returns with
the local file, dropping the lines both hold. :func:`mirror` writes the
union into ``peer-findings.jsonl`` for synthesis, so a Redis killed mid-run
loses none of this machine's lines (nor, through ``channel.adopt``, those of
the Ray tasks it ran). What only a dead Redis held (entries of machines that
never handed theirs back) cannot be recovered: the mirror then says the
stream could not be read.

The URL's password is never written to disk: the marker holds the URL
without it; the process that bound the run remembers it, and any other
process (a CLI agent, a Ray node) takes the full URL from
``FLUXDRIVE_CHANNEL_URL`` when set.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from fluxdrive.core.atomic import atomic_write_bytes, atomic_write_json
from fluxdrive.core.masking import scrub
from fluxdrive.errors import ChannelError

MARKER = "peer-findings.stream.json"
URL_ENV = "FLUXDRIVE_CHANNEL_URL"
STREAM_PREFIX = "fluxdrive:peer-findings:"
KEEP_S = 7 * 24 * 3600  # a finished run's stream expires after a week (other machines may still read it)
CONNECT_TIMEOUT_S = 2.0
OP_TIMEOUT_S = 5.0
PAGE = 1000

_lock = threading.Lock()
_clients: dict[tuple[int, str], Any] = {}
_full_urls: dict[str, str] = {}  # stream -> URL with its password, for the process that bound it
_warned: set[str] = set()
_markers: dict[Path, tuple[float, StreamBinding | None]] = {}


@dataclass(frozen=True, slots=True)
class StreamBinding:
    """Where a run's peer channel lives: the Redis URL, the stream key, how many entries it keeps."""

    url: str
    stream: str
    maxlen: int = 100_000


def public_url(url: str) -> str:
    """The URL without its password (what may be written to disk or shown)."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    user = parts.username or ""
    host = parts.hostname or ""
    netloc = f"{user}@{host}" if user else host
    if parts.port is not None:
        netloc += f":{parts.port}"
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))


def _redis() -> Any:
    try:
        import redis
    except ImportError:
        raise ChannelError(
            "channel.url needs the redis package", hint="install the cluster extra: pip install 'fluxdrive[cluster]'"
        ) from None
    return redis


def _client(url: str) -> Any:
    """One client per process and URL (a fork gets its own: connections are not shared across processes)."""
    key = (os.getpid(), url)
    with _lock:
        if key not in _clients:
            _clients[key] = _redis().Redis.from_url(
                url, socket_connect_timeout=CONNECT_TIMEOUT_S, socket_timeout=OP_TIMEOUT_S
            )
        return _clients[key]


def _failures() -> tuple[type[BaseException], ...]:
    return (_redis().RedisError, OSError)


def bind(output_dir: Path, url: str, *, maxlen: int = 100_000, stream: str | None = None) -> StreamBinding:
    """Give the run at ``output_dir`` a stream; ChannelError (one line) when Redis cannot be reached."""
    binding = StreamBinding(url, stream or f"{STREAM_PREFIX}{uuid.uuid4().hex}", maxlen)
    try:
        _client(url).ping()
    except _failures() as exc:
        raise ChannelError(
            f"the peer channel's Redis at {public_url(url)} is unreachable: {scrub(str(exc))[:200]}",
            hint="start it, fix channel.url, or unset it to share findings through the local file",
        ) from None
    _full_urls[binding.stream] = url
    attach(output_dir, binding)
    return binding


def attach(output_dir: Path, binding: StreamBinding) -> None:
    """Point ``output_dir``'s channel at ``binding``'s stream (a remote agent's scratch directory, too)."""
    record = {"url": public_url(binding.url), "stream": binding.stream, "maxlen": binding.maxlen}
    atomic_write_json(Path(output_dir) / MARKER, record)
    with _lock:
        _markers.pop(Path(output_dir) / MARKER, None)


def binding_for(channel_path: Path) -> StreamBinding | None:
    """The stream the channel file ``channel_path`` is bound to (None: the file alone)."""
    marker = Path(channel_path).parent / MARKER
    try:
        mtime = marker.stat().st_mtime
    except OSError:
        return None
    with _lock:
        cached = _markers.get(marker)
        if cached is not None and cached[0] == mtime:
            return cached[1]
    binding = _load(marker)
    with _lock:
        _markers[marker] = (mtime, binding)
    return binding


def _load(marker: Path) -> StreamBinding | None:
    try:
        data = json.loads(marker.read_text(encoding="utf-8"))
        stream, url, maxlen = str(data["stream"]), str(data["url"]), int(data.get("maxlen", 100_000))
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if not stream.startswith(STREAM_PREFIX):
        return None
    url = _full_urls.get(stream) or os.environ.get(URL_ENV) or url
    return StreamBinding(url, stream, maxlen)


def _warn(binding: StreamBinding, exc: BaseException) -> None:
    """One warning per process and stream: the channel goes on in the local file."""
    with _lock:
        if binding.stream in _warned:
            return
        _warned.add(binding.stream)
    sys.stderr.write(
        f"fluxdrive: warning: the peer channel's Redis at {public_url(binding.url)} is unreachable "
        f"({scrub(str(exc))[:160]}); findings go to the local peer-findings.jsonl\n"
    )


def add(binding: StreamBinding, line: bytes) -> bool:
    """XADD one encoded line; False (after the one warning) when Redis cannot take it."""
    try:
        _client(binding.url).xadd(binding.stream, {"line": line}, maxlen=binding.maxlen, approximate=True)
    except _failures() as exc:
        _warn(binding, exc)
        return False
    return True


def _entries(binding: StreamBinding, after: str = "-") -> Iterator[tuple[str, bytes]]:
    """(id, line) of every entry after ``after`` ("-": from the start), page by page."""
    client = _client(binding.url)
    start = after if after == "-" else f"({after}"
    while True:
        page = client.xrange(binding.stream, min=start, max="+", count=PAGE)
        for raw_id, fields in page:
            entry_id = raw_id.decode() if isinstance(raw_id, bytes) else str(raw_id)
            yield entry_id, fields.get(b"line", b"")
        if len(page) < PAGE:
            return
        start = f"({entry_id}"


def stream_lines(binding: StreamBinding) -> tuple[list[bytes], bool]:
    """Every line in the stream, and whether Redis answered (False: an outage; the lines are empty)."""
    try:
        return [line for _id, line in _entries(binding)], True
    except _failures() as exc:
        _warn(binding, exc)
        return [], False


def read_since(binding: StreamBinding, last_id: str = "-") -> tuple[list[bytes], str]:
    """Lines added after ``last_id`` and the id to pass next time (a consumer that keeps its place)."""
    lines, newest = [], last_id
    try:
        for entry_id, line in _entries(binding, last_id):
            lines.append(line)
            newest = entry_id
    except _failures() as exc:
        _warn(binding, exc)
    return lines, newest


def merged(stream: list[bytes], local: bytes) -> bytes:
    """The stream's lines, then the local file's lines it does not hold (written during an outage)."""
    seen = {line.rstrip(b"\n") for line in stream}
    extra = [line for line in local.split(b"\n") if line.strip() and line not in seen]
    body = [line.rstrip(b"\n") for line in stream] + extra
    return b"".join(line + b"\n" for line in body)


def mirror(output_dir: Path, channel_file: str = "peer-findings.jsonl") -> list[str]:
    """Write the run's stream (and lines kept locally during an outage) into the channel file; notes.

    The marker stays: it records which stream the run used. The stream expires after KEEP_S.
    """
    path = Path(output_dir) / channel_file
    binding = binding_for(path)
    if binding is None:
        return []
    local = path.read_bytes() if path.is_file() else b""
    lines, answered = stream_lines(binding)
    notes = []
    if not answered:
        notes.append(
            f"the peer channel's Redis at {public_url(binding.url)} could not be read at the end of the run: "
            "findings other machines shared only there are missing from peer-findings.jsonl"
        )
    else:
        try:
            _client(binding.url).expire(binding.stream, KEEP_S)
        except _failures():
            pass
    kept_locally = [line for line in local.split(b"\n") if line.strip()]
    in_stream = {line.rstrip(b"\n") for line in lines}
    fallback = [line for line in kept_locally if line not in in_stream]
    if answered and fallback:
        notes.append(
            f"{len(fallback)} peer finding(s) were only in the local file (Redis was unreachable when they were "
            "written, or lost them)"
        )
    atomic_write_bytes(path, merged(lines, local))
    return notes
