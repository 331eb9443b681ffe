"""ScoringSpec changed how scoring is wired, not what it computes: the scored frames of the
shipped samples equal, bit for bit, those the code before it wrote (spec_baseline/, made by
make_baseline.py at the commit before ScoringSpec), their summaries too, and a run recorded
then resumes now."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal
from spec_baseline.make_baseline import HERE, METRICS, cases

import pairwise_polars as pp
from pairwise_polars.testing import TestServer

BASELINE = sorted(p.stem for p in HERE.glob("*.parquet") if not p.stem.startswith("old_run"))


@pytest.fixture(scope="module")
def now(judge_server_session: TestServer) -> dict[str, pl.DataFrame]:
    judge_server_session.reset()
    return cases(judge_server_session.base_url)


@pytest.mark.parametrize("name", BASELINE)
def test_scored_frames_are_bit_identical(now: dict[str, pl.DataFrame], name: str) -> None:
    before = pl.read_parquet(HERE / f"{name}.parquet")
    assert_frame_equal(now[name], before, check_exact=True)


@pytest.mark.parametrize("name", BASELINE)
def test_summaries_are_bit_identical(now: dict[str, pl.DataFrame], name: str) -> None:
    before = pl.read_parquet(HERE / f"{name}.parquet")
    assert_frame_equal(pp.aggregate(now[name]), pp.aggregate(before), check_exact=True)


def test_a_run_recorded_before_the_spec_resumes(tmp_path: Path) -> None:
    source = tmp_path / "old_run_rows.parquet"
    shutil.copy(HERE / "old_run_rows.parquet", source)
    shutil.copytree(HERE / "old_run", tmp_path / "run")
    journal = json.loads((tmp_path / "run" / "run.json").read_text())
    recorded = journal["fingerprint"]["source"][0]["mtime_ns"]
    os.utime(source, ns=(recorded, recorded))  # the file as the run recorded it
    # A crash before the last chunk: its entry and part are gone, the rest is resumed.
    last = max(journal["chunks"], key=int)
    (tmp_path / "run" / journal["chunks"].pop(last)["part"]).unlink()
    journal["finished_at"] = None
    (tmp_path / "run" / "run.json").write_text(json.dumps(journal))

    run = pp.score_parquet(
        source, tmp_path / "run", METRICS, chunk_size=50, cache=False, progress=False
    )

    assert (run.chunks_resumed, run.n_chunks) == (
        len(journal["chunks"]),
        len(journal["chunks"]) + 1,
    )
    scored = run.scored().collect().sort("pair_id", "metric").drop("latency_s")
    before = pl.read_parquet(HERE / "heuristic_parquet_run.parquet")
    assert_frame_equal(scored, before, check_exact=True)
