"""The source of a streamed map: the first chunk is made before anything is sent, the others
when the event loop is idle or when a sender needs them; each is looked up in a real SQLite
cache as it is made, only its misses sent; a chunk that fails to be made stops the stream, and
its error is raised, never turned into lost rows."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path

import polars as pl
import pytest

from pairwise_polars._schemas import RESULT_SCHEMA, result_frame
from pairwise_polars.engine import JudgementCache
from pairwise_polars.engine._cached_map import lookup, streamed_map
from pairwise_polars.engine._read_ahead import ReadAhead
from pairwise_polars.scoring._results import conform_results


class Chunks:
    """Request frames of ``size`` keys each, made on demand; ``made`` counts them."""

    def __init__(self, n_chunks: int, size: int = 3, fail_at: int | None = None) -> None:
        self.n_chunks, self.size, self.fail_at = n_chunks, size, fail_at
        self.made = 0

    def __iter__(self) -> Iterator[pl.DataFrame]:
        for c in range(self.n_chunks):
            if c == self.fail_at:
                raise RuntimeError(f"chunk {c} cannot be rendered")
            self.made += 1
            keys = [f"k{c}-{i}" for i in range(self.size)]
            yield pl.DataFrame({"key": keys, "messages": keys, "max_score": 4})


def keys_of(frames: list[pl.DataFrame]) -> list[str]:
    return [k for frame in frames for k in frame["key"].to_list()]


def no_cache(chunk: pl.DataFrame) -> pl.DataFrame:
    return lookup(None, chunk, RESULT_SCHEMA)


def test_only_the_first_chunk_is_made_before_sending() -> None:
    chunks = Chunks(4)
    hits: list[int] = []
    ahead = ReadAhead(iter(chunks), no_cache, hits.append)
    assert ahead.has_misses() and chunks.made == 1
    frames = list(ahead)  # a sender takes them: each made when needed
    assert keys_of(frames) == [f"k{c}-{i}" for c in range(4) for i in range(3)]
    assert chunks.made == 4 and ahead.over and ahead.n_requests == 12 and hits == []


def test_an_idle_loop_makes_the_chunks_ahead_and_a_busy_one_does_not() -> None:
    async def idle() -> int:
        chunks = Chunks(5)
        ahead = ReadAhead(iter(chunks), no_cache, lambda n: None)
        ahead.has_misses()
        async with ahead.filling():
            await asyncio.sleep(0.2)  # waiting on the wire
        return chunks.made

    async def busy() -> int:
        chunks = Chunks(5)
        ahead = ReadAhead(iter(chunks), no_cache, lambda n: None)
        ahead.has_misses()
        async with ahead.filling():
            end = time.monotonic() + 0.2
            while time.monotonic() < end:  # every turn of the loop is busy: answers to take
                time.sleep(0.003)
                await asyncio.sleep(0)
        return chunks.made

    assert asyncio.run(idle()) == 5
    assert asyncio.run(busy()) == 1  # left for the senders to make when they need them


def test_each_chunk_is_looked_up_in_the_cache_and_only_misses_are_sent(tmp_path: Path) -> None:
    cache = JudgementCache(tmp_path / "c.sqlite")
    # Answers for all of chunk 1 and one request of chunk 2.
    known = ["k1-0", "k1-1", "k1-2", "k2-1"]
    answers = [{"key": k, "raw_score": 1, "judge_model": "m"} for k in known]
    cache.store(conform_results(result_frame(answers)))
    hits: list[int] = []

    def find(chunk: pl.DataFrame) -> pl.DataFrame:
        return lookup(cache, chunk, RESULT_SCHEMA)

    ahead = ReadAhead(iter(Chunks(4)), find, hits.append)
    sent = keys_of(list(ahead))
    assert sent == ["k0-0", "k0-1", "k0-2", "k2-0", "k2-2", "k3-0", "k3-1", "k3-2"]
    assert hits == [3, 1] and sorted(keys_of(ahead.hits)) == sorted(known)
    cache.close()


async def answer(frames: object) -> object:
    """A sender that answers every request it is given, as rows."""
    for frame in frames:  # type: ignore[attr-defined]
        yield [{"key": k, "raw_score": 2, "judge_model": "m"} for k in frame["key"].to_list()]


def test_a_chunk_that_cannot_be_made_stops_the_run_with_its_error() -> None:
    chunks = Chunks(4, fail_at=2)
    with pytest.raises(RuntimeError, match="chunk 2 cannot be rendered"):
        asyncio.run(run(chunks))
    assert chunks.made == 2


def test_a_streamed_map_answers_every_request_once() -> None:
    results = asyncio.run(run(Chunks(4)))
    assert results["key"].to_list() == [f"k{c}-{i}" for c in range(4) for i in range(3)]
    assert results["raw_score"].to_list() == [2] * 12 and not results["cached"].any()


async def run(chunks: Chunks) -> pl.DataFrame:
    return await streamed_map(
        iter(chunks),
        answer,  # type: ignore[arg-type]
        None,
        expected=12,
        schema=RESULT_SCHEMA,
        conform=conform_results,
        label="judging",
        progress=False,
        lost_error="no answer",
    )
