"""Resume adopts a part whose journal entry a kill prevented (issue 29 item 4): the part is in
the destination, whole, with this run's footer, but run.json does not list it. On Ray that gap
is wide (workers write parts; the driver journals a partition's chunks when its results
arrive), so the rerun must not judge those chunks again. The judge is the test server over
HTTP with no cache, so every request the resume sends is counted there."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from conftest import jobs

import pairwise_polars as pp
from pairwise_polars.runs import score_parquet
from pairwise_polars.testing import TestServer

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")  # Ray's own (Ray tests)
KEY = ["pair_id", "metric"]


def _forget_chunks(destination: Path) -> int:
    """Drop every chunk from the journal, as a kill between the parts and their entries does."""
    path = destination / "run.json"
    journal = json.loads(path.read_text())
    dropped = len(journal["chunks"])
    journal["chunks"], journal["finished_at"], journal["summary"] = {}, None, None
    path.write_text(json.dumps(journal))
    (destination / "summary.parquet").unlink()
    return dropped


def _run(source: Path, destination: Path, server: TestServer, **options: Any) -> pp.ParquetRun:
    judge = pp.OpenAIJudge("judge-model", base_url=server.base_url, api_key="k")
    return score_parquet(
        source, destination, judge=judge, chunk_size=40, cache=False, progress=False, **options
    )


@pytest.mark.parametrize("runner", ["local", "ray"])
def test_unlisted_whole_parts_are_adopted_not_judged_again(
    tmp_path: Path, runner: str, request: pytest.FixtureRequest
) -> None:
    if runner == "ray":
        request.getfixturevalue("ray_cluster")
    source = tmp_path / "jobs.parquet"
    jobs(30).sort("group_id").write_parquet(source)
    out = tmp_path / "out"
    with TestServer(latency=0.0) as server:
        first = _run(source, out, server, runner=runner)
        assert first.n_chunks > 2
        dropped = _forget_chunks(out)
        assert dropped == first.n_chunks
        server.reset_stats()
        again = _run(source, out, server, runner=runner)
        assert server.stats.requests == 0  # every part checked out: nothing judged again
    assert again.chunks_resumed == first.n_chunks and again.judged == 0
    assert again.summary.equals(first.summary)
    journal = json.loads((out / "run.json").read_text())
    assert len(journal["chunks"]) == first.n_chunks
    assert all(entry.get("adopted") for entry in journal["chunks"].values())
    assert journal["finished_at"] is not None
    assert again.scored().collect().sort(KEY).equals(first.scored().collect().sort(KEY))


def test_a_part_that_does_not_check_out_is_redone(tmp_path: Path) -> None:
    """A part without this run's footer (another run's, an older version's) or with fewer
    rows than its footer says is removed and its chunk judged again; the others are adopted."""
    source = tmp_path / "jobs.parquet"
    jobs(30).sort("group_id").write_parquet(source)
    out = tmp_path / "out"
    with TestServer(latency=0.0) as server:
        first = _run(source, out, server)
        per_chunk = {
            int(k): v["scored_rows"]
            for k, v in json.loads((out / "run.json").read_text())["chunks"].items()
        }
        _forget_chunks(out)
        parts = sorted((out / "scored").glob("part-*.parquet"))
        pl.read_parquet(parts[0]).write_parquet(parts[0])  # the same rows, no footer
        footer = pl.read_parquet_metadata(parts[1])  # this run's footer, a row short
        pl.read_parquet(parts[1]).head(-1).write_parquet(parts[1], metadata=footer)
        server.reset_stats()
        again = _run(source, out, server)
        sent = server.stats.requests
    # The two chunks' requests, nothing else (pairs with an empty output are never sent).
    assert 0 < sent <= per_chunk[0] + per_chunk[1] < first.n_pairs
    assert again.chunks_resumed == first.n_chunks - 2
    assert again.summary.equals(first.summary)


def test_ray_progress_counts_the_chunks_done(
    tmp_path: Path, ray_cluster: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    """The Ray run's progress line advances with the chunks (it stayed at "chunk 0/n")."""
    source = tmp_path / "jobs.parquet"
    jobs(30).sort("group_id").write_parquet(source)
    run = score_parquet(source, tmp_path / "out", chunk_size=40, cache=False, runner="ray")
    lines = [line for line in capsys.readouterr().err.splitlines() if line.startswith("chunk ")]
    assert lines, "no progress line"
    assert lines[-1].startswith(f"chunk {run.n_chunks}/{run.n_chunks} ")
    assert "pairs 0/" not in lines[-1]
