"""A fake LLM provider at the wire: a local HTTP server speaking OpenAI's and Anthropic's real shapes.

The llm runtime's tests talk to it through the real SDK clients and pydantic-ai, so everything from
request building to error mapping is exercised; only the model is scripted.

    with FakeProvider() as provider:
        provider.script("fd-safety", [ToolCall("read_file", {"path": "app.py"}), Echo()])
        client = AsyncOpenAI(base_url=provider.base_url_openai, api_key="test", max_retries=0)
        ...
        assert provider.tool_results("fd-safety") == ["print('hi')\\n"]

Endpoints: ``POST /v1/chat/completions`` (OpenAI Chat Completions), ``POST /v1/messages``
(Anthropic Messages), ``GET /v1/models`` (either provider's list shape, chosen by the
``anthropic-version`` header). A request with ``"stream": true`` gets that provider's SSE stream.

Routing: a model request belongs to the first script whose ``match`` is a substring of the text of
its system prompt or first user message (the two things every request of one conversation shares);
other requests play the default script. A matched script's position is kept per ``match``; the
default script's position is kept per conversation. Each request plays the script's next step, and
the last step repeats once the script runs out (as in ``fluxdrive.runtimes.testing``).

Usage is deterministic: input tokens are ``len(request body) // 4``, output tokens
``len(content) // 4`` (at least 1 each), where content is the text, or for tool calls the sum over
calls of ``len(name) + len(arguments JSON)``.

Standalone, for manual checks and subprocess tests (prints the root URL, ``+ /v1`` for OpenAI)::

    python -m tests.fakes.llm_server --port 0 --script script.json [--log requests.jsonl]
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import json
import math
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from email.message import Message
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import Any, Literal

__all__ = [
    "DEFAULT_REPORT",
    "Echo",
    "Error",
    "FakeProvider",
    "Malformed",
    "RecordedRequest",
    "Slow",
    "Step",
    "Text",
    "ToolCall",
    "ToolCalls",
    "Usage",
    "main",
    "step_from_json",
    "step_to_json",
]

DEFAULT_REPORT = "### Findings Index\nVerdict: safe\n"
OPENAI_CHAT = "/v1/chat/completions"
ANTHROPIC_MESSAGES = "/v1/messages"
MODELS = "/v1/models"
DEFAULT_ROUTE = "default"

Api = Literal["openai", "anthropic"]


# --- steps -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ToolCall:
    """One tool call; ``id`` is generated (``call_fake…`` / ``toolu_fake…``) unless given."""

    name: str
    args: Mapping[str, Any] = field(default_factory=dict)
    id: str | None = None


@dataclass(frozen=True)
class ToolCalls:
    """Several tool calls in one response."""

    calls: Sequence[ToolCall]

    def __post_init__(self) -> None:
        if not self.calls:
            raise ValueError("ToolCalls needs at least one ToolCall")
        object.__setattr__(self, "calls", tuple(self.calls))


@dataclass(frozen=True)
class Text:
    """A final text answer."""

    content: str


@dataclass(frozen=True)
class Error:
    """An HTTP error in the provider's error shape.

    ``kind`` is the Anthropic error type (``rate_limit_error``, ``overloaded_error``, ``api_error``,
    ``invalid_request_error``, ``authentication_error``, ``not_found_error``, ``billing_error``...),
    derived from ``status`` when omitted and translated to OpenAI's ``type``/``code`` for OpenAI.
    ``retry_after`` sets ``Retry-After`` (whole seconds, rounded up) and, when fractional, also
    ``retry-after-ms``, as both providers send it: pydantic-ai reads ``retry-after-ms`` first.
    """

    status: int
    kind: str | None = None
    retry_after: float | None = None
    message: str | None = None


@dataclass(frozen=True)
class Malformed:
    """HTTP 200 whose body is not JSON (for a stream: an SSE event whose data is not JSON)."""

    body: str = "<html><body>upstream hiccup</body></html"
    content_type: str = "application/json"


@dataclass(frozen=True)
class Slow:
    """Wait ``seconds`` before answering with ``then`` (the wait ends early when the server closes)."""

    seconds: float
    then: Step


@dataclass(frozen=True)
class Echo:
    """Answer with text quoting the last tool result in the request: ``template`` with ``{result}``."""

    template: str = "{result}"


Step = ToolCall | ToolCalls | Text | Error | Malformed | Slow | Echo


@dataclass(frozen=True)
class Usage:
    """Token counts the server reported."""

    input_tokens: int = 0
    output_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(self.input_tokens + other.input_tokens, self.output_tokens + other.output_tokens)


@dataclass
class RecordedRequest:
    """One request the server received and what it answered.

    A request is recorded when it arrives; ``status`` and ``usage`` are filled in when it is
    answered (``status`` is None while a Slow step is still waiting).
    """

    method: str
    path: str
    headers: dict[str, str]  # keys lowercased
    body: Any  # the parsed JSON body, or the raw text when it is not JSON
    raw: str  # the body as received (its length // 4 is the input token count)
    api: Api | None  # which provider's endpoint, None for anything else
    route: str | None  # the match that routed it, "default", or None when not routed
    step: Step | None  # the step played, None when the request was answered without a script
    stream: bool
    status: int | None = None
    usage: Usage | None = None  # what the response reported, None for errors and malformed answers

    @property
    def tool_results(self) -> list[tuple[str, str]]:
        """``(tool call id, result text)`` of every tool result in the request, in order."""
        if self.api is None or not isinstance(self.body, dict):
            return []
        return list(_tool_results(self.api, self.body))


# --- JSON script format ------------------------------------------------------------------------------

_STEP_TYPES: dict[str, type[Step]] = {
    "tool_call": ToolCall,
    "tool_calls": ToolCalls,
    "text": Text,
    "error": Error,
    "malformed": Malformed,
    "slow": Slow,
    "echo": Echo,
}
_TYPE_NAMES = {cls: name for name, cls in _STEP_TYPES.items()}
_STEP_CLASSES = (ToolCall, ToolCalls, Text, Error, Malformed, Slow, Echo)


def step_from_json(data: object) -> Step:
    """``{"type": "tool_call", "name": "read_file", "args": {...}}`` -> ``ToolCall(...)``; keys are the fields."""
    if not isinstance(data, dict) or not isinstance(data.get("type"), str):
        raise ValueError(f'a step must be an object with a "type" ({", ".join(_STEP_TYPES)}), got {data!r}')
    fields = dict(data)
    kind = fields.pop("type")
    if kind not in _STEP_TYPES:
        raise ValueError(f"unknown step type {kind!r}: expected one of {', '.join(_STEP_TYPES)}")
    cls = _STEP_TYPES[kind]
    known = {f.name for f in dataclasses.fields(cls)}
    if unknown := sorted(set(fields) - known):
        raise ValueError(f"unknown key(s) {', '.join(unknown)} in a {kind!r} step: expected {', '.join(sorted(known))}")
    if cls is ToolCalls:
        calls = fields.get("calls", [])
        if not isinstance(calls, list) or not all(isinstance(call, dict) for call in calls):
            raise ValueError(f'"calls" must be a list of {{"name", "args"}} objects, got {calls!r}')
        fields["calls"] = [step_from_json({"type": "tool_call", **call}) for call in calls]
    if cls is Slow and "then" in fields:
        fields["then"] = step_from_json(fields["then"])
    try:
        return cls(**fields)
    except TypeError as exc:
        raise ValueError(f"bad {kind!r} step {data!r}: {exc}") from exc


def step_to_json(step: Step) -> dict[str, Any]:
    """The inverse of :func:`step_from_json`."""
    data: dict[str, Any] = {"type": _TYPE_NAMES[type(step)]}
    for f in dataclasses.fields(step):
        value = getattr(step, f.name)
        if isinstance(step, ToolCalls) and f.name == "calls":
            value = [{k: v for k, v in step_to_json(call).items() if k != "type"} for call in value]
        elif isinstance(step, Slow) and f.name == "then":
            value = step_to_json(value)
        elif isinstance(value, Mapping):
            value = dict(value)
        data[f.name] = value
    return data


# --- the provider ------------------------------------------------------------------------------------


@dataclass
class _Script:
    match: str
    steps: tuple[Step, ...]
    position: int = 0


@dataclass
class _Conversation:
    """A default-routed conversation: the text it started with and its position in the default script."""

    system: str
    first_user: str
    position: int = 0


@dataclass(frozen=True)
class _Reply:
    status: int
    body: bytes
    content_type: str
    headers: tuple[tuple[str, str], ...] = ()
    usage: Usage | None = None


class _Server(ThreadingHTTPServer):
    # socketserver's default backlog of 5 drops the SYNs of a burst of agents; clients then wait 1 s to retry.
    request_queue_size = 128


class FakeProvider:
    """The fake provider; a context manager that serves on 127.0.0.1 while open. Thread-safe."""

    def __init__(self, *, default: Step | Sequence[Step] = Text(DEFAULT_REPORT), port: int = 0) -> None:
        self._port = port
        self._lock = threading.Lock()
        self._closing = threading.Event()
        self._scripts: list[_Script] = []
        self._default: tuple[Step, ...] = _steps(default)
        self._conversations: list[_Conversation] = []
        self._requests: list[RecordedRequest] = []
        self._counters = {"response": itertools.count(1), "call": itertools.count(1)}
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self.on_request: Callable[[RecordedRequest], None] | None = None

    # lifecycle

    def start(self) -> FakeProvider:
        if self._server is not None:
            raise RuntimeError("the fake provider is already running")
        server = _Server(("127.0.0.1", self._port), _handler_class(self))
        server.daemon_threads = True
        server.block_on_close = False  # a Slow step's thread must not hold up close()
        self._server = server
        self._closing.clear()
        self._thread = threading.Thread(
            target=server.serve_forever, args=(0.05,), name="fake-llm-provider", daemon=True
        )
        self._thread.start()
        return self

    def close(self) -> None:
        server, self._server = self._server, None
        if server is None:
            return
        self._closing.set()
        server.shutdown()
        server.server_close()
        if self._thread is not None:
            self._thread.join()

    def __enter__(self) -> FakeProvider:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    # addresses

    @property
    def base_url(self) -> str:
        if self._server is None:
            raise RuntimeError("the fake provider is not running: use it as a context manager or call start()")
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    @property
    def base_url_openai(self) -> str:
        return f"{self.base_url}/v1"

    @property
    def base_url_anthropic(self) -> str:
        return self.base_url

    # scripting

    def script(self, match: str, steps: Step | Sequence[Step]) -> None:
        """Play ``steps`` to conversations whose system prompt or first user message contains ``match``.

        Scripts are tried in registration order; registering a ``match`` again replaces its steps and
        starts them over.
        """
        if not match:
            raise ValueError("match must be a non-empty string")
        with self._lock:
            for script in self._scripts:
                if script.match == match:
                    script.steps, script.position = _steps(steps), 0
                    return
            self._scripts.append(_Script(match, _steps(steps)))

    def set_default(self, steps: Step | Sequence[Step]) -> None:
        """The steps for conversations no script matches (each conversation plays them from the start)."""
        with self._lock:
            self._default = _steps(steps)
            self._conversations.clear()

    def load(self, data: Mapping[str, Any]) -> None:
        """Configure from the JSON script format: ``{"default": [step...], "scripts": [{"match", "steps"}]}``."""
        if unknown := sorted(set(data) - {"default", "scripts"}):
            raise ValueError(f"unknown key(s) {', '.join(unknown)} in a script file: expected default, scripts")
        if not isinstance(data.get("default", []), list) or not isinstance(data.get("scripts", []), list):
            raise ValueError('"default" must be a list of steps and "scripts" a list of {"match", "steps"} objects')
        if "default" in data:
            self.set_default([step_from_json(s) for s in data["default"]])
        for entry in data.get("scripts", []):
            if not isinstance(entry, dict) or set(entry) != {"match", "steps"} or not isinstance(entry["steps"], list):
                raise ValueError(f'each script must be {{"match": ..., "steps": [...]}}, got {entry!r}')
            self.script(entry["match"], [step_from_json(s) for s in entry["steps"]])

    # what happened

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every request so far, oldest first (snapshots: later answers don't change them)."""
        with self._lock:
            return [dataclasses.replace(r) for r in self._requests]

    def count(self, path: str | None = None, *, route: str | None = None) -> int:
        """How many requests arrived (to ``path``; routed to ``route``, a match or "default")."""
        return sum(1 for r in self.requests if (path is None or r.path == path) and (route is None or r.route == route))

    def tool_results(self, match: str) -> list[str]:
        """The tool results the client sent back in conversations routed to ``match``, oldest first.

        Each result counts once although every later request repeats the history: they are told
        apart by tool call id.
        """
        seen: dict[str, str] = {}
        for request in self.requests:
            if request.route == match:
                for call_id, text in request.tool_results:
                    seen.setdefault(call_id, text)
        return list(seen.values())

    def usage(self, route: str | None = None) -> Usage:
        """The total usage the server reported (for conversations routed to ``route``)."""
        total = Usage()
        for request in self.requests:
            if request.usage is not None and (route is None or request.route == route):
                total += request.usage
        return total

    # serving (called from the handler threads)

    def _arrived(self, request: RecordedRequest) -> None:
        with self._lock:
            self._requests.append(request)

    def _answered(self, request: RecordedRequest, status: int, usage: Usage | None) -> None:
        with self._lock:
            request.status, request.usage = status, usage
            snapshot = dataclasses.replace(request)
        if self.on_request is not None:
            self.on_request(snapshot)

    def _next_step(self, api: Api, body: Mapping[str, Any]) -> tuple[str, Step]:
        system, first_user = _conversation_text(api, body)
        with self._lock:
            for script in self._scripts:
                if script.match in system or script.match in first_user:
                    step = script.steps[min(script.position, len(script.steps) - 1)]
                    script.position += 1
                    return script.match, step
            conversation = self._conversation(system, first_user)
            step = self._default[min(conversation.position, len(self._default) - 1)]
            conversation.position += 1
            return DEFAULT_ROUTE, step

    def _conversation(self, system: str, first_user: str) -> _Conversation:
        # pydantic-ai may prepend its framing announcement to the system prompt mid-conversation.
        for conversation in self._conversations:
            same_system = system == conversation.system or (
                conversation.system and system.endswith(conversation.system)
            )
            if conversation.first_user == first_user and same_system:
                return conversation
        conversation = _Conversation(system, first_user)
        self._conversations.append(conversation)
        return conversation

    def _new_id(self, kind: Literal["response", "call"]) -> int:
        with self._lock:
            return next(self._counters[kind])

    def _sleep(self, seconds: float) -> None:
        self._closing.wait(seconds)


