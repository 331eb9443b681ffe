"""Inputs from Azure Blob Storage (``az://``) through polars, against Azurite, Microsoft's local
emulator (the npm package ``azurite``, started here on 127.0.0.1 in memory, its telemetry off):
the same results as the same rows on a local disk. Skipped when ``azurite-blob`` is not on the
PATH (``npm install -g azurite``)."""

from __future__ import annotations

import base64
import hashlib
import hmac
import shutil
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from email.utils import formatdate
from pathlib import Path

import polars as pl
import pytest
from conftest import assert_same_rows, jobs

import pairwise_polars as pp
from pairwise_polars.runs import score_parquet

ACCOUNT = "devstoreaccount1"  # Azurite's well-known development account and key (public)
KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="


@pytest.fixture(scope="module")
def azurite(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Azurite's blob service on a free port; its endpoint."""
    program = shutil.which("azurite-blob")
    if program is None:
        pytest.skip("Azurite is not installed (npm install -g azurite)")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    folder = tmp_path_factory.mktemp("azurite")
    args = ["--blobHost", "127.0.0.1", "--blobPort", str(port), "--inMemoryPersistence"]
    args += ["--disableTelemetry", "--silent"]
    process = subprocess.Popen([program, *args], cwd=folder, stdout=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                assert process.poll() is None, "Azurite stopped at its start"
                assert time.monotonic() < deadline, "Azurite did not start"
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}"
    finally:
        process.terminate()
        process.wait(timeout=10)


def _container(endpoint: str, name: str) -> dict[str, str]:
    """Create a container (a Shared Key request, as the Azure SDK signs it); the options that
    reach it through polars."""
    date, version = formatdate(usegmt=True), "2021-08-06"
    signed = "PUT" + "\n" * 12 + f"x-ms-date:{date}\nx-ms-version:{version}\n"
    signed += f"/{ACCOUNT}/{ACCOUNT}/{name}\nrestype:container"  # path-style: the account twice
    digest = hmac.new(base64.b64decode(KEY), signed.encode(), hashlib.sha256).digest()
    request = urllib.request.Request(
        f"{endpoint}/{ACCOUNT}/{name}?restype=container",
        method="PUT",
        headers={
            "x-ms-date": date,
            "x-ms-version": version,
            "Authorization": f"SharedKey {ACCOUNT}:{base64.b64encode(digest).decode()}",
        },
    )
    with urllib.request.urlopen(request) as response:
        assert response.status == 201
    return {
        "azure_storage_account_name": ACCOUNT,
        "azure_storage_account_key": KEY,
        "azure_storage_endpoint": f"{endpoint}/{ACCOUNT}",
        "azure_allow_http": "true",
    }


def _upload(name: str, frame: pl.DataFrame, options: dict[str, str], parts: int = 2) -> str:
    groups = frame["group_id"].unique(maintain_order=True)
    for i in range(parts):
        keep = groups.gather_every(parts, offset=i)
        part = frame.filter(pl.col("group_id").is_in(keep.implode()))
        part.write_parquet(f"az://{name}/runs/part-{i}.parquet", storage_options=options)
    return f"az://{name}/runs/*.parquet"


def test_score_from_a_container_equals_the_local_run(azurite: str) -> None:
    options = _container(azurite, "score-in")
    rows = jobs(groups=10)
    uri = _upload("score-in", rows, options)
    remote = pp.score(uri, storage_options=options, cache=False, progress=False)
    local = pp.score(rows, cache=False, progress=False)
    assert remote.height == local.height > 0
    same = [c for c in local.columns if c != "latency_s"]
    assert_same_rows(remote.select(same), local.select(same), "pair_id")


def test_score_parquet_reads_a_container_and_resumes(azurite: str, tmp_path: Path) -> None:
    options = _container(azurite, "parquet-in")
    rows = jobs(groups=10)
    uri = _upload("parquet-in", rows, options)
    common = {"chunk_size": 20, "cache": tmp_path / "c.sqlite", "progress": False}
    run = score_parquet(uri, tmp_path / "out", storage_options=options, **common)
    rows.write_parquet(tmp_path / "rows.parquet")
    local = score_parquet(tmp_path / "rows.parquet", tmp_path / "local", cache=False,
                          chunk_size=20, progress=False)  # fmt: skip
    key = ["pair_id", "metric"]
    same = ["pair_id", "metric", "score", "raw_score", "error"]
    assert (
        run.scored()
        .collect()
        .select(same)
        .sort(key)
        .equals(local.scored().collect().select(same).sort(key))
    )
    again = score_parquet(uri, tmp_path / "out", storage_options=options, **common)
    assert again.chunks_resumed == run.n_chunks > 1 and again.judged == 0
    assert KEY not in str(run) + str(again)
