"""Reading a chat completion as it came off the wire (decoded JSON), without trusting its shape:
a field that is missing or of the wrong type reads as absent, never as an exception."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Completion:
    """The parts of a chat completion the engine's callers use."""

    content: str | None
    refusal: str | None
    finish_reason: str | None
    model: str | None
    input_tokens: int | None
    output_tokens: int | None
    cached_tokens: int | None = None
    """``usage.prompt_tokens_details.cached_tokens``: prompt tokens the server served from its
    prompt cache, when it says so."""


def read_completion(reply: Any) -> Completion:
    """The first choice's message, the finish reason, the model and the token usage.

    >>> read_completion({"choices": [{"message": {"content": "hi"}}], "usage": None}).content
    'hi'
    """
    reply = reply if isinstance(reply, dict) else {}
    choices = reply.get("choices")
    choice = choices[0] if isinstance(choices, list) and choices else {}
    choice = choice if isinstance(choice, dict) else {}
    message = choice.get("message")
    message = message if isinstance(message, dict) else {}
    usage = reply.get("usage")
    usage = usage if isinstance(usage, dict) else {}
    details = usage.get("prompt_tokens_details")
    details = details if isinstance(details, dict) else {}
    return Completion(
        content=string(message.get("content")),
        refusal=string(message.get("refusal")),
        finish_reason=string(choice.get("finish_reason")),
        model=string(reply.get("model")),
        input_tokens=count(usage.get("prompt_tokens")),
        output_tokens=count(usage.get("completion_tokens")),
        cached_tokens=count(details.get("cached_tokens")),
    )


def string(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None
