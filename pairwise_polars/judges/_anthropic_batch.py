"""The Anthropic batch judge: Message Batches through the provider-neutral batch session."""

from __future__ import annotations

from dataclasses import KW_ONLY, dataclass
from typing import ClassVar

from pairwise_polars.engine._messages import KEY_ENV, URL_ENV, resolve_anthropic_url
from pairwise_polars.judges._anthropic import AnthropicJudge
from pairwise_polars.judges._batch import BatchEndpoint
from pairwise_polars.judges._batch_anthropic import AnthropicBatches
from pairwise_polars.judges._batch_client import BatchClient


@dataclass(frozen=True, repr=False)
class AnthropicBatchJudge(BatchEndpoint):
    """An LLM judge through Anthropic's Message Batches: half the price, most batches done
    within an hour, always within 24.

    Everything :class:`OpenAIBatchJudge` does, for Anthropic: each request is the body
    :class:`AnthropicJudge` sends for the same settings (so either judge's cached answers
    serve the other), posted inline to ``/v1/messages/batches`` in batches within the API's
    limits (``max_requests_per_batch``, default 100,000; ``max_bytes_per_file``, default
    ~250 MB), polled with backoff; ``score_parquet`` submits every chunk before collecting
    any; the batch ids are kept in ``state`` (default: the cache file) so a rerun after a crash
    polls the same batches; requests that errored with ``rate_limit_error``, ``api_error``,
    ``overloaded_error`` or expired are sent again (``max_resubmits``), then error rows; a
    cancelled batch's requests are error rows. The key (``ANTHROPIC_API_KEY``) is redacted
    from everything the API sends back.

    >>> AnthropicBatchJudge("claude-haiku-4-5", api_key="sk-ant-secret")
    AnthropicBatchJudge(model='claude-haiku-4-5', base_url=None, api_key='***', state=None)
    """

    _: KW_ONLY
    max_requests_per_batch: int = 100_000
    max_bytes_per_file: int = 250 * 2**20  # the API's limit is 256 MB

    _key_env: ClassVar[str] = KEY_ENV
    _url_env: ClassVar[str] = URL_ENV

    def _base_url(self) -> str:
        return resolve_anthropic_url(self.base_url)

    def _scope(self) -> str:
        return self._chat()._scope()

    def _chat(self) -> AnthropicJudge:
        return AnthropicJudge(
            self.model,
            api_key=self.api_key,
            default_headers=self.default_headers,
            **self._chat_settings(),
        )

    def _batch_client(self) -> BatchClient:
        chat = self._chat()
        chat._check_key()
        return AnthropicBatches(
            self._base_url(),
            chat._headers(),
            timeout=self.timeout,
            max_retries=self.max_retries,
            secret=self._key(),
        )
