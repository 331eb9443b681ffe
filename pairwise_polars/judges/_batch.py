"""Batch API judges: requests submitted as batches, polled until done, answers parsed exactly
like the chat judges' (same parser, same error rows), at half the price. ``BatchEndpoint``
holds what every provider's batch judge shares; the session (``_batch_session.py``) does the
work through a provider's client (``_batch_openai.py``, ``_batch_anthropic.py``)."""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator, Mapping
from dataclasses import KW_ONLY, dataclass, field
from typing import Any, ClassVar, Literal

import polars as pl

from pairwise_polars._errors import OptionError
from pairwise_polars.engine._api import Endpoint
from pairwise_polars.engine._run_state import RunState
from pairwise_polars.judges._batch_client import BatchClient
from pairwise_polars.judges._batch_openai import OpenAIBatches
from pairwise_polars.judges._batch_session import session
from pairwise_polars.judges._openai import OpenAIJudge
from pairwise_polars.judges._protocol import Acting, Judge, JudgeTraits
from pairwise_polars.judges._verdict import JudgeRequest


@dataclass(frozen=True, repr=False)
class BatchEndpoint(Endpoint):
    """What every batch judge has: the state file, the batch limits, polling and resubmits."""

    _: KW_ONLY
    temperature: float = 0.0
    max_tokens: int = 300
    structured_output: bool = True
    extra_body: Mapping[str, Any] | None = field(default=None, hash=False)
    state: str | os.PathLike[str] | None = None
    max_requests_per_batch: int = 50_000
    max_bytes_per_file: int = 190 * 2**20
    poll_interval: float = 15.0
    max_poll_interval: float = 300.0
    max_resubmits: int = 2
    max_poll_errors: int = 10
    """Status checks of one batch that may fail in a row (after the client's own retries)
    before the call stops with a ``JudgeError`` naming the batch (kept for the rerun)."""
    timeout: float = 600.0
    max_retries: int = 5
    progress: bool = True

    _repr_fields: ClassVar[tuple[str, ...]] = ("state",)

    def __post_init__(self) -> None:
        if self.max_requests_per_batch < 1 or self.max_bytes_per_file < 1:
            raise OptionError("max_requests_per_batch and max_bytes_per_file must be positive")
        if self.poll_interval <= 0 or self.max_poll_interval < self.poll_interval:
            raise OptionError("poll_interval must be positive and at most max_poll_interval")
        if self.max_resubmits < 0:
            raise OptionError("max_resubmits must not be negative")
        if self.max_poll_errors < 1:
            raise OptionError("max_poll_errors must be at least 1")

    @property
    def name(self) -> str:
        return self.model

    @property
    def identity(self) -> dict[str, Any]:
        """The chat judge's identity for the same settings: the answers are the same model's."""
        return self._chat().identity

    @property
    def traits(self) -> JudgeTraits:
        return JudgeTraits(kind="batch", identity=self.identity)

    def _chat(self) -> Any:
        """The chat judge with the same settings (its request bodies, its identity)."""
        raise NotImplementedError

    def _chat_settings(self) -> dict[str, Any]:
        """The settings every batch judge hands its chat judge (a subclass adds its own)."""
        return {
            "base_url": self._base_url(),
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "structured_output": self.structured_output,
            "extra_body": self.extra_body,
        }

    def _batch_client(self) -> BatchClient:
        raise NotImplementedError

    def _line_body(self, request: JudgeRequest) -> dict[str, Any]:
        """A request's body in a batch: the chat judge's, so either's answers serve the other."""
        state = RunState(structured=self.structured_output, rpm=None, tpm=None)
        return self._chat()._body(json.loads(request.messages), request, state)

    async def judge(self, requests: pl.DataFrame) -> AsyncIterator[pl.DataFrame]:
        """Submit what no open batch holds yet, then yield each batch's results as it finishes."""
        async with session(self, requests) as batches:
            await batches.submit_missing()
            async for frame in batches.collect():
                yield frame

    def submitting(self) -> Judge:
        """A judge with the same identity that only submits batches and returns at once:
        :func:`score_parquet` submits every chunk with it first, then collects chunk by chunk,
        so the batches run side by side instead of one after another."""
        return _Submitter(self)


@dataclass(frozen=True, repr=False)
class OpenAIBatchJudge(BatchEndpoint):
    """An LLM judge through the OpenAI Batch API: half the price, answers within 24 hours.

    The requests are written as JSONL (one line per unique request, ``custom_id`` = its key),
    split into files within the API's limits (``max_requests_per_batch``,
    ``max_bytes_per_file``), uploaded with ``purpose="batch"`` and run as batches on
    ``/v1/chat/completions`` with a 24h window. Batches are polled with backoff (from
    ``poll_interval`` up to ``max_poll_interval`` seconds) and their output and error files
    parsed like :class:`OpenAIJudge` answers: the same request body for the same settings (so
    either judge's cached answers serve the other), the same parser, the same error rows.

    Batch ids are kept in a table of ``state`` (a SQLite file; default: the judgement cache's
    file), so a process that dies with batches in flight polls the same batches when run
    again, instead of paying for them twice. Lines that failed with a retryable status (429,
    5xx) or were not processed before an expired batch closed are sent again in a new batch,
    up to ``max_resubmits`` times, then become error rows; a failed or cancelled batch's
    requests become error rows at once. Error rows are not cached: a rerun sends them again.
    A batch whose status cannot be read ``max_poll_errors`` times in a row stops the call with
    a ``JudgeError`` naming it; it stays recorded, so the rerun polls it again. Whatever the
    API sends back (errors, reasons, answers) goes through the key's redaction.

    >>> OpenAIBatchJudge("gpt-4o-mini", api_key="sk-secret")
    OpenAIBatchJudge(model='gpt-4o-mini', base_url=None, api_key='***', state=None)
    """

    _: KW_ONLY
    seed: int | None = None
    reasoning: bool | None = None
    score_from: Literal["answer", "logprobs"] = "answer"
    """``"logprobs"``: each JSONL line asks for ``logprobs`` as :class:`OpenAIJudge` does (the
    Batch API answers with the same chat completion object), and the score is the rubric's
    expectation; a line answered without them keeps its written score (``score_source``)."""

    def __post_init__(self) -> None:
        super().__post_init__()
        self._chat()  # the chat judge's checks (score_from) before any batch is written

    def _chat(self) -> OpenAIJudge:
        return OpenAIJudge(
            self.model,
            seed=self.seed,
            reasoning=self.reasoning,
            score_from=self.score_from,
            **self._chat_settings(),
        )

    def _batch_client(self) -> BatchClient:
        client = self._client(timeout=self.timeout, max_retries=self.max_retries)
        return OpenAIBatches(client, model=self.model, where=self._scope(), secret=self._key())


class _Submitter(Acting):
    """The batch judge in submit-only mode: same name and traits, so the same cache keys."""

    def __init__(self, judge: BatchEndpoint) -> None:
        super().__init__(judge)
        self.batch_judge = judge

    async def judge(self, requests: pl.DataFrame) -> AsyncIterator[pl.DataFrame]:
        async with session(self.batch_judge, requests) as batches:
            await batches.submit_missing()
        return
        yield  # an async generator that yields nothing
