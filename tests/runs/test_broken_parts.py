"""Resume with a part file deleted or cut short (issue 30, item 19): the run repairs itself by
judging those chunks again, real parquet files on disk."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
from conftest import jobs

import pairwise_polars as pp


def test_a_deleted_and_a_truncated_part_are_judged_again(tmp_path: Path) -> None:
    source = tmp_path / "jobs.parquet"
    jobs(12).write_parquet(source)
    run_dir = tmp_path / "run"
    first = pp.score_parquet(source, run_dir, chunk_size=10, cache=False, progress=False)
    assert first.n_chunks >= 3
    chunks = json.loads((run_dir / "run.json").read_text())["chunks"]
    deleted, truncated = (run_dir / chunks[key]["part"] for key in sorted(chunks)[:2])
    deleted.unlink()
    truncated.write_bytes(truncated.read_bytes()[:100])
    again = pp.score_parquet(source, run_dir, chunk_size=10, cache=False, progress=False)
    assert again.chunks_resumed == first.n_chunks - 2
    assert again.judged > 0 and deleted.exists()
    key = ["pair_id", "metric"]
    before = first.scored().collect().sort(key).drop("latency_s")
    after = again.scored().collect().sort(key).drop("latency_s")
    assert after.equals(before)
    assert pl.read_parquet(truncated).height > 0
