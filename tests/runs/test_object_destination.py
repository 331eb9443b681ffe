"""score_parquet into an S3-compatible store (the local moto server): the same results as a
local run, a finished part never judged again after kill -9, and one writer at a time."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import polars as pl
import pytest
from conftest import ROOT, jobs
from s3_server import SECRET_KEY, Bucket

import pairwise_polars as pp
from pairwise_polars.runs import score_parquet
from pairwise_polars.runs._store import ObjectStore
from pairwise_polars.testing import TestServer

CHUNK = 40
SCRIPT = """
import json, sys
import pairwise_polars as pp
from pairwise_polars.runs import score_parquet

source, destination, base_url, options = sys.argv[1:5]
judge = pp.OpenAIJudge("judge-model", base_url=base_url, api_key="k", max_concurrency=4)
score_parquet(source, destination, judge=judge, cache=False, chunk_size=40, progress=False,
              storage_options=json.loads(options))
"""


def test_a_run_in_a_bucket_equals_the_local_run_and_resumes(
    s3_bucket: Bucket, tmp_path: Path
) -> None:
    source = tmp_path / "jobs.parquet"
    jobs(30).write_parquet(source)
    options = s3_bucket.server.storage_options()
    uri = f"{s3_bucket.uri}/results/run-01"
    run = score_parquet(
        source, uri, chunk_size=CHUNK, cache=False, progress=False, storage_options=options
    )
    local = score_parquet(source, tmp_path / "local", chunk_size=CHUNK, cache=False, progress=False)
    key = ["pair_id", "metric"]
    assert run.destination == uri and run.n_chunks == local.n_chunks > 1
    remote_scored = run.scored().collect().sort(key)
    assert remote_scored.drop("latency_s").equals(
        local.scored().collect().sort(key).drop("latency_s")
    )
    assert run.summary.equals(local.summary)
    objects = s3_bucket.objects()
    assert "results/run-01/run.json" in objects and "results/run-01/summary.parquet" in objects
    assert sum(o.startswith("results/run-01/scored/part-") for o in objects) == run.n_chunks
    assert "results/run-01/.run.lock" not in objects  # released
    journal = ObjectStore(uri, options).read_text("run.json")
    assert SECRET_KEY not in journal and "storage_options" not in journal
    again = score_parquet(
        source, uri, chunk_size=CHUNK, cache=False, progress=False, storage_options=options
    )
    assert again.chunks_resumed == run.n_chunks and again.judged == 0


def test_a_second_writer_on_the_same_prefix_is_refused(s3_bucket: Bucket, tmp_path: Path) -> None:
    source = tmp_path / "jobs.parquet"
    jobs(6).write_parquet(source)
    options = s3_bucket.server.storage_options()
    uri = f"{s3_bucket.uri}/results/busy"
    with (
        ObjectStore(uri, options).locked(),
        pytest.raises(pp.RunStateError, match="Another process is writing"),
    ):
        score_parquet(source, uri, cache=False, progress=False, storage_options=options)


def test_other_stores_are_refused_as_destinations(tmp_path: Path) -> None:
    source = tmp_path / "jobs.parquet"
    jobs(3).write_parquet(source)
    with pytest.raises(pp.OptionError, match="s3://"):
        score_parquet(source, "gs://bucket/run", progress=False)


def test_kill_9_then_resume_never_judges_a_finished_part_again(
    s3_bucket: Bucket, tmp_path: Path
) -> None:
    source = tmp_path / "jobs.parquet"
    jobs(60).write_parquet(source)
    n_pairs = pp.form_pairs(jobs(60)).height
    options = s3_bucket.server.storage_options()
    uri = f"{s3_bucket.uri}/results/killed"
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    with TestServer(latency=0.05) as server:
        args = [str(source), uri, server.base_url, json.dumps(options)]
        process = subprocess.Popen([sys.executable, "-c", SCRIPT, *args], env=env)
        try:
            deadline = time.monotonic() + 90
            while sum("/scored/part-" in o for o in s3_bucket.objects()) < 2:
                assert process.poll() is None, "the run ended before the kill"
                assert time.monotonic() < deadline, "no part was written"
                time.sleep(0.05)
            process.send_signal(signal.SIGKILL)
            process.wait(timeout=30)
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
        journal = json.loads(ObjectStore(uri, options).read_text("run.json"))
        done = {int(k): v["pairs"] for k, v in journal["chunks"].items()}
        assert 0 < len(done) < journal["n_chunks"]
        # Parts are uploaded whole; one uploaded but not yet journaled is adopted on resume.
        parts_at_kill = sum("/scored/part-" in o for o in s3_bucket.objects())
        server.reset_stats()
        judge = pp.OpenAIJudge("judge-model", base_url=server.base_url, api_key="k")
        # The killed run's lock is still in the bucket: its process is gone, so it is taken over
        assert ".run.lock" in ObjectStore(uri, options).names()
        run = score_parquet(
            source, uri, judge=judge, cache=False, chunk_size=CHUNK, progress=False,
            storage_options=options,
        )  # fmt: skip
        sent = server.stats.requests
        server.reset_stats()  # the same run from scratch: requests are de-duplicated per chunk
        score_parquet(
            source, f"{s3_bucket.uri}/results/fresh", judge=judge, cache=False,
            chunk_size=CHUNK, progress=False, storage_options=options,
        )  # fmt: skip
        sent_whole = server.stats.requests
    assert run.chunks_resumed == parts_at_kill >= len(done) and run.judged == sent
    # Finished parts were not judged again: the resume sent the whole run's requests less
    # those of the finished chunks (at most one per pair).
    resumed = json.loads(ObjectStore(uri, options).read_text("run.json"))["chunks"]
    finished_pairs = sum(
        v["pairs"] for k, v in resumed.items() if v.get("adopted") or int(k) in done
    )
    assert 0 < sent_whole - sent <= finished_pairs
    scored = run.scored().collect()
    assert scored.height == n_pairs and scored["pair_id"].n_unique() == n_pairs
    assert pl.Series(scored["error"]).null_count() == n_pairs
