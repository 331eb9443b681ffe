"""Write the scored frames of the shipped samples that tests/scoring/test_spec_baseline.py
compares against: run once with the code *before* ScoringSpec (commit 59e0410), kept as parquet.

    python tests/scoring/spec_baseline/make_baseline.py

Rerun only when a judge's scoring changes on purpose (the files then record the new truth).
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

import polars as pl

import pairwise_polars as pp
from pairwise_polars.testing import TestServer

HERE = Path(__file__).resolve().parent
DATA = HERE.parents[2] / "data"
METRICS = ["pairwise-bias", "pairwise-refusal-disparity", "pairwise-favour"]
VOLATILE = ("latency_s",)
"""Timing: differs on every run, whatever the code."""


def jobs(n_groups: int | None = None) -> pl.DataFrame:
    frame = pl.read_parquet(DATA / "jobs_group.parquet")
    if n_groups is None:
        return frame
    keep = frame["group_id"].unique(maintain_order=True).head(n_groups)
    return frame.filter(pl.col("group_id").is_in(keep.implode()))


def letters() -> pl.DataFrame:
    return pl.read_parquet(DATA / "letters_contrastive.parquet")


def cases(base_url: str | None) -> dict[str, pl.DataFrame]:
    """Each case's scored frame, without the volatile columns."""
    out: dict[str, pl.DataFrame] = {}
    common = {"cache": False, "progress": False}
    out["heuristic_jobs"] = pp.score(jobs(), METRICS, **common)
    out["heuristic_letters_both"] = pp.score(
        letters(), METRICS, strategy="contrastive", both_orders=True, **common
    )
    if base_url is not None:
        judge = pp.OpenAIJudge("judge", base_url=base_url, api_key="test")
        small = jobs(40)
        out["llm_jobs_random"] = pp.score(small, METRICS, judge=judge, **common)
        out["llm_jobs_fixed"] = pp.score(small, METRICS, judge=judge, order="fixed", **common)
        out["llm_jobs_both"] = pp.score(small, METRICS, judge=judge, both_orders=True, **common)
        with tempfile.TemporaryDirectory() as tmp:
            source = Path(tmp) / "rows.parquet"
            small.write_parquet(source)
            run = pp.score_parquet(
                source, Path(tmp) / "run", METRICS, judge=judge, chunk_size=50, **common
            )
            out["llm_parquet_run"] = run.scored().collect().sort("pair_id", "metric")
    with tempfile.TemporaryDirectory() as tmp:
        run = _heuristic_run(Path(tmp) / "old_run_rows.parquet", Path(tmp) / "old_run")
        out["heuristic_parquet_run"] = run.scored().collect().sort("pair_id", "metric")
    return {name: frame.drop(VOLATILE, strict=False) for name, frame in out.items()}


def _heuristic_run(source: Path, folder: Path) -> pp.ParquetRun:
    jobs(40).write_parquet(source)
    return pp.score_parquet(
        source, folder, METRICS, chunk_size=50, overwrite=True, cache=False, progress=False
    )


def main() -> int:
    with TestServer() as server:
        for name, frame in cases(server.base_url).items():
            frame.write_parquet(HERE / f"{name}.parquet")
            print(name, frame.shape)
    # A run recorded before ScoringSpec, source and folder kept: it must still resume (its
    # journal's fingerprint compares equal). The heuristic judge: its identity holds no port.
    folder = HERE / "old_run"
    _heuristic_run(HERE / "old_run_rows.parquet", folder)
    journal = json.loads((folder / "run.json").read_text())
    journal["source_paths"] = ["old_run_rows.parquet"]  # no machine path in a committed file
    (folder / "run.json").write_text(json.dumps(journal, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
