"""score_parquet with human labels: the run's summary carries the corrected figures; a label
that is not a number stops the run before any chunk is judged; a label naming a pair the run
does not have is named at the end."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

import pairwise_polars as pp

DATA = Path(__file__).resolve().parents[2] / "data" / "jobs_group.parquet"


@pytest.fixture
def source(tmp_path: Path) -> Path:
    rows = pl.read_parquet(DATA)
    groups = rows["group_id"].unique(maintain_order=True).head(40)
    path = tmp_path / "rows.parquet"
    rows.filter(pl.col("group_id").is_in(groups.implode())).write_parquet(path)
    return path


def _sheet(source: Path, tmp_path: Path) -> Path:
    """A person who reads one point less divergence than the judge on 60 pairs."""
    scored = pp.score(pl.read_parquet(source), progress=False, cache=False)
    sample = pp.sample_for_labelling(scored, n=60, seed=2)
    raw = scored.select("pair_id", "raw_score")
    filled = sample.drop("label").join(raw, on="pair_id", how="left", maintain_order="left")
    label = (pl.col("raw_score").round(0) - 1).clip(0, 4).cast(pl.Int64).alias("label")
    path = tmp_path / "sheet.csv"
    filled.with_columns(label).drop("raw_score").write_csv(path)
    return path


def test_a_run_with_labels_has_the_corrected_summary(source: Path, tmp_path: Path) -> None:
    sheet = _sheet(source, tmp_path)
    run = pp.score_parquet(source, tmp_path / "run", labels=sheet, progress=False, cache=False)
    summary = run.summary  # by dimension
    drawn = pl.read_csv(sheet, schema_overrides={"pair_id": pl.UInt64}).filter(
        pl.col("pair_kind") == "counterfactual"
    )
    assert summary["n_labelled"].sum() == drawn.height > 0  # controls are not counted
    labelled = summary.filter(pl.col("n_labelled") > 0)
    assert (labelled["mean_divergence_ppi"] < labelled["mean_divergence"]).all()
    assert pp.aggregate(run.scored(), labels=sheet).equals(run.summary)


def test_bad_labels_stop_the_run_before_or_after_judging(source: Path, tmp_path: Path) -> None:
    sheet = _sheet(source, tmp_path)
    text = pl.read_csv(sheet, infer_schema=False)
    bad = text.with_columns(pl.when(pl.int_range(pl.len()) == 1).then(pl.lit("two"))
                            .otherwise(pl.col("label")).alias("label"))  # fmt: skip
    bad.write_csv(tmp_path / "bad.csv")
    with pytest.raises(pp.DataSourceError, match=r"1 labels are not numbers: row 2 "):
        pp.score_parquet(source, tmp_path / "run", labels=tmp_path / "bad.csv", progress=False)
    assert not (tmp_path / "run" / "scored").exists()  # nothing was judged
    stray = text.with_columns(pl.lit("123").alias("pair_id"))
    stray.head(1).write_csv(tmp_path / "stray.csv")
    with pytest.raises(pp.ColumnError, match=r"1 labels name a \(pair, metric\) .*pair_id=123"):
        pp.score_parquet(source, tmp_path / "run2", labels=tmp_path / "stray.csv", cache=False,
                         progress=False)  # fmt: skip
