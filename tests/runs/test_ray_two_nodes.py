"""Ray across machines (issue 32): a cluster of two nodes on this machine
(``ray.cluster_utils.Cluster``: a head with no CPUs, so every read, shuffle and judge actor runs
on the other node), the source and the run's parts and journal in the S3-compatible test server.
The driver is killed with kill -9 mid-run; a new driver resumes, adopting what was written,
paying for no judgement twice, and the result equals a local run's."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from conftest import ROOT, scattered_run
from polars.testing import assert_frame_equal
from s3_server import Bucket

import pairwise_polars as pp
from pairwise_polars.runs import score_parquet
from pairwise_polars.testing import TestServer

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")  # Ray's own
KEY = ["pair_id", "metric"]
CHUNK = 60
DRIVER = """
import json, os, sys
import ray
import pairwise_polars as pp
from pairwise_polars.runs import score_parquet

source, destination, cache, base_url = sys.argv[1:5]  # and the chunk size
options = json.loads(os.environ["TEST_STORAGE_OPTIONS"])
ray.init()  # RAY_ADDRESS: the two-node cluster
nodes = [n for n in ray.nodes() if n["Alive"]]
judge = pp.OpenAIJudge("judge-model", base_url=base_url, max_concurrency=4)
run = score_parquet(source, destination, "pairwise-bias", judge=judge, cache=cache,
                    chunk_size=int(sys.argv[5]), progress=False, runner="ray", actors=2,
                    storage_options=options)
print(json.dumps({"nodes": len(nodes), "resumed": run.chunks_resumed, "n_chunks": run.n_chunks,
                  "judged": run.judged}))
"""


@pytest.fixture
def two_nodes(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A head node without CPUs and one worker node with two; its address. Ray's files go to
    a temporary folder of its own, so no other ``ray.init()`` on the machine finds it."""
    pytest.importorskip("ray")
    from ray.cluster_utils import Cluster

    monkeypatch.setenv("RAY_TMPDIR", tempfile.mkdtemp(prefix="ray2n"))
    small = {"object_store_memory": 100 * 1024 * 1024}
    cluster = Cluster(
        initialize_head=True, head_node_args={"num_cpus": 0, "include_dashboard": False, **small}
    )
    try:
        cluster.add_node(num_cpus=2, **small)
        cluster.wait_for_nodes()
        yield cluster.address
    finally:
        cluster.shutdown()


def test_two_nodes_into_s3_killed_driver_resumes(
    two_nodes: str, s3_bucket: Bucket, tmp_path: Path
) -> None:
    rows = pl.read_parquet(scattered_run(tmp_path, copies=1, ids=True) / "*.parquet")
    rows = rows.sort("group_id").head(600)
    local_source = tmp_path / "run.parquet"
    rows.write_parquet(local_source)
    client = s3_bucket.server.client()
    client.upload_file(str(local_source), s3_bucket.name, "responses/run.parquet")
    source, destination = f"{s3_bucket.uri}/responses/run.parquet", f"{s3_bucket.uri}/runs/r1"
    options = s3_bucket.server.storage_options()
    cache = tmp_path / "cache.sqlite"
    env = {
        **os.environ,
        "RAY_ADDRESS": two_nodes,
        "TEST_STORAGE_OPTIONS": json.dumps(options),
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    with TestServer(latency=0.05) as server:
        args = [source, destination, str(cache), server.base_url, str(CHUNK)]
        _run_and_kill(args, env, lambda: _journaled(s3_bucket, "runs/r1/run.json") >= 2)
        sent = -1
        while sent != server.stats.requests:  # the workers of the dead driver are stopped
            sent = server.stats.requests
            time.sleep(2.0)
        stored_at_kill = _cached(cache)
        out = subprocess.run(
            [sys.executable, "-c", DRIVER, *args], env=env, capture_output=True, check=False
        )
        assert out.returncode == 0, out.stderr.decode()[-3000:]
        resumed = json.loads(out.stdout.decode().strip().splitlines()[-1])
        stats = server.stats
        judge = pp.OpenAIJudge("judge-model", base_url=server.base_url, max_concurrency=4)
        reference = score_parquet(
            local_source, tmp_path / "ref", judge=judge, cache=False, chunk_size=CHUNK,
            progress=False,
        )  # fmt: skip
    assert resumed["nodes"] == 2
    assert 2 <= resumed["resumed"] < resumed["n_chunks"]  # adopted, and work was left
    repeats = sum(n - 1 for n in stats.request_hashes.values() if n > 1)
    assert repeats == sent - stored_at_kill  # nothing that reached the cache paid twice
    assert resumed["judged"] == stats.requests - sent
    parts = [o for o in s3_bucket.objects() if o.startswith("runs/r1/scored/part-")]
    assert len(parts) == resumed["n_chunks"]
    drop = ["latency_s", "cached", "attempts"]
    on_s3 = pl.scan_parquet(f"{destination}/scored/part-*.parquet", storage_options=options)
    assert_frame_equal(
        on_s3.collect().sort(KEY).drop(drop), reference.scored().collect().sort(KEY).drop(drop)
    )
    summary = pl.read_parquet(f"{destination}/summary.parquet", storage_options=options)
    assert summary.equals(reference.summary)


def _run_and_kill(args: list[str], env: dict[str, str], ready: Any) -> None:
    process = subprocess.Popen(
        [sys.executable, "-c", DRIVER, *args], env=env, stderr=subprocess.PIPE
    )
    try:
        deadline = time.monotonic() + 120
        while not ready():
            if process.poll() is not None:
                pytest.fail(f"the run ended before the kill: {process.stderr.read()[-2000:]}")
            assert time.monotonic() < deadline, "the run made no progress"
            time.sleep(0.1)
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        assert process.stderr is not None
        process.stderr.close()


def _journaled(bucket: Bucket, key: str) -> int:
    try:
        body = bucket.server.client().get_object(Bucket=bucket.name, Key=key)["Body"].read()
        return len(json.loads(body)["chunks"])
    except Exception:  # not written yet
        return 0


def _cached(cache: Path) -> int:
    with sqlite3.connect(f"file:{cache}?mode=ro", uri=True, timeout=5) as db:
        return db.execute("SELECT COUNT(*) FROM judgements").fetchone()[0]
