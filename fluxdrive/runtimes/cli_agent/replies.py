"""What the CLIs print, read defensively: the report, the model, tokens and cost, or the error.

``claude -p --output-format json`` prints one result envelope (a list of
messages with ``--verbose``); ``codex exec --json`` prints JSONL events and
writes its last message to a file; a command template prints its report or
writes it to ``{output_file}``. Anything unexpected becomes text for the
completion contract to classify, never an exception.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    pass


@dataclass(frozen=True, slots=True)
class Reply:
    """What a tool answered: the report text, and what it said about itself."""

    text: str
    model: str | None = None
    tokens_in: int = 0
    tokens_out: int = 0
    cost_usd: float = 0.0
    error: str | None = None
    notes: tuple[str, ...] = ()


def _count(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def _amount(value: object) -> float:
    if isinstance(value, int | float) and not isinstance(value, bool) and value > 0:
        return float(value)
    return 0.0


def _string(value: object) -> str | None:
    return value.strip() if isinstance(value, str) and value.strip() else None


def _first_line(text: str) -> str:
    return next((line.strip() for line in text.splitlines() if line.strip()), "")[:300]


def last_line(text: str) -> str:
    """The last non-empty line (a CLI's error is usually its last word), at most 300 characters."""
    return next((line.strip() for line in reversed(text.splitlines()) if line.strip()), "")[:300]


def _json_objects(text: str) -> Iterator[dict[str, Any]]:
    """Every line of ``text`` that is a JSON object (JSONL, or noise around one object)."""
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith("{"):
            with contextlib.suppress(ValueError):
                value = json.loads(line)
                if isinstance(value, dict):
                    yield value


def _claude_envelope(stdout: str) -> dict[str, Any] | None:
    try:
        value = json.loads(stdout)
    except ValueError:
        value = None
    if isinstance(value, list):  # --verbose prints every message; the result is the last
        value = next((v for v in reversed(value) if isinstance(v, dict) and v.get("type") == "result"), None)
    if isinstance(value, dict):
        return value
    return next((v for v in reversed(list(_json_objects(stdout))) if v.get("type") == "result"), None)


def _claude_tokens(usage: object, by_model: object) -> tuple[int, int]:
    # Input counts the prompt-cache reads and writes: those tokens were processed too.
    if isinstance(usage, dict):
        keys = ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
        return sum(_count(usage.get(k)) for k in keys), _count(usage.get("output_tokens"))
    if isinstance(by_model, dict):
        rows = [row for row in by_model.values() if isinstance(row, dict)]
        keys = ("inputTokens", "cacheCreationInputTokens", "cacheReadInputTokens")
        return (
            sum(_count(row.get(k)) for row in rows for k in keys),
            sum(_count(row.get("outputTokens")) for row in rows),
        )
    return 0, 0


def _main_model(by_model: object) -> str | None:
    """The model that did most of the work in claude's ``modelUsage`` (by cost, then output)."""
    if not isinstance(by_model, dict) or not by_model:
        return None
    rows = {name: row for name, row in by_model.items() if isinstance(name, str) and isinstance(row, dict)}
    if not rows:
        return None
    return max(rows, key=lambda n: (_amount(rows[n].get("costUSD")), _count(rows[n].get("outputTokens"))))


def parse_claude(stdout: str) -> Reply:
    """``claude -p --output-format json``: one result object; anything else is kept as the report."""
    envelope = _claude_envelope(stdout)
    if envelope is None:
        note = "stdout was not the JSON result of claude -p; kept as the report"
        return Reply(stdout, notes=(note,) if stdout.strip() else ())
    result = envelope.get("result")
    text = result if isinstance(result, str) else ""
    by_model = envelope.get("modelUsage")
    tokens_in, tokens_out = _claude_tokens(envelope.get("usage"), by_model)
    cost = _amount(envelope.get("total_cost_usd")) or _amount(envelope.get("cost_usd"))
    model = _string(envelope.get("model")) or _main_model(by_model)
    subtype = _string(envelope.get("subtype")) or ""
    error = None
    if envelope.get("is_error") is True or subtype.startswith("error"):
        label = subtype if subtype.startswith("error") else "an error"
        error = f"claude reported {label}" + (f": {_first_line(text)}" if text.strip() else "")
    return Reply(text, model, tokens_in, tokens_out, cost, error)


def parse_codex(stdout: str, reply_file: Path) -> Reply:
    """``codex exec --json -o FILE``: the final message in FILE, usage on ``turn.completed`` events."""
    events = list(_json_objects(stdout))
    tokens_in = tokens_out = 0
    message = ""
    model = None
    error = None
    for event in events:
        kind = event.get("type")
        usage = event.get("usage")
        if kind == "turn.completed" and isinstance(usage, dict):
            tokens_in += _count(usage.get("input_tokens"))  # includes cached_input_tokens
            tokens_out += _count(usage.get("output_tokens"))
        item = event.get("item")
        if kind == "item.completed" and isinstance(item, dict) and item.get("type") == "agent_message":
            message = _string(item.get("text")) or message
        if kind == "turn.failed" and isinstance(event.get("error"), dict):
            error = _string(event["error"].get("message")) or "turn failed"
        elif kind == "error":
            error = _string(event.get("message")) or "error"
        model = _string(event.get("model")) or model
    text = _read_reply(reply_file) or message
    if not text.strip() and not events:
        text = stdout  # a codex without --json support prints the final message itself
    return Reply(text, model, tokens_in, tokens_out, 0.0, f"codex reported: {error}" if error else None)


def parse_command(stdout: str, reply_file: Path | None) -> Reply:
    """A command template: the report is ``{output_file}`` when it wrote one, else its stdout."""
    return Reply((_read_reply(reply_file) if reply_file else "") or stdout)


def _read_reply(path: Path) -> str:
    try:
        return path.read_bytes().decode("utf-8", errors="replace")
    except FileNotFoundError:
        return ""
