"""Requests rendered while the first are sent: a chat judge's run starts sending after a first
chunk is rendered, and the rest follow in chunks. The requests, their keys, the answers and the
scored frame are those of rendering everything first; each distinct request is sent once, even
when two chunks hold sets of variables that render alike."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pairwise_polars as pp
from pairwise_polars.metrics._sandbox import MAX_TEXT
from pairwise_polars.scoring import Scoring, prepare
from pairwise_polars.scoring import _rendering as rendering_module
from pairwise_polars.testing import TestServer

OFFLINE = "http://127.0.0.1:9/v1"  # never called: preparing sends nothing
TIMING = ("latency_s",)


def pair_frame(n: int, *, echoes: int = 0) -> pl.DataFrame:
    """``n`` distinct pairs, then ``echoes`` pairs whose texts repeat earlier ones under
    another dimension: distinct variables that ``pairwise-bias`` (which shows no dimension)
    renders to the same messages."""
    texts = [
        {
            "pair_id": f"p{i}",
            "input_a": f"Describe candidate {i}.",
            "input_b": f"Describe {i}.",
            "output_a": f"Reliable, {i} years in post.",
            "output_b": f"Reliable ({i} years).",
            "dimension": "gender",
        }
        for i in range(n)
    ]
    texts += [{**texts[i % n], "pair_id": f"e{i}", "dimension": "age"} for i in range(echoes)]
    return pl.DataFrame(texts)


def judge_for(url: str, concurrency: int = 4) -> pp.OpenAIJudge:
    return pp.OpenAIJudge("test-judge", base_url=url, api_key="test", max_concurrency=concurrency)


def without_timing(frame: pl.DataFrame) -> pl.DataFrame:
    return frame.drop(TIMING).sort("pair_id", "metric")


@settings(max_examples=25, deadline=None)
@given(
    n=st.integers(1, 40),
    echoes=st.integers(0, 30),
    first=st.integers(1, 50),
    size=st.integers(1, 50),
)
def test_chunks_are_the_requests_rendered_at_once(
    n: int, echoes: int, first: int, size: int
) -> None:
    pairs = pair_frame(n, echoes=echoes)
    judge = judge_for(OFFLINE)
    whole = prepare(pairs, "pairwise-bias", judge=judge, order="fixed")
    chunked = prepare(pairs, "pairwise-bias", judge=judge, order="fixed")
    chunks = list(chunked.rendering.chunks(first, size))
    keys = [k for chunk in chunks for k in chunk["key"].to_list()]
    assert len(keys) == len(set(keys)) == n  # the echoes render as their originals
    assert pl.concat(chunks).equals(whole.requests)
    assert chunked.requests.equals(whole.requests) and chunked.keyed.equals(whole.keyed)
    distinct = n + min(echoes, n)  # an echo of an echo is the same set of variables
    assert chunked.rendering.n_chunks == 1 + max(0, -(-(distinct - first) // size))


def test_a_run_sends_while_it_renders_and_scores_as_if_rendered_first(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(rendering_module, "CHUNK", 64)  # several chunks after the first
    pairs = pair_frame(400, echoes=120)
    with TestServer() as server:
        judge = judge_for(server.base_url)
        prepared = prepare(pairs, "pairwise-bias", judge=judge)
        assert prepared.rendering.streams(rendering_module.first_chunk(4))
        fresh = prepare(pairs, "pairwise-bias", judge=judge)
        streamed = await_score(Scoring(fresh, None))
        assert fresh.rendering.n_chunks == 1 + -(-(520 - 256) // 64)  # 256, then 64 at a time
        # The same call rendered first: a plan renders and looks everything up before a run.
        scoring = Scoring(prepared, None)
        scoring.plan()
        rendered_first = await_score(scoring)
        assert prepared.rendering.n_chunks == 1
        # Each distinct request once a run: echoes shown in their original's order render
        # as it (the order is drawn by pair id), in another chunk than it too.
        n_unique = prepared.requests.height
        assert 400 < n_unique < 520
        assert server.stats.requests == server.stats.unique_requests * 2 == n_unique * 2
    assert streamed.height == 520 and streamed["error"].is_null().all()
    assert without_timing(streamed).equals(without_timing(rendered_first))


def test_a_streamed_run_reads_the_cache_chunk_by_chunk(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(rendering_module, "CHUNK", 50)
    cache = tmp_path / "cache.sqlite"
    pairs = pair_frame(420)
    with TestServer() as server:
        judge = judge_for(server.base_url)
        first = pp.score_pairs(pairs.head(150), judge=judge, cache=cache, progress=False)
        assert server.stats.requests == 150
        everything = pp.score_pairs(pairs, judge=judge, cache=cache, progress=False)
        assert server.stats.requests == 420  # only the 270 misses were sent
        again = pp.score_pairs(pairs, judge=judge, cache=cache, progress=False)
        assert server.stats.requests == 420
    assert (
        everything.join(first, on="pair_id")
        .filter(pl.col("score") != pl.col("score_right"))
        .is_empty()
    )
    assert everything["cached"].sum() == 150 and again["cached"].all()
    answer = ["cached", "attempts"]  # a cached answer took no attempt this run
    assert without_timing(again).drop(answer).equals(without_timing(everything).drop(answer))


def test_the_progress_line_counts_the_requests_sent_after_dedupe(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(rendering_module, "CHUNK", 64)
    pairs = pair_frame(300, echoes=100)  # 400 distinct sets of variables, 300 requests
    with TestServer() as server:
        judge = judge_for(server.base_url)
        pp.score_pairs(pairs, judge=judge, order="fixed", cache=False, progress=True)
        assert server.stats.requests == 300
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert last.startswith("judging 300/300 (100%)"), last


def test_what_cannot_stream_renders_first(tmp_path: Path) -> None:
    judge = judge_for(OFFLINE)
    pairs = pair_frame(300)
    first = rendering_module.first_chunk(4)
    assert prepare(pairs, judge=judge).rendering.streams(first)
    assert not prepare(pairs.head(200), judge=judge).rendering.streams(first)  # one chunk
    assert not prepare(pairs, judge=pp.HeuristicJudge()).rendering.streams(first)  # no messages
    # A prompt that might pass the size limit fails before anything is sent, as it always did.
    huge = pairs.with_columns(pl.lit("x" * (MAX_TEXT // 8)).alias("output_b"))
    assert not prepare(huge, judge=judge).rendering.streams(first)
    # A user's template renders in the sandbox, where a row may fail: all before sending.
    mine = tmp_path / "mine.yaml"
    mine.write_text("name: mine\nversion: '1'\nrubric: {max: 2}\nsystem: Judge.\n"
                    "user: '{{ output_a }} vs {{ output_b }}'\n")  # fmt: skip
    assert not prepare(pairs, pp.load_metric(mine), judge=judge).rendering.streams(first)
    # A plan renders everything: the run that follows sends what it rendered.
    prepared = prepare(pairs, judge=judge)
    assert prepared.requests.height == 300 and not prepared.rendering.streams(first)


def await_score(scoring: Scoring) -> pl.DataFrame:
    import asyncio

    return asyncio.run(scoring.score(progress=False))
