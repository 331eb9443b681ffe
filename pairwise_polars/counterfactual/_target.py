"""The system under test: anything that answers a frame of chat requests, and the
OpenAI-compatible implementation on the judge's chat engine."""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator, Callable, Mapping
from contextlib import aclosing
from dataclasses import KW_ONLY, dataclass, field
from typing import Any, NamedTuple, Protocol, runtime_checkable

import polars as pl

from pairwise_polars._errors import OptionError
from pairwise_polars.engine._cached_map import Batch, ready_first
from pairwise_polars.engine._completion import read_completion
from pairwise_polars.engine._conventions import (
    chat_body,
    chat_identity,
    reasoning_for,
    with_extra,
)
from pairwise_polars.engine._endpoint import ChatEndpoint, RunState, failure_row

REQUEST_SCHEMA: dict[str, pl.DataType] = {
    "key": pl.String(),  # the request's identity (also the cache key)
    "messages": pl.String(),  # the chat messages, JSON-encoded
    "sample": pl.Int64(),  # which draw of these messages (0, 1, ...)
}
"""Columns of the requests frame a target receives: one row per unique (messages, sample)."""

RESPONSE_SCHEMA: dict[str, pl.DataType] = {
    "key": pl.String(),
    "output": pl.String(),  # the answer's text; null when the generation failed
    "error": pl.String(),  # null on success
    "finish_reason": pl.String(),
    "response_model": pl.String(),  # the model the server says answered
    "attempts": pl.Int64(),
    "latency_s": pl.Float64(),
    "input_tokens": pl.Int64(),
    "output_tokens": pl.Int64(),
}
"""Columns of every result frame a target yields: one row per request key."""


@runtime_checkable
class Target(Protocol):
    """The system under test: answers a frame of chat requests, yielding results as they arrive.

    ``identity`` (optional, a dict of what changes answers: model, temperature, ...) is part of
    the response cache key; without it responses are cached under ``name`` alone.
    """

    @property
    def name(self) -> str:
        """The label written to ``response_model`` when the server names no model."""
        ...

    def respond(self, requests: pl.DataFrame) -> AsyncIterator[pl.DataFrame]:
        """Yield frames covering every request key exactly once: ``key`` and ``output``
        (null for a failure), and optionally the other RESPONSE_SCHEMA columns."""
        ...


class TargetRequest(NamedTuple):
    """A target's request: its cache key, its chat (JSON as stored) and which sample of the
    prompt it is (the seed's offset)."""

    key: str
    messages: str
    sample: int


