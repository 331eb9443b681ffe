"""What a judge over the chat engine is besides its wire format: its name, its traits, and
``judge`` streaming the engine's results (:class:`OpenAIJudge`, :class:`AnthropicJudge`)."""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator, Callable
from contextlib import aclosing
from typing import Any

import polars as pl

from pairwise_polars._schemas import result_frame
from pairwise_polars.engine._api import Endpoint
from pairwise_polars.engine._cached_map import Batch, ready_first
from pairwise_polars.engine._endpoint import ChatEndpoint
from pairwise_polars.judges._protocol import Judge, JudgeTraits
from pairwise_polars.judges._verdict import JudgeRequest


class ChatJudge(ChatEndpoint[JudgeRequest]):
    """A judge called one request at a time through the chat engine. A subclass is a frozen
    dataclass with a ``structured_output`` field, and says its body, reply and identity."""

    structured_output: bool

    @property
    def name(self) -> str:
        return self.model

    @property
    def identity(self) -> dict[str, Any]:
        """What changes answers, hence part of the cache key (the subclass's)."""
        raise NotImplementedError

    @property
    def traits(self) -> JudgeTraits:
        return JudgeTraits(
            kind="chat", identity=self.identity, max_concurrency=self.max_concurrency
        )

    async def judge(self, requests: pl.DataFrame) -> AsyncIterator[pl.DataFrame]:
        """Judge every request; yield result frames as answers arrive (see the Judge protocol)."""
        async with aclosing(self.judge_rows(requests)) as rows:
            async for batch in rows:
                yield result_frame(batch)

    async def judge_rows(
        self, requests: pl.DataFrame
    ) -> AsyncGenerator[list[dict[str, Any]], None]:
        """:meth:`judge`'s answers as lists of result rows (dicts of RESULT_SCHEMA columns, a
        missing one null), as they arrive: the scoring map's path, which makes them frames in
        large batches (a frame per arriving answer measured ~30 us of CPU each)."""
        # The chat also as polars holds it, UTF-8: the body is built from those bytes, where
        # encoding each message's text again measured ~4.6 us a request (~3.7 KB, non-ASCII).
        rows = requests.select(
            "key", "messages", "max_score", pl.col("messages").cast(pl.Binary).alias("encoded")
        )
        items = map(JudgeRequest._make, rows.iter_rows())
        async with aclosing(self._stream(items, structured=self.structured_output)) as stream:
            async for results in stream:
                yield results


def answers_of(judge: Judge) -> Callable[[pl.DataFrame], AsyncIterator[Batch]]:
    """How the scoring map reads a judge's answers: a chat judge's rows (:meth:`ChatJudge.
    judge_rows`), unless its class overrides ``judge`` (then its frames, so what the override
    does is kept); any other judge's frames. An endpoint (chat or batch) is checked for its
    key when the map starts, before any progress is shown."""
    if isinstance(judge, ChatJudge) and type(judge).judge is ChatJudge.judge:
        return ready_first(judge, judge.judge_rows)
    if isinstance(judge, Endpoint):  # a batch judge
        return ready_first(judge, judge.judge)
    return judge.judge
