"""OpenAIBatchJudge through the real openai client against the test server's Batch API."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import polars as pl
import pytest
from conftest import ROOT, jobs
from polars.testing import assert_frame_equal

import pairwise_polars as pp
from pairwise_polars.judges._batch import OpenAIBatchJudge
from pairwise_polars.runs import score_parquet
from pairwise_polars.testing import Faults, TestServer
from pairwise_polars.testing._batches import BatchSettings

METRICS = ["pairwise-bias", "pairwise-refusal-disparity"]
RESULT = ["pair_id", "metric", "score", "raw_score", "reason", "error", "judge_model"]


def batch_judge(server: TestServer, tmp_path: Path, **options) -> OpenAIBatchJudge:
    options = {"poll_interval": 0.02, "max_poll_interval": 0.05, "progress": False, **options}
    return OpenAIBatchJudge(
        "judge-model",
        base_url=server.base_url,
        api_key="sk-test-SECRET",
        state=tmp_path / "batches.sqlite",
        **options,
    )


def score(frame: pl.DataFrame, judge, tmp_path: Path, **options) -> pl.DataFrame:
    options = {"cache": tmp_path / "cache.sqlite", "progress": False, **options}
    return pp.score(frame, METRICS, judge=judge, **options)


def first_groups(n: int) -> pl.DataFrame:
    frame = jobs()
    return frame.filter(
        pl.col("group_id").is_in(frame["group_id"].unique(maintain_order=True).head(n).implode())
    )


@pytest.fixture
def sample() -> pl.DataFrame:
    return jobs().head(90)  # 30 groups, 60 pairs, 120 judgements


def test_batch_answers_equal_the_chat_judges(judge_server, sample, tmp_path) -> None:
    judge_server.batch = BatchSettings(delay=0.1)
    batched = score(sample, batch_judge(judge_server, tmp_path), tmp_path, cache=False)
    chat = pp.OpenAIJudge("judge-model", base_url=judge_server.base_url, api_key="k")
    chatted = score(sample, chat, tmp_path, cache=False)
    assert batched["error"].null_count() == batched.height
    assert_frame_equal(batched.select(RESULT), chatted.select(RESULT))
    stats = judge_server.stats
    assert stats.batch_calls["batches.create"] == 1
    assert stats.batch_outcomes["ok"] == stats.outcomes["ok"]  # the same requests, once each
    assert set(stats.request_hashes.values()) == {2}  # identical bodies: one batch, one chat


def test_cache_is_shared_with_the_chat_judge(judge_server, sample, tmp_path) -> None:
    score(sample, batch_judge(judge_server, tmp_path), tmp_path)
    chat = pp.OpenAIJudge("judge-model", base_url=judge_server.base_url, api_key="k")
    again = score(sample, chat, tmp_path)
    assert again["cached"].all()
    assert judge_server.stats.requests == 0  # the chat endpoint was never called


def test_requests_are_split_within_the_limits(judge_server, sample, tmp_path) -> None:
    judge = batch_judge(judge_server, tmp_path, max_requests_per_batch=25)
    scored = score(sample, judge, tmp_path)
    n_unique = judge_server.stats.unique_requests
    files = [f for f in judge_server.batches.files.values() if f["purpose"] == "batch"]
    assert len(files) == -(-n_unique // 25)
    assert all(len(f["data"].splitlines()) <= 25 for f in files)
    assert scored["error"].null_count() == scored.height

    judge_server.reset()
    judge = batch_judge(judge_server, tmp_path, max_bytes_per_file=20_000)
    score(sample, judge, tmp_path, cache=False)
    files = [f for f in judge_server.batches.files.values() if f["purpose"] == "batch"]
    assert len(files) > 1 and all(f["bytes"] <= 20_000 for f in files)


def test_per_line_errors_become_error_rows(judge_server, sample, tmp_path) -> None:
    judge_server.faults = Faults(rate_500=0.1, rate_malformed=0.1)
    scored = score(sample, batch_judge(judge_server, tmp_path, max_resubmits=0), tmp_path)
    outcomes = judge_server.stats.batch_outcomes
    failed = scored.filter(pl.col("error").is_not_null())
    assert failed["score"].is_null().all()  # never a guessed score, never 0
    http_500 = failed.filter(pl.col("error").str.starts_with("HTTP 500: The server had an error"))
    assert http_500.height >= outcomes["500"] > 0
    assert http_500["error"].str.ends_with("(gave up after 1 batch)").all()
    unparseable = failed.filter(pl.col("error").str.starts_with("unparseable reply: "))
    assert unparseable.height >= outcomes["malformed"] > 0
    assert scored.filter(pl.col("error").is_null())["score"].is_between(0, 1).all()
    # The same shape as the chat judge's error rows.
    chat = score(
        sample.head(6),
        pp.OpenAIJudge(
            "judge-model", base_url=judge_server.base_url, api_key="k", max_retries=0, reask=False
        ),
        tmp_path,
        cache=False,
    )
    assert scored.schema == chat.schema


def test_retryable_line_errors_are_resubmitted(judge_server, sample, tmp_path) -> None:
    judge_server.faults = Faults(rate_500=0.2)
    scored = score(sample, batch_judge(judge_server, tmp_path, max_resubmits=5), tmp_path)
    assert scored["error"].null_count() == scored.height
    assert judge_server.stats.batch_calls["batches.create"] > 1
    assert scored["attempts"].max() > 1


def test_an_expired_batch_is_finished_by_resubmitting(judge_server, sample, tmp_path) -> None:
    judge_server.batch = BatchSettings(outcome="expired", expire_fraction=0.5)
    judge = batch_judge(judge_server, tmp_path, max_resubmits=1)
    scored = score(sample, judge, tmp_path)
    # first batch half done, the rest resubmitted and expired again: half of that is answered
    first, second = judge_server.batches.objects.values()
    n = first["request_counts"]["total"]
    assert second["request_counts"]["total"] == n - n // 2
    assert judge_server.stats.batch_outcomes["ok"] == n // 2 + (n - n // 2) // 2
    lost = scored.filter(pl.col("error").is_not_null())
    assert lost["error"].str.starts_with("batch_expired: ").all()
    assert lost["error"].str.ends_with("(gave up after 2 batches)").all()
    assert lost["score"].is_null().all()
    # rerun: only the requests still unanswered are sent, and with expiry off they complete
    judge_server.batch = BatchSettings()
    again = score(sample, judge, tmp_path)
    assert again["error"].null_count() == again.height
    assert again.filter(~pl.col("cached")).height == lost.height


@pytest.mark.parametrize("outcome", ["failed", "cancelled"])
def test_failed_or_cancelled_batches_are_reported(judge_server, sample, tmp_path, outcome) -> None:
    if outcome == "failed":
        judge_server.batch = BatchSettings(outcome="failed")
    else:
        # A long delay: the lines worked out before the cancel are a share of elapsed / delay,
        # so the cancel (from another thread, slow on a loaded machine) finds none answered.
        judge_server.batch = BatchSettings(delay=3600)
        cancel_first_batch(judge_server)
    scored = score(sample, batch_judge(judge_server, tmp_path), tmp_path)
    assert scored["score"].is_null().all()
    expected = "failed: The batch failed" if outcome == "failed" else "was cancelled"
    assert scored["error"].str.contains(expected).all()
    assert scored.height == 2 * pp.form_pairs(sample).height  # every pair is there, reported


def cancel_first_batch(server: TestServer) -> None:
    """Cancel the first batch as soon as it exists (from another thread, like a user would)."""
    import threading

    import openai

    def cancel() -> None:
        deadline = time.monotonic() + 20
        while not server.batches.objects and time.monotonic() < deadline:
            time.sleep(0.01)
        client = openai.OpenAI(base_url=server.base_url, api_key="k")
        client.batches.cancel(next(iter(server.batches.objects)))
        client.close()

    threading.Thread(target=cancel, daemon=True).start()


SCRIPT = """
import sys
from pairwise_polars.judges._batch import OpenAIBatchJudge
from pairwise_polars.runs import score_parquet

