"""kill -9 in the middle of a run against a real HTTP judge, then resume: same output as an
uninterrupted run, and no judgement the killed process had received is paid for again."""

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
from pairwise_polars.runs import score_parquet
from pairwise_polars.testing import TestServer

CONCURRENCY = 8
CHUNK = 80
GROUPS = 145  # whole groups, controls included: 621 rows, 476 pairs, 6 chunks
SCRIPT = """
import sys
import pairwise_polars as pp
from pairwise_polars.runs import score_parquet

source, destination, cache, base_url, concurrency, chunk, kind = sys.argv[1:8]
judge = getattr(pp, kind)("judge-model", base_url=base_url, api_key="k",
                          max_concurrency=int(concurrency))
score_parquet(source, destination, "pairwise-bias", judge=judge, cache=cache,
              chunk_size=int(chunk), progress=False)
"""


def cached_rows(cache: Path) -> int:
    try:
        with sqlite3.connect(f"file:{cache}?mode=ro", uri=True, timeout=5) as db:
            return db.execute("SELECT COUNT(*) FROM judgements").fetchone()[0]
    except sqlite3.OperationalError:  # not created yet
        return 0


def run_and_kill(args: list[str], cache: Path, at_rows: int) -> None:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    process = subprocess.Popen(
        [sys.executable, "-c", SCRIPT, *args], env=env, stderr=subprocess.PIPE
    )
    try:
        deadline = time.monotonic() + 60
        while cached_rows(cache) < at_rows:
            if process.poll() is not None:
                pytest.fail(f"the run ended before the kill: {process.stderr.read().decode()}")
            assert time.monotonic() < deadline, "the run made no progress"
            time.sleep(0.01)
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        process.stderr.close()
    assert process.returncode == -signal.SIGKILL


@pytest.mark.parametrize("kind", ["OpenAIJudge", "AnthropicJudge"])
def test_kill_9_mid_run_then_resume(tmp_path: Path, kind: str) -> None:
    source = tmp_path / "jobs.parquet"
    jobs(GROUPS).write_parquet(source)
    destination, cache = tmp_path / "out", tmp_path / "cache.sqlite"
    n_pairs = pp.form_pairs(jobs(GROUPS)).height

    with TestServer(latency=0.02) as server:
        args = [
            str(source),
            str(destination),
            str(cache),
            server.base_url,
            str(CONCURRENCY),
            str(CHUNK),
            kind,
        ]
        run_and_kill(args, cache, at_rows=2 * CHUNK + 30)  # inside chunk 2
        time.sleep(0.2)  # let the server finish reading what the dead process had sent
        stored_at_kill = cached_rows(cache)
        journal = json.loads((destination / "run.json").read_text())
        assert 0 < len(journal["chunks"]) < journal["n_chunks"]
        sent_before_kill = server.stats.requests
        # A part the kill caught between its file and its journal entry is adopted on resume.
        parts_at_kill = len(list((destination / "scored").glob("part-*.parquet")))

        judge = getattr(pp, kind)(
            "judge-model", base_url=server.base_url, api_key="k", max_concurrency=CONCURRENCY
        )
        run = score_parquet(
            source,
            destination,
            "pairwise-bias",
            judge=judge,
            cache=cache,
            chunk_size=CHUNK,
            progress=False,
        )
        stats = server.stats

        # The uninterrupted reference: a fresh cache and destination, same server.
        reference = score_parquet(
            source,
            tmp_path / "ref",
            "pairwise-bias",
            judge=judge,
            cache=tmp_path / "ref.sqlite",
            chunk_size=CHUNK,
            progress=False,
        )

    assert run.chunks_resumed == parts_at_kill >= len(journal["chunks"])
    assert 0 < sent_before_kill < stats.requests  # work was done on both sides of the kill
    # Exactly the requests the killed process had sent but not stored were sent again: no
    # answer that reached the cache was paid for twice.
    repeats = sum(n - 1 for n in stats.request_hashes.values() if n > 1)
    assert repeats == sent_before_kill - stored_at_kill
    assert stats.requests == stats.unique_requests + repeats
    # Those are the requests in flight at the kill: the chat engine frees a slot only once an
    # answer is stored, so at most one per concurrent slot.
    assert repeats <= CONCURRENCY
    assert run.judged == stats.requests - sent_before_kill

    key = ["pair_id", "metric"]
    resumed = pl.read_parquet(destination / "scored" / "*.parquet").sort(key)
    uninterrupted = pl.read_parquet(tmp_path / "ref" / "scored" / "*.parquet").sort(key)
    assert resumed.height == n_pairs  # no gaps
    assert resumed.select(key).is_duplicated().sum() == 0  # no duplicates
    same = [
        "pair_id",
        "metric",
        "group_id",
        "id_a",
        "id_b",
        "score",
        "raw_score",
        "reason",
        "error",
        "judge_model",
        "input_tokens",
        "output_tokens",
    ]
    assert_frame_equal(resumed.select(same), uninterrupted.select(same))
    assert resumed["error"].null_count() == resumed.height
    assert_frame_equal(run.summary, reference.summary)