def _steps(steps: Step | Sequence[Step]) -> tuple[Step, ...]:
    result: tuple[object, ...] = (steps,) if isinstance(steps, _STEP_CLASSES) else tuple(steps)
    if not result:
        raise ValueError("a script needs at least one step")
    steps_only: list[Step] = []
    for step in result:
        if not isinstance(step, _STEP_CLASSES):
            raise TypeError(f"not a step: {step!r}")
        steps_only.append(step)
    return tuple(steps_only)


# --- reading requests --------------------------------------------------------------------------------


def _text_of(value: object) -> str:
    """The text in a message's content: a string, or the text of its text blocks."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "".join(_text_of(block) for block in value)
    if isinstance(value, dict):
        if value.get("type") in ("text", None) and isinstance(text := value.get("text"), str):
            return text
        if value.get("type") == "tool_result":
            return _text_of(value.get("content", ""))
    return ""


def _conversation_text(api: Api, body: Mapping[str, Any]) -> tuple[str, str]:
    """(system prompt text, first user message text) of a request."""
    messages = body.get("messages") or []
    if api == "anthropic":
        system = _text_of(body.get("system", ""))
    else:
        leading = itertools.takewhile(lambda m: isinstance(m, dict) and m.get("role") != "user", messages)
        system = "\n".join(_text_of(m.get("content")) for m in leading if m.get("role") in ("system", "developer"))
    first_user = next((m for m in messages if isinstance(m, dict) and m.get("role") == "user"), {})
    return system, _text_of(first_user.get("content", ""))


def _tool_results(api: Api, body: Mapping[str, Any]) -> Iterator[tuple[str, str]]:
    for message in body.get("messages") or []:
        if not isinstance(message, dict):
            continue
        if api == "openai" and message.get("role") == "tool":
            yield str(message.get("tool_call_id")), _text_of(message.get("content"))
        elif api == "anthropic" and isinstance(message.get("content"), list):
            for block in message["content"]:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    yield str(block.get("tool_use_id")), _text_of(block.get("content", ""))


# --- writing responses -------------------------------------------------------------------------------

_DEFAULT_KINDS = {
    400: "invalid_request_error",
    401: "authentication_error",
    402: "billing_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    503: "overloaded_error",
    504: "timeout_error",
    529: "overloaded_error",
}
_DEFAULT_MESSAGES = {
    "rate_limit_error": "Rate limit reached (fake provider).",
    "overloaded_error": "The server is overloaded (fake provider).",
    "api_error": "The server had an error while processing your request (fake provider).",
}
# Anthropic error type -> OpenAI (type, code).
_OPENAI_ERRORS: dict[str, tuple[str, str | None]] = {
    "rate_limit_error": ("requests", "rate_limit_exceeded"),
    "overloaded_error": ("server_error", "server_is_overloaded"),
    "api_error": ("server_error", None),
    "timeout_error": ("server_error", None),
    "invalid_request_error": ("invalid_request_error", None),
    "request_too_large": ("invalid_request_error", None),
    "authentication_error": ("invalid_request_error", "invalid_api_key"),
    "permission_error": ("invalid_request_error", None),
    "not_found_error": ("invalid_request_error", "model_not_found"),
    "billing_error": ("insufficient_quota", "insufficient_quota"),
}


def _json_bytes(data: object) -> bytes:
    return json.dumps(data, ensure_ascii=False).encode()


def _error_reply(api: Api | None, error: Error) -> _Reply:
    kind = error.kind or _DEFAULT_KINDS.get(error.status, "api_error")
    message = error.message or _DEFAULT_MESSAGES.get(kind, f"{kind} (fake provider)")
    body: dict[str, Any]
    if api == "anthropic":
        body = {"type": "error", "error": {"type": kind, "message": message}}
    else:
        openai_type, code = _OPENAI_ERRORS.get(kind, (kind, None))
        body = {"error": {"message": message, "type": openai_type, "param": None, "code": code}}
    headers: list[tuple[str, str]] = []
    if error.retry_after is not None:
        headers.append(("Retry-After", str(math.ceil(error.retry_after))))
        if error.retry_after != math.ceil(error.retry_after):
            headers.append(("retry-after-ms", str(round(error.retry_after * 1000))))
    return _Reply(error.status, _json_bytes(body), "application/json", tuple(headers))


def _tokens(length: int) -> int:
    return max(1, length // 4)


@dataclass(frozen=True)
class _Answer:
    """What a content step says: text or tool calls with their ids."""

    text: str | None
    calls: tuple[tuple[str, ToolCall], ...]

    @property
    def output_tokens(self) -> int:
        if self.text is not None:
            return _tokens(len(self.text))
        return _tokens(sum(len(call.name) + len(json.dumps(call.args)) for _, call in self.calls))


def _openai_completion(answer: _Answer, model: str, number: int, usage: Usage) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": answer.text, "refusal": None, "annotations": []}
    if answer.calls:
        message["tool_calls"] = [
            {"id": call_id, "type": "function", "function": {"name": call.name, "arguments": json.dumps(call.args)}}
            for call_id, call in answer.calls
        ]
    return {
        "id": f"chatcmpl-fake{number}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": message,
                "logprobs": None,
                "finish_reason": "tool_calls" if answer.calls else "stop",
            }
        ],
        "usage": _openai_usage(usage),
        "system_fingerprint": None,
    }


def _openai_usage(usage: Usage) -> dict[str, int]:
    return {
        "prompt_tokens": usage.input_tokens,
        "completion_tokens": usage.output_tokens,
        "total_tokens": usage.input_tokens + usage.output_tokens,
    }


def _openai_stream(answer: _Answer, model: str, number: int, usage: Usage, include_usage: bool) -> bytes:
    created = int(time.time())

    def chunk(delta: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
        return {
            "id": f"chatcmpl-fake{number}",
            "object": "chat.completion.chunk",
            "created": created,
            "model": model,
            "system_fingerprint": None,
            "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}],
        }

    chunks = [chunk({"role": "assistant", "content": "" if answer.text is not None else None, "refusal": None})]
    if answer.text:
        chunks.append(chunk({"content": answer.text}))
    for index, (call_id, call) in enumerate(answer.calls):
        opening = {"index": index, "id": call_id, "type": "function", "function": {"name": call.name, "arguments": ""}}
        chunks.append(chunk({"tool_calls": [opening]}))
        arguments = {"index": index, "function": {"arguments": json.dumps(call.args)}}
        chunks.append(chunk({"tool_calls": [arguments]}))
    chunks.append(chunk({}, "tool_calls" if answer.calls else "stop"))
    if include_usage:
        for c in chunks:
            c["usage"] = None
        last = chunk({})
        last["choices"], last["usage"] = [], _openai_usage(usage)
        chunks.append(last)
    events = b"".join(b"data: " + _json_bytes(c) + b"\n\n" for c in chunks)
    return events + b"data: [DONE]\n\n"


def _anthropic_blocks(answer: _Answer) -> list[dict[str, Any]]:
    if answer.text is not None:
        return [{"type": "text", "text": answer.text}]
    return [
        {"type": "tool_use", "id": call_id, "name": call.name, "input": dict(call.args)}
        for call_id, call in answer.calls
    ]


def _anthropic_usage(input_tokens: int, output_tokens: int) -> dict[str, int]:
    return {
        "input_tokens": input_tokens,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
        "output_tokens": output_tokens,
    }


def _anthropic_message(answer: _Answer, model: str, number: int, usage: Usage) -> dict[str, Any]:
    return {
        "id": f"msg_fake{number}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": _anthropic_blocks(answer),
        "stop_reason": "tool_use" if answer.calls else "end_turn",
        "stop_sequence": None,
        "usage": _anthropic_usage(usage.input_tokens, usage.output_tokens),
    }


def _anthropic_stream(answer: _Answer, model: str, number: int, usage: Usage) -> bytes:
    start = _anthropic_message(answer, model, number, Usage(usage.input_tokens, 1))
    start["content"], start["stop_reason"] = [], None
    events: list[dict[str, Any]] = [{"type": "message_start", "message": start}, {"type": "ping"}]
    for index, block in enumerate(_anthropic_blocks(answer)):
        if block["type"] == "text":
            opening, delta = {**block, "text": ""}, {"type": "text_delta", "text": block["text"]}
        else:
            opening, delta = (
                {**block, "input": {}},
                {"type": "input_json_delta", "partial_json": json.dumps(block["input"])},
            )
        events += [
            {"type": "content_block_start", "index": index, "content_block": opening},
            {"type": "content_block_delta", "index": index, "delta": delta},
            {"type": "content_block_stop", "index": index},
        ]
    events += [
        {
            "type": "message_delta",
            "delta": {"stop_reason": "tool_use" if answer.calls else "end_turn", "stop_sequence": None},
            "usage": {"output_tokens": usage.output_tokens},
        },
        {"type": "message_stop"},
    ]
    return b"".join(f"event: {e['type']}\ndata: ".encode() + _json_bytes(e) + b"\n\n" for e in events)


def _malformed_stream(api: Api, step: Malformed) -> bytes:
    event = b"event: message_start\n" if api == "anthropic" else b""
    return event + b"data: " + step.body.encode() + b"\n\n"


# --- the HTTP handler --------------------------------------------------------------------------------


def _handler_class(provider: FakeProvider) -> type[BaseHTTPRequestHandler]:
    class Handler(_Handler):
        fake = provider

    return Handler


class _Handler(BaseHTTPRequestHandler):
    fake: FakeProvider
    protocol_version = "HTTP/1.1"
    server_version = "fake-llm-provider/1"

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        api: Api = "anthropic" if "anthropic-version" in self.headers else "openai"
        if self.path.split("?")[0] == MODELS:
            self._reply(self._arrived(None, ""), _Reply(200, _json_bytes(_models(api)), "application/json"))
        else:
            self._not_found(api)

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0)).decode(errors="replace")
        try:
            body: Any = json.loads(raw)
        except ValueError:
            body = raw
        path = self.path.split("?")[0]
        api: Api | None = "openai" if path == OPENAI_CHAT else "anthropic" if path == ANTHROPIC_MESSAGES else None
        if api is None:
            self._not_found("anthropic" if "anthropic-version" in self.headers else "openai", body, raw)
            return
        if (problem := _invalid(api, self.headers, body)) is not None:
            self._reply(self._arrived(body, raw, api), _error_reply(api, problem))
            return
        route, step = self.fake._next_step(api, body)
        stream = body.get("stream") is True
        record = self._arrived(body, raw, api, route, step, stream=stream)
        self._reply(record, self._play(api, body, raw, step, stream))

    def _play(self, api: Api, body: dict[str, Any], raw: str, step: Step, stream: bool) -> _Reply:
        while isinstance(step, Slow):
            self.fake._sleep(step.seconds)
            step = step.then
        if isinstance(step, Error):
            return _error_reply(api, step)
        if isinstance(step, Malformed):
            if stream:
                return _Reply(200, _malformed_stream(api, step), "text/event-stream; charset=utf-8")
            return _Reply(200, step.body.encode(), step.content_type)
        answer = self._answer(api, body, step)
        usage = Usage(_tokens(len(raw)), answer.output_tokens)
        model, number = str(body.get("model", "")), self.fake._new_id("response")
        if api == "openai":
            headers = (("x-request-id", f"req_fake{number}"),)
            if stream:
                include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
                data = _openai_stream(answer, model, number, usage, include_usage)
                return _Reply(200, data, "text/event-stream; charset=utf-8", headers, usage if include_usage else None)
            return _Reply(
                200, _json_bytes(_openai_completion(answer, model, number, usage)), "application/json", headers, usage
            )
        headers = (("request-id", f"req_fake{number}"),)
        if stream:
            return _Reply(
                200, _anthropic_stream(answer, model, number, usage), "text/event-stream; charset=utf-8", headers, usage
            )
        return _Reply(
            200, _json_bytes(_anthropic_message(answer, model, number, usage)), "application/json", headers, usage
        )

    def _answer(self, api: Api, body: dict[str, Any], step: Step) -> _Answer:
        if isinstance(step, Text):
            return _Answer(step.content, ())
        if isinstance(step, Echo):
            results = list(_tool_results(api, body))
            last = results[-1][1] if results else "(no tool result in this request)"
            return _Answer(step.template.replace("{result}", last), ())
        calls = (step,) if isinstance(step, ToolCall) else tuple(step.calls) if isinstance(step, ToolCalls) else ()
        prefix = "toolu_fake" if api == "anthropic" else "call_fake"
        return _Answer(None, tuple((call.id or f"{prefix}{self.fake._new_id('call')}", call) for call in calls))

    def _not_found(self, api: Api, body: Any = None, raw: str = "") -> None:
        kind = "not_found_error" if api == "anthropic" else "invalid_request_error"
        reply = _error_reply(api, Error(404, kind, message=f"fake provider: no endpoint {self.command} {self.path}"))
        self._reply(self._arrived(body, raw), reply)

    def _arrived(
        self,
        body: Any,
        raw: str,
        api: Api | None = None,
        route: str | None = None,
        step: Step | None = None,
        *,
        stream: bool = False,
    ) -> RecordedRequest:
        record = RecordedRequest(
            method=self.command,
            path=self.path,
            headers={k.lower(): v for k, v in self.headers.items()},
            body=body,
            raw=raw,
            api=api,
            route=route,
            step=step,
            stream=stream,
        )
        self.fake._arrived(record)
        return record

    def _reply(self, record: RecordedRequest, reply: _Reply) -> None:
        self.fake._answered(record, reply.status, reply.usage)
        try:
            self.send_response(reply.status)
            self.send_header("Content-Type", reply.content_type)
            self.send_header("Content-Length", str(len(reply.body)))
            for name, value in reply.headers:
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(reply.body)
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):  # the client gave up (a timeout during a Slow step)
            self.close_connection = True


def _invalid(api: Api, headers: Message, body: object) -> Error | None:
    """What a real provider would reject before running the model, as an Error step."""
    lowered = {k.lower(): v for k, v in headers.items()}
    if api == "openai" and not lowered.get("authorization", "").startswith("Bearer "):
        return Error(401, "authentication_error", message="fake provider: missing 'Authorization: Bearer' header")
    if api == "anthropic" and not ("x-api-key" in lowered or "authorization" in lowered):
        return Error(401, "authentication_error", message="fake provider: missing x-api-key header")
    if api == "anthropic" and "anthropic-version" not in lowered:
        return Error(400, "invalid_request_error", message="fake provider: missing anthropic-version header")
    if not isinstance(body, dict):
        return Error(400, "invalid_request_error", message="fake provider: the request body is not a JSON object")
    required = ("model", "messages", "max_tokens") if api == "anthropic" else ("model", "messages")
    if missing := [name for name in required if name not in body]:
        return Error(400, "invalid_request_error", message=f"fake provider: {', '.join(missing)}: field required")
    if not isinstance(body["messages"], list) or not body["messages"]:
        return Error(400, "invalid_request_error", message="fake provider: messages must be a non-empty list")
    return None


def _models(api: Api) -> dict[str, Any]:
    if api == "anthropic":
        names = ["claude-sonnet-4-5", "claude-haiku-4-5"]
        data = [{"type": "model", "id": n, "display_name": n, "created_at": "2025-01-01T00:00:00Z"} for n in names]
        return {"data": data, "has_more": False, "first_id": names[0], "last_id": names[-1]}
    names = ["gpt-4.1", "gpt-4.1-mini", "gpt-4o-mini"]
    return {
        "object": "list",
        "data": [{"id": n, "object": "model", "created": 1700000000, "owned_by": "openai"} for n in names],
    }


# --- standalone ----------------------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.fakes.llm_server", description=__doc__.split("\n")[0])
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (0: a free one)")
    parser.add_argument("--script", type=Path, help='JSON: {"default": [step...], "scripts": [{"match", "steps"}]}')
    parser.add_argument("--log", type=Path, help="append every request as a JSON line to this file")
    args = parser.parse_args(argv)
    provider = FakeProvider(port=args.port)
    if args.script is not None:
        try:
            provider.load(json.loads(args.script.read_text()))
        except (OSError, ValueError, TypeError) as exc:
            print(f"error: cannot load script {args.script}: {exc}", file=sys.stderr)
            return 2
    if args.log is not None:
        log = args.log
        lock = threading.Lock()

        def write(request: RecordedRequest) -> None:
            record = dataclasses.asdict(request)
            record["step"] = step_to_json(request.step) if request.step is not None else None
            with lock, log.open("a") as f:
                f.write(json.dumps(record, ensure_ascii=False) + "\n")

        provider.on_request = write
    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stop.set())
    with provider:
        print(provider.base_url, flush=True)
        print(
            f"OpenAI base URL {provider.base_url_openai}, Anthropic base URL {provider.base_url_anthropic}",
            file=sys.stderr,
        )
        stop.wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())
