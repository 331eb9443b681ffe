"""What a chat-completion body looks like for a model: reasoning models (OpenAI's o-series and
the gpt-5 family) refuse ``max_tokens`` and any ``temperature`` but the default, so they get
``max_completion_tokens`` and no temperature; users' ``extra_body`` goes in last.

>>> sampling("o3-mini", None, temperature=0.0, max_tokens=300)
{'max_completion_tokens': 300}
>>> sampling("gpt-4o-mini", None, temperature=0.0, max_tokens=300)
{'temperature': 0.0, 'max_tokens': 300}
>>> sampling("my-deployment", True, temperature=0.0, max_tokens=300)
{'max_completion_tokens': 300}
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

_REASONING = re.compile(r"^(o[1-9]\d*(-.*)?|gpt-5(\b.*)?)$")
"""Reasoning model names: ``o1``, ``o3-mini``, ``o4-mini-2025-04-16``, ``gpt-5``, ``gpt-5-mini``,
``gpt-5.1`` ... (a provider prefix such as ``openai/`` is ignored)."""


def is_reasoning_model(model: str) -> bool:
    """Whether the model's name is one of OpenAI's reasoning models (o-series, gpt-5 family).

    >>> [is_reasoning_model(m) for m in ("o1", "openai/o4-mini", "gpt-5-nano", "gpt-4o", "omni")]
    [True, True, True, False, False]
    """
    name = model.strip().lower().rsplit("/", 1)[-1]
    return _REASONING.match(name) is not None


def reasoning_for(model: str, reasoning: bool | None) -> bool:
    """The switch as given, or, for None, what the model's name says."""
    return is_reasoning_model(model) if reasoning is None else reasoning


def sampling(
    model: str, reasoning: bool | None, *, temperature: float | None, max_tokens: int
) -> dict[str, Any]:
    """The body's token limit and temperature (None: left out) for this model."""
    if reasoning_for(model, reasoning):
        return {"max_completion_tokens": max_tokens}
    fields: dict[str, Any] = {} if temperature is None else {"temperature": temperature}
    return {**fields, "max_tokens": max_tokens}


def with_extra(body: dict[str, Any], extra_body: Mapping[str, Any] | None) -> dict[str, Any]:
    """The body with the user's ``extra_body`` merged in last (its keys win)."""
    if extra_body:
        body.update(extra_body)
    return body


def chat_body(
    model: str,
    chat: list[dict[str, str]],
    reasoning: bool | None,
    temperature: float | None,
    max_tokens: int,
) -> dict[str, Any]:
    """A chat-completion body's start: the model, the messages, then :func:`sampling`."""
    return {
        "model": model,
        "messages": chat,
        **sampling(model, reasoning, temperature=temperature, max_tokens=max_tokens),
    }


def chat_identity(
    endpoint: str,
    model: str,
    reasoning: bool | None,
    extra_body: Mapping[str, Any] | None,
    **parameters: Any,
) -> dict[str, Any]:
    """What changes a chat model's answers (part of a cache key): the endpoint, the model, its
    sampling ``parameters`` in the order given, the reasoning switch, and ``extra_body`` when
    there is one."""
    identity = {"endpoint": endpoint, "model": model, **parameters}
    identity["reasoning"] = reasoning_for(model, reasoning)
    if extra_body:
        identity["extra_body"] = dict(extra_body)
    return identity
