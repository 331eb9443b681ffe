"""score_parquet(runner="ray"): the same scored rows, pair by pair, and the same summary as the
local runner, on one local Ray session shared by these tests (skipped without the extra)."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from conftest import scattered_run, together_run
from polars.testing import assert_frame_equal

import pairwise_polars as pp
from pairwise_polars._errors import PairwiseWarning, RunStateError
from pairwise_polars.runs import score_parquet
from pairwise_polars.testing import Faults, TestServer

pytestmark = [
    pytest.mark.usefixtures("ray_cluster"),
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),  # Ray's own, about its internals
]
KEY = ["pair_id", "metric"]


def run(source: Path, destination: Path, **options: Any) -> pp.ParquetRun:
    if options.get("runner") == "ray" or source.name != "scattered":  # nothing reread twice
        return score_parquet(source, destination, progress=False, **options)
    with pytest.warns(PairwiseWarning, match="scattered"):  # the groups are spread on purpose
        return score_parquet(source, destination, progress=False, **options)


def scored(result: pp.ParquetRun) -> pl.DataFrame:
    return result.scored().collect().sort(KEY)


def test_offline_judge_same_rows_and_summary_as_local(tmp_path: Path) -> None:
    # No id column: ids are positions across the four files. Groups scattered over the files:
    # Ray reads the source once and brings each chunk's rows together (a shuffle).
    source = scattered_run(tmp_path).rename(tmp_path / "scattered")
    local = run(source, tmp_path / "local", chunk_size=300, cache=tmp_path / "local.sqlite")
    on_ray = run(
        source,
        tmp_path / "ray",
        chunk_size=300,
        cache=tmp_path / "ray.sqlite",
        runner="ray",
        actors=3,
    )
    assert on_ray.n_chunks == local.n_chunks > 3
    assert on_ray.n_pairs == local.n_pairs == scored(local).height
    # Pair by pair, every column but the measured latency.
    assert_frame_equal(
        scored(on_ray).drop("latency_s"), scored(local).drop("latency_s"), check_exact=True
    )
    # The summary from merged per-group sums equals the local aggregate to the last bit.
    assert on_ray.summary.equals(local.summary)
    # Each side's outcome is read where the chunk is scored: the same disparities.
    assert on_ray.disparities is not None and on_ray.disparities.equals(local.disparities)
    on_disk = pl.read_parquet(tmp_path / "ray" / "summary.parquet")
    assert on_disk.equals(pl.read_parquet(tmp_path / "local" / "summary.parquet"))
    assert on_disk.filter(pl.col("n_groups") > 1)["mean_divergence_low"].null_count() == 0
    journal = json.loads((tmp_path / "ray" / "run.json").read_text())
    assert len(journal["chunks"]) == journal["n_chunks"] == on_ray.n_chunks
    assert journal["finished_at"] is not None


def _answer(body: dict[str, Any]) -> dict[str, Any]:
    """A verdict from the pair's own prompt only (not from a re-ask that follows a malformed
    reply), so a healed request gets the answer a fault-free run gets."""
    first = next(m["content"] for m in body["messages"] if m["role"] == "user")
    score = int(hashlib.sha256(first.encode()).hexdigest(), 16) % 5
    return {"score": score, "reason": f"verdict {score}"}


def test_test_server_with_faults_same_answers_as_local(tmp_path: Path) -> None:
    # Groups together (each worker reads its own chunk), ids the rows' positions across files.
    source = together_run(tmp_path, files=3)
    with TestServer(reply=_answer) as server:
        judge = pp.OpenAIJudge(
            "judge-model",
            base_url=server.base_url,
            max_concurrency=8,
            backoff_base=0.01,
            backoff_max=0.05,
        )
        local = run(source, tmp_path / "local", judge=judge, chunk_size=200, cache=False)
        server.faults = Faults(rate_429=0.1, rate_500=0.05, rate_malformed=0.05)
        server.reset_stats()
        on_ray = run(
            source,
            tmp_path / "ray",
            judge=judge,
            chunk_size=200,
            cache=tmp_path / "ray.sqlite",
            runner="ray",
            actors=2,
        )
        stats = server.stats
    for outcome in ("429", "500", "malformed"):
        assert stats.outcomes[outcome] > 0, outcome
    ray_rows, local_rows = scored(on_ray), scored(local)
    assert ray_rows.select(KEY).equals(local_rows.select(KEY))  # no pair lost or added
    failed = ray_rows["error"].is_not_null()
    # A request that failed twice (malformed, then malformed again after the re-ask) is an
    # error row with no score; never a guessed one.
    assert ray_rows.filter(failed)["score"].null_count() == int(failed.sum())
    answered = ["pair_id", "metric", "score", "raw_score", "reason", "error"]
    assert_frame_equal(
        ray_rows.filter(~failed).select(answered), local_rows.filter(~failed).select(answered)
    )
    assert on_ray.errors == int(failed.sum())
    # The merged summary is the local aggregate of the same rows, intervals included.
    assert on_ray.summary.equals(pp.aggregate(on_ray.scored()))


def test_a_bad_key_stops_the_run_with_the_local_error(tmp_path: Path) -> None:
    source = scattered_run(tmp_path, copies=1, ids=True, groups=40)
    context = pytest.importorskip("ray.data").DataContext.get_current()
    settings = ("enable_progress_bars", "raise_original_map_exception")
    before = [getattr(context, name) for name in settings]
    with TestServer(faults=Faults(always="401")) as server:
        judge = pp.OpenAIJudge("judge-model", base_url=server.base_url, api_key="wrong")
        options: dict[str, Any] = {"judge": judge, "cache": False, "progress": False}
        with pytest.raises(pp.JudgeError) as local:
            score_parquet(source, tmp_path / "local", **options)
        with pytest.raises(pp.JudgeError) as on_ray:
            score_parquet(source, tmp_path / "ray", runner="ray", actors=2, **options)
    # The package's own error, as the local runner raises it, not a Ray task failure.
    assert type(on_ray.value) is type(local.value)
    assert str(on_ray.value) == str(local.value)
    assert "wrong" not in str(on_ray.value)  # the key never reaches a message
    # The run's own Ray Data settings are undone: the caller's session keeps its own.
    assert [getattr(context, name) for name in settings] == before
    journal = json.loads((tmp_path / "ray" / "run.json").read_text())
    assert journal["chunks"] == {} and journal["finished_at"] is None


def test_rerun_resumes_and_a_different_run_is_refused(tmp_path: Path) -> None:
    source = together_run(tmp_path, ids=True, groups=120)
    options: dict[str, Any] = {"chunk_size": 60, "cache": tmp_path / "c.sqlite", "runner": "ray"}
    first = run(source, tmp_path / "out", **options)
    again = run(source, tmp_path / "out", **options)
    assert again.chunks_resumed == again.n_chunks == first.n_chunks
    assert again.judged == 0
    assert again.summary.equals(first.summary)
    # The local runner resumes the Ray runner's run: the same plan, parts and journal.
    local = run(source, tmp_path / "out", chunk_size=60, cache=tmp_path / "c.sqlite")
    assert local.chunks_resumed == first.n_chunks
    assert local.summary.equals(first.summary)
    with pytest.raises(RunStateError, match="chunk_size differs"):
        run(source, tmp_path / "out", **{**options, "chunk_size": 40})
    # Overwriting is the driver's, before any Ray work (the runners share it): checked locally.
    redone = run(source, tmp_path / "out", chunk_size=40, cache=tmp_path / "c.sqlite",
                 overwrite=True)  # fmt: skip
    assert redone.chunks_resumed == 0
    assert redone.summary.equals(first.summary)


def test_workers_reach_the_total_concurrency_and_share_one_rate_limit(tmp_path: Path) -> None:
    source = together_run(tmp_path, ids=True, groups=160)
    arrivals: list[float] = []
    lock = threading.Lock()

    def record(body: dict[str, Any]) -> None:  # the server's reply hook: note the arrival
        with lock:
            arrivals.append(time.monotonic())

    with TestServer(latency=0.1) as server:
        judge = pp.OpenAIJudge("judge-model", base_url=server.base_url, max_concurrency=6)
        run(
            source,
            tmp_path / "fast",
            judge=judge,
            chunk_size=60,
            cache=False,
            runner="ray",
            actors=2,
        )
        in_flight = server.stats.max_in_flight
        server.reset()
        server.reply = record
        per_second = 20
        limited = pp.OpenAIJudge(
            "judge-model",
            base_url=server.base_url,
            max_concurrency=6,
            requests_per_minute=60 * per_second,
        )
        small = tmp_path / "small"  # 60 groups: about 5 s at 20 requests/s
        small.mkdir()
        rows = pl.read_parquet(source / "*.parquet")
        keep = rows["group_id"].unique().sort().head(60).implode()
        rows.filter(pl.col("group_id").is_in(keep)).sort("group_id").write_parquet(
            small / "run.parquet"
        )
        started = time.monotonic()
        score_parquet(
            small,
            tmp_path / "slow",
            judge=limited,
            chunk_size=40,
            cache=False,
            runner="ray",
            actors=2,
            progress=False,
        )
        elapsed = time.monotonic() - started
    # Two actors of six requests each were in flight together: the requested total, never more.
    assert 6 < in_flight <= 12
    # One rate limit for both actors. At the server, arrivals carry the scheduling jitter
    # between a grant and its send (measured up to ~15 % in the busiest second on a loaded
    # machine; the exact spacing of grants is tested below): over the whole stage they never
    # beat the limit, and no second holds far more than it.
    arrivals.sort()
    assert len(arrivals) > 2 * per_second
    span = arrivals[-1] - arrivals[0]
    assert (len(arrivals) - 1) / per_second <= span + 0.5
    assert len(arrivals) <= per_second * elapsed + 1
    busiest = max(
        sum(1 for t in arrivals[i:] if t < start + 1.0) for i, start in enumerate(arrivals)
    )
    assert busiest <= 1.3 * per_second + 1


def test_the_shared_buckets_space_grants_evenly(ray_cluster: Any) -> None:
    """The run's TokenBuckets actor, called by many waiting callers at once: it lets requests
    through one every 1/rate seconds, so no second holds more than the limit plus one."""
    from pairwise_polars.runs._ray_run import TokenBuckets

    per_second = 50
    buckets = TokenBuckets.remote(60 * per_second, None)
    try:
        started = time.monotonic()
        ray_cluster.get([buckets.acquire.remote("requests", 1.0) for _ in range(3 * per_second)])
        elapsed = time.monotonic() - started
        grants = ray_cluster.get(buckets.grants.remote())
    finally:
        ray_cluster.kill(buckets)
    assert sum(grants.values()) == 3 * per_second
    assert max(grants.values()) <= per_second + 1
    assert elapsed >= (3 * per_second - 1) / per_second - 0.05


KILLED = """
import sys
import pairwise_polars as pp
from pairwise_polars.runs import score_parquet

