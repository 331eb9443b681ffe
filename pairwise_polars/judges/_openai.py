"""The OpenAI-compatible chat judge: the chat engine plus structured output and strict parsing."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import KW_ONLY, dataclass, field
from typing import Any, ClassVar, Literal

from pairwise_polars._errors import OptionError
from pairwise_polars.engine._completion import read_completion
from pairwise_polars.engine._conventions import chat_body, chat_identity, with_extra
from pairwise_polars.engine._endpoint import RunState
from pairwise_polars.engine._wire import compact_chat, encode
from pairwise_polars.judges._chat_judge import ChatJudge
from pairwise_polars.judges._logprobs import TOP_LOGPROBS, expected_score, logprobs_of
from pairwise_polars.judges._verdict import JudgeRequest, score_schema, verdict_row


@dataclass(frozen=True, repr=False)
class OpenAIJudge(ChatJudge):
    """An LLM judge over any OpenAI-compatible chat endpoint (OpenAI, Azure, vLLM, Ollama, ...).

    Requests run ``max_concurrency`` at a time, within optional request/token rate limits,
    over ``transport="fast"`` (the body posted over one aiohttp session, byte-identical to the
    SDK's request) or ``"sdk"`` (the openai SDK's ``client.post``). 429, 5xx, timeouts and
    dropped connections are retried with exponential backoff and jitter, honouring
    ``Retry-After`` up to ``max_retry_wait`` seconds (a longer wait is an error row, never
    slept); a bad key, a forbidden or unknown model, a bad request or an exhausted quota stop
    the run at once (results so far stay in the cache), and so does a server that cannot be
    reached. Text the server sends back never carries the key: it is redacted. An answer that is
    not valid JSON on the rubric is re-asked once, then becomes an error row: never a score.

    >>> judge = OpenAIJudge("gpt-4o-mini", api_key="sk-secret")
    >>> judge
    OpenAIJudge(model='gpt-4o-mini', base_url=None, api_key='***', max_concurrency=32)
    """

    _: KW_ONLY
    temperature: float = 0.0
    seed: int | None = None
    structured_output: bool = True
    reask: bool = True
    reasoning: bool | None = None
    """A reasoning model (``max_completion_tokens``, no ``temperature``); None: by the model's
    name (o-series, gpt-5 family)."""
    extra_body: Mapping[str, Any] | None = field(default=None, hash=False)
    """Fields merged into every request body last (e.g. ``{"reasoning_effort": "low"}``)."""
    score_from: Literal["answer", "logprobs"] = "answer"
    """``"logprobs"``: the score is the rubric's expectation over the probabilities of the
    rubric's tokens where the model wrote its score (endpoints that return ``logprobs``:
    OpenAI, vLLM); a reply without them keeps its written score, and ``score_source`` says so."""

    _lazy_chat: ClassVar[bool] = True  # verdict_row decodes the chat for a re-ask only

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.score_from not in ("answer", "logprobs"):
            raise OptionError(
                f"score_from must be 'answer' (the written score) or 'logprobs' (the rubric's "
                f"expectation over the score token's probabilities), got {self.score_from!r}."
            )

    @property
    def identity(self) -> dict[str, Any]:
        """What changes answers, hence part of the cache key: the endpoint (scheme, host, port,
        path: another server with a model of the same name answers differently), the model, its
        parameters, the reasoning switch and ``extra_body``. Never the key, a header or the
        URL's query."""
        identity = chat_identity(
            self._endpoint_id(),
            self.model,
            self.reasoning,
            self.extra_body,
            temperature=self.temperature,
            seed=self.seed,
            max_tokens=self.max_tokens,
        )
        if self.score_from != "answer":
            identity["score_from"] = self.score_from
        return identity

    def _body(
        self, chat: list[dict[str, str]], request: JudgeRequest, state: RunState
    ) -> dict[str, Any]:
        body = chat_body(self.model, chat, self.reasoning, self.temperature, self.max_tokens)
        if self.seed is not None:
            body["seed"] = self.seed
        if self.score_from == "logprobs":
            body.update(logprobs=True, top_logprobs=TOP_LOGPROBS)
        if state.structured:
            schema = score_schema(request.max_score)
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "judgement", "strict": True, "schema": schema},
            }
        return with_extra(body, self.extra_body)

    def _encoded(self, request: JudgeRequest, state: RunState) -> bytes | None:
        """``encode(self._body(chat, ...))`` without decoding the chat: the stored messages made
        compact and put between the rest of the body, encoded once per run and rubric."""
        chat = compact_chat(request.messages if request.encoded is None else request.encoded)
        if chat is None or "messages" in (self.extra_body or {}):  # extra_body's messages win
            return None
        shape = (state.structured, request.max_score)
        parts = state.encoded.get(shape)
        if parts is None:
            body = self._body([], request, state)
            before, marker, after = encode(body).partition(b'"messages":[]')
            if not marker or list(body)[1:2] != ["messages"]:  # extra_body moved the messages
                return None
            parts = state.encoded[shape] = (before + b'"messages":', after)
        return parts[0] + chat + parts[1]

    def _accept(
        self, request: JudgeRequest, response: Any, chat: list[dict[str, str]], attempt: int
    ) -> dict[str, Any] | list[dict[str, str]]:
        max_score = request.max_score
        row = verdict_row(
            request.key, read_completion(response), chat, max_score, attempt, model=self.model,
            reask=self.reask,
        )  # fmt: skip
        if self.score_from == "logprobs" and isinstance(row, dict) and row["error"] is None:
            expected = expected_score(logprobs_of(response), row["raw_reply"], max_score)
            row["expected_score"] = expected
            row["score_source"] = "answer (no logprobs)" if expected is None else "logprobs"
        return row
