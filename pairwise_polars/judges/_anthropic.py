"""The Anthropic judge: the same chat engine (concurrency, rate limits, retries, error rows,
redaction, cache) speaking Anthropic's Messages API over the fast transport."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import KW_ONLY, dataclass, field
from typing import Any, ClassVar

from pairwise_polars._errors import OptionError
from pairwise_polars.engine._base_url import endpoint_id
from pairwise_polars.engine._endpoint import RunState
from pairwise_polars.engine._messages import (
    ANTHROPIC_API,
    KEY_ENV,
    URL_ENV,
    anthropic_headers,
    messages_body,
    messages_url,
    read_message,
    resolve_anthropic_url,
)
from pairwise_polars.engine._wire import Transport, WireTransport
from pairwise_polars.judges._chat_judge import ChatJudge
from pairwise_polars.judges._verdict import JudgeRequest, score_schema, verdict_row


@dataclass(frozen=True, repr=False)
class AnthropicJudge(ChatJudge):
    """An LLM judge over Anthropic's Messages API (``/v1/messages``).

    The key comes from ``api_key`` or ``ANTHROPIC_API_KEY`` and is sent as ``x-api-key`` with
    ``anthropic-version``; the base URL from ``base_url`` or ``ANTHROPIC_BASE_URL`` (default
    Anthropic's API; a base ending in ``/v1`` is accepted as well). Everything else is
    :class:`OpenAIJudge`'s engine: ``max_concurrency`` requests at a time within optional
    request/token rate limits; 429, 529 (overloaded), other 5xx, timeouts and dropped
    connections retried with backoff honouring ``retry-after`` up to ``max_retry_wait``; a bad
    key, an unknown model or a rejected request stop the run (results so far stay cached);
    the key redacted from whatever the server sends back; an answer off the rubric re-asked
    once, then an error row. ``structured_output`` forces the answer through a tool whose input
    schema is the rubric (Anthropic's structured output); off, the prompt alone asks for JSON.

    Requests go over the package's own aiohttp transport, not the ``anthropic`` SDK: the
    OpenAI SDK's per-request work measured ~75% of the client's CPU at high concurrency
    (benchmarks/RESULTS.md), and this transport needs no extra dependency.

    >>> AnthropicJudge("claude-haiku-4-5", api_key="sk-ant-secret")
    AnthropicJudge(model='claude-haiku-4-5', base_url=None, api_key='***', max_concurrency=32)
    """

    _: KW_ONLY
    temperature: float | None = 0.0
    structured_output: bool = True
    reask: bool = True
    extra_body: Mapping[str, Any] | None = field(default=None, hash=False)
    """Fields merged into every request body last (e.g. ``{"top_k": 1}``)."""

    _key_env: ClassVar[str] = KEY_ENV
    _url_env: ClassVar[str] = URL_ENV

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.transport != "fast":
            raise OptionError(
                f"AnthropicJudge has no transport {self.transport!r}: it speaks the Messages "
                "API over the package's own transport only. Leave transport out."
            )
        if self.organization or self.project:
            raise OptionError(
                "organization and project are OpenAI headers; AnthropicJudge sends neither. "
                "Leave them out."
            )

    @property
    def identity(self) -> dict[str, Any]:
        """What changes answers: the Messages endpoint (scheme, host, port, path), the model
        and its parameters. Never the key, a header or the URL's query."""
        identity: dict[str, Any] = {
            "endpoint": endpoint_id(messages_url(self._base_url())),
            "model": self.model,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
        }
        if self.extra_body:
            identity["extra_body"] = dict(self.extra_body)
        return identity

    # -- where and how ----------------------------------------------------------------------
    def _base_url(self) -> str:
        return resolve_anthropic_url(self.base_url)

    def _where(self) -> str:
        url = self._base_url()
        return "the Anthropic API" if url == ANTHROPIC_API else url

    def _scope(self) -> str:
        return messages_url(self._base_url())

    def _endpoint_id(self) -> str:
        return endpoint_id(messages_url(self._base_url()))

    def _headers(self) -> dict[str, str]:
        """``x-api-key`` (when there is a key), ``anthropic-version``, then
        ``default_headers`` (which win)."""
        headers = anthropic_headers(self._key())
        extra = dict(self.default_headers or {})
        overridden = {name.lower() for name in extra}
        return {n: v for n, v in headers.items() if n.lower() not in overridden} | extra

    _lazy_chat: ClassVar[bool] = True  # verdict_row decodes the chat for a re-ask only

    def _transport(self) -> Transport:
        self._check_key()
        return WireTransport(
            messages_url(self._base_url()),
            self._headers(),
            timeout=self.timeout,
            limit=self.max_concurrency,
            secrets=(self._key(),),
            connect_timeout=self.connect_timeout,
            max_bytes=self.max_response_bytes,
            path="",
        )

    # -- the body and the answer ------------------------------------------------------------
    def _body(
        self, chat: list[dict[str, str]], request: JudgeRequest, state: RunState
    ) -> dict[str, Any]:
        body = messages_body(
            self.model,
            chat,
            max_tokens=self.max_tokens,
            temperature=self.temperature,
            schema=score_schema(request.max_score) if state.structured else None,
        )
        if self.extra_body:
            body.update(self.extra_body)
        return body

    def _accept(
        self, request: JudgeRequest, response: Any, chat: list[dict[str, str]], attempt: int
    ) -> dict[str, Any] | list[dict[str, str]]:
        return verdict_row(
            request.key, read_message(response), chat, request.max_score, attempt,
            model=self.model, reask=self.reask,
        )  # fmt: skip
