"""A `score` column that is not numbers (text from a hand-edited CSV, a boolean flag) is a
ColumnError naming the column, its type and the fix, in aggregate, summarize and compare: never
a polars cast error, and never text or booleans silently read as scores."""

from __future__ import annotations

import polars as pl
import pytest

import pairwise_polars as pp

SCORED = pl.DataFrame({
    "pair_id": [1, 2, 3, 4], "group_id": [1, 2, 3, 4], "dimension": "age",
    "metric": "pairwise-bias", "score": [0.0, 0.25, 0.5, 1.0],
})  # fmt: skip
BAD = {
    "text": pl.Series(["0.0", "0.25", "n/a", "1.0"]),
    "numbers as text": pl.Series(["0.0", "0.25", "0.5", "1.0"]),
    "boolean": pl.Series([False, False, True, True]),
}


@pytest.mark.parametrize("kind", list(BAD))
def test_aggregate_and_summarize_name_a_score_that_is_not_numbers(kind: str) -> None:
    scored = SCORED.with_columns(score=BAD[kind])
    message = rf"column 'score' has type {scored.schema['score']}, expected numbers"
    with pytest.raises(pp.ColumnError, match=message):
        pp.aggregate(scored)
    with pytest.raises(pp.ColumnError, match=message):
        pp.summarize(scored)


@pytest.mark.parametrize("kind", list(BAD))
def test_compare_names_the_run_whose_score_is_not_numbers(kind: str) -> None:
    with pytest.raises(pp.ColumnError, match=r"after run's column 'score' has type"):
        pp.compare(SCORED, SCORED.with_columns(score=BAD[kind]))


def test_whole_numbers_and_an_all_null_score_still_aggregate() -> None:
    whole = pp.aggregate(SCORED.with_columns(score=pl.Series([0, 0, 1, 1])))
    assert whole["n_scored"].to_list() == [4]
    unscored = pp.aggregate(SCORED.with_columns(score=pl.lit(None)))
    assert unscored["n_scored"].to_list() == [0]
