"""score_parquet reads each chunk's outcomes beside its scores; its disparities equal those of
the rows, chunked or not."""

from __future__ import annotations

from pathlib import Path

import polars as pl

import pairwise_polars as pp
from tests.summary.salary import salary_rows


def test_a_parquet_run_carries_outcomes_and_its_disparities(tmp_path: Path) -> None:
    rows = salary_rows(groups=12)
    rows.write_parquet(tmp_path / "rows.parquet")
    run = pp.score_parquet(tmp_path / "rows.parquet", tmp_path / "out", "pairwise-favour",
                           chunk_size=5, progress=False, cache=False)  # fmt: skip
    assert run.n_chunks > 1
    part = run.scored().collect()
    assert "output_a" not in part.columns  # texts left out, outcomes kept
    assert {"decision_a", "amount_a", "amount_b", "refused_b"} <= set(part.columns)
    assert run.disparities is not None
    figures = ["attribute", "pair_kind", "amount_relative", "amount_relative_low"]
    direct = pp.disparities(rows).select(figures)
    assert run.disparities.select(figures).equals(direct)
    women = run.disparities.filter(pl.col("pair_kind") == "counterfactual").row(0, named=True)
    assert women["mean_favour"] < 0  # the signed metric's sign, from the parts
