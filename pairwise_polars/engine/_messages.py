"""Anthropic's Messages API on the wire: where it is, the headers it wants, a chat turned into
its body, and its reply read into the engine's :class:`Completion`.

The chat the metrics render (OpenAI-style ``[{"role", "content"}]``) is sent as Anthropic wants
it: system messages joined into the top-level ``system`` field, the rest as ``messages``.
A reply's text blocks are joined; a ``tool_use`` block (the forced tool of structured output)
reads as its input, JSON-encoded. Usage counts every prompt token as input, cache reads
included, as the OpenAI side does (Anthropic reports cache reads apart).

>>> messages_url("http://127.0.0.1:8000/v1"), messages_url("https://api.anthropic.com/")
('http://127.0.0.1:8000/v1/messages', 'https://api.anthropic.com/v1/messages')
>>> messages_body("claude-haiku-4-5", [{"role": "system", "content": "Be brief."},
...     {"role": "user", "content": "Hi"}], max_tokens=10, temperature=0.0)["system"]
'Be brief.'
"""

from __future__ import annotations

import json
import os
from typing import Any

from pairwise_polars.engine._completion import Completion, count, string

ANTHROPIC_API = "https://api.anthropic.com"
"""The base URL when neither ``base_url`` nor ``ANTHROPIC_BASE_URL`` names one."""
ANTHROPIC_VERSION = "2023-06-01"
"""The ``anthropic-version`` header: the API version whose shapes this module reads."""
KEY_ENV = "ANTHROPIC_API_KEY"
URL_ENV = "ANTHROPIC_BASE_URL"
TOOL = "judgement"
"""The name of the tool a structured judgement is asked through."""


def resolve_anthropic_url(base_url: str | None) -> str:
    """``base_url``, else ``ANTHROPIC_BASE_URL``, else Anthropic's API; no trailing slash."""
    return (base_url or os.environ.get(URL_ENV) or ANTHROPIC_API).rstrip("/")


def messages_url(base_url: str) -> str:
    """The Messages endpoint under a base URL: ``/v1/messages``, or ``/messages`` when the base
    already ends in ``/v1`` (as OpenAI-style base URLs, and the test server's, do)."""
    base = base_url.rstrip("/")
    return f"{base}/messages" if base.endswith("/v1") else f"{base}/v1/messages"


def anthropic_headers(key: str | None) -> dict[str, str]:
    """What every request carries: the key as ``x-api-key`` (none without a key), the API
    version, JSON, and the package as the user agent."""
    headers = {
        "Accept-Encoding": "gzip, deflate",
        "Connection": "keep-alive",
        "Content-Type": "application/json",
        "User-Agent": "pairwise-polars",
        "anthropic-version": ANTHROPIC_VERSION,
    }
    if key:
        headers["x-api-key"] = key
    return headers


def messages_body(
    model: str,
    chat: list[dict[str, Any]],
    *,
    max_tokens: int,
    temperature: float | None,
    schema: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A Messages request for ``chat``; ``schema`` set: the answer is forced through a tool
    whose input follows it (Anthropic's way to structured output)."""
    system = "\n\n".join(_text(m) for m in chat if m.get("role") == "system")
    turns = [
        {"role": "assistant" if m.get("role") == "assistant" else "user", "content": _text(m)}
        for m in chat
        if m.get("role") != "system"
    ]
    body: dict[str, Any] = {"model": model, "max_tokens": max_tokens, "messages": turns}
    if system:
        body["system"] = system
    if temperature is not None:
        body["temperature"] = temperature
    if schema is not None:
        body["tools"] = [
            {"name": TOOL, "description": "Record the judgement.", "input_schema": schema}
        ]
        body["tool_choice"] = {"type": "tool", "name": TOOL}
    return body


def read_message(reply: Any) -> Completion:
    """A Messages reply as a :class:`Completion`, without trusting its shape.

    >>> read_message({"content": [{"type": "text", "text": "hi"}],
    ...               "usage": {"input_tokens": 3, "cache_read_input_tokens": 5}}).input_tokens
    8
    """
    reply = reply if isinstance(reply, dict) else {}
    blocks = reply.get("content")
    blocks = [b for b in blocks if isinstance(b, dict)] if isinstance(blocks, list) else []
    tool = next((b for b in blocks if b.get("type") == "tool_use"), None)
    if tool is not None and isinstance(tool.get("input"), dict):
        content: str | None = json.dumps(tool["input"], ensure_ascii=False)
    else:
        texts = [b["text"] for b in blocks if isinstance(b.get("text"), str)]
        content = "".join(texts) if texts else None
    usage = reply.get("usage")
    usage = usage if isinstance(usage, dict) else {}
    parts = [count(usage.get(n)) for n in ("input_tokens", "cache_read_input_tokens")]
    created = count(usage.get("cache_creation_input_tokens")) or 0
    stop = string(reply.get("stop_reason"))
    return Completion(
        content=content,
        refusal=content if stop == "refusal" else None,
        finish_reason=stop,
        model=string(reply.get("model")),
        input_tokens=None if parts[0] is None else parts[0] + (parts[1] or 0) + created,
        output_tokens=count(usage.get("output_tokens")),
        cached_tokens=parts[1],
    )


def _text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return content if isinstance(content, str) else ""
