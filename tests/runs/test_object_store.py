"""A run's files in an S3-compatible store (the local moto server): whole objects only, and one
writer at a time by a conditional PUT that a dead run's lock cannot block for ever."""

from __future__ import annotations

import json
import time

import polars as pl
import pytest
from s3_server import SECRET_KEY, Bucket

from pairwise_polars._errors import OutputError, RunStateError
from pairwise_polars.runs import _store
from pairwise_polars.runs._store import LOCK_NAME, ObjectStore


def _store_in(bucket: Bucket, prefix: str = "results/run-01") -> ObjectStore:
    return ObjectStore(f"{bucket.uri}/{prefix}", bucket.server.storage_options())


def test_objects_are_written_whole_listed_read_and_deleted(s3_bucket: Bucket) -> None:
    store = _store_in(s3_bucket)
    frame = pl.DataFrame({"pair_id": [1, 2, 3], "score": [0.0, 0.5, 1.0]})
    store.write("scored/part-000000.parquet", frame.write_parquet)
    store.write("run.json", lambda p: p.write_text('{"a": 1}'))
    assert store.names("scored/") == ["scored/part-000000.parquet"]
    assert store.parquet_rows("scored/part-000000.parquet") == 3
    assert store.parquet_rows("scored/part-000009.parquet") is None
    assert json.loads(store.read_text("run.json")) == {"a": 1}
    assert store.scan("scored/part-*.parquet").collect().equals(frame)
    store.delete("run.json")
    assert not store.exists("run.json") and store.exists("scored/part-000000.parquet")
    assert "results/run-01/run.json" not in s3_bucket.objects()


def test_a_parts_footer_is_read_without_the_part_at_every_polars(s3_bucket: Bucket) -> None:
    # A resume adopts a part uploaded just before a kill by its footer; a footer that cannot be
    # read (older polars took no storage options there) meant a whole part deleted and redone.
    store = _store_in(s3_bucket)
    frame = pl.DataFrame({"pair_id": list(range(500)), "text": ["x" * 40] * 500})
    footer = {"pairwise_polars.part": json.dumps({"run": "abc", "chunk": 0})}
    store.write("scored/part-000000.parquet", lambda p: frame.write_parquet(p, metadata=footer))
    assert footer.items() <= store.part_metadata("scored/part-000000.parquet").items()
    assert store.parquet_rows("scored/part-000000.parquet") == 500
    store.write("scored/part-000001.parquet", lambda p: p.write_bytes(b""))
    store.write("scored/part-000002.parquet", lambda p: p.write_bytes(b"not parquet at all"))
    for broken in ("scored/part-000001.parquet", "scored/part-000002.parquet", "scored/none"):
        assert store.part_metadata(broken) == {} and store.parquet_rows(broken) is None


def test_a_second_writer_is_refused_and_the_lock_is_released(s3_bucket: Bucket) -> None:
    store = _store_in(s3_bucket)
    with store.locked():
        assert f"results/run-01/{LOCK_NAME}" in s3_bucket.objects()
        with pytest.raises(RunStateError, match="Another process is writing"), store.locked():
            pass
    assert f"results/run-01/{LOCK_NAME}" not in s3_bucket.objects()
    with store.locked():  # free again
        pass


def test_a_dead_runs_lock_expires(s3_bucket: Bucket, monkeypatch: pytest.MonkeyPatch) -> None:
    store = _store_in(s3_bucket)
    stale = json.dumps({"owner": "dead-host:1", "renewed_at": time.time() - 3600})
    s3_bucket.server.client().put_object(
        Bucket=s3_bucket.name, Key=f"results/run-01/{LOCK_NAME}", Body=stale.encode()
    )
    with store.locked():
        held = json.loads(store.read_text(LOCK_NAME))
        assert held["owner"] != "dead-host:1"
    monkeypatch.setattr(_store, "LOCK_TTL_S", 3600.0)
    fresh = json.dumps({"owner": "live-host:2", "renewed_at": time.time()})
    s3_bucket.server.client().put_object(
        Bucket=s3_bucket.name, Key=f"results/run-01/{LOCK_NAME}", Body=fresh.encode()
    )
    with pytest.raises(RunStateError, match="live-host:2"), store.locked():
        pass


def test_store_errors_name_the_uri_and_never_the_secret(s3_bucket: Bucket) -> None:
    store = ObjectStore("s3://no-such-bucket-here/x", s3_bucket.server.storage_options())
    with pytest.raises(OutputError) as caught:
        store.write("run.json", lambda p: p.write_text("{}"))
    assert "no-such-bucket-here" in str(caught.value)
    assert SECRET_KEY not in str(caught.value) + repr(caught.value)
