"""What the wire-level fakes of REST services (GitHub, GitLab) share: the record of a request, a scripted failure."""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Self


@dataclass(frozen=True)
class Recorded:
    """One request as a fake saw it (the credential header reduced to whether it was right)."""

    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: Any
    raw_body: str
    status: int
    authorized: bool


@dataclass
class Failure:
    """A failure a test scripts: answer ``method path`` with ``status`` the next ``times`` times."""

    method: str
    path: re.Pattern[str]
    status: int
    headers: dict[str, str]
    body: dict[str, Any]
    times: int


class LoopbackServer:
    """A fake's HTTP server on 127.0.0.1 (a free port) in a daemon thread; a context manager.

    Subclasses name the thread and give the request handler class; ``root_url`` is where they listen.
    """

    thread_name = "fake-rest"

    def __init__(self) -> None:
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    def handler(self) -> type[BaseHTTPRequestHandler]:
        raise NotImplementedError

    def start(self) -> Self:
        server = ThreadingHTTPServer(("127.0.0.1", 0), self.handler())
        server.daemon_threads = True
        self._server = server
        self._thread = threading.Thread(target=server.serve_forever, args=(0.05,), name=self.thread_name, daemon=True)
        self._thread.start()
        return self

    def close(self) -> None:
        server, self._server = self._server, None
        if server is not None:
            server.shutdown()
            server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.close()

    @property
    def root_url(self) -> str:
        assert self._server is not None, "start() the fake first"
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"