source, destination, cache, base_url = sys.argv[1:5]
judge = pp.OpenAIJudge("judge-model", base_url=base_url, max_concurrency=4)
score_parquet(source, destination, "pairwise-bias", judge=judge, cache=cache, chunk_size=60,
              progress=False, runner="ray", actors=2)
"""


def test_kill_mid_run_then_rerun_pays_nothing_twice(tmp_path: Path, ray_cluster: Any) -> None:
    source = tmp_path / "run.parquet"
    rows = pl.read_parquet(scattered_run(tmp_path, copies=1, ids=True) / "*.parquet")
    rows.sort("group_id").head(600).write_parquet(source)
    destination, cache = tmp_path / "out", tmp_path / "cache.sqlite"
    # The killed driver attaches to this session's cluster, as a job would.
    env = {**os.environ, "RAY_ADDRESS": ray_cluster.get_runtime_context().gcs_address}
    with TestServer(latency=0.05) as server:
        args = [str(source), str(destination), str(cache), server.base_url]
        process = subprocess.Popen(
            [sys.executable, "-c", KILLED, *args], env=env, stderr=subprocess.PIPE
        )
        try:
            deadline = time.monotonic() + 120
            while _journaled(destination) < 2:  # two chunks finished, others under way
                if process.poll() is not None:
                    pytest.fail(f"the run ended before the kill: {process.stderr.read()[-2000:]}")
                assert time.monotonic() < deadline, "the run made no progress"
                time.sleep(0.05)
            process.send_signal(signal.SIGKILL)
            process.wait(timeout=30)
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
            process.stderr.close()
        # The driver's death ends its workers; wait until the server hears nothing more.
        sent = -1
        while sent != server.stats.requests:
            sent = server.stats.requests
            time.sleep(2.0)
        stored_at_kill = _cached(cache)
        judge = pp.OpenAIJudge("judge-model", base_url=server.base_url, max_concurrency=4)
        options: dict[str, Any] = {"chunk_size": 60, "progress": False, "judge": judge}
        resumed = score_parquet(source, destination, cache=cache, runner="ray", actors=2, **options)
        stats = server.stats
        # The reference only needs the answers: more in flight, the same rows.
        options["judge"] = pp.OpenAIJudge(
            "judge-model", base_url=server.base_url, max_concurrency=32
        )
        reference = score_parquet(source, tmp_path / "ref", cache=False, **options)
    # Parts written after the kill by workers still running are whole and adopted on resume.
    assert 0 < resumed.chunks_resumed <= resumed.n_chunks
    repeats = sum(n - 1 for n in stats.request_hashes.values() if n > 1)
    # Only requests the killed run had sent but not stored were sent again: a judgement that
    # reached the cache was never paid for twice.
    assert repeats == sent - stored_at_kill
    # What was lost is what was in flight: two actors, four requests each. Ray Data restarts an
    # actor that dies and retries its chunk (max_restarts=-1), so while the driver's death
    # reaches the pool an actor may be cut twice; the bound allows a few such rounds, far below
    # the run's 600 pairs.
    assert repeats <= 4 * 2 * 4
    assert_frame_equal(
        scored(resumed).drop("latency_s", "cached", "attempts"),
        scored(reference).drop("latency_s", "cached", "attempts"),
    )
    assert resumed.summary.equals(reference.summary)


def _journaled(destination: Path) -> int:
    try:
        return len(json.loads((destination / "run.json").read_text())["chunks"])
    except (OSError, ValueError):
        return 0


def _cached(cache: Path) -> int:
    with sqlite3.connect(f"file:{cache}?mode=ro", uri=True, timeout=5) as db:
        return db.execute("SELECT COUNT(*) FROM judgements").fetchone()[0]