source, destination, cache, state, base_url = sys.argv[1:6]
judge = OpenAIBatchJudge("judge-model", base_url=base_url, api_key="k", state=state,
                         poll_interval=0.05, max_poll_interval=0.05, progress=False,
                         max_requests_per_batch=40)
score_parquet(source, destination, ["pairwise-bias"], judge=judge, cache=cache, chunk_size=50,
              progress=False)
"""


def test_a_run_killed_after_submitting_polls_the_same_batches(judge_server, tmp_path) -> None:
    source = tmp_path / "jobs.parquet"
    first_groups(100).write_parquet(source)
    n_pairs = pp.form_pairs(first_groups(100)).height
    judge_server.batch = BatchSettings(delay=3.0)  # none done before all are submitted
    args = [
        str(source),
        str(tmp_path / "out"),
        str(tmp_path / "cache.sqlite"),
        str(tmp_path / "batches.sqlite"),
        judge_server.base_url,
    ]
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    process = subprocess.Popen([sys.executable, "-c", SCRIPT, *args], env=env)
    try:
        # every chunk is submitted before any is collected: the first poll means all are in
        deadline = time.monotonic() + 30
        while judge_server.stats.batch_calls["batches.retrieve"] == 0:
            assert process.poll() is None and time.monotonic() < deadline
            time.sleep(0.01)
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait()
    submitted = set(judge_server.batches.objects)
    assert judge_server.stats.batch_calls["files.content"] == 0  # nothing was collected yet

    # Lose the record of one batch id, as if killed between creating it and writing its id:
    # the rerun finds it by its input file instead of creating another.
    with sqlite3.connect(tmp_path / "batches.sqlite") as db:
        db.execute("UPDATE openai_batches SET batch_id = NULL, status = 'uploaded' WHERE rowid = 1")

    judge = OpenAIBatchJudge(
        "judge-model",
        base_url=judge_server.base_url,
        api_key="k",
        state=tmp_path / "batches.sqlite",
        poll_interval=0.05,
        max_poll_interval=0.1,
        progress=False,
        max_requests_per_batch=40,
    )
    run = score_parquet(
        source,
        tmp_path / "out",
        "pairwise-bias",
        judge=judge,
        cache=tmp_path / "cache.sqlite",
        chunk_size=50,
        progress=False,
    )
    stats = judge_server.stats
    assert set(judge_server.batches.objects) == submitted  # no batch was created twice
    assert stats.batch_calls["batches.create"] == len(submitted)
    assert stats.batch_calls["batches.list"] >= 1
    assert all(b["status"] == "completed" for b in judge_server.batches.objects.values())
    assert set(stats.request_hashes.values()) == {1}  # no request was processed twice
    scored = run.scored().collect()
    assert scored.height == n_pairs
    assert scored["error"].null_count() == n_pairs


def test_score_parquet_submits_every_chunk_before_collecting(judge_server, tmp_path) -> None:
    first_groups(100).write_parquet(tmp_path / "jobs.parquet")
    judge_server.batch = BatchSettings(delay=0.3)
    judge = batch_judge(judge_server, tmp_path)
    run = score_parquet(
        tmp_path / "jobs.parquet",
        tmp_path / "out",
        "pairwise-bias",
        judge=judge,
        cache=tmp_path / "cache.sqlite",
        chunk_size=40,
        progress=False,
    )
    calls = judge_server.batches.calls
    assert run.n_chunks == calls.count("batches.create") >= 5
    # all submitted before the first was collected: the batches run side by side
    last_create = len(calls) - 1 - calls[::-1].index("batches.create")
    assert last_create < calls.index("batches.retrieve") < calls.index("files.content")
    assert run.scored().collect()["error"].null_count() == run.n_pairs


def test_fatal_errors_stop_with_a_clear_message(tmp_path, sample) -> None:
    with TestServer(api_key="right-key") as server:
        judge = OpenAIBatchJudge(
            "m",
            base_url=server.base_url,
            api_key="wrong-key",
            state=tmp_path / "s.sqlite",
            progress=False,
        )
        with pytest.raises(pp.JudgeError, match="refused the API key"):
            score(sample, judge, tmp_path)
    with pytest.raises(pp.JudgeError, match="OPENAI_API_KEY"):
        score(sample, OpenAIBatchJudge("m", state=tmp_path / "s.sqlite"), tmp_path)


def test_the_api_key_never_reaches_files_or_reprs(judge_server, sample, tmp_path) -> None:
    judge = batch_judge(judge_server, tmp_path)
    score(sample, judge, tmp_path)
    assert "SECRET" not in repr(judge)
    for path in tmp_path.iterdir():
        assert b"SECRET" not in path.read_bytes()
    state = sqlite3.connect(tmp_path / "batches.sqlite")
    rows = state.execute("SELECT status FROM openai_batches").fetchall()
    assert rows == [("consumed",)]
    assert state.execute("SELECT COUNT(*) FROM openai_batch_requests").fetchone() == (0,)
    state.close()
    assert (
        json.loads(
            judge_server.batches.files[next(iter(judge_server.batches.files))]["data"].splitlines()[
                0
            ]
        )["url"]
        == "/v1/chat/completions"
    )
