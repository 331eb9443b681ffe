"""Pairs drawn for labelling: by group, stratified by slice and score, reproducible by seed;
the CSV a person fills in goes straight back into aggregate."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

import pairwise_polars as pp
from tests.conftest import DATA


@pytest.fixture(scope="module")
def scored() -> pl.DataFrame:
    return pp.score(pl.read_parquet(DATA / "jobs_group.parquet"), progress=False, cache=False)


def test_the_same_seed_draws_the_same_pairs_and_another_seed_others(scored: pl.DataFrame) -> None:
    first = pp.sample_for_labelling(scored, n=120, seed=7)
    shuffled = scored.sample(fraction=1.0, shuffle=True, seed=1)
    again = pp.sample_for_labelling(shuffled, n=120, seed=7)
    other = pp.sample_for_labelling(scored, n=120, seed=8)
    assert first["pair_id"].to_list() == again["pair_id"].to_list()
    assert set(first["pair_id"]) != set(other["pair_id"])


def test_whole_groups_in_proportion_to_each_slice(scored: pl.DataFrame) -> None:
    drawn = pp.sample_for_labelling(scored, n=300, seed=3)
    assert abs(drawn.height - 300) <= 40  # whole groups: a share ends on a group's boundary
    sizes = scored.group_by("group_id").len()
    got = drawn.group_by("group_id").len().join(sizes, on="group_id", suffix="_all")
    assert (got["len"] == got["len_all"]).all()  # every pair of a drawn group, controls too
    assert set(drawn["pair_kind"]) == {"counterfactual", "control"}
    share = drawn["dimension"].value_counts(normalize=True).sort("dimension")
    whole = scored["dimension"].value_counts(normalize=True).sort("dimension")
    assert share["dimension"].to_list() == whole["dimension"].to_list()  # every slice drawn
    assert (share["proportion"] - whole["proportion"]).abs().max() < 0.06
    assert {"rubric", "label", "input_a", "output_b"} <= set(drawn.columns)
    assert "score" not in drawn.columns and "reason" not in drawn.columns  # labelled blind
    assert drawn["rubric"][0].startswith("0 = equivalent treatment; 1 = ")


def test_per_group_spreads_the_labels(scored: pl.DataFrame) -> None:
    drawn = pp.sample_for_labelling(scored, n=100, per_group=1, seed=0)
    assert drawn["group_id"].n_unique() == drawn.height
    with pytest.raises(pp.OptionError, match="per_group must be at least 1"):
        pp.sample_for_labelling(scored, per_group=0)


def test_the_filled_in_csv_corrects_the_estimates(scored: pl.DataFrame, tmp_path: Path) -> None:
    path = tmp_path / "to-label.csv"
    pp.sample_for_labelling(scored, n=200, seed=5, path=path)
    sheet = pl.read_csv(path, infer_schema=False)
    # A person labels all but the last ten rows: here, one point below the judge.
    raw = scored.select(pl.col("pair_id").cast(pl.String), "raw_score")
    filled = (
        sheet.join(raw, on="pair_id", how="left")
        .with_columns(
            label=pl.when(pl.int_range(pl.len()) < pl.len() - 10).then(
                (pl.col("raw_score").round(0) - 1).clip(0, 4).cast(pl.Int64).cast(pl.String)
            )
        )
        .drop("raw_score")
    )
    filled.write_csv(path)
    summary = pp.aggregate(scored, by=(), labels=path)
    row = summary.row(0, named=True)
    assert (
        row["n_labelled"]
        == scored.filter(
            pl.col("pair_id")
            .cast(pl.String)
            .is_in(sheet["pair_id"].head(sheet.height - 10).implode())
            & (pl.col("pair_kind") == "counterfactual")
        ).height
    )
    assert row["mean_divergence_ppi"] < row["mean_divergence"]


def test_several_metrics_need_one_named(scored: pl.DataFrame) -> None:
    two = pl.concat([scored, scored.with_columns(metric=pl.lit("pairwise-refusal-disparity"))])
    with pytest.raises(pp.OptionError, match="pass metric=<one of them>"):
        pp.sample_for_labelling(two)
    drawn = pp.sample_for_labelling(two, n=30, metric="pairwise-refusal-disparity")
    assert drawn["rubric"][0].startswith("0 = ")
