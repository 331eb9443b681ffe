"""What sample_for_labelling refuses: a NaN count (it drew every pair), an empty scored frame (an
IndexError), a metric none of whose pairs was scored (an empty file to label, silently), a nested
slice column (a struct drew nothing, silently; a list was a polars cast error)."""

from __future__ import annotations

import polars as pl
import pytest

import pairwise_polars as pp

SCORED = pl.DataFrame({
    "pair_id": range(8), "group_id": [1, 1, 2, 2, 3, 3, 4, 4], "id_a": 0, "id_b": range(8),
    "metric": "pairwise-bias", "score": 0.25,
    "input_a": "Q", "input_b": "Q", "output_a": "A", "output_b": "B",
})  # fmt: skip


@pytest.mark.parametrize(("keyword", "value"), [("n", float("nan")), ("per_group", float("nan"))])
def test_a_nan_count_is_refused(keyword: str, value: float) -> None:
    with pytest.raises(pp.OptionError, match=rf"{keyword} must be at least 1.*got nan"):
        pp.sample_for_labelling(SCORED, **{keyword: value})  # type: ignore[arg-type]


def test_an_empty_scored_frame_is_named() -> None:
    with pytest.raises(pp.ScoreError, match="The scored frame has no rows: nothing to label"):
        pp.sample_for_labelling(SCORED.clear(), n=4)


def test_a_metric_without_a_single_score_is_named_not_an_empty_file() -> None:
    unscored = SCORED.with_columns(score=pl.lit(None, pl.Float64))
    with pytest.raises(pp.ScoreError, match=r"None of the 8 pairs of 'pairwise-bias' has a score"):
        pp.sample_for_labelling(unscored, n=4)


@pytest.mark.parametrize("column", [pl.struct("metric"), pl.concat_list("metric")])
def test_a_nested_slice_column_is_named(column: pl.Expr) -> None:
    nested = SCORED.with_columns(column.alias("slice"))
    with pytest.raises(pp.ColumnError, match=r"slice column 'slice' has type (Struct|List)"):
        pp.sample_for_labelling(nested, n=4, by=["slice"])
