"""The Ray runner with its data where it lives: workers write their parts straight into the
S3-compatible test server, the driver only plans and records; the workers' token usage comes
back with their chunks, as the local runner counts it."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest
from conftest import jobs
from s3_server import SECRET_KEY, Bucket

import pairwise_polars as pp
from pairwise_polars._errors import RunStateError
from pairwise_polars.runs import score_parquet
from pairwise_polars.runs._ray_worker import _worker_store
from pairwise_polars.testing import TestServer

pytestmark = [
    pytest.mark.usefixtures("ray_cluster"),
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),  # Ray's own, about its internals
]
KEY = ["pair_id", "metric"]


def test_workers_write_to_the_bucket_and_usage_is_counted(
    s3_bucket: Bucket, tmp_path: Path
) -> None:
    source = tmp_path / "jobs.parquet"
    jobs(24).write_parquet(source)
    options = s3_bucket.server.storage_options()
    uri = f"{s3_bucket.uri}/results/ray-01"
    with TestServer(latency=0.0) as server:
        judge = pp.OpenAIJudge("judge-model", base_url=server.base_url, api_key="k")
        common = {"judge": judge, "chunk_size": 30, "cache": False, "progress": False}
        on_ray = score_parquet(source, uri, runner="ray", storage_options=options, **common)
        local = score_parquet(source, tmp_path / "local", **common)
    assert on_ray.n_chunks == local.n_chunks > 1
    parts = [o for o in s3_bucket.objects() if o.startswith("results/ray-01/scored/part-")]
    assert len(parts) == on_ray.n_chunks
    same = ["pair_id", "metric", "score", "raw_score", "error"]
    remote_rows = on_ray.scored().collect().select(same).sort(KEY)
    assert remote_rows.equals(local.scored().collect().select(same).sort(KEY))
    assert on_ray.usage is not None and local.usage is not None
    assert on_ray.usage.requests == local.usage.requests > 0
    assert on_ray.usage.input_tokens == local.usage.input_tokens > 0
    assert on_ray.usage.output_tokens == local.usage.output_tokens
    again = score_parquet(source, uri, runner="ray", storage_options=options, **common)
    assert again.chunks_resumed == on_ray.n_chunks and again.judged == 0
    assert SECRET_KEY not in str(on_ray) + str(again)


def test_a_worker_that_cannot_see_a_local_destination_is_refused(tmp_path: Path) -> None:
    """On a cluster of several machines a local folder is another folder on each node: the
    worker finds no journal there and stops the run, rather than lose its part."""
    job = SimpleNamespace(destination=str(tmp_path / "not-shared"), pairing={})
    with pytest.raises(RunStateError, match="s3://"):
        _worker_store(job)  # type: ignore[arg-type]  (only its destination and pairing)