@dataclass(frozen=True, repr=False)
class OpenAITarget(ChatEndpoint[TargetRequest]):
    """The system under test behind an OpenAI-compatible chat endpoint (OpenAI, Azure, vLLM,
    Ollama, llama.cpp server, ...), called through the judge's engine: ``max_concurrency``
    requests at a time within optional rate limits, over ``transport="fast"`` (the default) or
    ``"sdk"``, 429/5xx/timeouts retried honouring ``Retry-After`` up to ``max_retry_wait``, and
    a bad key, unknown model, exhausted quota or unreachable server stopping the run
    (:class:`~pairwise_polars.JudgeError`).

    Each row becomes ``[system_prompt], user: <row text>``. ``temperature`` defaults to 1.0:
    the behaviour users meet. With ``seed`` set, draw ``k`` of a row sends ``seed + k``, so
    repeated draws differ yet repeat across runs (on servers that honour seeds).

    >>> OpenAITarget("gpt-4o-mini", api_key="sk-secret", system_prompt="Be brief.")
    OpenAITarget(model='gpt-4o-mini', base_url=None, api_key='***', max_concurrency=32)
    """

    _: KW_ONLY
    system_prompt: str | None = None
    temperature: float = 1.0
    top_p: float | None = None
    seed: int | None = None
    max_tokens: int = 1024
    reasoning: bool | None = None
    """A reasoning model (``max_completion_tokens``, no ``temperature``); None: by the model's
    name (o-series, gpt-5 family)."""
    extra_body: Mapping[str, Any] | None = field(default=None, hash=False)
    """Fields merged into every request body last."""

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.top_p is not None and reasoning_for(self.model, self.reasoning):
            raise OptionError(
                f"Reasoning models such as {self.model!r} refuse top_p. Leave top_p out, or "
                "pass reasoning=False if this model is not one."
            )

    @property
    def name(self) -> str:
        return self.model

    @property
    def identity(self) -> dict[str, Any]:
        """What changes answers, hence part of the cache key: the endpoint (scheme, host, port,
        path), the model and its parameters; never the key or a header. The system prompt is
        part of the messages, so it is in the key through them."""
        return chat_identity(
            self._endpoint_id(),
            self.model,
            self.reasoning,
            self.extra_body,
            temperature=self.temperature,
            top_p=self.top_p,
            seed=self.seed,
            max_tokens=self.max_tokens,
        )

    async def respond(self, requests: pl.DataFrame) -> AsyncIterator[pl.DataFrame]:
        """Answer every request; yield result frames as answers arrive (see :class:`Target`)."""
        async with aclosing(self.respond_rows(requests)) as rows:
            async for batch in rows:
                yield pl.DataFrame(batch, schema=RESPONSE_SCHEMA)

    async def respond_rows(
        self, requests: pl.DataFrame
    ) -> AsyncGenerator[list[dict[str, Any]], None]:
        """:meth:`respond`'s answers as lists of rows (dicts of RESPONSE_SCHEMA columns), as
        they arrive: what the response map makes frames of in large batches."""
        items = map(TargetRequest._make, requests.select("key", "messages", "sample").iter_rows())
        async with aclosing(self._stream(items)) as stream:
            async for rows in stream:
                yield [_response_row(r, self.model) for r in rows]

    def _body(
        self, chat: list[dict[str, str]], request: TargetRequest, state: RunState
    ) -> dict[str, Any]:
        body = chat_body(self.model, chat, self.reasoning, self.temperature, self.max_tokens)
        if self.top_p is not None:
            body["top_p"] = self.top_p
        if self.seed is not None:
            body["seed"] = self.seed + request.sample
        return with_extra(body, self.extra_body)

    def _accept(
        self, request: TargetRequest, response: Any, chat: list[dict[str, str]], attempt: int
    ) -> dict[str, Any]:
        reply = read_completion(response)
        # A structured-output refusal arrives in `refusal` with no content: it is the answer.
        text = reply.content or reply.refusal
        finish = reply.finish_reason
        tokens = {"input_tokens": reply.input_tokens, "output_tokens": reply.output_tokens}
        model = reply.model or self.model
        if not text or not text.strip():
            # An empty string would read as an answer that says nothing: it is a failure.
            return failure_row(
                request.key,
                f"empty reply (finish_reason: {finish})",
                attempt,
                0.0,
                finish_reason=finish,
                response_model=model,
                **tokens,
            )
        return {
            "key": request.key,
            "output": text,
            "error": None,
            "finish_reason": finish,
            "response_model": model,
            "attempts": attempt,
            **tokens,
        }


def _response_row(row: dict[str, Any], model: str) -> dict[str, Any]:
    # The engine labels its own failure rows with judge_model.
    row.setdefault("response_model", row.pop("judge_model", None) or model)
    return row


def answers_of(target: Target) -> Callable[[pl.DataFrame], AsyncIterator[Batch]]:
    """How the response map reads a target's answers: an OpenAITarget's rows
    (:meth:`OpenAITarget.respond_rows`), unless its class overrides ``respond`` (then its
    frames, so what the override does is kept); any other target's frames."""
    if isinstance(target, OpenAITarget) and type(target).respond is OpenAITarget.respond:
        return ready_first(target, target.respond_rows)
    return target.respond
