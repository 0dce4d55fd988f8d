"""Answer an MCP request the SDK could not read, instead of leaving the client waiting forever.

Why: the MCP SDK's stdio transport parses each line with pydantic, whose
JSON parser stops at 200 levels of nesting. A ``tools/call`` whose arguments
nest deeper (or any line that is JSON but not a JSON-RPC message) becomes an
exception on the read stream, which the SDK logs at debug level and drops:
no answer ever goes back, and the client's call hangs until its own
timeout. The request's id is still in the line, so this wrapper around the
read stream recovers it and answers the one request with a JSON-RPC error
(``-32600 invalid request``) naming the problem in one line. Lines with no
recoverable id (not JSON at all, or a notification) are passed on as the
SDK would have them.
"""

from __future__ import annotations

import json
import re
from types import TracebackType
from typing import Any, Self

from mcp.shared._stream_protocols import ReadStream, WriteStream
from mcp.shared.message import SessionMessage
from mcp.types import INVALID_REQUEST, ErrorData, JSONRPCError
from pydantic import ValidationError

# The first "id" member of a line too deep even for Python's parser: a JSON-RPC client writes it before params.
_ID = re.compile(r'"id"\s*:\s*(-?\d{1,18}|"(?:[^"\\]|\\.){0,200}")')
MAX_MESSAGE = 300


def _request_id(line: str) -> int | str | None:
    """The id of the request on ``line``, or None (a notification, or nothing readable)."""
    try:
        data: Any = json.loads(line)
    except RecursionError:
        found = _ID.search(line)
        return json.loads(found.group(1)) if found else None
    except ValueError:  # not JSON at all: no id to answer (JSON-RPC's parse error has none either)
        return None
    if not isinstance(data, dict) or "method" not in data:
        return None
    request_id = data.get("id")
    return request_id if isinstance(request_id, int | str) and not isinstance(request_id, bool) else None


def _problem(error: ValidationError) -> str:
    first = error.errors()[0]
    if first["type"] == "json_invalid" and "recursion" in first["msg"]:
        return "invalid request: it nests deeper than the 200 levels an MCP message may have"
    return f"invalid request: {' '.join(str(first['msg']).split())}"[:MAX_MESSAGE]


class AnswerUnreadable:
    """The SDK's read stream, answering (on ``write``) each request it failed to read instead of dropping it."""

    def __init__(self, read: ReadStream[SessionMessage | Exception], write: WriteStream[SessionMessage]) -> None:
        self._read = read
        self._write = write

    @property
    def last_context(self) -> Any:
        """The sender's context, as the SDK reads it from its own stream."""
        return getattr(self._read, "last_context", None)

    async def _answered(self, item: SessionMessage | Exception) -> bool:
        """True when ``item`` was a request the SDK could not read, and it has been answered."""
        if not isinstance(item, ValidationError):
            return False
        errors = item.errors()
        line = errors[0].get("input") if errors else None
        request_id = _request_id(line) if isinstance(line, str) else None
        if request_id is None:
            return False
        error = ErrorData(code=INVALID_REQUEST, message=_problem(item))
        await self._write.send(SessionMessage(JSONRPCError(jsonrpc="2.0", id=request_id, error=error)))
        return True

    async def receive(self) -> SessionMessage | Exception:
        """The next message; an unreadable request is answered here and skipped."""
        while True:
            item = await self._read.receive()
            if not await self._answered(item):
                return item

    async def aclose(self) -> None:
        """Close the SDK's stream."""
        await self._read.aclose()

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> SessionMessage | Exception:
        while True:
            item = await self._read.__anext__()
            if not await self._answered(item):
                return item

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc_val: BaseException | None, exc_tb: TracebackType | None
    ) -> bool | None:
        await self.aclose()
        return None
