"""The fake LLM provider, driven by the real SDK clients through pydantic-ai, as the llm runtime drives it.

Only 127.0.0.1 is contacted. Router and wire-format details are checked with plain HTTP requests.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import pytest
from anthropic import AsyncAnthropic
from openai import AsyncOpenAI
from pydantic_ai import Agent, models
from pydantic_ai.exceptions import (
    ModelAPIError,
    ModelHTTPError,
    ModelOverloadedError,
    ModelRateLimitError,
    ModelServerError,
    ModelTimeoutError,
)
from pydantic_ai.models.anthropic import AnthropicModel
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.anthropic import AnthropicProvider
from pydantic_ai.providers.openai import OpenAIProvider
from pydantic_ai.settings import ModelSettings
from pydantic_ai.usage import RunUsage

from tests.fakes.llm_server import (
    ANTHROPIC_MESSAGES,
    DEFAULT_REPORT,
    OPENAI_CHAT,
    Echo,
    Error,
    FakeProvider,
    Malformed,
    Slow,
    Text,
    ToolCall,
    ToolCalls,
    Usage,
    step_from_json,
    step_to_json,
)

REPO = Path(__file__).resolve().parents[2]
API = Literal["openai", "anthropic"]
APIS = pytest.mark.parametrize("api", ["openai", "anthropic"])
# claude-sonnet-4-5 would do too, but the anthropic SDK warns that it is deprecated (an error in this suite).
MODEL = {"openai": "gpt-4.1", "anthropic": "claude-haiku-4-5"}
PATH = {"openai": OPENAI_CHAT, "anthropic": ANTHROPIC_MESSAGES}
FILES = {"app.py": "print('hi')\n", "db.py": "query = f'SELECT * FROM t WHERE id = {user_id}'\n"}
INSTRUCTIONS = "You are fd-safety, a security reviewer."


@pytest.fixture(autouse=True)
def allow_model_requests(monkeypatch: pytest.MonkeyPatch) -> None:
    # These requests go to 127.0.0.1 only, so they are allowed even under a suite-wide "no model calls" switch.
    monkeypatch.setattr(models, "ALLOW_MODEL_REQUESTS", True)


@pytest.fixture
def fake() -> Iterator[FakeProvider]:
    with FakeProvider() as provider:
        yield provider


def build(
    api: API, fake: FakeProvider, *, timeout: float = 30, max_retries: int = 0, settings: ModelSettings | None = None
) -> tuple[AsyncOpenAI | AsyncAnthropic, Agent[None, str]]:
    """An agent with a read_file tool on the real SDK client, pointed at the fake provider."""
    client: AsyncOpenAI | AsyncAnthropic
    if api == "openai":
        client = AsyncOpenAI(base_url=fake.base_url_openai, api_key="test", max_retries=max_retries, timeout=timeout)
        model: OpenAIChatModel | AnthropicModel = OpenAIChatModel(
            MODEL[api], provider=OpenAIProvider(openai_client=client)
        )
    else:
        client = AsyncAnthropic(
            base_url=fake.base_url_anthropic, api_key="test", max_retries=max_retries, timeout=timeout
        )
        model = AnthropicModel(MODEL[api], provider=AnthropicProvider(anthropic_client=client))
    agent = Agent(model, instructions=INSTRUCTIONS, model_settings=settings)

    @agent.tool_plain
    def read_file(path: str) -> str:
        """Read a file of the project under review."""
        return FILES[path]

    return client, agent


@dataclass
class Outcome:
    output: str
    usage: RunUsage


def run(api: API, fake: FakeProvider, prompt: str = "Review app.py", *, stream: bool = False, **kwargs: Any) -> Outcome:
    """Run the agent to completion (with ``Agent.run`` or ``Agent.run_stream``): its output and usage."""

    async def go() -> Outcome:
        client, agent = build(api, fake, **kwargs)
        async with client:
            if not stream:
                result = await agent.run(prompt)
                return Outcome(result.output, result.usage)
            async with agent.run_stream(prompt) as streamed:
                output = await streamed.get_output()
                return Outcome(output, streamed.usage)

    return asyncio.run(go())


# --- through pydantic-ai -----------------------------------------------------------------------------


@APIS
def test_a_tool_call_round_trip(api: API, fake: FakeProvider) -> None:
    fake.script("fd-safety", [ToolCall("read_file", {"path": "app.py"}), Echo("report on: {result}")])

    result = run(api, fake)

    assert result.output == "report on: print('hi')\n"
    assert fake.tool_results("fd-safety") == ["print('hi')\n"]
    assert [r.route for r in fake.requests] == ["fd-safety", "fd-safety"]
    assert fake.count(PATH[api]) == 2


@APIS
def test_several_tool_calls_in_one_response(api: API, fake: FakeProvider) -> None:
    calls = ToolCalls([ToolCall("read_file", {"path": "app.py"}), ToolCall("read_file", {"path": "db.py"})])
    fake.script("fd-safety", [calls, Text("done")])

    result = run(api, fake)

    assert result.output == "done"
    assert fake.tool_results("fd-safety") == [FILES["app.py"], FILES["db.py"]]


@APIS
def test_usage_reported_by_pydantic_ai_is_the_servers(api: API, fake: FakeProvider) -> None:
    fake.script("fd-safety", [ToolCall("read_file", {"path": "app.py"}), Text("### Findings Index\nVerdict: safe\n")])

    result = run(api, fake)

    served = fake.usage("fd-safety")
    assert (result.usage.input_tokens, result.usage.output_tokens) == (served.input_tokens, served.output_tokens)
    assert result.usage.requests == 2
    first, second = fake.requests
    assert first.usage == Usage(len(first.raw) // 4, (len("read_file") + len('{"path": "app.py"}')) // 4)
    assert second.usage == Usage(len(second.raw) // 4, len("### Findings Index\nVerdict: safe\n") // 4)


@APIS
def test_a_streamed_run_works_too(api: API, fake: FakeProvider) -> None:
    fake.script("fd-safety", [ToolCall("read_file", {"path": "db.py"}), Echo()])

    result = run(api, fake, stream=True)

    assert result.output == FILES["db.py"]
    assert all(r.stream for r in fake.requests)
    if api == "openai":  # without it OpenAI streams no usage at all
        assert all(r.body["stream_options"] == {"include_usage": True} for r in fake.requests)
    served = fake.usage()
    assert served.input_tokens > 0 and served.output_tokens > 0
    assert (result.usage.input_tokens, result.usage.output_tokens) == (served.input_tokens, served.output_tokens)


def test_anthropic_streams_behind_the_scenes_unless_max_tokens_is_set(fake: FakeProvider) -> None:
    # pydantic-ai sends the model's maximum output (64000 for haiku 4.5) as max_tokens by default; the SDK
    # refuses that without streaming, so pydantic-ai streams even Agent.run().
    run("anthropic", fake)
    run("anthropic", fake, settings={"max_tokens": 4000})

    assert [(r.body["max_tokens"], r.stream) for r in fake.requests] == [(64000, True), (4000, False)]


@APIS
def test_a_rate_limit_is_a_model_http_error_with_retry_after(api: API, fake: FakeProvider) -> None:
    fake.script("fd-safety", [Error(429, retry_after=7)])

    with pytest.raises(ModelHTTPError) as caught:
        run(api, fake)

    error = caught.value
    assert isinstance(error, ModelRateLimitError)
    assert error.status_code == 429
    assert error.headers is not None and error.headers["retry-after"] == "7"
    assert error.retry_after == 7.0
    assert error.provider_error_type == ("rate_limit_error" if api == "anthropic" else "requests")
    # The SDK's own exception is the cause, with the raw httpx2 response.
    assert error.__cause__ is not None
    assert error.__cause__.response.headers["Retry-After"] == "7"  # type: ignore[attr-defined]


@APIS
def test_a_fractional_retry_after_arrives_in_milliseconds(api: API, fake: FakeProvider) -> None:
    fake.script("fd-safety", [Error(429, retry_after=0.25)])

    with pytest.raises(ModelRateLimitError) as caught:
        run(api, fake)

    # retry_after is on every ModelAPIError; headers and status_code only on the ModelHTTPError side.
    assert caught.value.retry_after == 0.25
    assert isinstance(caught.value, ModelHTTPError)
    assert caught.value.headers is not None
    assert (caught.value.headers["retry-after"], caught.value.headers["retry-after-ms"]) == ("1", "250")


@APIS
def test_a_server_error_is_a_model_http_error(api: API, fake: FakeProvider) -> None:
    fake.script("fd-safety", [Error(500, message="boom")])

    with pytest.raises(ModelHTTPError) as caught:
        run(api, fake)

    assert isinstance(caught.value, ModelServerError)
    assert caught.value.status_code == 500
    assert caught.value.retry_after is None
    if api == "anthropic":
        assert caught.value.body == {"type": "error", "error": {"type": "api_error", "message": "boom"}}
    else:
        assert caught.value.body == {"message": "boom", "type": "server_error", "param": None, "code": None}


@APIS
def test_overloaded_is_its_own_category(api: API, fake: FakeProvider) -> None:
    fake.script("fd-safety", [Error(529)])

    with pytest.raises(ModelHTTPError) as caught:
        run(api, fake)

    assert isinstance(caught.value, ModelOverloadedError)
    assert caught.value.status_code == 529


@APIS
@pytest.mark.parametrize("settings", [None, {"max_tokens": 4000}], ids=["default", "max_tokens"])
def test_malformed_json_is_a_clear_model_api_error(api: API, fake: FakeProvider, settings: ModelSettings) -> None:
    fake.script("fd-safety", [Malformed()])

    with pytest.raises(ModelAPIError, match="Failed to decode response as JSON") as caught:
        run(api, fake, settings=settings)

    assert not isinstance(caught.value, ModelHTTPError)
    assert fake.requests[0].status == 200


@APIS
def test_the_sdk_retries_an_error_and_the_script_moves_on(api: API, fake: FakeProvider) -> None:
    fake.script("fd-safety", [Error(429, retry_after=0.01), Error(503, retry_after=0.01), Text("recovered")])

    result = run(api, fake, max_retries=2)

    assert result.output == "recovered"
    assert [r.status for r in fake.requests] == [429, 503, 200]
    assert fake.requests[1].headers["x-stainless-retry-count"] == "1"


@APIS
def test_a_slow_step_is_really_slow(api: API, fake: FakeProvider) -> None:
    fake.script("fd-safety", [Slow(60, Text("too late")), Slow(0.01, Text("in time"))])

    with pytest.raises(ModelTimeoutError):
        run(api, fake, timeout=0.3)
    # The client gave up; the server is still waiting to answer (and closing the provider ends the wait).
    assert [r.status for r in fake.requests] == [None]

    assert run(api, fake).output == "in time"


@APIS
def test_what_pydantic_ai_sends(api: API, fake: FakeProvider) -> None:
    run(api, fake)

    (request,) = fake.requests
    headers, body = request.headers, request.body
    assert headers["user-agent"] == "pydantic-ai/2.68.0"
    # Both SDKs send the key as a bearer token (the anthropic SDK too, not x-api-key).
    assert headers["authorization"] == "Bearer test"
    assert headers["x-stainless-retry-count"] == "0"
    assert body["model"] == MODEL[api]
    if api == "openai":
        assert body["messages"] == [
            {"role": "system", "content": INSTRUCTIONS},
            {"role": "user", "content": "Review app.py"},
        ]
        assert body["stream"] is False and body["tool_choice"] == "auto"
        assert body["tools"][0]["function"]["name"] == "read_file"
        assert body["tools"][0]["function"]["strict"] is True
    else:
        assert "x-api-key" not in headers and headers["anthropic-version"]
        assert body["system"] == [{"type": "text", "text": INSTRUCTIONS}]
        assert body["messages"] == [{"role": "user", "content": [{"type": "text", "text": "Review app.py"}]}]
        assert body["tool_choice"] == {"type": "auto"}
        assert body["tools"][0]["name"] == "read_file"


# --- the router and the wire, with plain HTTP ----------------------------------------------------------


def post(url: str, body: object, headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], bytes]:
    data = body.encode() if isinstance(body, str) else json.dumps(body).encode()
    request = urllib.request.Request(
        url, data=data, headers={"Content-Type": "application/json", **(headers or {})}, method="POST"
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as error:
        with error:
            return error.code, dict(error.headers), error.read()


def get(url: str, headers: dict[str, str] | None = None) -> tuple[int, Any]:
    with urllib.request.urlopen(urllib.request.Request(url, headers=headers or {}), timeout=10) as response:
        return response.status, json.loads(response.read())


OPENAI_HEADERS = {"Authorization": "Bearer test"}
ANTHROPIC_HEADERS = {"x-api-key": "test", "anthropic-version": "2023-06-01"}


def chat(fake: FakeProvider, system: str, *messages: dict[str, Any], stream: bool = False) -> tuple[int, Any]:
    """POST an OpenAI chat completion; the JSON answer (or the raw SSE text)."""
    body = {"model": "gpt-4.1", "messages": [{"role": "system", "content": system}, *messages], "stream": stream}
    status, _, data = post(fake.base_url_openai + "/chat/completions", body, OPENAI_HEADERS)
    return status, data.decode() if stream else json.loads(data)


def messages(fake: FakeProvider, system: str, *turns: dict[str, Any], stream: bool = False) -> tuple[int, Any]:
    """POST an Anthropic message; the JSON answer (or the raw SSE text)."""
    body = {"model": "claude-haiku-4-5", "max_tokens": 1000, "system": system, "messages": list(turns)}
    if stream:
        body["stream"] = True
    status, _, data = post(fake.base_url_anthropic + "/v1/messages", body, ANTHROPIC_HEADERS)
    return status, data.decode() if stream else json.loads(data)


def user(text: str) -> dict[str, str]:
    return {"role": "user", "content": text}


def test_the_exact_openai_shapes(fake: FakeProvider) -> None:
    fake.script("fd-safety", [ToolCall("read_file", {"path": "a.py"}, id="call_1"), Text("done")])

    status, answer = chat(fake, "fd-safety", user("go"))
    assert status == 200
    assert answer["object"] == "chat.completion" and answer["model"] == "gpt-4.1"
    assert answer["id"].startswith("chatcmpl-") and isinstance(answer["created"], int)
    assert answer["choices"] == [
        {
            "index": 0,
            "message": {
                "role": "assistant",
                "content": None,
                "refusal": None,
                "annotations": [],
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "read_file", "arguments": '{"path": "a.py"}'},
                    }
                ],
            },
            "logprobs": None,
            "finish_reason": "tool_calls",
        }
    ]
    usage = answer["usage"]
    assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"]

    _, answer = chat(fake, "fd-safety", user("go"))
    assert answer["choices"][0]["message"]["content"] == "done"
    assert answer["choices"][0]["finish_reason"] == "stop"
    assert "tool_calls" not in answer["choices"][0]["message"]


def test_the_exact_anthropic_shapes(fake: FakeProvider) -> None:
    fake.script("fd-safety", [ToolCall("read_file", {"path": "a.py"}, id="toolu_1"), Text("done")])

    status, answer = messages(fake, "fd-safety", user("go"))
    assert status == 200
    assert {k: v for k, v in answer.items() if k not in ("id", "usage")} == {
        "type": "message",
        "role": "assistant",
        "model": "claude-haiku-4-5",
        "content": [{"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {"path": "a.py"}}],
        "stop_reason": "tool_use",
        "stop_sequence": None,
    }
    assert answer["id"].startswith("msg_")
    assert set(answer["usage"]) >= {"input_tokens", "output_tokens"}

    _, answer = messages(fake, "fd-safety", user("go"))
    assert answer["content"] == [{"type": "text", "text": "done"}]
    assert answer["stop_reason"] == "end_turn"


def test_error_shapes(fake: FakeProvider) -> None:
    fake.script("fd-safety", [Error(429, retry_after=3)])

    status, headers, data = post(
        fake.base_url_anthropic + "/v1/messages",
        {"model": "m", "max_tokens": 10, "system": "fd-safety", "messages": [user("go")]},
        ANTHROPIC_HEADERS,
    )
    assert (status, headers["Retry-After"]) == (429, "3")
    assert json.loads(data) == {
        "type": "error",
        "error": {"type": "rate_limit_error", "message": "Rate limit reached (fake provider)."},
    }

    status, answer = chat(fake, "fd-safety", user("go"))
    assert status == 429
    assert answer == {
        "error": {
            "message": "Rate limit reached (fake provider).",
            "type": "requests",
            "param": None,
            "code": "rate_limit_exceeded",
        }
    }


def test_streams_follow_each_providers_event_format(fake: FakeProvider) -> None:
    fake.script("fd-safety", [Text("hello")])

    _, sse = chat(fake, "fd-safety", user("go"), stream=True)
    events = [json.loads(line[len("data: ") :]) for line in sse.split("\n\n") if line and line != "data: [DONE]"]
    assert sse.endswith("data: [DONE]\n\n")
    assert {e["object"] for e in events} == {"chat.completion.chunk"}
    assert "".join(e["choices"][0]["delta"].get("content") or "" for e in events) == "hello"
    assert events[-1]["choices"][0]["finish_reason"] == "stop"

    _, sse = messages(fake, "fd-safety", user("go"), stream=True)
    names = [block.split("\n")[0] for block in sse.split("\n\n") if block]
    assert names == [
        "event: message_start",
        "event: ping",
        "event: content_block_start",
        "event: content_block_delta",
        "event: content_block_stop",
        "event: message_delta",
        "event: message_stop",
    ]


def test_the_first_registered_match_wins_and_others_get_the_default(fake: FakeProvider) -> None:
    fake.script("fd-safety", Text("safety"))
    fake.script("fd", Text("generic"))

    assert chat(fake, "You are fd-safety.", user("go"))[1]["choices"][0]["message"]["content"] == "safety"
    assert chat(fake, "You are fd-quality.", user("go"))[1]["choices"][0]["message"]["content"] == "generic"
    assert chat(fake, "You are a reviewer.", user("go"))[1]["choices"][0]["message"]["content"] == DEFAULT_REPORT
    assert [r.route for r in fake.requests] == ["fd-safety", "fd", "default"]
    assert fake.count(route="default") == 1


def test_the_match_can_be_in_the_first_user_message(fake: FakeProvider) -> None:
    fake.script("agent: fd-safety", Text("safety"))

    _, answer = messages(fake, "You are a reviewer.", user("agent: fd-safety\nReview app.py"))

    assert answer["content"][0]["text"] == "safety"


def test_a_tool_result_mentioning_another_script_does_not_reroute(fake: FakeProvider) -> None:
    fake.script("fd-safety", [ToolCall("read_file", {"path": "notes.md"}, id="call_1"), Echo()])
    fake.script("fd-quality", Text("wrong conversation"))
    history: list[dict[str, Any]] = [
        user("go"),
        {"role": "assistant", "content": None, "tool_calls": [_call("call_1")]},
        {"role": "tool", "tool_call_id": "call_1", "content": "ask fd-quality"},
    ]

    chat(fake, "fd-safety", user("go"))
    _, answer = chat(fake, "fd-safety", *history)

    assert answer["choices"][0]["message"]["content"] == "ask fd-quality"


def _call(call_id: str) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": "read_file", "arguments": "{}"}}


def test_the_last_step_repeats(fake: FakeProvider) -> None:
    fake.script("fd-safety", [Error(500), Text("again")])

    statuses = [chat(fake, "fd-safety", user("go"))[0] for _ in range(4)]

    assert statuses == [500, 200, 200, 200]


def test_each_default_conversation_plays_the_default_script_from_the_start(fake: FakeProvider) -> None:
    fake.set_default([Error(503), Text("report")])

    assert chat(fake, "agent one", user("go"))[0] == 503
    assert chat(fake, "agent two", user("go"))[0] == 503
    assert chat(fake, "agent one", user("go"))[0] == 200
    # The same conversation once pydantic-ai prepends its framing announcement to the system prompt.
    assert chat(fake, "Mid-conversation system messages ...\nagent two", user("go"))[0] == 200


def test_echo_quotes_the_last_tool_result_of_either_provider(fake: FakeProvider) -> None:
    fake.script("fd-safety", Echo("saw: {result}"))
    blocks = [
        {"type": "tool_result", "tool_use_id": "toolu_1", "content": "first"},
        {"type": "tool_result", "tool_use_id": "toolu_2", "content": [{"type": "text", "text": "second"}]},
    ]
    turns: list[dict[str, Any]] = [
        user("go"),
        {"role": "assistant", "content": []},
        {"role": "user", "content": blocks},
    ]

    _, answer = messages(fake, "fd-safety", *turns)

    assert answer["content"][0]["text"] == "saw: second"
    assert fake.tool_results("fd-safety") == ["first", "second"]
    _, answer = chat(fake, "fd-safety", user("go"))
    assert answer["choices"][0]["message"]["content"] == "saw: (no tool result in this request)"


def test_tool_results_count_each_call_once(fake: FakeProvider) -> None:
    first: list[dict[str, Any]] = [user("go"), {"role": "assistant", "tool_calls": [_call("c1")]}]
    first.append({"role": "tool", "tool_call_id": "c1", "content": "one"})
    second: list[dict[str, Any]] = [*first, {"role": "assistant", "tool_calls": [_call("c2")]}]
    second.append({"role": "tool", "tool_call_id": "c2", "content": [{"type": "text", "text": "two"}]})

    chat(fake, "fd-safety", *first)
    chat(fake, "fd-safety", *second)

    assert fake.tool_results("default") == ["one", "two"]
    assert fake.tool_results("fd-safety") == []


def test_requests_a_real_provider_would_reject_do_not_use_a_step(fake: FakeProvider) -> None:
    fake.script("fd-safety", [Text("first"), Text("second")])
    body = {"model": "m", "system": "fd-safety", "messages": [user("go")]}

    status, _, data = post(fake.base_url_anthropic + "/v1/messages", body, ANTHROPIC_HEADERS)
    assert (status, json.loads(data)["error"]["type"]) == (400, "invalid_request_error")
    assert b"max_tokens" in data
    status, _, data = post(fake.base_url_openai + "/chat/completions", {"model": "m", "messages": [user("x")]})
    assert (status, json.loads(data)["error"]["code"]) == (401, "invalid_api_key")
    status, _, _ = post(fake.base_url_openai + "/chat/completions", "{not json", OPENAI_HEADERS)
    assert status == 400
    status, _, data = post(fake.base_url_openai + "/embeddings", {"input": "x"}, OPENAI_HEADERS)
    assert status == 404

    assert chat(fake, "fd-safety", user("go"))[1]["choices"][0]["message"]["content"] == "first"
    assert [r.status for r in fake.requests] == [400, 401, 400, 404, 200]
    assert fake.requests[2].body == "{not json"


def test_models_are_listed_in_the_askers_shape(fake: FakeProvider) -> None:
    status, openai_models = get(fake.base_url_openai + "/models", OPENAI_HEADERS)
    assert status == 200 and openai_models["object"] == "list"
    assert {"id": "gpt-4.1", "object": "model", "created": 1700000000, "owned_by": "openai"} in openai_models["data"]

    _, anthropic_models = get(fake.base_url_anthropic + "/v1/models", ANTHROPIC_HEADERS)
    assert anthropic_models["has_more"] is False
    assert {m["type"] for m in anthropic_models["data"]} == {"model"}


def test_base_urls_need_a_running_server() -> None:
    provider = FakeProvider()
    with pytest.raises(RuntimeError, match="not running"):
        _ = provider.base_url_openai
    with provider:
        assert provider.base_url_openai == provider.base_url_anthropic + "/v1"
        assert provider.base_url.startswith("http://127.0.0.1:")


# --- the JSON script format and the standalone server ---------------------------------------------------

ALL_STEPS = [
    ToolCall("read_file", {"path": "a.py"}),
    ToolCalls([ToolCall("a", {}), ToolCall("b", {"x": 1}, id="call_b")]),
    Text("hi"),
    Error(429, "rate_limit_error", retry_after=1.5, message="slow down"),
    Malformed(),
    Slow(0.5, Echo("got {result}")),
    Echo(),
]


@pytest.mark.parametrize("step", ALL_STEPS, ids=lambda s: type(s).__name__)
def test_steps_round_trip_through_json(step: Any) -> None:
    assert step_from_json(json.loads(json.dumps(step_to_json(step)))) == step


@pytest.mark.parametrize(
    ("data", "complaint"),
    [
        ({"type": "txt", "content": "x"}, "unknown step type 'txt'"),
        ({"type": "text", "text": "x"}, "unknown key"),
        ({"content": "x"}, 'must be an object with a "type"'),
        ({"type": "slow", "seconds": 1}, "bad 'slow' step"),
    ],
)
def test_bad_json_steps_are_explained(data: Any, complaint: str) -> None:
    with pytest.raises(ValueError, match=complaint):
        step_from_json(data)


def test_the_standalone_server(tmp_path: Path) -> None:
    script = {
        "default": [{"type": "text", "content": "default answer"}],
        "scripts": [{"match": "fd-safety", "steps": [{"type": "error", "status": 429}, {"type": "echo"}]}],
    }
    (tmp_path / "script.json").write_text(json.dumps(script))
    log = tmp_path / "requests.jsonl"
    command = [sys.executable, "-m", "tests.fakes.llm_server", "--port", "0", "--script", "script.json"]
    process = subprocess.Popen(
        [*command, "--log", str(log)], cwd=tmp_path, env=_env_with_repo(), stdout=subprocess.PIPE, text=True
    )
    try:
        assert process.stdout is not None
        base_url = process.stdout.readline().strip()
        assert base_url.startswith("http://127.0.0.1:")
        url = base_url + "/v1/chat/completions"
        body = {"model": "gpt-4.1", "messages": [{"role": "system", "content": "fd-safety"}, user("go")]}
        assert post(url, body, OPENAI_HEADERS)[0] == 429
        assert post(url, body, OPENAI_HEADERS)[0] == 200
        _, _, data = post(url, {"model": "gpt-4.1", "messages": [user("hi")]}, OPENAI_HEADERS)
        assert json.loads(data)["choices"][0]["message"]["content"] == "default answer"
    finally:
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=10) == 0
        assert process.stdout is not None
        process.stdout.close()
    records = [json.loads(line) for line in log.read_text().splitlines()]
    assert [(r["route"], r["status"], r["step"]["type"]) for r in records] == [
        ("fd-safety", 429, "error"),
        ("fd-safety", 200, "echo"),
        ("default", 200, "text"),
    ]


def test_the_standalone_server_rejects_a_bad_script(tmp_path: Path) -> None:
    (tmp_path / "script.json").write_text(json.dumps({"default": [{"type": "text"}], "extra": 1}))

    process = subprocess.run(
        [sys.executable, "-m", "tests.fakes.llm_server", "--script", "script.json"],
        cwd=tmp_path,
        env=_env_with_repo(),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )

    assert process.returncode == 2
    assert "unknown key(s) extra" in process.stderr


def _env_with_repo() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(REPO)}
