"""A chat judge's answers travel as rows and become frames in large batches: the scored results,
the cache's contents and the counts a run's progress sees are those of the frame path."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import polars as pl
from conftest import jobs
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pairwise_polars as pp
from pairwise_polars._schemas import RESULT_SCHEMA, result_frame
from pairwise_polars.counterfactual import OpenAITarget, collect_responses
from pairwise_polars.counterfactual._target import RESPONSE_SCHEMA
from pairwise_polars.engine import JudgementCache, ResultTable, cached_map
from pairwise_polars.scoring._prepare import prepare
from pairwise_polars.scoring._results import conform_results
from pairwise_polars.testing import TestServer

KEY = "sk-test-rows"
FIXTURE = HealthCheck.function_scoped_fixture  # tmp_path: each example names its own files


def row(i: int, *, error: bool = False, expected: float | int | None = None) -> dict[str, Any]:
    """A result row as a chat judge makes it (a failure has no score and says why)."""
    if error:
        return {"key": f"k{i}", "error": f"HTTP 500 ({i})", "attempts": 3, "latency_s": 0.5,
                "judge_model": "m"}  # fmt: skip
    return {"key": f"k{i}", "raw_score": i % 5, "reason": f"r{i}", "error": None, "attempts": 1,
            "latency_s": 0.01 * i, "input_tokens": 100 + i, "output_tokens": i,
            "raw_reply": f'{{"score": {i % 5}}}', "judge_model": "m", "expected_score": expected,
            "score_source": "answer"}  # fmt: skip


def table(path: Path) -> list[tuple[Any, ...]]:
    """The cache's rows with each value's SQLite type, without the time they were written."""
    names = ", ".join(f"{c}, typeof({c})" for c in JudgementCache.columns)
    with sqlite3.connect(path) as db:
        return sorted(db.execute(f"SELECT {names} FROM judgements"))


rows_strategy = st.lists(
    st.builds(
        row,
        st.integers(0, 10_000),
        error=st.booleans(),
        expected=st.none() | st.integers(0, 4) | st.floats(0, 4, allow_nan=False),
    ),
    max_size=30,
    unique_by=lambda r: r["key"],
)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(rows=rows_strategy)
def test_storing_rows_writes_what_storing_their_frame_writes(rows, tmp_path: Path) -> None:
    by_frame, by_rows = tmp_path / f"f{len(rows)}.sqlite", tmp_path / f"r{len(rows)}.sqlite"
    by_frame.unlink(missing_ok=True)
    by_rows.unlink(missing_ok=True)
    with JudgementCache(by_frame) as frames, JudgementCache(by_rows) as listed:
        stored = frames.store(result_frame(rows))
        assert listed.store_rows(rows) == stored == sum(r["error"] is None for r in rows)
        keys = [r["key"] for r in rows]
        assert listed.lookup(keys).sort("key").equals(frames.lookup(keys).sort("key"))
    # an integer expected score is stored as the float a frame makes of it (the REAL column)
    assert table(by_rows) == table(by_frame)


def run_map(
    batches: list[list[dict[str, Any]]], *, as_frames: bool, store: ResultTable | None
) -> tuple[pl.DataFrame, list[tuple[int, int]]]:
    requests = pl.DataFrame({"key": [f"k{i}" for i in range(sum(map(len, batches)) + 1)]})
    seen: list[tuple[int, int]] = []

    async def send(_: pl.DataFrame) -> AsyncIterator[Any]:
        for batch in batches:  # the last request is never answered: an error row either way
            yield result_frame(batch) if as_frames else batch

    async def main() -> pl.DataFrame:
        return await cached_map(
            requests, send, store, schema=RESULT_SCHEMA, conform=conform_results, label="t",
            progress=False, lost_error="no result", observe=lambda *n: seen.append(n),
        )  # fmt: skip

    return asyncio.run(main()), seen


@settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(sizes=st.lists(st.integers(1, 700), min_size=1, max_size=6), failing=st.integers(2, 9))
def test_the_map_gives_the_same_results_from_rows_as_from_frames(sizes, failing, tmp_path) -> None:
    # Up to 4,200 answers: several batches of rows are made frames along the way.
    start = [sum(sizes[:i]) for i in range(len(sizes))]
    batches = [[row(i, error=i % failing == 0) for i in range(s, s + n)]
               for s, n in zip(start, sizes, strict=True)]  # fmt: skip
    path = tmp_path / f"{len(sizes)}-{sum(sizes)}-{failing}.sqlite"
    path.unlink(missing_ok=True)
    with JudgementCache(path) as store:
        from_rows, counted = run_map(batches, as_frames=False, store=store)
        stored = len(store)
    from_frames, counted_frames = run_map(batches, as_frames=True, store=None)
    assert from_rows.equals(from_frames)
    assert from_rows.height == sum(sizes) + 1
    assert from_rows.filter(pl.col("key") == f"k{sum(sizes)}")["error"].item() == "no result"
    errors = sum(i % failing == 0 for i in range(sum(sizes)))
    # what a run's progress is told: every batch as it came, with its error rows
    assert (
        counted
        == counted_frames
        == [(len(b), sum(r["error"] is not None for r in b)) for b in batches]
    )
    assert sum(e for _, e in counted) == errors and stored == sum(sizes) - errors


def test_a_chat_judges_rows_are_the_rows_of_its_frames() -> None:
    pairs = pp.form_pairs(jobs(groups=8))
    with TestServer() as server:
        judge = pp.OpenAIJudge("m", base_url=server.base_url, api_key=KEY, max_concurrency=4)
        requests = prepare(pairs, "pairwise-bias", judge=judge).requests

        async def both() -> tuple[pl.DataFrame, pl.DataFrame]:
            rows = [r async for batch in judge.judge_rows(requests) for r in batch]
            frames = [f async for f in judge.judge(requests)]
            return result_frame(rows), pl.concat(frames)

        from_rows, from_frames = asyncio.run(both())
    assert (
        from_rows.height == requests.height and from_rows["error"].null_count() == requests.height
    )
    same = ["key", "raw_score", "reason", "raw_reply", "judge_model", "attempts"]
    assert from_rows.select(same).sort("key").equals(from_frames.select(same).sort("key"))


def test_a_targets_rows_are_the_rows_of_its_frames() -> None:
    chats = [
        json.dumps([{"role": "user", "content": f"Describe candidate {i}."}]) for i in range(9)
    ]
    requests = pl.DataFrame({"key": [f"k{i}" for i in range(9)], "messages": chats, "sample": 0})
    with TestServer() as server:
        target = OpenAITarget("m", base_url=server.base_url, api_key=KEY, max_concurrency=3)

        async def both() -> tuple[pl.DataFrame, pl.DataFrame]:
            rows = [r async for batch in target.respond_rows(requests) for r in batch]
            frames = [f async for f in target.respond(requests)]
            return pl.DataFrame(rows, schema=RESPONSE_SCHEMA), pl.concat(frames)

        from_rows, from_frames = asyncio.run(both())
    assert from_rows.height == 9 == from_rows["error"].null_count()
    same = ["key", "output", "response_model", "attempts"]
    assert from_rows.select(same).sort("key").equals(from_frames.select(same).sort("key"))


class MarkedJudge(pp.OpenAIJudge):
    """A user's judge that post-processes its frames: the map must read it through them."""

    async def judge(self, requests: pl.DataFrame) -> AsyncIterator[pl.DataFrame]:
        async for frame in super().judge(requests):
            yield frame.with_columns(reason=pl.lit("marked"))


class MarkedTarget(OpenAITarget):
    async def respond(self, requests: pl.DataFrame) -> AsyncIterator[pl.DataFrame]:
        async for frame in super().respond(requests):
            yield frame.with_columns(output=pl.lit("marked"))


def test_a_subclass_that_overrides_judge_or_respond_is_read_through_it() -> None:
    pairs = pp.form_pairs(jobs(groups=3))
    rows = pl.DataFrame({"group_id": ["g1", "g1"], "role": ["reference", "variant"],
                         "dimension": "gender", "input": ["He asks.", "She asks."]})  # fmt: skip
    with TestServer() as server:
        judge = MarkedJudge("m", base_url=server.base_url, api_key=KEY, max_concurrency=2)
        scored = pp.score_pairs(pairs, judge=judge, cache=False, progress=False)
        target = MarkedTarget("m", base_url=server.base_url, api_key=KEY, max_concurrency=2)
        answered = collect_responses(rows, target, cache=False, progress=False)
    assert scored.height == pairs.height and scored["reason"].to_list() == ["marked"] * pairs.height
    assert answered["output"].to_list() == ["marked", "marked"]
